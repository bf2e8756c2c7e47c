"""Sliders for lessons 04-05: move a threshold, watch what the model is sent and what it costs.

Each explorer replays a sample conversation (``helpers.strategies.replay``) with the values of its
controls and shows, for the chosen turn, every message of the conversation marked ``kept`` /
``dropped`` / ``summarized`` / ``summary``, then the cost of every turn. Replays are cached per
setting, so moving back to a value is instant. Tests set the controls' ``.value`` and read
``.view.value`` / ``.records``.

In a static copy of a notebook (GitHub, nbviewer) widgets do not render: the lessons print the
same tables for the default values below each explorer.
"""

from __future__ import annotations

import html
from functools import lru_cache

import ipywidgets as widgets
import pandas as pd
from langchain_core.language_models.chat_models import BaseChatModel

from helpers.data import Conversation, load_conversation
from helpers.display import messages_html
from helpers.strategies import (
    CountWindow,
    LastN,
    RunningSummary,
    TokenWindow,
    TurnRecord,
    cost_summary,
    replay,
)
from helpers.summarization import CountTrigger, TokenTrigger
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


def compare_strategies(strategies, conversation: Conversation | str = "alice_month_en",
                       model: BaseChatModel | None = None) -> pd.DataFrame:
    """The article's cost table, measured: one row per strategy replayed on ``conversation``.

    Args:
        strategies: list of strategy objects (``FullHistory()``, ``CountWindow(4)``, ...).
        conversation: a ``Conversation`` or its id.
        model: chat model (default: the configured one).

    Returns:
        A DataFrame indexed by strategy name with: extra calls per turn ("cost" of the trigger),
        prompt tokens (total, last turn), summary tokens, all tokens, and what is kept at the end.
    """
    from helpers.models import get_chat_model

    conversation = load_conversation(conversation) if isinstance(conversation, str) else conversation
    model = model or get_chat_model()
    rows = []
    for strategy in strategies:
        records = replay(strategy, conversation.turns, model, conversation.system)
        rows.append({
            "strategy": strategy.name,
            **{k: v for k, v in cost_summary(records).items() if k != "turns"},
            "kept at the last turn": what_is_kept(records[-1]),
        })
    return pd.DataFrame(rows).set_index("strategy")


def what_is_kept(record: TurnRecord) -> str:
    """In words: which earlier messages (neither the system prompt nor the new message) a turn's
    prompt carried, e.g. ``"6 of 32 earlier messages (26 dropped)"``."""
    earlier = list(zip(record.timeline[1:-1], record.marks[1:-1], strict=True))
    earlier = [(m, mark) for m, mark in earlier if mark != "summary"]
    kept = sum(mark == "kept" for _, mark in earlier)
    text = f"{kept} of {len(earlier)} earlier messages"
    if "summary" in record.marks:
        text += f" + a summary of {sum(mark == 'summarized' for _, mark in earlier)}"
    elif kept < len(earlier):
        text += f" ({len(earlier) - kept} dropped)"
    if record.marks[0] == "dropped":
        text += "; system prompt dropped"
    return text
