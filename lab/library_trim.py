"""The library's token window, as it comes: plain ``trim_messages`` on the whole history, for the tests
and ``benchmarks/bench_trim.py`` to compare ``helpers.window.token_window`` with (no lesson uses it)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, trim_messages

from helpers.tokens import REPLY_PRIMING_TOKENS, count_message_tokens


def library_token_window(messages: Sequence[BaseMessage], max_tokens: int) -> list[BaseMessage]:
    """The library way, for comparison: plain ``trim_messages`` on the whole history with a
    per-message tiktoken counter and reply priming taken off ``max_tokens`` (whole prompt, tokens)
    once. No cache and no error: without room for the question it returns the system message."""
    return trim_messages(list(messages), max_tokens=max_tokens - REPLY_PRIMING_TOKENS,
                         token_counter=lambda batch: sum(count_message_tokens(m) for m in batch),
                         strategy="last", start_on="human", include_system=True)
