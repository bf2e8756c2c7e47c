"""Sliders for lessons 04-06: move a threshold, watch what the model is sent and what it costs.

The lesson 04/05 explorers replay a sample conversation (``helpers.replay.replay``) with the
values of their controls and show, for the chosen turn, every message of the conversation marked
``kept`` / ``dropped`` / ``summarized`` / ``summary``, then the cost of every turn. Replays are
cached per setting, so moving back to a value is instant. Tests set the controls' ``.value`` and
read ``.view.value`` / ``.records``.

``RetrievalExplorer`` (lesson 06) searches a Milvus memory live instead: top-k, a minimum score and
the question, with the turns found and the message the model would be sent (tests read
``.memories``).

In a static copy of a notebook (GitHub, nbviewer) widgets do not render: the lessons print the
same tables for the default values below each explorer.
"""

from __future__ import annotations

import html
from functools import lru_cache

import ipywidgets as widgets
import pandas as pd
from langchain_core.language_models.chat_models import BaseChatModel

from helpers.course.display import messages_html
from helpers.data import Conversation, load_conversation
from helpers.milvus_common import DEFAULT_MIN_SCORE, Memory, validate_id
from helpers.milvus_store import MemoryStore
from helpers.replay import TurnRecord, article_cost_table, cost_summary, replay
from helpers.retrieval import format_retrieved
from helpers.strategies import CountWindow, LastN, RunningSummary, TokenWindow
from helpers.summarization import CountTrigger, TokenTrigger
from helpers.tokens import count_text_tokens
from helpers.truncation import MessageBudgetError, TokenBudgetError


def cost_table(records: list[TurnRecord]) -> pd.DataFrame:
    """Per-turn costs of a replay as a table indexed by turn (tokens as ``helpers.tokens``
    counts them), with the user's message and the start of the reply."""
    rows = []
    for r in records:
        row = r.as_row()
        row["user"] = r.user
        row["reply"] = r.reply if len(r.reply) <= 60 else r.reply[:59] + "…"
        rows.append(row)
    return pd.DataFrame(rows).set_index("turn")


class _Explorer:
    """Shared machinery: controls -> strategy -> cached replay -> HTML views."""

    def __init__(self, conversation: Conversation | str, model: BaseChatModel | None):
        from helpers.models import get_chat_model

        self.conversation = (
            load_conversation(conversation) if isinstance(conversation, str) else conversation
        )
        self.model = model or get_chat_model()
        self.turn = widgets.IntSlider(
            value=len(self.conversation.turns), min=1, max=len(self.conversation.turns),
            description="turn", continuous_update=False,
        )
        self.view = widgets.HTML()
        self.costs = widgets.HTML()
        self.records: list[TurnRecord] = []
        self.error: str | None = None
        self._replay = lru_cache(maxsize=64)(self._run)

    def strategy(self):  # pragma: no cover - defined by subclasses
        raise NotImplementedError

    def _run(self, strategy):
        return replay(strategy, self.conversation.turns, self.model, self.conversation.system)

    def _watch(self, *controls) -> None:
        for control in (*controls, self.turn):
            control.observe(lambda change: self.update(), names="value")

    def update(self) -> None:
        """Replay with the current control values and redraw both views."""
        strategy = self.strategy()
        try:
            self.records, self.error = self._replay(strategy), None
        except (TokenBudgetError, MessageBudgetError) as error:
            self.records, self.error = [], str(error)
            self.view.value = f"<p style='color:#b3261e'><b>No prompt fits:</b> {html.escape(str(error))}</p>"
            self.costs.value = ""
            return
        record = self.records[self.turn.value - 1]
        title = (f"{strategy.name}: turn {record.turn}, what the model is sent "
                 f"({record.prompt_tokens} prompt tokens)")
        self.view.value = (
            messages_html(record.timeline, record.marks, title)
            + f"<p><b>reply:</b> {html.escape(record.reply)}</p>"
        )
        totals = cost_summary(self.records)
        self.costs.value = (
            "<b>Cost per turn</b>" + cost_table(self.records).to_html()
            + "<p>" + ", ".join(f"{k}: {v}" for k, v in totals.items()) + "</p>"
        )

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


class TruncationExplorer(_Explorer):
    """Lesson 04: the article's ``slice(-N)``, a pair-safe count window and a token window.

    Controls: ``kind`` (which window), ``max_messages`` (N, messages), ``max_tokens`` (budget for
    the whole prompt, tokens), ``turn``.
    """

    KINDS = ("last N (slice)", "count window", "token window")

    def __init__(self, conversation: Conversation | str = "alice_month_en",
                 model: BaseChatModel | None = None):
        super().__init__(conversation, model)
        self.kind = widgets.ToggleButtons(options=self.KINDS, value="count window",
                                          description="window")
        self.max_messages = widgets.IntSlider(value=4, min=1, max=30, description="max messages",
                                              continuous_update=False)
        self.max_tokens = widgets.IntSlider(value=200, min=20, max=800, step=10,
                                            description="max tokens", continuous_update=False)
        self._watch(self.kind, self.max_messages, self.max_tokens)
        self.widget = widgets.VBox([self.kind, self.max_messages, self.max_tokens, self.turn,
                                    self.view, self.costs])
        self.update()

    def strategy(self):
        if self.kind.value == "last N (slice)":
            return LastN(self.max_messages.value)
        if self.kind.value == "count window":
            return CountWindow(self.max_messages.value)
        return TokenWindow(self.max_tokens.value)


class SummaryExplorer(_Explorer):
    """Lesson 05: a running summary with a count or a token trigger.

    Controls: ``trigger_kind`` (messages / tokens), ``max_messages`` and ``keep_messages`` (count
    trigger, messages), ``max_tokens`` and ``keep_tokens`` (token trigger, tokens),
    ``summary_last`` (the article's placement, after the recent messages), ``turn``.
    """

    def __init__(self, conversation: Conversation | str = "alice_month_en",
                 model: BaseChatModel | None = None):
        super().__init__(conversation, model)
        self.trigger_kind = widgets.ToggleButtons(options=("messages", "tokens"), value="messages",
                                                  description="trigger")
        self.max_messages = widgets.IntSlider(value=6, min=2, max=30, description="trigger >",
                                              continuous_update=False)
        self.keep_messages = widgets.IntSlider(value=2, min=0, max=20, description="keep recent",
                                               continuous_update=False)
        self.max_tokens = widgets.IntSlider(value=200, min=50, max=1000, step=10,
                                            description="trigger > tok", continuous_update=False)
        self.keep_tokens = widgets.IntSlider(value=80, min=0, max=500, step=10,
                                             description="keep ~tok", continuous_update=False)
        self.summary_last = widgets.Checkbox(value=False,
                                             description="summary after recent (article)")
        self._watch(self.trigger_kind, self.max_messages, self.keep_messages, self.max_tokens,
                    self.keep_tokens, self.summary_last)
        self.widget = widgets.VBox([
            self.trigger_kind,
            widgets.HBox([self.max_messages, self.keep_messages]),
            widgets.HBox([self.max_tokens, self.keep_tokens]),
            self.summary_last, self.turn, self.view, self.costs,
        ])
        self.update()

    def strategy(self):
        if self.trigger_kind.value == "messages":
            trigger = CountTrigger(self.max_messages.value, self.keep_messages.value)
        else:
            trigger = TokenTrigger(self.max_tokens.value, self.keep_tokens.value)
        return RunningSummary(trigger, summary_last=self.summary_last.value)


class RetrievalExplorer:
    """Lesson 06: search a user's Milvus memory live and see what the model would be sent.

    Controls: ``top_k`` (turns retrieved, 1..10), ``min_score`` (drop turns whose cosine similarity
    is below it; 0 means no threshold, as ``RetrievalMemory``'s default), ``question`` (the query,
    searched when you press Enter or leave the box).

    Args:
        store: a ``MemoryStore`` with the user's turns.
        user_id: whose memory (``validate_id``).
        question: the first query.
        session_id: search only this conversation (default: all the user's sessions).

    Attributes:
        memories: the ``Memory`` list of the latest search, best first, with scores.
        sent: the text of the human message the model would be sent (``format_retrieved``; the
            question alone when nothing passes).

    The query's embedding is cached per question, so moving a slider only searches again
    (milliseconds); the search itself always runs, so turns added meanwhile are found.
    """

    def __init__(self, store: MemoryStore, user_id: str, question: str = "What is my job?",
                 session_id: str | None = None) -> None:
        self.store = store
        self.user_id = validate_id(user_id, "user id")
        self.session_id = validate_id(session_id, "session id") if session_id is not None else None
        self.top_k = widgets.IntSlider(value=3, min=1, max=10, description="top k",
                                       continuous_update=False)
        self.min_score = widgets.FloatSlider(value=DEFAULT_MIN_SCORE or 0.0, min=0.0, max=1.0, step=0.05,
                                             description="min score", continuous_update=False)
        self.question = widgets.Text(value=question, description="question",
                                     continuous_update=False,
                                     layout=widgets.Layout(width="60%"))
        self.view = widgets.HTML()
        self.memories: list[Memory] = []
        self.sent = ""
        self._embed = lru_cache(maxsize=64)(self.store.embeddings.embed_query)
        for control in (self.top_k, self.min_score, self.question):
            control.observe(lambda change: self.update(), names="value")
        self.widget = widgets.VBox([widgets.HBox([self.top_k, self.min_score]), self.question,
                                    self.view])
        self.update()

    def update(self) -> None:
        """Search with the current control values and redraw the view."""
        question = self.question.value.strip()
        if not question:
            self.memories, self.sent = [], ""
            self.view.value = "<p>Type a question.</p>"
            return
        min_score = self.min_score.value or None  # 0: no threshold
        self.memories = self.store.search(self.user_id, None, self.top_k.value, min_score,
                                          self.session_id, query_vector=self._embed(question))
        self.sent = format_retrieved(self.memories, question)
        self.view.value = self._html(question)

    def table(self) -> pd.DataFrame:
        """The retrieved turns as a table: rank, score, round, session, content."""
        return memories_table(self.memories)

    def _html(self, question: str) -> str:
        where = f"session {self.session_id!r}" if self.session_id else "all sessions"
        head = (f"<b>{html.escape(self.user_id)}'s memory ({where}): top {self.top_k.value}"
                + (f", score &ge; {self.min_score.value:.2f}" if self.min_score.value else "")
                + f" for {html.escape(repr(question))}</b>")
        if self.memories:
            found = self.table().to_html(index=False)
        else:
            found = "<p><i>No stored turn passes: the model is sent the question alone.</i></p>"
        tokens = count_text_tokens(self.sent)
        return (f"<p>{head}</p>{found}<p><b>What the model is sent</b> (after the system prompt, "
                f"{tokens} tokens of text):</p><pre style='white-space:pre-wrap'>"
                f"{html.escape(self.sent)}</pre>")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def memories_table(memories: list[Memory], width: int = 90) -> pd.DataFrame:
    """Turns from Milvus as a table, one row per turn.

    Search results (``store.search``, scores set): rank, score (cosine similarity, 3 decimals),
    round, session, chunks, content. Stored turns (``store.turns``, no scores): round, session,
    timestamp, chunks, content. Content is put on one line and cut to ``width`` characters.
    """
    scored = any(m.score is not None for m in memories)
    columns = (["rank", "score"] if scored else []) + ["round", "session"] + \
        ([] if scored else ["timestamp"]) + ["chunks", "content"]
    rows = []
    for rank, memory in enumerate(memories, start=1):
        text = " ".join(memory.content.split())
        row = {"rank": rank, "score": None if memory.score is None else round(memory.score, 3),
               "round": memory.round, "session": memory.session_id,
               "timestamp": memory.timestamp[:19], "chunks": memory.chunks,
               "content": text if len(text) <= width else text[: width - 1] + "…"}
        rows.append({c: row[c] for c in columns})
    return pd.DataFrame(rows, columns=columns)


def compare_strategies(strategies, conversation: Conversation | str = "alice_month_en",
                       model: BaseChatModel | None = None) -> pd.DataFrame:
    """The article's cost table, measured: each strategy replayed on ``conversation``.

    Args:
        strategies: ``MemoryStrategy`` objects (``FullHistory()``, ``CountWindow(4)``, ...).
        conversation: a ``Conversation`` or its id.
        model: chat model (default: the configured one).

    Returns:
        ``helpers.replay.article_cost_table`` as a DataFrame indexed by strategy name (the
        evidence-recall column is left out: sample conversations have no probes).
    """
    from helpers.models import get_chat_model

    conversation = load_conversation(conversation) if isinstance(conversation, str) else conversation
    model = model or get_chat_model()
    runs = {s.name: replay(s, conversation.turns, model, conversation.system) for s in strategies}
    return pd.DataFrame(article_cost_table(runs)).drop(columns="evidence recall").set_index("strategy")
