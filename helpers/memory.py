"""What every memory strategy offers: the ``MemoryStrategy`` protocol, and the prompt it returns.

Read this module once; every strategy of lessons 04-07 follows it, and ``helpers.replay.replay``
is the one loop that runs any of them over a conversation.

A turn, as the loop runs it::

    prompt = strategy.prompt(system, stored, new_message)   # what the model is sent
    reply = model.invoke(prompt)                            # the answer (the loop makes this call)
    stored = strategy.after_turn(model, [*stored, new_message, reply])   # what is kept

``stored`` is the message list the strategy keeps between turns (the loop holds it, so a
strategy object can be replayed again from scratch): the whole history for a window, a running
summary plus recent messages for a summary, nothing for retrieval (Milvus is its memory).

A ``Prompt`` is a plain list of messages (``model.invoke(prompt)`` works) that also says, for
each message, what it is made of: ``PromptPart`` objects of one of the kinds below, each with the
ids of the conversation messages it came from. Marks (kept / dropped / summarized / retrieved)
and evidence recall are computed from these parts, never by reading the text back.

The names below (part kinds, marks, message ids) are used everywhere else; they are defined only
here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

# -- what a prompt part is ---------------------------------------------------------------------
SYSTEM = "system"  # the system prompt
VERBATIM = "verbatim"  # an earlier message, sent as it was
SUMMARY = "summary"  # a running summary of earlier messages
RETRIEVED = "retrieved"  # earlier turns found by meaning (Milvus)
QUESTION = "question"  # the user's new message
PART_KINDS = (SYSTEM, VERBATIM, SUMMARY, RETRIEVED, QUESTION)

# -- marks: what happened to each message of the conversation, for render_messages(marks=...) ---
KEPT = "kept"
DROPPED = "dropped"
SUMMARIZED = "summarized"
# SUMMARY ("summary") and RETRIEVED ("retrieved") are marks too.
MARKS = (KEPT, DROPPED, SUMMARIZED, SUMMARY, RETRIEVED)

# -- ids of the messages memory writes into a prompt ---------------------------------------------
SUMMARY_ID = "running-summary"  # the running summary (helpers.summarization)
RETRIEVED_ID = "retrieved-memories"  # the retrieved-memories section (helpers.layered)
COVERS_KEY = "covers"  # summary.additional_kwargs[COVERS_KEY]: ids of the messages it folded in


def message_id(turn: int, role: str) -> str:
    """The id the replay loop gives a conversation message: ``"t3-user"``, ``"t3-reply"``.

    Args:
        turn: the turn's number in the replay (1, 2, ...).
        role: ``"user"`` or ``"reply"``.
    """
    return f"t{turn}-{role}"


@dataclass(frozen=True)
class PromptPart:
    """One piece of a prompt message.

    Attributes:
        kind: one of ``PART_KINDS`` (``SYSTEM``, ``VERBATIM``, ``SUMMARY``, ``RETRIEVED``,
            ``QUESTION``).
        text: the text this part put into the message.
        sources: ids of the conversation messages it came from (``message_id`` values): the
            message itself for ``VERBATIM`` / ``QUESTION``, every message folded in for
            ``SUMMARY``, the turns found for ``RETRIEVED``.
    """

    kind: str
    text: str
    sources: tuple[str, ...] = ()


class Prompt(list):
    """The messages sent to the model (a ``list[BaseMessage]``) plus what each one is made of.

    ``parts[i]`` is a tuple of ``PromptPart`` for ``self[i]``: usually one part (a verbatim
    message, the summary), two when a strategy puts retrieved history and the question into one
    message (lesson 06).
    """

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
    """A ``Prompt`` for messages chosen from ``[system, *stored, new_message]``: the system prompt
    is ``SYSTEM``, the new message ``QUESTION``, any other ``VERBATIM``; a summary message (id
    ``SUMMARY_ID``) is ``SUMMARY`` and a retrieved section (id ``RETRIEVED_ID``) ``RETRIEVED``,
    each with the ids in its ``additional_kwargs["covers"]``.

    Args:
        messages: the prompt's messages (the same objects as ``system`` / ``new_message``).
        system, new_message: the system prompt (or ``None``) and the user's new message.
        summaries: other summary messages, by message id -> the ids they cover (a library's
            summary message, which carries no ``covers`` of its own).
    """
    summaries = summaries or {}
    parts = []
    for m in messages:
        if m is system:
            parts.append(part(SYSTEM, m))
        elif m is new_message:
            parts.append(part(QUESTION, m))
        elif m.id in summaries:
            parts.append(part(SUMMARY, m, *summaries[m.id]))
        elif m.id == SUMMARY_ID:
            parts.append(part(SUMMARY, m, *m.additional_kwargs.get(COVERS_KEY, ())))
        elif m.id == RETRIEVED_ID:
            parts.append(part(RETRIEVED, m, *m.additional_kwargs.get(COVERS_KEY, ())))
        else:
            parts.append(part(VERBATIM, m))
    return Prompt(messages, parts)


@runtime_checkable
class MemoryStrategy(Protocol):
    """What every memory strategy offers. Read once; then every strategy is the same four things.

    * ``name``: a short label for tables and plots, e.g. ``"token window (200 tokens)"``.
    * ``prompt(system, stored, new_message) -> Prompt``: the messages the model is sent for the
      user's new message, given what the strategy stored so far. A window picks the newest
      messages, a summary puts its summary first, retrieval searches Milvus. It may call the
      embedding model (retrieval), never the chat model.
    * ``after_turn(model, stored) -> list[BaseMessage]``: after the reply, ``stored`` ends with the
      new message and the reply; return what to keep for the next turn. A summary strategy may
      call ``model`` here to fold old messages into its summary; retrieval writes the turn to
      Milvus and keeps nothing.
    * ``start_session(session_id, stored, date="") -> list[BaseMessage]``: a new conversation
      begins (on ``date``, an ISO date or ``""``; Milvus strategies store it with each message and
      show it with retrieved memories); return what carries over (all of ``stored`` for a window
      or a summary, nothing for Milvus strategies, which remember across sessions on their own).
    * ``embedding_calls``: a running count of the texts it has embedded (0 for strategies that
      embed nothing). Model calls need no counter: the loop counts every call made with the
      ``model`` it hands over.

    A strategy that holds per-turn state (retrieval, layered) keeps it between ``prompt`` and
    ``after_turn`` of the same turn; the loop always calls them in that order.
    """

    @property
    def name(self) -> str: ...

    def prompt(self, system: SystemMessage, stored: Sequence[BaseMessage],
               new_message: HumanMessage) -> Prompt: ...

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]: ...

    def start_session(self, session_id: str, stored: Sequence[BaseMessage],
                      date: str = "") -> list[BaseMessage]: ...

    @property
    def embedding_calls(self) -> int: ...
