"""Sliders for lessons 04-07: move a threshold, watch what the model is sent and what it costs.

The lesson 04/05 explorers replay a sample conversation (``helpers.replay.replay``) with the
values of their controls and show, for the chosen turn, what the model is sent: the kept messages
and any summary, with each run of dropped or summarized messages collapsed into one line
("… 23 earlier messages dropped"), so the part a slider changes is on the first screen. The cost
of every turn is one click away (an accordion). Replays are cached per setting, so moving back to
a value is instant; while one runs, the status line says "replaying…". Controls that do nothing
in the current mode are disabled. Tests set the controls' ``.value`` and read ``.view.value`` /
``.records``.

``RetrievalExplorer`` (lesson 06) searches a Milvus memory live instead: top-k, a minimum score and
the question, with the turns found and the message the model would be sent (tests read
``.memories``). ``LayeredExplorer`` (lesson 07) replays a conversation through ``LayeredMemory``
with the budgets of its sliders (window, summary and retrieval tokens, top-k) and shows the
prompt, section by section.

Every explorer offers a conversation dropdown: the English month (``alice_month_en``) and its
Korean twin (``minsu_month_ko``). Colours come from JupyterLab's theme variables, so the views read
in the light and the dark theme.

In a static copy of a notebook (GitHub, nbviewer) widgets do not render: the lessons show
``explorer.snapshot()`` (the same view and cost table for the default values) below each explorer.
"""

from __future__ import annotations

import html
import uuid
from collections.abc import Sequence
from contextlib import contextmanager

import ipywidgets as widgets
import pandas as pd
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel

from helpers.course.display import ERROR_COLOUR, MUTED_COLOUR, TEXT_COLOUR, messages_html
from helpers.data import Conversation, load_conversation
from helpers.milvus_common import DEFAULT_MIN_SCORE, Memory, MilvusStoreError, validate_id
from helpers.milvus_store import MemoryStore
from helpers.replay import TurnRecord, article_cost_table, cost_summary, replay
from helpers.retrieval import format_retrieved
from helpers.strategies import CountWindow, LastN, RunningSummary, TokenWindow
from helpers.summarization import CountTrigger, TokenTrigger
from helpers.tokens import count_text_tokens
from helpers.truncation import MessageBudgetError, TokenBudgetError

# The conversations the explorers offer: the English month and its Korean twin.
CONVERSATIONS = ("alice_month_en", "minsu_month_ko")
# The minimum-score slider of the retrieval explorer: (min, max, step). Its minimum means "no
# threshold". Similarities depend on the embedding model: multilingual-e5-small (the offline
# default) puts a conversation's sentences in a narrow high band, right pairs ~0.79-0.90 and wrong
# ones ~0.70-0.85 (benchmarks/bench_embeddings.py); all-MiniLM-L6-v2 spread them over 0..0.7. A
# range of 0.6-1.0 in steps of 0.01 lets the slider cut inside e5's band.
MIN_SCORE_RANGE = (0.6, 1.0, 0.01)
# The explorer's view scrolls inside this height, so the whole explorer fits one screen.
VIEW_MAX_HEIGHT = "520px"
# Labels are shown whole (ipywidgets cuts descriptions at 80 px by default).
FULL_LABEL = {"description_width": "initial"}
BUTTONS = {"description_width": "initial", "button_width": "130px"}
BUSY_TEXT = "⏳ replaying…"


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


def _slider(description: str, value: int, low: int, high: int, step: int = 1) -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                             continuous_update=False, style=FULL_LABEL,
                             layout=widgets.Layout(width="360px"))


def _conversation(conversation: Conversation | str) -> Conversation:
    return load_conversation(conversation) if isinstance(conversation, str) else conversation


def _conversation_dropdown(first: Conversation,
                           conversations: Sequence[str]) -> widgets.Dropdown:
    options = [first.id, *[c for c in conversations if c != first.id]]
    return widgets.Dropdown(options=options, value=first.id, description="conversation",
                            style=FULL_LABEL, layout=widgets.Layout(width="320px"))


def _error_html(title: str, error: Exception | str) -> str:
    return (f"<p style='color:{ERROR_COLOUR}'><b>{html.escape(title)}</b> "
            f"{html.escape(str(error))}</p>")


class _Explorer:
    """Shared machinery: controls -> strategy -> cached replay -> HTML views, a status line and
    a conversation dropdown."""

    def __init__(self, conversation: Conversation | str, model: BaseChatModel | None,
                 conversations: Sequence[str] = CONVERSATIONS):
        from helpers.models import get_chat_model

        self.conversation = _conversation(conversation)
        self.model = model or get_chat_model()
        self.conversation_choice = _conversation_dropdown(self.conversation, conversations)
        self.turn = _slider("turn", len(self.conversation.turns), 1, len(self.conversation.turns))
        self.status = widgets.HTML(layout=widgets.Layout(min_width="140px"))
        self.view = widgets.HTML(layout=widgets.Layout(max_height=VIEW_MAX_HEIGHT, overflow="auto"))
        self.costs = widgets.HTML()
        self.cost_box = widgets.Accordion(children=[self.costs], selected_index=None)
        self.cost_box.set_title(0, "Cost per turn")
        self.records: list[TurnRecord] = []
        self.error: str | None = None
        self._cache: dict = {}
        self._holding = False
        self.conversation_choice.observe(self._on_conversation, names="value")

    def strategy(self):  # pragma: no cover - defined by subclasses
        raise NotImplementedError

    def controls_in_use(self) -> None:
        """Disable the controls the current mode does not use (subclasses)."""

    def _run(self, strategy):
        return replay(strategy, self.conversation.turns, self.model, self.conversation.system)

    def _replay(self, strategy):
        key = (self.conversation.id, strategy)
        if key not in self._cache:
            self._cache[key] = self._run(strategy)
        return self._cache[key]

    def _watch(self, *controls) -> None:
        for control in (*controls, self.turn):
            control.observe(lambda change: None if self._holding else self.update(), names="value")

    def _on_conversation(self, change) -> None:
        self.conversation = load_conversation(change["new"])
        n = len(self.conversation.turns)
        self._holding = True
        try:
            self.turn.max = n
            self.turn.value = n
        finally:
            self._holding = False
        self.update()

    @contextmanager
    def busy(self):
        """Show "replaying…" while the body runs (the front end gets it at once)."""
        self.status.value = f"<span style='color:{MUTED_COLOUR}'>{BUSY_TEXT}</span>"
        try:
            yield
        finally:
            self.status.value = ""

    def update(self) -> None:
        """Replay with the current control values and redraw both views."""
        self.controls_in_use()
        try:
            strategy = self.strategy()
            with self.busy():
                self.records, self.error = self._replay(strategy), None
        except (TokenBudgetError, MessageBudgetError, ValueError) as error:
            self.records, self.error = [], str(error)
            self.view.value = _error_html("No prompt fits:", error)
            self.costs.value = ""
            return
        self.view.value = self._view_html(strategy)
        totals = cost_summary(self.records)
        self.costs.value = (
            cost_table(self.records).to_html()
            + f"<p style='color:{TEXT_COLOUR}'>"
            + ", ".join(f"{k}: {v}" for k, v in totals.items()) + "</p>"
        )

    def _view_html(self, strategy) -> str:
        record = self.records[self.turn.value - 1]
        title = (f"{strategy.name}: turn {record.turn}, what the model is sent "
                 f"({record.prompt_tokens} prompt tokens)")
        return (
            messages_html(record.timeline, record.marks, title, collapse=True)
            + f"<p style='color:{TEXT_COLOUR}'><b>reply:</b> {html.escape(record.reply)}</p>"
        )

    def snapshot(self):
        """The current view and the cost table as one HTML output: what static readers see."""
        from IPython.display import HTML

        return HTML(self.view.value + "<h4>Cost per turn</h4>" + self.costs.value)

    def _layout(self, *rows) -> widgets.VBox:
        return widgets.VBox([*rows, widgets.HBox([self.turn, self.status]), self.view,
                             self.cost_box])

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


class TruncationExplorer(_Explorer):
    """Lesson 04: the article's ``slice(-N)``, a pair-safe count window and a token window.

    Controls: ``conversation_choice``, ``kind`` (which window), ``max_messages`` (N, messages;
    disabled for the token window), ``max_tokens`` (budget for the whole prompt, tokens; enabled
    only for the token window), ``turn``.
    """

    KINDS = ("last N (slice)", "count window", "token window")

    def __init__(self, conversation: Conversation | str = "alice_month_en",
                 model: BaseChatModel | None = None, conversations: Sequence[str] = CONVERSATIONS):
        super().__init__(conversation, model, conversations)
        self.kind = widgets.ToggleButtons(options=self.KINDS, value="count window",
                                          description="window", style=BUTTONS)
        self.max_messages = _slider("max messages", 4, 1, 30)
        self.max_tokens = _slider("max tokens", 200, 20, 800, 10)
        self._watch(self.kind, self.max_messages, self.max_tokens)
        self.widget = self._layout(self.conversation_choice, self.kind,
                                   widgets.HBox([self.max_messages, self.max_tokens]))
        self.update()

    def controls_in_use(self) -> None:
        tokens = self.kind.value == "token window"
        self.max_tokens.disabled = not tokens
        self.max_messages.disabled = tokens

    def strategy(self):
        if self.kind.value == "last N (slice)":
            return LastN(self.max_messages.value)
        if self.kind.value == "count window":
            return CountWindow(self.max_messages.value)
        return TokenWindow(self.max_tokens.value)


class SummaryExplorer(_Explorer):
    """Lesson 05: a running summary with a count or a token trigger.

    Controls: ``conversation_choice``, ``trigger_kind`` (messages / tokens), ``max_messages`` and
    ``keep_messages`` (count trigger, messages), ``max_tokens`` and ``keep_tokens`` (token
    trigger, tokens); the pair of the other trigger is disabled. ``summary_last`` (the article's
    placement, after the recent messages), ``turn``.
    """

    def __init__(self, conversation: Conversation | str = "alice_month_en",
                 model: BaseChatModel | None = None, conversations: Sequence[str] = CONVERSATIONS):
        super().__init__(conversation, model, conversations)
        self.trigger_kind = widgets.ToggleButtons(options=("messages", "tokens"), value="messages",
                                                  description="trigger", style=BUTTONS)
        self.max_messages = _slider("trigger > messages", 6, 2, 30)
        self.keep_messages = _slider("keep recent messages", 2, 0, 20)
        self.max_tokens = _slider("trigger > tokens", 200, 50, 1000, 10)
        self.keep_tokens = _slider("keep recent ~tokens", 80, 0, 500, 10)
        self.summary_last = widgets.Checkbox(value=False, style=FULL_LABEL,
                                             description="summary after the recent messages "
                                                         "(the article's placement)",
                                             layout=widgets.Layout(width="auto"))
        self._watch(self.trigger_kind, self.max_messages, self.keep_messages, self.max_tokens,
                    self.keep_tokens, self.summary_last)
        self.widget = self._layout(
            self.conversation_choice, self.trigger_kind,
            widgets.HBox([self.max_messages, self.keep_messages]),
            widgets.HBox([self.max_tokens, self.keep_tokens]),
            self.summary_last,
        )
        self.update()

    def controls_in_use(self) -> None:
        tokens = self.trigger_kind.value == "tokens"
        self.max_tokens.disabled = self.keep_tokens.disabled = not tokens
        self.max_messages.disabled = self.keep_messages.disabled = tokens

    def strategy(self):
        if self.trigger_kind.value == "messages":
            trigger = CountTrigger(self.max_messages.value, self.keep_messages.value)
        else:
            trigger = TokenTrigger(self.max_tokens.value, self.keep_tokens.value)
        return RunningSummary(trigger, summary_last=self.summary_last.value)


class CachedEmbeddings(Embeddings):
    """An embedding model that remembers every vector it computed (per text, queries and stored
    texts apart: some models embed them differently). The layered explorer replays the same
    turns for every setting: only the first replay pays for embeddings."""

    def __init__(self, embeddings: Embeddings) -> None:
        self.inner = embeddings
        self.documents: dict[str, list[float]] = {}
        self.queries: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.documents))
        if missing:
            self.documents.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return [self.documents[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self.queries:
            self.queries[text] = self.inner.embed_query(text)
        return self.queries[text]


class LayeredExplorer(_Explorer):
    """Lesson 07: the layered memory's budgets. Replays a conversation through ``LayeredMemory``
    (window + running summary + Milvus recall) in ``store`` and shows, for the chosen turn, the
    prompt section by section (summary, retrieved memories, window).

    Controls: ``conversation_choice``, ``window_tokens``, ``summary_tokens`` (the summary's cap,
    ``max_summary_tokens``), ``retrieval_tokens``, ``turn``, and ``statement_tokens`` (the
    retrieval budget when the new message is a statement, ``statement_retrieval_tokens``) when
    ``store`` has memory fields (recall, lesson 07), else ``top_k``.

    The explorer writes to its own collection beside the lesson's (``<collection>_explorer``, same
    Milvus, re-created when the explorer is), with a ``CachedEmbeddings`` copy of the store's
    model: each setting is replayed once under its own user id, so settings never see each
    other's memories, and only the first replay pays for embeddings. Closing or dropping the
    lesson's ``store`` afterwards does not stop the explorer.
    """

    def __init__(self, store: MemoryStore, conversation: Conversation | str = "alice_month_en",
                 model: BaseChatModel | None = None, conversations: Sequence[str] = CONVERSATIONS):
        super().__init__(conversation, model, conversations)
        from helpers.config import milvus_connection

        token = milvus_connection(store._settings)[1] if store.kind != "lite" else None
        self.store = MemoryStore(uri=store.uri, token=token, collection=f"{store.collection}_explorer",
                                 embeddings=CachedEmbeddings(store.embeddings), dim=store.dim,
                                 drop_existing=True, settings=store._settings,
                                 memory_fields=store.has_memory_fields)
        self.recall = store.has_memory_fields
        self._run_id = uuid.uuid4().hex[:6]
        self.window_tokens = _slider("window tokens", 150, 50, 600, 25)
        self.summary_tokens = _slider("summary tokens", 120, 20, 450, 10)
        self.retrieval_tokens = _slider("retrieval tokens", 120, 20, 800, 10)
        self.top_k = _slider("top k", 3, 1, 8)
        self.statement_tokens = _slider("statement tokens", 0, 0, 400, 10)
        self._watch(self.window_tokens, self.summary_tokens, self.retrieval_tokens, self.top_k,
                    self.statement_tokens)
        self.widget = self._layout(
            self.conversation_choice,
            widgets.HBox([self.window_tokens, self.summary_tokens]),
            widgets.HBox([self.retrieval_tokens,
                          self.statement_tokens if self.recall else self.top_k]),
        )
        self.update()

    def strategy(self):
        from helpers.layered import LayeredMemory

        values = (self.window_tokens.value, self.summary_tokens.value,
                  self.retrieval_tokens.value, self.top_k.value, self.statement_tokens.value)
        user = f"explore-{self._run_id}-{self.conversation.id}-" + "-".join(map(str, values))
        return values, LayeredMemory(self.store, user, "session-1", window_tokens=values[0],
                                     max_summary_tokens=values[1], retrieval_tokens=values[2],
                                     top_k=values[3], statement_retrieval_tokens=values[4],
                                     summary_every=0)

    def _replay(self, strategy):
        values, memory = strategy
        key = (self.conversation.id, values)
        if key not in self._cache:
            self._cache[key] = self._run(memory)
        return self._cache[key]

    def update(self) -> None:
        try:
            super().update()
        except MilvusStoreError as error:
            self.records, self.error = [], str(error)
            self.view.value = _error_html("Milvus:", error)

    def _view_html(self, strategy) -> str:
        _, memory = strategy
        record = self.records[self.turn.value - 1]
        prompt = record.prompt
        earlier = sum(m in ("dropped", "summarized", "retrieved") for m in record.marks)
        retrieval = (f"retrieval {memory.retrieval_tokens} for a question, "
                     f"{memory.statement_retrieval_tokens} for a statement" if self.recall else
                     f"retrieval {memory.retrieval_tokens}, top {memory.top_k}")
        title = (f"turn {record.turn}: what the model is sent ({record.prompt_tokens} prompt "
                 f"tokens; budgets: window {memory.window_tokens}, summary "
                 f"{memory.max_summary_tokens}, {retrieval})")
        note = (f"<p style='color:{MUTED_COLOUR}'>{earlier} earlier messages are outside "
                "the window: they reach the model only through the summary or a retrieved "
                "memory.</p>")
        return (messages_html(prompt, prompt.marks(), title) + note
                + f"<p style='color:{TEXT_COLOUR}'><b>reply:</b> {html.escape(record.reply)}</p>")


class RetrievalExplorer:
    """Lesson 06: search a user's Milvus memory live and see what the model would be sent.

    Controls: ``conversation_choice`` (whose memory: the user given, or a sample conversation
    written to the store on first choice under its id, e.g. ``minsu_month_ko``), ``top_k``
    (turns retrieved, 1..10), ``min_score`` (drop turns whose cosine similarity is below it; the
    slider's minimum means no threshold, as ``RetrievalMemory``'s default; range
    ``MIN_SCORE_RANGE``), ``question`` (the query, searched when you press Enter or leave the box).

    Args:
        store: a ``MemoryStore`` with the user's turns.
        user_id: whose memory (``validate_id``).
        question: the first query.
        session_id: search only this conversation (default: all the user's sessions).
        conversations: sample conversations offered besides ``user_id``'s memory.

    Attributes:
        memories: the ``Memory`` list of the latest search, best first, with scores.
        sent: the text of the human message the model would be sent (``format_retrieved``; the
            question alone when nothing passes).

    The query's embedding is cached per question, so moving a slider only searches again
    (milliseconds); the search itself always runs, so turns added meanwhile are found. An error
    (a store closed or dropped) is shown in the view, with how to reopen the store.
    """

    QUESTIONS = {"en": "What is my job?", "ko": "제 직업이 뭐예요?"}

    def __init__(self, store: MemoryStore, user_id: str, question: str = "What is my job?",
                 session_id: str | None = None,
                 conversations: Sequence[str] = ("minsu_month_ko",)) -> None:
        self.store = store
        self.user_id = validate_id(user_id, "user id")
        self.session_id = validate_id(session_id, "session id") if session_id is not None else None
        self._questions = {self.user_id: question}
        self.conversation_choice = widgets.Dropdown(
            options=[self.user_id, *conversations], value=self.user_id, description="memory of",
            style=FULL_LABEL, layout=widgets.Layout(width="320px"))
        low, high, step = MIN_SCORE_RANGE
        self.top_k = _slider("top k", 3, 1, 10)
        self.min_score = widgets.FloatSlider(
            value=max(DEFAULT_MIN_SCORE or low, low), min=low, max=high, step=step,
            description="min score", continuous_update=False, style=FULL_LABEL,
            layout=widgets.Layout(width="360px"))
        self.question = widgets.Text(value=question, description="question",
                                     continuous_update=False, style=FULL_LABEL,
                                     layout=widgets.Layout(width="60%"))
        self.status = widgets.HTML()
        self.view = widgets.HTML(layout=widgets.Layout(max_height=VIEW_MAX_HEIGHT, overflow="auto"))
        self.memories: list[Memory] = []
        self.sent = ""
        self.error: str | None = None
        self._embed_cache: dict[str, list[float]] = {}
        for control in (self.top_k, self.min_score, self.question):
            control.observe(lambda change: self.update(), names="value")
        self.conversation_choice.observe(self._on_conversation, names="value")
        self.widget = widgets.VBox([self.conversation_choice,
                                    widgets.HBox([self.top_k, self.min_score]),
                                    widgets.HBox([self.question, self.status]), self.view])
        self.update()

    @property
    def current_user(self) -> str:
        return self.conversation_choice.value

    def _embed(self, question: str) -> list[float]:
        if question not in self._embed_cache:
            self._embed_cache[question] = self.store.embeddings.embed_query(question)
        return self._embed_cache[question]

    def _on_conversation(self, change) -> None:
        user = change["new"]
        if user not in self._questions:
            conversation = load_conversation(user)
            self.status.value = f"<span style='color:{MUTED_COLOUR}'>⏳ storing {user}…</span>"
            try:
                if not self.store.turns(user, limit=1):
                    for number, text in enumerate(conversation.turns, start=1):
                        self.store.add_turn(user, "month", number, text)
                    self.store.flush()
            except MilvusStoreError as error:
                self.view.value = _error_html("Milvus:", error)
                return
            finally:
                self.status.value = ""
            self._questions[user] = self.QUESTIONS.get(conversation.language, self.QUESTIONS["en"])
        self.question.value = self._questions[user]  # searches if it changed
        self.update()

    def update(self) -> None:
        """Search with the current control values and redraw the view."""
        question = self.question.value.strip()
        self._questions[self.current_user] = question
        if not question:
            self.memories, self.sent = [], ""
            self.view.value = "<p>Type a question.</p>"
            return
        min_score = self.min_score.value if self.min_score.value > MIN_SCORE_RANGE[0] else None
        self.status.value = f"<span style='color:{MUTED_COLOUR}'>⏳ searching…</span>"
        try:
            self.memories = self.store.search(self.current_user, None, self.top_k.value, min_score,
                                              self.session_id, query_vector=self._embed(question))
            self.error = None
        except MilvusStoreError as error:
            self.memories, self.sent, self.error = [], "", str(error)
            self.view.value = _error_html("Milvus:", error)
            return
        finally:
            self.status.value = ""
        self.sent = format_retrieved(self.memories, question)
        self.view.value = self._html(question)

    def table(self) -> pd.DataFrame:
        """The retrieved turns as a table: rank, score, round, session, content."""
        return memories_table(self.memories)

    def snapshot(self):
        """The current view as one HTML output: what static readers see."""
        from IPython.display import HTML

        return HTML(self.view.value)

    def _html(self, question: str) -> str:
        where = f"session {self.session_id!r}" if self.session_id else "all sessions"
        threshold = self.min_score.value > MIN_SCORE_RANGE[0]
        head = (f"<b>{html.escape(self.current_user)}'s memory ({where}): top {self.top_k.value}"
                + (f", score &ge; {self.min_score.value:.2f}" if threshold else "")
                + f" for {html.escape(repr(question))}</b>")
        if self.memories:
            found = self.table().to_html(index=False, justify="left")
        else:
            found = "<p><i>No stored turn passes: the model is sent the question alone.</i></p>"
        tokens = count_text_tokens(self.sent)
        return (f"<div style='color:{TEXT_COLOUR}'><p>{head}</p>{found}<p><b>What the model is "
                f"sent</b> (after the system prompt, {tokens} tokens of text):</p>"
                f"<pre style='white-space:pre-wrap;color:{TEXT_COLOUR};background:transparent'>"
                f"{html.escape(self.sent)}</pre></div>")

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
