"""Windows: send the model only the newest part of a conversation; the strategies built on them.

``last_n_messages`` is the article's naive ``slice(-4)``; ``count_window`` keeps a turn whole or not at all;
``token_window`` is LangChain's ``trim_messages`` with ``max_tokens`` the whole prompt, and a question that
does not fit raises ``TokenBudgetError`` instead of vanishing (docs/design-notes.md, "Long messages")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage, trim_messages

from helpers.history import each_once
from helpers.memory import Prompt, label
from helpers.tokens import REPLY_PRIMING_TOKENS, TokenCounter, count_message_tokens, default_counter


def last_n_messages(messages: Sequence[BaseMessage], n: int) -> list[BaseMessage]:
    """``list(messages[-n:])`` (``n``: messages, int >= 0; ``[]`` for 0), the system message counted
    like any other. Raises ``ValueError`` for a negative ``n``, ``TypeError`` for a non-int."""
    _check_int("n", n, minimum=0)
    return list(messages[-n:]) if n else []


def count_window(messages: Sequence[BaseMessage], max_messages: int) -> list[BaseMessage]:
    """A leading ``SystemMessage`` (kept, not counted) + the last ``max_messages`` (int >= 1)
    messages, the start moved forward to the next human message; ``[]`` for an empty history,
    ``[system]`` (or ``[]``) without a human message. Raises ``MessageBudgetError`` when the newest
    turn alone is longer, ``ValueError`` for ``max_messages`` < 1, ``TypeError`` for a non-int."""
    _check_int("max_messages", max_messages, minimum=1)
    if not messages:
        return []
    head, start = _split_system(messages)
    end = len(messages)
    k = next_human(messages, max(start, end - max_messages))
    if k == end and (newest := _newest_human(messages, start, k)) is not None:
        raise MessageBudgetError(max_messages=max_messages, turn_messages=end - newest)
    return head + list(messages[k:])


def next_human(messages: Sequence[BaseMessage], start: int, stop: int | None = None) -> int:
    """The index of the first human message at or after ``start`` and before ``stop`` (default: the end),
    else ``stop``: where a window may begin without a reply whose question is gone."""
    stop = len(messages) if stop is None else stop
    while start < stop and messages[start].type != "human":
        start += 1
    return start


def newest_fitting(messages: Sequence[BaseMessage], max_tokens: int,
                   count: Callable[[BaseMessage], int] = count_message_tokens, *, start: int = 0) -> int:
    """The index ``k >= start`` of the longest tail ``messages[k:]`` whose per-message counts sum
    to at most ``max_tokens`` (tokens): walks back from the newest message and stops at the first
    that does not fit (older messages are never counted). ``len(messages)`` if none fits."""
    used, k = 0, len(messages)
    while k > start:
        n = count(messages[k - 1])
        if used + n > max_tokens:
            break
        used, k = used + n, k - 1
    return k


def token_window(messages: Sequence[BaseMessage], max_tokens: int, *, model: str | None = None,
                 counter: TokenCounter | None = None, strict: bool = True) -> list[BaseMessage]:
    """``[system] + the longest tail`` within ``max_tokens`` (whole prompt, tokens: ``count_tokens`` of the
    result is at most it), starting on a human message: ``trim_messages(strategy="last", start_on="human",
    include_system=True)``, the same objects ``library_token_window`` returns whenever no error is raised.
    ``[]`` for an empty history, ``[system]`` (or ``[]``) without a human message. ``model``: tokenizer model
    name (``None``: cl100k_base); ``counter``: a ``TokenCounter`` to use and fill instead of
    ``default_counter(model)``. Raises ``TokenBudgetError`` when the newest human message (with the system
    message, the messages after it and reply priming) is over ``max_tokens`` or, without a human message, the
    system message alone is; ``TypeError`` when ``max_tokens`` is not an int. ``strict=False`` (what the
    ``TokenWindow`` strategy uses, so a long message never stops a chat): instead of raising, the system
    message and the newest turn whole (from the newest human message on), nothing older: over budget."""
    _check_int("max_tokens", max_tokens)
    if not messages:
        return []
    counter = default_counter(model) if counter is None else counter
    head, start = _split_system(messages)
    system_tokens = counter.message_tokens(head[0]) if head else 0
    budget = max_tokens - REPLY_PRIMING_TOKENS - system_tokens  # what the messages after the system may use
    k = newest_fitting(messages, budget, counter.message_tokens, start=start)
    if _newest_human(messages, k, len(messages)) is None:  # no human message in the fitting tail
        newest = _newest_human(messages, start, k)
        if newest is None and (system_tokens + REPLY_PRIMING_TOKENS <= max_tokens or not strict):
            return head  # no question at all: what trim_messages returns too
        if not strict:  # the question goes whole; the budget left nothing older to go with it
            return [*head, *messages[newest:]]
        after = 0 if newest is None else sum(map(counter.message_tokens, messages[newest + 1:]))
        raise TokenBudgetError(
            max_tokens=max_tokens, system_tokens=system_tokens, after_tokens=after,
            newest_tokens=counter.message_tokens(messages[newest]) if newest is not None else 0)
    # the fitting tail plus the first message that does not fit: the library's binary search
    # then finds the cut it would find on the whole history
    return trim_messages([*head, *messages[max(start, k - 1):]],
                         max_tokens=max_tokens - REPLY_PRIMING_TOKENS, token_counter=counter,  # cached counts
                         strategy="last", start_on="human", include_system=True, allow_partial=False)


def _check_int(name: str, value: object, minimum: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _split_system(messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], int]:
    return ([messages[0]], 1) if isinstance(messages[0], SystemMessage) else ([], 0)


def _newest_human(messages: Sequence[BaseMessage], start: int, stop: int) -> int | None:
    return next((i for i in range(stop - 1, start - 1, -1) if messages[i].type == "human"), None)


class TokenBudgetError(ValueError):
    """The newest human message does not fit the token budget: no window can hold the question.
    Attributes (tokens): ``max_tokens``, ``system_tokens`` (0 without one), ``newest_tokens``,
    ``after_tokens`` (messages after it in its turn), ``priming_tokens`` (3), ``required_tokens``
    (their sum: the smallest budget that works)."""

    def __init__(self, *, max_tokens: int, system_tokens: int, newest_tokens: int,
                 after_tokens: int = 0) -> None:
        self.max_tokens, self.system_tokens = max_tokens, system_tokens
        self.newest_tokens, self.after_tokens = newest_tokens, after_tokens
        self.priming_tokens = REPLY_PRIMING_TOKENS
        self.required_tokens = system_tokens + newest_tokens + after_tokens + REPLY_PRIMING_TOKENS
        after = f" + the messages after it ({after_tokens})" if after_tokens else ""
        super().__init__(
            f"token budget too small: max_tokens={max_tokens}, but the system message "
            f"({system_tokens} tokens) + the newest human message ({newest_tokens} tokens){after} "
            f"+ reply priming ({REPLY_PRIMING_TOKENS}) need {self.required_tokens} tokens. "
            "A window without the question is never returned: raise max_tokens to at least "
            f"{self.required_tokens}, or shorten the system prompt or the message.")


class MessageBudgetError(ValueError):
    """The newest turn alone has more messages than ``count_window``'s ``max_messages``.
    Attributes: ``max_messages``, ``turn_messages`` (from the newest human message to the end)."""

    def __init__(self, *, max_messages: int, turn_messages: int) -> None:
        self.max_messages, self.turn_messages = max_messages, turn_messages
        super().__init__(
            f"max_messages={max_messages} is too small: the newest turn (the newest human message "
            f"and the {turn_messages - 1} message(s) after it) has {turn_messages} messages, and a "
            f"window never starts after the question. Use max_messages >= {turn_messages}.")


class StoresEverything:
    """Base of the strategies that store every message (``MemoryStrategy``): the windows here, the stepped
    window and written memory of lesson 09; ``window`` picks what is sent."""

    embedding_calls, embedding_seconds = 0, 0.0

    def window(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        return messages

    def prompt(self, system, stored, new_message) -> Prompt:
        return label(self.window([system, *stored, new_message]), system, new_message)

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        return each_once(stored)  # a turn run again (a message of the same id twice): once

    def start_session(self, session_id: str, stored: Sequence[BaseMessage], date="") -> list[BaseMessage]:
        return list(stored)


class FullHistory(StoresEverything):
    """Send everything: system prompt + the whole history + the new message."""

    name = "full history"
    cost_note = ("never", "everything")


@dataclass(frozen=True)
class LastN(StoresEverything):
    """The article's ``slice(-4)``: the last ``n`` messages of the whole request, system included."""

    n: int = 4
    cost_note = ("every turn (a slice)", "the newest messages")
    name = property(lambda self: f"last {self.n} messages (slice)")

    def __post_init__(self) -> None:  # refused when made, not mid-chat
        _check_int("n", self.n, minimum=0)

    def window(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        return last_n_messages(messages, self.n)


@dataclass(frozen=True)
class CountWindow(StoresEverything):
    """System prompt + at most ``max_messages`` newest messages, starting on a user message."""

    max_messages: int = 4
    cost_note = ("every turn (a slice)", "the newest messages")
    name = property(lambda self: f"count window ({self.max_messages} messages)")

    def __post_init__(self) -> None:  # refused when made, not mid-chat
        _check_int("max_messages", self.max_messages, minimum=1)

    def window(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        return count_window(messages, self.max_messages)


@dataclass(frozen=True)
class TokenWindow(StoresEverything):
    """The longest newest part that fits ``max_tokens`` (whole prompt, tokens): ``token_window``. A new
    message over the budget is sent whole with the system prompt and nothing older (the budget bounds
    what comes with the question, never the question); ``strict=True``: raise ``TokenBudgetError``."""

    max_tokens: int = 200
    strict: bool = False
    cost_note = ("every turn (trim_messages)", "the newest messages within the budget")
    name = property(lambda self: f"token window ({self.max_tokens} tokens)")

    def __post_init__(self) -> None:  # refused when made, not mid-chat
        _check_int("max_tokens", self.max_tokens, minimum=1)

    def window(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        return token_window(messages, self.max_tokens, strict=self.strict)
