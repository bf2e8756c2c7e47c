"""Truncation: send the model only the newest part of a conversation.

Three windows, from the article's one-liner to the helper the later lessons use:

* ``last_n_messages(messages, n)``: the last ``n`` messages, exactly what the article the course
  grew from does with ``slice(-4)`` (``messages[-n:]`` in Python). Deliberately naive: it can drop
  the system prompt, start on an assistant reply whose question is gone ("Nice to meet you,
  Alice!" without "Hi! My name is Alice."), or keep a tool result without the call that asked for
  it (providers reject that request).
* ``count_window(messages, max_messages)``: a count window that respects the structure of a
  conversation: the leading system message is always kept (and not counted), and the window
  starts on a human message, so a turn is kept whole or not at all.
* ``token_window(messages, max_tokens)``: a token budget. The cut is made by LangChain's
  ``trim_messages(strategy="last", start_on="human", include_system=True)``, wrapped so that
  the count is right, the question is never lost, and each turn costs the same however long the
  stored history is (details below).

``window_marks(messages, window)`` says which original messages a window kept, for
``helpers.course.display.render_messages(messages, marks=...)``.

Tool calls. A window here is always the system message plus a *contiguous tail* of the history
that starts on a human message. In a well-formed history (every tool result follows the AI message
that called it, within the same turn, before the next human message) such a tail can never hold an
AI tool call without its results or a tool result without its call: the whole turn is in the window
or none of it is. Nothing is repaired in a history that is already broken (a stored orphan stays).

How ``token_window`` differs from calling ``trim_messages`` directly (the library way):

1. Budget semantics. ``max_tokens`` is the budget of the *whole prompt* as
   ``helpers.tokens.count_tokens`` counts it: every message (system included) plus the 3
   reply-priming tokens. ``count_tokens(token_window(m, b)) <= b`` always holds. ``trim_messages``
   calls its counter on sub-lists (the system message alone, then slices of the rest), so a counter
   that adds the +3 per call (``count_tokens`` itself) adds it twice or more and the window comes
   out short. Here the counter handed to the library sums per-message counts only, and the +3 is
   taken off the budget once (the library gets ``max_tokens - 3``).
2. The question is never lost. When the newest human message (with the system message and
   whatever follows it) does not fit, ``trim_messages`` silently returns only the system message,
   even with ``allow_partial=True``. Here that raises ``TokenBudgetError`` with the sizes.
3. Cost per turn. ``trim_messages`` with a tiktoken counter re-encodes its whole input on every
   call (a binary search over the history: about two full passes), so each turn costs more than
   the one before. Here token counts are cached per message (``helpers.tokens.TokenCounter``), and
   only the tail the budget can reach (plus the first message that no longer fits) is handed to
   ``trim_messages``,
   which still makes the final cut. The output is the same list ``trim_messages`` returns on the
   whole history with a correct counter (checked in ``tests/test_truncation.py`` on randomized
   histories, and in ``benchmarks/bench_trim.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, SystemMessage, trim_messages

from helpers.tokens import REPLY_PRIMING_TOKENS, TokenCounter, count_message_tokens, default_counter

__all__ = [
    "MessageBudgetError",
    "TokenBudgetError",
    "count_window",
    "last_n_messages",
    "library_token_window",
    "token_window",
    "window_marks",
]


class TokenBudgetError(ValueError):
    """The newest human message does not fit the token budget, so no window can hold the question.

    Attributes (all in tokens, as ``helpers.tokens`` counts them):
        max_tokens: the budget that was asked for (whole prompt, reply priming included).
        system_tokens: the leading system message (0 if there is none).
        newest_tokens: the newest human message.
        after_tokens: the messages after it that a window must keep too (AI replies, tool calls
            and results of the current turn; usually 0).
        priming_tokens: the reply-priming tokens (3).
        required_tokens: the smallest budget that would work: the sum of the four above.
    """

    def __init__(
        self, *, max_tokens: int, system_tokens: int, newest_tokens: int, after_tokens: int = 0
    ) -> None:
        self.max_tokens = max_tokens
        self.system_tokens = system_tokens
        self.newest_tokens = newest_tokens
        self.after_tokens = after_tokens
        self.priming_tokens = REPLY_PRIMING_TOKENS
        self.required_tokens = system_tokens + newest_tokens + after_tokens + REPLY_PRIMING_TOKENS
        after = f" + the messages after it ({after_tokens})" if after_tokens else ""
        super().__init__(
            f"token budget too small: max_tokens={max_tokens}, but the system message "
            f"({system_tokens} tokens) + the newest human message ({newest_tokens} tokens){after} "
            f"+ reply priming ({REPLY_PRIMING_TOKENS}) need {self.required_tokens} tokens. "
            "A window without the question is never returned: raise max_tokens to at least "
            f"{self.required_tokens}, or shorten the system prompt or the message."
        )


class MessageBudgetError(ValueError):
    """The newest turn alone has more messages than ``count_window``'s ``max_messages``.

    Attributes:
        max_messages: the window size asked for (messages, system message not counted).
        turn_messages: messages from the newest human message to the end of the history.
    """

    def __init__(self, *, max_messages: int, turn_messages: int) -> None:
        self.max_messages = max_messages
        self.turn_messages = turn_messages
        super().__init__(
            f"max_messages={max_messages} is too small: the newest turn (the newest human message "
            f"and the {turn_messages - 1} message(s) after it) has {turn_messages} messages, and a "
            "window never starts after the question. Use max_messages >= "
            f"{turn_messages}."
        )


# -- the article's window ---------------------------------------------------------------------


def last_n_messages(messages: Sequence[BaseMessage], n: int) -> list[BaseMessage]:
    """The last ``n`` messages, whatever they are: the article's ``slice(-4)``.

    Deliberately naive (the lesson shows what it breaks): the system message counts like any other
    and is dropped once it is older than ``n``; the window may start on an AI reply or a tool
    result; a tool result may be kept without its call.

    Args:
        messages: the history, oldest first (list of LangChain messages; any sequence).
        n: how many messages to keep (messages, >= 0). ``0`` gives ``[]`` (not the whole list, as
            Python's ``messages[-0:]`` would).

    Returns:
        A new list: ``list(messages[-n:])`` (the same message objects); all of them if ``n`` is
        larger than the history.

    Raises:
        ValueError: ``n`` is negative.
        TypeError: ``n`` is not an int.
    """
    _check_int("n", n, minimum=0)
    return list(messages[-n:]) if n else []


# -- pair-safe count window -------------------------------------------------------------------


def count_window(messages: Sequence[BaseMessage], max_messages: int) -> list[BaseMessage]:
    """The system message plus at most ``max_messages`` newest messages, starting on a human message.

    Rules:

    * a ``SystemMessage`` at index 0 is always kept, first, and is **not** counted in
      ``max_messages`` (later system messages are ordinary messages);
    * of the other messages, the last ``max_messages`` are taken (as in ``last_n_messages``), then
      the start moves *forward* to the next human message, so the window never starts on an AI
      reply or a tool result and never holds more than ``max_messages`` (plus the system message).
      A turn (human message, AI tool calls, tool results, AI answer) is kept whole or dropped whole,
      so a tool call is never kept without its results, nor a result without its call (for a
      well-formed history; see the module docstring).

    Args:
        messages: the history, oldest first (list of LangChain messages; any sequence).
        max_messages: window size in messages, system message not counted (int, >= 1).

    Returns:
        A new list of the same message objects: ``[system] + messages[k:]`` for the smallest ``k``
        that satisfies the rules. ``[]`` for an empty history; only ``[system]`` (or ``[]``) if the
        history has no human message at all.

    Raises:
        MessageBudgetError: (a ``ValueError``) the newest turn alone (newest human message and the
            messages after it) is longer than ``max_messages``: no window could keep the question.
        ValueError: ``max_messages`` < 1.
        TypeError: ``max_messages`` is not an int.
    """
    _check_int("max_messages", max_messages, minimum=1)
    if not messages:
        return []
    head, start = _split_system(messages)
    end = len(messages)
    k = max(start, end - max_messages)
    while k < end and messages[k].type != "human":
        k += 1
    if k == end:
        newest = _newest_human(messages, start, k)
        if newest is not None:
            raise MessageBudgetError(max_messages=max_messages, turn_messages=end - newest)
    return head + list(messages[k:])


# -- token window -----------------------------------------------------------------------------


def token_window(
    messages: Sequence[BaseMessage],
    max_tokens: int,
    *,
    model: str | None = None,
    counter: TokenCounter | None = None,
) -> list[BaseMessage]:
    """The longest tail of the history that fits ``max_tokens``, starting on a human message.

    The cut is LangChain's ``trim_messages(strategy="last", start_on="human", include_system=True,
    allow_partial=False)`` with a per-message tiktoken counter; see the module docstring for how
    this wrapper differs from calling it on the whole history.

    Rules (those of ``trim_messages``, with the budget of the whole prompt):

    * a ``SystemMessage`` at index 0 is always kept, first, and its tokens count against the budget;
    * then the longest tail of the other messages such that
      ``count_tokens([system, *tail]) <= max_tokens`` (3 reply-priming tokens included, once);
    * then its start moves forward to the first human message in it (a turn is kept whole or not
      at all, so tool calls and their results stay together).

    Args:
        messages: the history, oldest first (list of LangChain messages; any sequence). Messages are
            not copied or changed; the result holds the same objects.
        max_tokens: budget of the whole prompt in tokens, as ``helpers.tokens.count_tokens`` counts
            it (int). ``count_tokens(result) <= max_tokens`` always holds.
        model: model name for the tokenizer (``None``: ``cl100k_base``); picks
            ``default_counter(model)``. Ignored when ``counter`` is given.
        counter: a ``TokenCounter`` to use (and fill) instead of the shared one.

    Returns:
        ``[system] + tail`` (new list). ``[]`` for an empty history. If the history has no human
        message at all: ``[system]`` (or ``[]`` without a system message), as ``trim_messages``.

    Raises:
        TokenBudgetError: (a ``ValueError``) the newest human message, with the system message, the
            messages after it and the reply priming, is over ``max_tokens`` (plain ``trim_messages``
            would silently return the system message alone); or, in a history with no human
            message, the system message alone is over it. Attributes give the sizes in tokens.
        TypeError: ``max_tokens`` is not an int.

    Cost: the messages the budget reaches are counted (tiktoken once per new message, then from
    the cache); older messages are never looked at, so a call costs the same for a history of 100
    or of 10,000 messages. Only a history with no human message in reach is scanned further back
    (to tell "question too long" from "no question").
    """
    _check_int("max_tokens", max_tokens)
    if not messages:
        return []
    if counter is None:
        counter = default_counter(model)
    head, start = _split_system(messages)
    system_tokens = counter.message_tokens(head[0]) if head else 0
    budget = max_tokens - REPLY_PRIMING_TOKENS - system_tokens  # for the non-system messages

    # Walk back from the newest message while the tail fits; remember the counts for the library.
    counts = {id(m): counter.message_tokens(m) for m in head}
    total = 0
    k = len(messages)
    newest = None  # index of the newest human message seen
    while k > start:
        message = messages[k - 1]
        n = counter.message_tokens(message)
        counts[id(message)] = n
        if total + n > budget:
            break
        total += n
        k -= 1
        if newest is None and message.type == "human":
            newest = k

    if newest is None:  # no human message in the fitting tail
        newest = _newest_human(messages, start, k)
        if newest is not None or system_tokens + REPLY_PRIMING_TOKENS > max_tokens:
            after = 0
            if newest is not None:
                after = sum(counter.message_tokens(m) for m in messages[newest + 1 :])
            raise TokenBudgetError(
                max_tokens=max_tokens,
                system_tokens=system_tokens,
                newest_tokens=counter.message_tokens(messages[newest]) if newest is not None else 0,
                after_tokens=after,
            )
        return head  # no question at all: what trim_messages returns too

    # Hand the library the fitting tail plus the first message that does not fit (if any): its
    # binary search then finds the same cut it would find on the whole history.
    tail = messages[max(start, k - 1) :]

    def count(batch: Sequence[BaseMessage]) -> int:
        return sum(counts[id(m)] for m in batch)

    return trim_messages(
        [*head, *tail],
        max_tokens=max_tokens - REPLY_PRIMING_TOKENS,
        token_counter=count,
        strategy="last",
        start_on="human",
        include_system=True,
        allow_partial=False,
    )


# -- what happened ----------------------------------------------------------------------------


def library_token_window(messages: Sequence[BaseMessage], max_tokens: int) -> list[BaseMessage]:
    """The library way, for comparison: plain ``trim_messages`` on the whole history with a
    correctly counting tiktoken counter (per-message sum, the 3 reply-priming tokens taken off the
    budget once). No cache and no error: it re-encodes the whole history on every call, and it
    returns only the system message when the question does not fit. ``token_window`` must return
    the same list whenever it does not raise (tests and ``benchmarks/bench_trim.py`` check it).

    Args:
        messages: the history, oldest first.
        max_tokens: budget of the whole prompt, as ``helpers.tokens.count_tokens`` counts it.
    """
    return trim_messages(
        list(messages),
        max_tokens=max_tokens - REPLY_PRIMING_TOKENS,
        token_counter=lambda batch: sum(count_message_tokens(m) for m in batch),
        strategy="last",
        start_on="human",
        include_system=True,
    )


def window_marks(messages: Sequence[BaseMessage], window: Sequence[BaseMessage]) -> list[str]:
    """``"kept"`` or ``"dropped"`` for each message of the history, for ``render_messages(marks=...)``.

    Args:
        messages: the whole history (list of LangChain messages).
        window: what a window function returned for it (the same objects, in order; any of the
            functions above).

    Returns:
        A list of ``len(messages)`` strings. Messages are matched by identity first, else by
        equality, from the newest backwards (windows are tails, so equal-looking older messages,
        such as two "Thanks!", are not mistaken for the kept one).

    Raises:
        ValueError: a message of ``window`` is not in ``messages`` (in that order).
    """
    marks = ["dropped"] * len(messages)
    i = len(messages) - 1
    for w in reversed(window):
        j = i
        while j >= 0 and messages[j] is not w:
            j -= 1
        if j < 0:  # not the same object (e.g. a copy): fall back to equality
            j = i
            while j >= 0 and messages[j] != w:
                j -= 1
        if j < 0:
            raise ValueError(
                f"window message {w.type!r} {str(w.content)[:40]!r} is not in messages "
                "(or not in the same order)"
            )
        marks[j] = "kept"
        i = j - 1
    return marks


# -- internals --------------------------------------------------------------------------------


def _check_int(name: str, value: object, minimum: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _split_system(messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], int]:
    """``([system], 1)`` if the history starts with a SystemMessage, else ``([], 0)``."""
    if isinstance(messages[0], SystemMessage):
        return [messages[0]], 1
    return [], 0


def _newest_human(messages: Sequence[BaseMessage], start: int, stop: int) -> int | None:
    """Index of the newest human message in ``messages[start:stop]``, or ``None``."""
    for i in range(stop - 1, start - 1, -1):
        if messages[i].type == "human":
            return i
    return None
