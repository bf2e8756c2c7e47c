"""The one replay loop: run a conversation through any ``MemoryStrategy`` and record every turn.

Lessons 04-08, the widgets, the benchmarks and ``make evaluate`` all use ``replay``; each turn
gives one ``TurnRecord``:

* ``prompt`` (a ``helpers.memory.Prompt``) and ``prompt_tokens``: what the answer call was sent
  and its size (``helpers.tokens.count_tokens``);
* ``timeline`` + ``marks``: every message of the conversation so far (and the summary, if any),
  marked kept / dropped / summarized / summary / retrieved, from the prompt's typed parts;
* ``memory_calls``, ``memory_call_input_tokens``, ``memory_call_output_tokens``: chat-model calls
  the memory made (summaries) beyond the one answer, and their tokens; ``embedding_calls``: texts
  it embedded;
* ``overhead_ms``: wall time the memory took (prompt building, trimming, summarizing, embedding,
  Milvus), the chat model's own time excluded;
* on a probe turn, ``evidence_reached`` / ``how`` / ``answer_correct`` (``helpers.harness``).

Model calls are counted with a LangChain callback that is active while a turn runs, so every call
counts, whichever object makes it (a strategy, or a library middleware inside it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tracers.context import register_configure_hook

from helpers.memory import (
    DROPPED,
    KEPT,
    QUESTION,
    RETRIEVED,
    SUMMARIZED,
    SUMMARY,
    SYSTEM,
    VERBATIM,
    MemoryStrategy,
    Prompt,
    message_id,
)
from helpers.tokens import count_tokens


class ModelCalls(BaseCallbackHandler):
    """Every chat-model call made while it is active: how many, prompt tokens (``count_tokens``),
    output tokens (as the model reports them) and seconds spent inside the calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.seconds = 0.0
        self._started: dict = {}

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        self.calls += 1
        self.input_tokens += count_tokens(messages[0])
        self._started[run_id] = time.perf_counter()

    def on_llm_end(self, response, *, run_id, **kwargs):
        self.seconds += time.perf_counter() - self._started.pop(run_id, time.perf_counter())
        message = getattr(response.generations[0][0], "message", None)
        self.output_tokens += (getattr(message, "usage_metadata", None) or {}).get("output_tokens", 0)

    def on_llm_error(self, error, *, run_id, **kwargs):
        self.seconds += time.perf_counter() - self._started.pop(run_id, time.perf_counter())

    def snapshot(self) -> tuple[int, int, int, float]:
        return self.calls, self.input_tokens, self.output_tokens, self.seconds


_active_counter: ContextVar[ModelCalls | None] = ContextVar("memory_model_calls", default=None)
register_configure_hook(_active_counter, inheritable=True)


@contextmanager
def counting_model_calls():
    """``with counting_model_calls() as calls:`` every chat-model call inside is counted in
    ``calls`` (a ``ModelCalls``), whatever object makes it."""
    calls = ModelCalls()
    token = _active_counter.set(calls)
    try:
        yield calls
    finally:
        _active_counter.reset(token)


@dataclass
class TurnRecord:
    """One replayed turn. Tokens as ``helpers.tokens`` counts them; times in milliseconds."""

    turn: int  # position in the replay, 1-based
    user: str
    reply: str
    prompt: Prompt  # what the answer call was sent, with its typed parts
    timeline: list[BaseMessage]  # [system, summary?, *every message so far], for display
    marks: list[str]  # one per timeline message (helpers.memory.MARKS)
    prompt_tokens: int
    reply_tokens: int
    memory_calls: int = 0  # chat-model calls for memory (summaries), beyond the answer
    memory_call_input_tokens: int = 0  # prompt tokens of those calls
    memory_call_output_tokens: int = 0  # tokens they returned
    embedding_calls: int = 0  # texts the memory embedded (queries + stored)
    overhead_ms: float = 0.0
    embedding_ms: float = 0.0  # part of overhead_ms spent embedding (strategies that report it)
    strategy: str = ""
    turn_id: str = ""
    session_id: str = ""
    probe: bool = False
    evidence_reached: bool | None = None
    how: str | None = None  # verbatim / summary / retrieved / mixed / None
    answer_correct: bool | None = None
    cost_note: tuple[str, str] = ("", "")  # the strategy's (when memory works, what is sent)

    @property
    def memory_call_tokens(self) -> int:
        """Prompt + output tokens of the memory's own calls."""
        return self.memory_call_input_tokens + self.memory_call_output_tokens

    def as_row(self) -> dict:
        """The cost columns of this turn, for a table."""
        return {
            "turn": self.turn,
            "messages sent": len(self.prompt),
            "prompt tokens": self.prompt_tokens,
            "extra calls": self.memory_calls,
            "summary tokens": self.memory_call_tokens,
            "total tokens": self.prompt_tokens + self.reply_tokens + self.memory_call_tokens,
        }


@dataclass(frozen=True)
class Turn:
    """One user message to replay: its text, and optionally its session, id and the session's
    ISO date (long conversations, ``helpers.evaluation``)."""

    text: str
    session_id: str | None = None
    turn_id: str = ""
    date: str = ""
    reply: str | None = None  # the other speaker's recorded line: stored as the reply, no model call


def timeline_and_marks(system: SystemMessage, everything: Sequence[BaseMessage],
                       prompt: Prompt) -> tuple[list[BaseMessage], list[str]]:
    """Every message of the conversation so far (``everything``, the new one included), after the
    system prompt and any summary the prompt carries, each marked from the prompt's parts:
    ``kept`` (sent as it was), ``retrieved`` (found by meaning), ``summarized`` (folded into the
    summary) or ``dropped``. The system prompt is ``kept`` unless the strategy left it out."""
    summaries = [m for m, parts in zip(prompt, prompt.parts, strict=True)
                 if any(p.kind == SUMMARY for p in parts)]
    kept = prompt.sources(VERBATIM) | prompt.sources(QUESTION)
    retrieved, summarized = prompt.sources(RETRIEVED), prompt.sources(SUMMARY)
    marks = [KEPT if prompt.of_kind(SYSTEM) else DROPPED, *[SUMMARY] * len(summaries)]
    for message in everything:
        marks.append(KEPT if message.id in kept else RETRIEVED if message.id in retrieved
                     else SUMMARIZED if message.id in summarized else DROPPED)
    return [system, *summaries, *everything], marks


def replay(
    strategy: MemoryStrategy,
    turns: Iterable[str | Turn],
    model: BaseChatModel,
    system: SystemMessage | str = "",
    *,
    on_turn: Callable[[TurnRecord, Turn], None] | None = None,
) -> list[TurnRecord]:
    """Run the user ``turns`` through ``model``, with ``strategy`` deciding what is sent and kept.

    Args:
        strategy: any ``helpers.memory.MemoryStrategy`` (``FullHistory``, ``TokenWindow``,
            ``RunningSummary``, ``RetrievalMemory``, ``LayeredMemory``, ``LibrarySummary`` ...).
        turns: the user's messages in order: strings, or ``Turn`` objects with a session id
            (``strategy.start_session`` is called whenever it changes, with the turn's ``date``
            when it has one; strings or a ``None`` session run as one session).
        model: the chat model (answers; summaries of the strategies that write them).
        system: the system prompt.
        on_turn: called with each finished record and its ``Turn`` (the harness scores probes).

    Returns:
        One ``TurnRecord`` per turn.

    Raises:
        helpers.truncation.TokenBudgetError / MessageBudgetError: a window cannot hold the
            newest message.
        helpers.summarization.SummarizationError: a summary call failed; the records so far are
            lost with the exception.
    """
    system = system if isinstance(system, SystemMessage) else SystemMessage(system)
    stored: list[BaseMessage] = []
    everything: list[BaseMessage] = []
    session = None
    records = []
    with counting_model_calls() as calls:
        for number, item in enumerate(turns, start=1):
            turn = item if isinstance(item, Turn) else Turn(item)
            if turn.session_id is not None and turn.session_id != session:
                session = turn.session_id
                dated = {"date": turn.date} if turn.date else {}  # strategies of your own need none
                stored = list(strategy.start_session(session, stored, **dated))
            new_message = HumanMessage(turn.text, id=message_id(number, "user"))
            embeddings_before = strategy.embedding_calls
            embedding_seconds = getattr(strategy, "embedding_seconds", 0.0)
            before = calls.snapshot()
            start = time.perf_counter()
            prompt = strategy.prompt(system, stored, new_message)
            asked = calls.snapshot()
            prompt_done = time.perf_counter()
            reply = model.invoke(prompt) if turn.reply is None else AIMessage(turn.reply)
            answer_done = time.perf_counter()
            answered = calls.snapshot()
            reply.id = message_id(number, "reply")
            stored = list(strategy.after_turn(model, [*stored, new_message, reply]))
            end = time.perf_counter()
            after = calls.snapshot()

            answer_seconds = answer_done - prompt_done
            memory_model_seconds = (after[3] - before[3]) - answer_seconds
            overhead = (end - start) - answer_seconds - max(0.0, memory_model_seconds)
            prompt_tokens = count_tokens(prompt)
            answer_output = answered[2] - asked[2]
            timeline, marks = timeline_and_marks(system, [*everything, new_message], prompt)
            everything += [new_message, reply]
            record = TurnRecord(
                turn=number,
                user=turn.text,
                reply=reply.text,
                prompt=prompt,
                timeline=timeline,
                marks=marks,
                prompt_tokens=prompt_tokens,
                reply_tokens=(reply.usage_metadata or {}).get("output_tokens", 0),
                memory_calls=after[0] - before[0] - (turn.reply is None),  # all but the answer
                # a recorded reply (two-speaker files) made no answer call to subtract
                memory_call_input_tokens=after[1] - before[1] - prompt_tokens * (turn.reply is None),
                memory_call_output_tokens=after[2] - before[2] - answer_output,
                embedding_calls=strategy.embedding_calls - embeddings_before,
                overhead_ms=overhead * 1000,
                embedding_ms=(getattr(strategy, "embedding_seconds", 0.0) - embedding_seconds) * 1000,
                strategy=strategy.name,
                cost_note=getattr(strategy, "cost_note", ("", "")),
                turn_id=turn.turn_id,
                session_id=session or "",
            )
            if on_turn is not None:
                on_turn(record, turn)
            records.append(record)
    return records


# --- totals and the article's cost table --------------------------------------------------------


def totals(records: Sequence[TurnRecord]) -> dict:
    """Every total of a replay in one dict (tokens as ``helpers.tokens`` counts them):

    ``turns``; ``prompt tokens (total)`` and ``(last turn)``; ``extra calls`` (the memory's model
    calls); ``summary tokens`` (their prompt + output tokens); ``extra call tokens`` (their prompt
    tokens); ``all tokens`` (answer prompts + replies + memory calls); ``extra embeddings``;
    ``overhead ms (p50)`` and ``overhead ms without embedding (p50)``; ``evidence recall`` and
    ``answers correct`` (share of probe turns, ``None`` without probes).
    """
    import statistics

    probes = [r for r in records if r.probe]

    def share(values: list[bool]) -> float | None:
        return round(sum(values) / len(values), 3) if values else None

    return {
        "turns": len(records),
        "prompt tokens (total)": sum(r.prompt_tokens for r in records),
        "prompt tokens (last turn)": records[-1].prompt_tokens if records else 0,
        "extra calls": sum(r.memory_calls for r in records),
        "summary tokens": sum(r.memory_call_tokens for r in records),
        "extra call tokens": sum(r.memory_call_input_tokens for r in records),
        "all tokens": sum(r.prompt_tokens + r.reply_tokens + r.memory_call_tokens for r in records),
        "extra embeddings": sum(r.embedding_calls for r in records),
        "overhead ms (p50)": round(statistics.median(r.overhead_ms for r in records), 2)
        if records else 0,
        "overhead ms without embedding (p50)": round(statistics.median(
            r.overhead_ms - r.embedding_ms for r in records), 2) if records else 0,
        "evidence recall": share([bool(r.evidence_reached) for r in probes]),
        "answers correct": share([bool(r.answer_correct) for r in probes]),
    }


COST_SUMMARY_KEYS = ("turns", "prompt tokens (total)", "prompt tokens (last turn)", "extra calls",
                     "summary tokens", "all tokens")


def cost_summary(records: Sequence[TurnRecord]) -> dict:
    """The token and call totals of ``totals`` (the columns lessons 04-05 show)."""
    everything = totals(records)
    return {key: everything[key] for key in COST_SUMMARY_KEYS}


def what_is_kept(record: TurnRecord) -> str:
    """In words: which earlier messages (neither the system prompt nor the new message) a turn's
    prompt carried, e.g. ``"6 of 32 earlier messages (26 dropped)"``."""
    earlier = [mark for mark in record.marks[1:-1] if mark != SUMMARY]
    kept = earlier.count(KEPT)
    retrieved = earlier.count(RETRIEVED)
    text = f"{kept} of {len(earlier)} earlier messages"
    if SUMMARY in record.marks:
        text += f" + a summary of {earlier.count(SUMMARIZED)}"
    elif retrieved:
        text += f" + {retrieved} retrieved"
    elif kept < len(earlier):
        text += f" ({len(earlier) - kept} dropped)"
    if record.marks[0] == DROPPED:
        text += "; system prompt dropped"
    return text


def article_cost_table(runs: dict[str, Sequence[TurnRecord]]) -> list[dict]:
    """The article's cost table (trigger, cost, what is kept) with measured numbers, one row per
    strategy: when its memory works, prompt tokens per turn and at the last turn, extra model
    calls and embedding calls per 100 turns, the tokens of its own calls, what reaches the model
    (in general, and at the last turn), and evidence recall (``None`` without probes)."""
    rows = []
    for name, records in runs.items():
        n = max(len(records), 1)
        total = totals(records)
        when, sends = records[0].cost_note if records else ("", "")
        rows.append({
            "strategy": name,
            "trigger": when,
            "prompt tokens / turn": round(total["prompt tokens (total)"] / n),
            "prompt tokens (last turn)": total["prompt tokens (last turn)"],
            "extra calls / 100 turns": round(100 * total["extra calls"] / n, 1),
            "summary tokens": total["summary tokens"],
            "embeddings / 100 turns": round(100 * total["extra embeddings"] / n, 1),
            "what is kept": sends,
            "kept at the last turn": what_is_kept(records[-1]) if records else "",
            "evidence recall": total["evidence recall"],
        })
    return rows
