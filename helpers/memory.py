"""The contract of every memory strategy, the ``Prompt`` it returns (typed parts: the marks come from
them), and ``replay``: the one loop that runs any strategy and records each turn (``TurnRecord``)::

    prompt = strategy.prompt(system, stored, new_message)   # what the model is sent
    reply = model.invoke(prompt)                            # the answer (the loop makes this call)
    stored = strategy.after_turn(model, [*stored, new_message, reply])   # what is kept
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from helpers.calls import counting_model_calls
from helpers.text import nfc
from helpers.tokens import default_counter

SYSTEM = "system"  # the system prompt
VERBATIM = "verbatim"  # an earlier message, sent as it was
SUMMARY = "summary"  # a running summary of earlier messages
RETRIEVED = "retrieved"  # earlier turns found by meaning (Milvus)
QUESTION = "question"  # the user's new message
PART_KINDS = (SYSTEM, VERBATIM, SUMMARY, RETRIEVED, QUESTION)  # what a prompt part is
KEPT, DROPPED, SUMMARIZED = "kept", "dropped", "summarized"  # marks: what happened to a message
MARKS = (KEPT, DROPPED, SUMMARIZED, SUMMARY, RETRIEVED)  # SUMMARY and RETRIEVED are marks too
SUMMARY_ID = "running-summary"  # the id of the running summary's message (helpers.summary)
RETRIEVED_ID = "retrieved-memories"  # the id of the retrieved section's message (helpers.layered)
COVERS_KEY = "covers"  # additional_kwargs[COVERS_KEY]: ids of the messages a summary folded in
def message_id(turn: int, role: str) -> str:
    """The id ``replay`` gives a message (``role``: user/reply; ``turn``: 1, 2 ...): ``"t3-user"``."""
    return f"t{turn}-{role}"


@dataclass(frozen=True)
class PromptPart:
    """One piece of a prompt message: ``kind`` (one of ``PART_KINDS``), the ``text`` it put in,
    and ``sources``: ids of the conversation messages it came from (``message_id`` values)."""

    kind: str
    text: str
    sources: tuple[str, ...] = ()


class Prompt(list):
    """The messages sent to the model (a ``list[BaseMessage]``) plus ``parts[i]``, the tuple of
    ``PromptPart`` that ``self[i]`` is made of (two when retrieved text and the question share a
    message). Raises ``ValueError`` when ``parts`` does not have one tuple per message."""

    def __init__(self, messages: Sequence[BaseMessage] = (),
                 parts: Sequence[tuple[PromptPart, ...]] | None = None) -> None:
        super().__init__(messages)
        self.parts: list[tuple[PromptPart, ...]] = list(parts) if parts is not None else [
            (PromptPart(VERBATIM, m.text),) for m in messages]
        if len(self.parts) != len(self):
            raise ValueError(f"{len(self.parts)} part tuples for {len(self)} messages")

    def of_kind(self, kind: str) -> list[PromptPart]:
        """Every part of this kind, in prompt order."""
        return [p for parts in self.parts for p in parts if p.kind == kind]

    def sources(self, kind: str) -> set[str]:
        """Ids of the conversation messages that reached the prompt as ``kind``."""
        return {s for p in self.of_kind(kind) for s in p.sources}

    def marks(self) -> list[str]:
        """One mark per message of this prompt: ``"summary"``, ``"retrieved"`` or ``"kept"``."""
        kinds = [{p.kind for p in parts} for parts in self.parts]
        return [SUMMARY if SUMMARY in k else RETRIEVED if RETRIEVED in k else KEPT for k in kinds]


def part(kind: str, message: BaseMessage, *sources: str) -> tuple[PromptPart, ...]:
    """The one part of a message that is all of one kind (``sources`` default: its own id)."""
    return (PromptPart(kind, message.text, sources or ((message.id,) if message.id else ())),)


def label(messages: Sequence[BaseMessage], system: BaseMessage | None,
          new_message: BaseMessage, summaries: Mapping[str, Sequence[str]] | None = None) -> Prompt:
    """A ``Prompt`` of ``messages`` (objects of ``[system, *stored, new_message]``): ``SYSTEM``,
    ``QUESTION``, else ``VERBATIM``; id ``SUMMARY_ID`` / ``RETRIEVED_ID``: ``SUMMARY`` / ``RETRIEVED``
    from its ``COVERS_KEY`` ids. ``summaries``: other summary messages, id -> the ids they cover."""
    parts = []
    for m in messages:
        if m is system or m is new_message:
            parts.append(part(SYSTEM if m is system else QUESTION, m))
        elif summaries and m.id in summaries:
            parts.append(part(SUMMARY, m, *summaries[m.id]))
        elif m.id in (SUMMARY_ID, RETRIEVED_ID):
            kind = SUMMARY if m.id == SUMMARY_ID else RETRIEVED
            parts.append(part(kind, m, *m.additional_kwargs.get(COVERS_KEY, ())))
        else:
            parts.append(part(VERBATIM, m))
    return Prompt(messages, parts)


@runtime_checkable
class MemoryStrategy(Protocol):
    """What every memory strategy offers. ``prompt``: what the model is sent (may embed, never calls
    the chat model). ``after_turn``: ``stored`` ends with the new message and the reply; returns what
    to keep (may call ``model``, write to Milvus). ``start_session(date: ISO or "")``: what carries over."""

    name: str  # a short label for tables (property or attribute)
    cost_note: tuple[str, str]  # (when memory works, what is sent)
    embedding_calls: int  # texts embedded so far (0 if none)
    embedding_seconds: float  # seconds spent embedding so far (0.0 if none)

    def prompt(self, system, stored, new_message) -> Prompt: ...
    def after_turn(self, model, stored) -> list[BaseMessage]: ...
    def start_session(self, session_id, stored, date="") -> list[BaseMessage]: ...


@dataclass
class TurnRecord:
    """One replayed step (tokens as ``helpers.tokens`` counts them; ms). A recorded reply alone (``Turn.text``
    None, ``user`` "") or a user message stored unanswered (``Turn.answer`` False, ``reply`` "") sends
    nothing (empty prompt, 0 prompt tokens); its memory costs count as any turn's."""

    turn: int  # position in the replay, 1-based
    user: str
    reply: str
    prompt: Prompt  # what the answer call was sent, with its typed parts
    timeline: list[BaseMessage]  # [system, summary?, *every message so far], for display
    marks: list[str]  # one per timeline message (MARKS)
    prompt_tokens: int
    reply_tokens: int
    memory_calls: int = 0  # chat-model calls for memory (summaries), beyond the answer
    memory_call_input_tokens: int = 0  # prompt tokens of those calls
    memory_call_output_tokens: int = 0  # tokens they returned
    embedding_calls: int = 0  # texts the memory embedded (queries + stored)
    overhead_ms: float = 0.0  # wall time of the memory, the chat model's own time excluded
    embedding_ms: float = 0.0  # part of overhead_ms spent embedding
    strategy: str = ""
    turn_id: str = ""
    session_id: str = ""
    cost_note: tuple[str, str] = ("", "")  # the strategy's (when memory works, what is sent)

    @property
    def memory_call_tokens(self) -> int:  # prompt + output tokens of the memory's own calls
        return self.memory_call_input_tokens + self.memory_call_output_tokens

    def as_row(self) -> dict:  # the cost columns of this turn, for a table
        return {"turn": self.turn, "messages sent": len(self.prompt), "prompt tokens": self.prompt_tokens,
                "extra calls": self.memory_calls, "summary tokens": self.memory_call_tokens,
                "total tokens": self.prompt_tokens + self.reply_tokens + self.memory_call_tokens}


@dataclass(frozen=True)
class Turn:
    """One step to replay: the user message ``text`` and its ``reply``, the other speaker's recorded
    line, stored with no model call (``None``: the model answers, unless ``answer`` is False).
    ``text=None``: a recorded reply alone (e.g. the other speaker opens a session): no prompt, no call.
    ``answer=False`` with no ``reply``: a recorded user message that got no reply (e.g. a session ends
    on it): stored alone, no prompt, no call. ``date``: the session's, ISO."""

    text: str | None
    session_id: str | None = None
    turn_id: str = ""
    date: str = ""
    reply: str | None = None
    answer: bool = True


def timeline_and_marks(system: SystemMessage, everything: Sequence[BaseMessage],
                       prompt: Prompt) -> tuple[list[BaseMessage], list[str]]:
    """``[system, *the prompt's summaries, *everything]`` (the conversation so far, new message
    included), each marked kept / retrieved / summarized / dropped from the prompt's parts."""
    summaries = [m for m, mark in zip(prompt, prompt.marks(), strict=True) if mark == SUMMARY]
    kept = prompt.sources(VERBATIM) | prompt.sources(QUESTION)
    retrieved, summarized = prompt.sources(RETRIEVED), prompt.sources(SUMMARY)
    marks = [KEPT if prompt.of_kind(SYSTEM) else DROPPED, *[SUMMARY] * len(summaries)]
    marks += [KEPT if m.id in kept else RETRIEVED if m.id in retrieved
              else SUMMARIZED if m.id in summarized else DROPPED for m in everything]
    return [system, *summaries, *everything], marks


def replay(strategy: MemoryStrategy, turns: Iterable[str | Turn], model: BaseChatModel,
           system: SystemMessage | str = "", *, on_turn: Callable[[TurnRecord, Turn], None] | None = None,
           record: type[TurnRecord] = TurnRecord) -> list[TurnRecord]:
    """Run the user ``turns`` (strings or ``Turn``) through ``model``, ``strategy`` deciding what is
    sent and kept; ``strategy.start_session`` is called whenever the session id changes (with the
    turn's ``date`` if any), ``on_turn(record, turn)`` after each turn. ``record``: the
    ``TurnRecord`` class to build (``evaluate.ScoredTurn`` adds probe fields). The model is called
    only for a user message with no recorded reply and ``answer`` True. Text is made NFC as it enters
    (``text.nfc``). Raises what the strategy raises: ``summary.SummarizationError`` (a summary call
    failed; the records so far are lost), or ``window.TokenBudgetError`` / ``MessageBudgetError`` from a
    strict window built by hand."""
    system = system if isinstance(system, SystemMessage) else SystemMessage(system)
    stored: list[BaseMessage] = []  # what the strategy keeps
    everything, records, session = [], [], None  # everything: every message so far, for the timeline
    with counting_model_calls() as calls:
        for number, item in enumerate(turns, start=1):
            turn = item if isinstance(item, Turn) else Turn(item)
            if turn.session_id not in (None, session):  # a new session; strategies of your own need no date
                session, dated = turn.session_id, {"date": turn.date} if turn.date else {}
                stored = list(strategy.start_session(session, stored, **dated))
            new = [] if turn.text is None else [HumanMessage(nfc(turn.text), id=message_id(number, "user"))]
            answer_call = bool(new) and turn.reply is None and turn.answer
            asks = answer_call or (bool(new) and turn.reply is not None)  # a prompt, sent or as if
            embedded, embedding_seconds = strategy.embedding_calls, strategy.embedding_seconds
            before, start = calls.snapshot(), time.perf_counter()
            prompt = strategy.prompt(system, stored, new[0]) if asks else Prompt()  # a line alone: none
            asked, prompt_done = calls.snapshot(), time.perf_counter()
            if answer_call:
                reply = [model.invoke(prompt)]
            else:  # a recorded reply, or a recorded user message that got none: stored as recorded
                recorded = {"recorded": True}  # not written from this prompt: never an echo of it
                reply = [] if turn.reply is None else [AIMessage(nfc(turn.reply), response_metadata=recorded)]
            answer_done, answered = time.perf_counter(), calls.snapshot()
            for message in reply:
                message.id = message_id(number, "reply")
            stored = list(strategy.after_turn(model, [*stored, *new, *reply]))
            end, after = time.perf_counter(), calls.snapshot()
            spent, answer = after - before, answered - asked  # all the turn's calls; the answer's
            answer_seconds = answer_done - prompt_done
            memory_seconds = max(0.0, spent.seconds - answer_seconds)  # the memory's own calls (summaries)
            tokens_sent = default_counter().prompt_tokens(prompt) if asks else 0
            # the memory's own calls: the turn's calls but the answer (one call, tokens_sent in)
            answer_calls, answer_tokens = (1, tokens_sent) if answer_call else (0, 0)
            timeline, marks = timeline_and_marks(system, [*everything, *new], prompt)
            everything += [*new, *reply]
            usage = (reply[0].usage_metadata or {}) if reply else {}
            done = record(
                turn=number, user=new[0].text if new else "", reply=reply[0].text if reply else "",
                prompt=prompt, timeline=timeline, marks=marks,
                reply_tokens=usage.get("output_tokens", 0), prompt_tokens=tokens_sent,
                memory_calls=spent.calls - answer_calls, embedding_calls=strategy.embedding_calls - embedded,
                memory_call_input_tokens=spent.input_tokens - answer_tokens,
                memory_call_output_tokens=spent.output_tokens - answer.output_tokens,
                session_id=session or "",
                overhead_ms=((end - start) - answer_seconds - memory_seconds) * 1000,
                embedding_ms=(strategy.embedding_seconds - embedding_seconds) * 1000,
                strategy=strategy.name, cost_note=strategy.cost_note, turn_id=turn.turn_id)
            if on_turn is not None:
                on_turn(done, turn)
            records.append(done)
    return records


def totals(records: Sequence[TurnRecord]) -> dict:
    """Every total of a replay: prompt tokens, the memory's own model calls (``extra calls``) and
    their tokens (``summary tokens``: prompt + output; ``extra call tokens``: prompt), all tokens,
    texts embedded, and the median overhead in ms (with and without embedding)."""

    def p50(values: Iterable[float]) -> float:
        return round(statistics.median(values), 2) if records else 0

    return {"turns": len(records),
            "prompt tokens (total)": sum(r.prompt_tokens for r in records),
            "prompt tokens (last turn)": next((r.prompt_tokens for r in records[::-1] if r.prompt), 0),
            "extra calls": sum(r.memory_calls for r in records),
            "summary tokens": sum(r.memory_call_tokens for r in records),
            "extra call tokens": sum(r.memory_call_input_tokens for r in records),
            "all tokens": sum(r.prompt_tokens + r.reply_tokens + r.memory_call_tokens for r in records),
            "extra embeddings": sum(r.embedding_calls for r in records),
            "overhead ms (p50)": p50(r.overhead_ms for r in records),
            "overhead ms without embedding (p50)": p50(r.overhead_ms - r.embedding_ms for r in records)}
