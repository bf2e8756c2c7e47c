"""The strategies of lessons 02-05 as ``helpers.memory.MemoryStrategy`` objects.

* ``FullHistory``: send everything (lesson 02).
* ``LastN``: the article's ``slice(-4)`` (lesson 04, deliberately naive).
* ``CountWindow`` / ``TokenWindow``: pair-safe windows by message count or by tokens (lesson 04,
  ``helpers.truncation``).
* ``RunningSummary``: a running summary with a count or token trigger (lesson 05,
  ``helpers.summarization``).

Each is a small frozen dataclass (its settings), so the same object can be replayed again and used
as a cache key. Run one with ``helpers.replay.replay``. Retrieval (lesson 06) is
``helpers.retrieval.RetrievalMemory``, layered memory (lesson 07) ``helpers.layered.LayeredMemory``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from helpers.memory import Prompt, label
from helpers.summarization import DEFAULT_MAX_SUMMARY_TOKENS, Trigger, build_prompt, summarize_step
from helpers.truncation import count_window, last_n_messages, token_window


class _StoresEverything:
    """Truncation stores every message and only chooses what to send: after a turn, after a
    session change, everything is kept; nothing is embedded."""

    embedding_calls = 0

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        return list(stored)

    def start_session(self, session_id: str, stored: Sequence[BaseMessage],
                      date: str = "") -> list[BaseMessage]:
        return list(stored)


class FullHistory(_StoresEverything):
    """Send everything: system prompt + the whole history + the new message (lesson 02)."""

    name = "full history"
    cost_note = ("never", "everything")

    def prompt(self, system, stored, new_message) -> Prompt:
        return label([system, *stored, new_message], system, new_message)


@dataclass(frozen=True)
class LastN(_StoresEverything):
    """The article's ``slice(-4)``: the last ``n`` messages of the whole request, system included."""

    n: int = 4
    cost_note = ("every turn (a slice)", "the newest messages")

    @property
    def name(self) -> str:
        return f"last {self.n} messages (slice)"

    def prompt(self, system, stored, new_message) -> Prompt:
        return label(last_n_messages([system, *stored, new_message], self.n), system, new_message)


@dataclass(frozen=True)
class CountWindow(_StoresEverything):
    """System prompt + at most ``max_messages`` newest messages, starting on a user message."""

    max_messages: int = 4
    cost_note = ("every turn (a slice)", "the newest messages")

    @property
    def name(self) -> str:
        return f"count window ({self.max_messages} messages)"

    def prompt(self, system, stored, new_message) -> Prompt:
        chosen = count_window([system, *stored, new_message], self.max_messages)
        return label(chosen, system, new_message)


@dataclass(frozen=True)
class TokenWindow(_StoresEverything):
    """The longest newest part that fits ``max_tokens`` (whole prompt), via ``trim_messages``."""

    max_tokens: int = 200
    cost_note = ("every turn (trim_messages)", "the newest messages within the budget")

    @property
    def name(self) -> str:
        return f"token window ({self.max_tokens} tokens)"

    def prompt(self, system, stored, new_message) -> Prompt:
        chosen = token_window([system, *stored, new_message], self.max_tokens)
        return label(chosen, system, new_message)


@dataclass(frozen=True)
class RunningSummary:
    """A running summary: after each turn, if ``trigger`` fires, fold older messages into it.

    Args:
        trigger: a ``CountTrigger`` or ``TokenTrigger`` (when to summarize, what to keep).
        max_summary_tokens: cap on the summary's size (tokens).
        summary_last: put the summary after the recent messages, as the article did (lesson 05
            shows why that misleads a model; for comparison only).
    """

    trigger: Trigger
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    summary_last: bool = False
    # the system prompt of the last request built (a token trigger counts what is sent)
    _system: list = field(default_factory=list, init=False, repr=False, compare=False)
    cost_note = ("when the history passes the trigger", "a running summary + recent messages")
    embedding_calls = 0

    @property
    def name(self) -> str:
        placement = ", after recent" if self.summary_last else ""
        return f"summary ({self.trigger.describe()}{placement})"

    def prompt(self, system, stored, new_message) -> Prompt:
        self._system[:] = [system] if system is not None else []  # the trigger counts it too
        return label(build_prompt(system, stored, new_message, self.summary_last), system, new_message)

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        step = summarize_step(model, stored, self.trigger, self.max_summary_tokens,
                              system=self._system[0] if self._system else None)
        return step.messages if step else list(stored)

    def start_session(self, session_id: str, stored: Sequence[BaseMessage],
                      date: str = "") -> list[BaseMessage]:
        return list(stored)


def history_of(turns: Sequence[str], model: BaseChatModel,
               system: SystemMessage | str = "") -> list[BaseMessage]:
    """``[system, user, reply, user, reply, ...]``: the full history after running ``turns``
    through ``model`` with nothing dropped (lesson 02's loop, via ``helpers.replay.replay``)."""
    from helpers.replay import replay

    records = replay(FullHistory(), turns, model, system)
    if not records:
        return [system if isinstance(system, SystemMessage) else SystemMessage(system)]
    last = records[-1]
    return [*last.prompt, AIMessage(last.reply)]
