"""Sliders for lessons 04-07: move a threshold, watch what the model is sent and what it costs.

``TruncationExplorer`` (04), ``SummaryExplorer`` (05), ``LayeredExplorer`` (07) replay a sample
conversation (cached per setting) and show the chosen turn's prompt, dropped or summarized runs as one
line, the cost per turn one click away. ``RetrievalExplorer`` (06) searches Milvus live. Colours are
JupyterLab theme variables (light and dark); static copies of a notebook show ``explorer.snapshot()``."""

from __future__ import annotations

import html
import uuid
from collections.abc import Sequence
from contextlib import contextmanager

import ipywidgets as widgets
import pandas as pd
from IPython.display import HTML, display
from langchain_core.language_models.chat_models import BaseChatModel

from helpers.course.data import Conversation, load_conversation
from helpers.course.display import (
    ERROR_COLOUR,
    MUTED_COLOUR,
    TEXT_COLOUR,
    article_cost_table,
    cost_summary,
    cost_table,
    messages_html,
    reply_column,
)
from helpers.course.offline_model import OfflineChatModel
from helpers.course.setup import get_chat_model
from helpers.memory import DROPPED, RETRIEVED, SUMMARIZED, replay
from helpers.retrieval import format_hits, format_turn
from helpers.store import Hit, MemoryStore, MilvusStoreError, Row, validate_id
from helpers.summary import CountTrigger, RunningSummary, TokenTrigger
from helpers.text import nfc
from helpers.tokens import count_text_tokens
from helpers.window import CountWindow, LastN, MessageBudgetError, TokenBudgetError, TokenWindow

CONVERSATIONS = ("alice_month_en", "minsu_month_ko")
# min score slider (min, max, step; min: no threshold): high and fine for e5's narrow band (design-notes)
MIN_SCORE_RANGE = (0.6, 1.0, 0.01)
VIEW_MAX_HEIGHT = "520px"  # the view scrolls inside this height: the explorer fits one screen
FULL_LABEL = {"description_width": "initial"}  # whole labels (ipywidgets cuts them at 80 px)
BUTTONS = {"description_width": "initial", "button_width": "130px"}
BUSY_TEXT = "⏳ replaying…"
# The offline stand-in's replies are labelled as its reading, so a miss or a quote is not read as memory's.
STAND_IN_REPLY = "the stand-in's reply (its reading of what was sent: it can miss a line it was sent):"


def _control(kind, description: str, width: str = "360px", **options):
    return kind(description=description, style=FULL_LABEL, layout=widgets.Layout(width=width), **options)


def _slider(description: str, value, low, high, step=1, kind=widgets.IntSlider):
    return _control(kind, description, value=value, min=low, max=high, step=step, continuous_update=False)


def _p(label: str, text: Exception | str, colour: str = TEXT_COLOUR) -> str:  # errors: ERROR_COLOUR
    return f"<p style='color:{colour}'><b>{html.escape(label)}</b> {html.escape(str(text))}</p>"


class _Shown:
    """Jupyter shows ``self.widget``; ``snapshot()`` is the HTML static readers see."""

    def snapshot(self):
        costs = getattr(self, "costs", None)
        return HTML(self.view.value + (f"<h4>Cost per turn</h4>{costs.value}" if costs else ""))

    def _ipython_display_(self) -> None:
        display(self.widget)

    _banner = ""  # the "not updated" line over the view, while one is shown

    def safely(self, callback):
        """``callback(change)`` for ``observe``: any error it raises is shown in the widget (``not_updated``),
        never raised (JupyterLab would show nothing: a frozen explorer, no message)."""
        def run(change=None) -> None:
            try:
                callback(change)
            except Exception as error:  # noqa: BLE001 - shown to the learner, not lost
                self.not_updated(error)
        return run

    def not_updated(self, error: Exception) -> None:
        """Show ``error`` in the status line and over the view, which is marked as not updated (it still
        shows the previous setting); ``self.error`` holds the message. The next good update clears it."""
        self.error = f"{type(error).__name__}: {error}"
        self.status.value = f"<span style='color:{ERROR_COLOUR}'>⚠ not updated</span>"
        banner = _p("Not updated:", f"{self.error}. Below: the previous setting's view. Change a control "
                    "to try again.", ERROR_COLOUR)
        self.view.value = banner + self.view.value.removeprefix(self._banner)
        self._banner = banner

    @contextmanager
    def busy(self, text: str = BUSY_TEXT):  # ``text`` in the status line while the block runs
        self.status.value = f"<span style='color:{MUTED_COLOUR}'>{text}</span>"
        try:
            yield
        finally:
            self.status.value = ""


class _Explorer(_Shown):
    """Controls -> strategy -> cached replay -> HTML views; every explorer has ``conversation_choice``,
    ``turn`` and a status line. A subclass builds its controls in ``_controls()`` (the rows shown)."""

    def __init__(self, conversation: Conversation | str = "alice_month_en",
                 model: BaseChatModel | None = None):
        self.conversation = load_conversation(conversation) if isinstance(conversation, str) else conversation
        self.model = model or get_chat_model()
        options = [self.conversation.id, *[c for c in CONVERSATIONS if c != self.conversation.id]]
        self.conversation_choice = _control(widgets.Dropdown, "conversation", "320px", options=options)
        self.turn = _slider("turn", len(self.conversation.turns), 1, len(self.conversation.turns))
        self.status = widgets.HTML(layout=widgets.Layout(min_width="140px"))
        self.view = widgets.HTML(layout=widgets.Layout(max_height=VIEW_MAX_HEIGHT, overflow="auto"))
        self.costs = widgets.HTML()
        self.cost_box = widgets.Accordion([self.costs], selected_index=None, titles=("Cost per turn",))
        self.records, self.error = [], None  # list[TurnRecord], the error shown instead
        self._cache, self._holding = {}, False
        self.conversation_choice.observe(self.safely(self._on_conversation), names="value")
        rows = self._controls()
        self._watched = [w for row in rows for w in getattr(row, "children", (row,))]
        for control in (*self._watched, self.turn):
            control.observe(self.safely(lambda change: None if self._holding else self.update()),
                            names="value")
        self.widget = widgets.VBox([self.conversation_choice, *rows, widgets.HBox([self.turn, self.status]),
                                    self.view, self.cost_box])
        self.safely(lambda change: self.update())()

    def controls_in_use(self) -> None:
        """Disable the controls the current mode does not use (subclasses)."""

    def _run(self, strategy):
        return replay(strategy, self.conversation.turns, self.model, self.conversation.system)

    def _replay(self, strategy):  # a tuple: (cache key, the strategy to replay)
        key, memory = strategy if isinstance(strategy, tuple) else (strategy, strategy)
        if (key := (self.conversation.id, key)) not in self._cache:
            self._cache[key] = self._run(memory)
        return self._cache[key]

    def _on_conversation(self, change) -> None:
        self.conversation = load_conversation(change["new"])
        self._holding = True
        try:
            self.turn.max = self.turn.value = len(self.conversation.turns)
        finally:
            self._holding = False
        self.update()

    def update(self) -> None:
        """Replay with the current control values and redraw both views."""
        self.controls_in_use()
        try:
            strategy = self.strategy()
            with self.busy():
                self.records, self.error = self._replay(strategy), None
        except (TokenBudgetError, MessageBudgetError, ValueError, MilvusStoreError) as error:
            self.records, self.error, self.costs.value = [], str(error), ""
            milvus = isinstance(error, MilvusStoreError)  # a closed or unreachable store
            self.view.value = _p("Milvus:" if milvus else "No prompt fits:", error, ERROR_COLOUR)
            return
        self.view.value = self._view_html(strategy)
        totals = ", ".join(f"{k}: {v}" for k, v in cost_summary(self.records).items())
        who = reply_column(self.model)
        table = cost_table(self.records).rename(columns={"reply": who}).to_html()
        self.costs.value = table + f"<p style='color:{TEXT_COLOUR}'>{totals}</p>"

    def _view_html(self, strategy) -> str:
        record = self.records[self.turn.value - 1]
        title = (f"{strategy.name}: turn {record.turn}, what the model is sent "
                 f"({record.prompt_tokens} prompt tokens)")
        return messages_html(record.timeline, record.marks, title, collapse=True) + self._reply_html(record)

    def _stand_in(self) -> bool:  # the offline stand-in answers, not a real model
        return isinstance(self.model, OfflineChatModel)

    def _reply_html(self, record) -> str:  # the stand-in's reply is labelled as its reading
        return _p(STAND_IN_REPLY if self._stand_in() else "reply:", record.reply)


class TruncationExplorer(_Explorer):
    """Lesson 04: the article's ``slice(-N)``, a pair-safe count window and a token window. Controls:
    ``kind``, ``max_messages`` (N), ``max_tokens`` (the whole prompt's budget, token window only)."""

    KINDS = ("last N (slice)", "count window", "token window")

    def _controls(self):
        self.kind = widgets.ToggleButtons(options=self.KINDS, value="count window",
                                          description="window", style=BUTTONS)
        self.max_messages = _slider("max messages", 4, 1, 30)
        self.max_tokens = _slider("max tokens", 200, 20, 800, 10)
        return self.kind, widgets.HBox([self.max_messages, self.max_tokens])

    def controls_in_use(self) -> None:
        tokens = self.kind.value == "token window"
        self.max_tokens.disabled, self.max_messages.disabled = not tokens, tokens

    def strategy(self):
        if self.kind.value == "token window":
            return TokenWindow(self.max_tokens.value)
        return (LastN if self.kind.value == "last N (slice)" else CountWindow)(self.max_messages.value)


class SummaryExplorer(_Explorer):
    """Lesson 05: a running summary. Controls: ``trigger_kind`` (messages / tokens), ``max_messages``
    / ``keep_messages`` (count trigger), ``max_tokens`` / ``keep_tokens`` (token trigger),
    ``summary_last`` (the article's placement)."""

    def _controls(self):
        self.trigger_kind = widgets.ToggleButtons(options=("messages", "tokens"), value="messages",
                                                  description="trigger", style=BUTTONS)
        self.max_messages = _slider("trigger > messages", 6, 2, 30)
        self.keep_messages = _slider("keep recent messages", 2, 0, 20)
        self.max_tokens = _slider("trigger > tokens", 200, 50, 1000, 10)
        self.keep_tokens = _slider("keep recent ~tokens", 80, 0, 500, 10)
        self.summary_last = _control(widgets.Checkbox, "summary after the recent messages (the article's "
                                     "placement)", "auto", value=False)
        return (self.trigger_kind, widgets.HBox([self.max_messages, self.keep_messages]),
                widgets.HBox([self.max_tokens, self.keep_tokens]), self.summary_last)

    def controls_in_use(self) -> None:
        tokens = self.trigger_kind.value == "tokens"
        self.max_tokens.disabled = self.keep_tokens.disabled = not tokens
        self.max_messages.disabled = self.keep_messages.disabled = tokens

    def strategy(self):
        counts = self.trigger_kind.value == "messages"
        trigger = (CountTrigger(self.max_messages.value, self.keep_messages.value) if counts
                   else TokenTrigger(self.max_tokens.value, self.keep_tokens.value))
        return RunningSummary(trigger, summary_last=self.summary_last.value)


class LayeredExplorer(_Explorer):
    """Lesson 07: ``LayeredMemory``'s budgets, opening on its defaults (sliders ``window_tokens``,
    ``summary_tokens``, ``retrieval_tokens`` for a message that asks: ``kinds.asks``; ``statement_tokens``).
    Its own collection (``<collection>_explorer`` at ``store``'s URI, token ``MILVUS_TOKEN``, re-created,
    with ``store``'s model) and one user id per setting: settings never share rows, and closing the
    lesson's ``store`` does not stop it."""

    def __init__(self, store: MemoryStore, conversation: Conversation | str = "alice_month_en",
                 model: BaseChatModel | None = None):
        self.store = store  # the lesson's; ``_controls`` opens our own
        self._run_id = uuid.uuid4().hex[:6]
        super().__init__(conversation, model)

    def _controls(self):
        from helpers.course.milvus import milvus_connection, open_store

        store = self.store
        token = milvus_connection()[1] if store.backend != "lite" else None
        self.store = open_store(f"{store.collection}_explorer", uri=store.uri, token=token, dim=store.dim,
                                embeddings=store.embeddings, drop_existing=True)
        self.window_tokens = _slider("window tokens", 150, 50, 600, 25)
        self.summary_tokens = _slider("summary tokens", 200, 20, 450, 10)  # LayeredMemory's defaults
        self.retrieval_tokens = _slider("retrieval tokens", 500, 20, 800, 10)
        self.statement_tokens = _slider("statement tokens", 0, 0, 400, 10)
        return (widgets.HBox([self.window_tokens, self.summary_tokens]),
                widgets.HBox([self.retrieval_tokens, self.statement_tokens]))

    def strategy(self):  # (slider values, LayeredMemory); the user id names both
        from helpers.layered import LayeredMemory

        values = tuple(slider.value for slider in self._watched)  # window, summary, retrieval, statement
        user = f"explore-{self._run_id}-{self.conversation.id}-" + "-".join(map(str, values))
        return values, LayeredMemory(self.store, user, "session-1", window_tokens=values[0],
                                     max_summary_tokens=values[1], retrieval_tokens=values[2],
                                     statement_retrieval_tokens=values[3])

    def _view_html(self, strategy) -> str:
        memory, record = strategy[1], self.records[self.turn.value - 1]
        earlier = sum(m in (DROPPED, SUMMARIZED, RETRIEVED) for m in record.marks)
        title = (f"turn {record.turn}: what the model is sent ({record.prompt_tokens} prompt tokens; "
                 f"budgets: window {memory.window_tokens}, summary {memory.max_summary_tokens}, "
                 f"retrieval {memory.retrieval_tokens} for a message that asks, "
                 f"{memory.statement_retrieval_tokens} for one that does not)")
        note = (f"<p style='color:{MUTED_COLOUR}'>{earlier} earlier messages are outside the window: "
                "they reach the model only through the summary or a retrieved memory.</p>")
        return messages_html(record.prompt, record.prompt.marks(), title) + note + self._reply_html(record)


class RetrievalExplorer(_Shown):
    """Lesson 06: search ``user_id``'s rows in ``store`` live, all sessions.
    Controls: ``conversation_choice`` (``user_id`` or ``minsu_month_ko``, stored on first
    choice, a ``format_turn`` row per message), ``top_k``, ``min_score`` (its minimum: none),
    ``question``. ``memories``: the latest hits, best first; ``sent``: the human message as
    ``RetrievalMemory`` builds it. Query vectors are kept; a Milvus error is shown in the view."""

    QUESTIONS = {"en": "What is my job?", "ko": "제 직업이 뭐예요?"}

    def __init__(self, store: MemoryStore, user_id: str, question: str = "What is my job?") -> None:
        self.store = store
        self.user_id = validate_id(user_id, "user id")
        self._questions = {self.user_id: question}
        self.conversation_choice = _control(widgets.Dropdown, "memory of", "320px",
                                            options=[self.user_id, "minsu_month_ko"])
        self.top_k = _slider("top k", 3, 1, 10)
        self.min_score = _slider("min score", MIN_SCORE_RANGE[0], *MIN_SCORE_RANGE, widgets.FloatSlider)
        self.question = _control(widgets.Text, "question", "60%", value=question, continuous_update=False)
        self.status = widgets.HTML()
        self.view = widgets.HTML(layout=widgets.Layout(max_height=VIEW_MAX_HEIGHT, overflow="auto"))
        self.memories, self.sent, self.error = [], "", None  # list[Hit], str, str | None
        self._vectors = {}  # question -> its query vector: a slider searches without embedding again
        for control in (self.top_k, self.min_score, self.question):
            control.observe(self.safely(lambda change: self.update()), names="value")
        self.conversation_choice.observe(self.safely(self._on_conversation), names="value")
        self.widget = widgets.VBox([self.conversation_choice, widgets.HBox([self.top_k, self.min_score]),
                                    widgets.HBox([self.question, self.status]), self.view])
        self.safely(lambda change: self.update())()

    @property
    def current_user(self) -> str:
        return self.conversation_choice.value

    def _on_conversation(self, change) -> None:
        user = change["new"]
        if user not in self._questions:
            conversation = load_conversation(user)
            try:
                with self.busy(f"⏳ storing {user}…"):
                    if not self.store.rows(user, limit=1):
                        for number, text in enumerate(conversation.turns, start=1):
                            self.store.add(user, "month", number, format_turn(text), kind="turn")
                        self.store.flush()
            except MilvusStoreError as error:
                self.view.value = _p("Milvus:", error, ERROR_COLOUR)
                return
            self._questions[user] = self.QUESTIONS.get(conversation.language, self.QUESTIONS["en"])
        self.question.value = self._questions[user]  # searches if it changed
        self.update()

    def update(self) -> None:
        """Search with the current control values and redraw the view."""
        question = nfc(self.question.value.strip())  # typed on macOS: decomposed Korean, one form here
        self._questions[self.current_user] = question
        if not question:
            self.memories, self.sent, self.view.value = [], "", "<p>Type a question.</p>"
            return
        threshold = self.min_score.value if self.min_score.value > MIN_SCORE_RANGE[0] else None
        try:
            with self.busy("⏳ searching…"):
                self.memories, self.error = self.store.search(
                    self.current_user, question, self.top_k.value, min_score=threshold,
                    query_vector=self.query_vector(question)), None
        except MilvusStoreError as error:
            self.memories, self.sent, self.error = [], "", str(error)
            self.view.value = _p("Milvus:", error, ERROR_COLOUR)
            return
        self.sent = f"{format_hits(self.memories)}\n\nQuestion: {question}" if self.memories else question
        self.view.value = self._html(question, threshold is not None)

    def query_vector(self, question: str) -> list[float]:
        """``question``'s query vector, embedded by the store's model the first time it is asked."""
        if question not in self._vectors:
            self._vectors[question] = self.store.embeddings.embed_query(question)
        return self._vectors[question]

    def _html(self, question: str, threshold: bool) -> str:
        head = (f"<b>{html.escape(self.current_user)}'s memory (all sessions): top {self.top_k.value}"
                + (f", score &ge; {self.min_score.value:.2f}" if threshold else "")
                + f" for {html.escape(repr(question))}</b>")
        found = (memories_table(self.memories).to_html(index=False, justify="left") if self.memories else
                 "<p><i>No stored turn passes: the model is sent the question alone.</i></p>")
        return (f"<div style='color:{TEXT_COLOUR}'><p>{head}</p>{found}<p><b>What the model is sent</b> "
                f"(after the system prompt, {count_text_tokens(self.sent)} tokens of text):</p>"
                f"<pre style='white-space:pre-wrap;color:{TEXT_COLOUR};background:transparent'>"
                f"{html.escape(self.sent)}</pre></div>")


def memories_table(rows: Sequence[Row], width: int = 90) -> pd.DataFrame:
    """Rows from Milvus as a table. Hits (``store.search``): rank, score (3 decimals), round,
    session, chunks, content; stored rows (``store.rows``): round, session, timestamp, chunks,
    content. Content is put on one line and cut to ``width`` characters."""
    scored = any(isinstance(row, Hit) for row in rows)
    columns = [*(["rank", "score"] if scored else []), "round", "session",
               *([] if scored else ["timestamp"]), "chunks", "content"]
    table = []
    for rank, row in enumerate(rows, start=1):
        text = " ".join(row.content.split())
        text = text if len(text) <= width else text[: width - 1] + "…"
        table.append({"rank": rank, "score": round(row.score, 3) if isinstance(row, Hit) else None,
                      "round": row.round, "session": row.session_id, "timestamp": row.timestamp[:19],
                      "chunks": len(row.ids), "content": text})
    return pd.DataFrame(table, columns=columns)


def compare_strategies(strategies, conversation: Conversation | str = "alice_month_en",
                       model: BaseChatModel | None = None) -> pd.DataFrame:
    """The article's cost table, measured: each ``MemoryStrategy`` replayed on ``conversation`` (a
    ``Conversation`` or its id) with ``model`` (default: the configured one); ``article_cost_table``
    by strategy name, without evidence recall (sample conversations have no probes)."""
    conversation = load_conversation(conversation) if isinstance(conversation, str) else conversation
    model = model or get_chat_model()
    runs = {s.name: replay(s, conversation.turns, model, conversation.system) for s in strategies}
    return pd.DataFrame(article_cost_table(runs)).drop(columns="evidence recall").set_index("strategy")
