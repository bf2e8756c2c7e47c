"""Chat-model calls counted, by whoever makes them: how many, prompt tokens, output tokens, seconds.

``with counting_model_calls() as calls:`` activates a LangChain callback for every chat-model call inside
(the answer's and a memory's own, such as a summary); ``calls.snapshot()`` before and after a step gives
what the step spent (``CallCount``: ``after - before``)."""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

from helpers.tokens import default_counter


class ModelCalls(BaseCallbackHandler):
    """Chat-model calls made while it is active: how many, prompt tokens (``count_tokens``, by the shared
    cached counter), output tokens (as the model reports them) and seconds spent inside the calls."""

    def __init__(self) -> None:
        self.calls, self.input_tokens, self.output_tokens, self.seconds, self._started = 0, 0, 0, 0.0, {}

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        self.calls += 1
        self.input_tokens += default_counter().prompt_tokens(messages[0])
        self._started[run_id] = time.perf_counter()

    def on_llm_end(self, response, *, run_id, **kwargs):
        self.seconds += time.perf_counter() - self._started.pop(run_id, time.perf_counter())
        message = getattr(response.generations[0][0], "message", None)
        self.output_tokens += (getattr(message, "usage_metadata", None) or {}).get("output_tokens", 0)

    def on_llm_error(self, error, *, run_id, **kwargs):
        self.seconds += time.perf_counter() - self._started.pop(run_id, time.perf_counter())

    def snapshot(self) -> CallCount:
        return CallCount(self.calls, self.input_tokens, self.output_tokens, self.seconds)


class CallCount(NamedTuple):
    """Chat-model calls counted so far (``ModelCalls.snapshot``); ``b - a``: those made in between."""

    calls: int
    input_tokens: int
    output_tokens: int
    seconds: float

    def __sub__(self, other: CallCount) -> CallCount:
        return CallCount(*(a - b for a, b in zip(self, other, strict=True)))


_active_counter: ContextVar[ModelCalls | None] = ContextVar("memory_model_calls", default=None)
register_configure_hook(_active_counter, inheritable=True)


@contextmanager
def counting_model_calls():
    """``with counting_model_calls() as calls:`` counts every chat-model call inside, by any object."""
    token = _active_counter.set(calls := ModelCalls())
    try:
        yield calls
    finally:
        _active_counter.reset(token)
