"""Retrieval memory (lesson 06): before each answer, find the old turns closest in meaning.

A window or a summary keeps the *recent* past. Retrieval memory keeps *everything* in Milvus
(``helpers.milvus_store.MemoryStore``) and, before each answer, puts the few stored turns most
relevant to the new question in front of it (the article's "Milvus long-term memory"):

* ``format_retrieved(memories, question)``: the message the article sends ("Relevant history:
  ... Question: ..."), memories oldest first (``chronological``);
* ``RetrievalMemory``: the ``helpers.memory.MemoryStrategy`` that does it every turn and writes
  each turn back; ``turns_log`` says what each search found and what it cost.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from helpers.memory import QUESTION, RETRIEVED, SYSTEM, Prompt, PromptPart, part
from helpers.milvus_common import DEFAULT_MIN_SCORE, Memory, split_utf8, validate_id
from helpers.milvus_store import MemoryStore
from helpers.recall import OtherSpeaker, classify_turn, is_echo, recall_within_budget

HISTORY_HEADER = "Relevant history:"


def chronological(memories: Sequence[Memory]) -> list[Memory]:
    """``memories`` oldest first (by timestamp, then round), so that a later correction ("I
    moved to Madrid") comes after the fact it corrects, as it did in the conversation; search
    returns them by similarity, which says nothing about which is current."""
    return sorted(memories, key=lambda m: (m.timestamp, m.round))


def history_block(memories: Sequence[Memory]) -> str:
    """``"Relevant history:\\n- [round 3] User: ...\\n  AI: ..."``, oldest first ("" if none)."""
    if not memories:
        return ""
    lines = [HISTORY_HEADER]
    for memory in chronological(memories):
        body = memory.content.replace("\n", "\n  ")
        lines.append(f"- [round {memory.round}] {body}")
    return "\n".join(lines)


def format_retrieved(memories: Sequence[Memory], question: str) -> str:
    """The human message the article sends: relevant history (oldest first, see
    ``chronological``), then the question.

    Returns:
        ``"Relevant history:\\n- [round 3] User: ...\\n  AI: ...\\n\\nQuestion: <question>"``; just
        ``question`` when ``memories`` is empty.
    """
    if not memories:
        return question
    return f"{history_block(memories)}\n\nQuestion: {question}"


class WrittenTurns:
    """Which conversation messages each turn this process wrote to Milvus came from, so a
    retrieved memory can name its sources (``helpers.memory.PromptPart.sources``)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, int], tuple[str, ...]] = {}

    def add(self, session_id: str, round_number: int, *messages: BaseMessage) -> None:
        self._ids[(session_id, round_number)] = tuple(m.id for m in messages if m.id)

    def sources(self, memories: Sequence[Memory]) -> tuple[str, ...]:
        """Message ids of the memories' turns (memories written elsewhere have none)."""
        return tuple(i for m in memories for i in self._ids.get((m.session_id, m.round), ()))


def write_messages(store: MemoryStore, written: WrittenTurns, user_id: str, session_id: str,
                   round_number: int, user: BaseMessage, reply: BaseMessage, date: str = "",
                   supplied: str = "", other: OtherSpeaker | None = None) -> list[str]:
    """Store a turn as one row per message (``MemoryStore.add_memory``): the user's words as round
    ``2r - 1``, the reply as ``2r`` (so a row's neighbours are the messages around it), each with
    its kind (``recall.classify_turn``), speaker and the session's ``date``; both embedded in one
    call when each is one chunk. A reply that only repeats ``supplied`` (the memories and summary
    its prompt carried, ``recall.is_echo``) is stored as kind ``"echo"``. ``other`` counts the
    reply's speaker (``recall.OtherSpeaker``): once it looks like a person, their turns are
    classified like the user's. Returns the ids written."""
    texts = [user.text, reply.text]
    vectors: list = [None, None]
    if all(len(split_utf8(t, store.max_chunk_bytes)) == 1 for t in texts):
        vectors = store._embed_documents(texts)
    ids = []
    for offset, (message, speaker, vector) in enumerate(
            zip((user, reply), ("user", "assistant"), vectors, strict=True)):
        number = 2 * round_number - 1 + offset
        if other is not None and speaker == "assistant":
            other.add(message.text)
        kind = classify_turn(message.text, speaker, other is not None and other.is_person)
        if speaker == "assistant" and kind in ("reply", "statement") and is_echo(message.text,
                                                                                supplied):
            kind = "echo"
        ids += store.add_memory(user_id, session_id, number, message.text,
                                kind=kind, speaker=speaker,
                                date=date, vector=vector)
        written.add(session_id, number, message)
    return ids


@dataclass
class RetrievalTurn:
    """What retrieval did in one turn (``RetrievalMemory.turns_log``).

    ``query_embeddings`` (1) + ``stored_embeddings`` (chunks written) = ``extra_embedding_calls``:
    embedding calls this memory added to the turn. Times in milliseconds, embedding included.
    """

    round: int
    question: str
    retrieved: list[Memory]
    query_embeddings: int = 0
    stored_embeddings: int = 0
    search_ms: float = 0.0
    write_ms: float = 0.0
    ids: list[str] = field(default_factory=list)

    @property
    def extra_embedding_calls(self) -> int:
        return self.query_embeddings + self.stored_embeddings

    def as_row(self) -> dict:
        """Columns for a table: round, retrieved, best score, extra embedding calls, ms."""
        return {
            "round": self.round,
            "retrieved": len(self.retrieved),
            "best score": round(self.retrieved[0].score, 3) if self.retrieved else None,
            "extra embedding calls": self.extra_embedding_calls,
            "search ms": round(self.search_ms, 1),
            "write ms": round(self.write_ms, 1),
        }


class StoreCounters:
    """The embedding counters of a strategy that keeps its memories in ``self.store`` (a
    ``MemoryStore``), as the replay loop reads them (``helpers.memory.MemoryStrategy``)."""

    store: MemoryStore

    @property
    def embedding_seconds(self) -> float:
        """Seconds spent embedding so far (the replay loop reports overhead without it)."""
        return self.store.embedding_seconds

    @property
    def embedding_calls(self) -> int:
        """Embedding calls made by the store so far (queries + stored chunks)."""
        return self.store.embedding_calls


class RetrievalMemory(StoreCounters):
    """Retrieval memory as a ``helpers.memory.MemoryStrategy``.

    Per turn: ``prompt`` embeds the new question, searches the user's top-k turns in Milvus and
    sends ``[system, "Relevant history: ... Question: ..."]`` (only the question when nothing is
    found); ``after_turn`` writes the question and the answer back as the next round. No message
    list is kept between turns: Milvus is the memory.

    Args:
        store: a ``MemoryStore``.
        user_id: whose memory (``validate_id``); searches never see other users.
        session_id: the conversation the new turns are written under (``validate_id``).
        top_k: turns retrieved per question (the article uses 3).
        min_score: drop retrieved turns below this cosine similarity (``None``: keep top-k;
            default ``helpers.milvus_common.DEFAULT_MIN_SCORE``).
        all_sessions: search all the user's sessions (default) or only ``session_id``.
        first_round: the round number (a turn's number within its session) of the first turn
            written.
        recall_tokens: ``None`` (default): the article's top-k turns. A number: one row per
            message (``write_messages``; needs ``MemoryStore(..., memory_fields=True)``) and
            ``recall.recall_within_budget`` with this token budget (statements only, best-first,
            the top hit's neighbours, session dates; ``top_k`` and ``min_score`` unused).

    Attributes:
        last_retrieved: the ``Memory`` list found for the latest question, with scores.
        turns_log: one ``RetrievalTurn`` per answered turn (extra embedding calls, times).

    Raises:
        InvalidIdError: unsafe user or session id.
    """

    cost_note = ("every turn (embed + search + insert)", "top-k turns by meaning, any session")

    def __init__(self, store: MemoryStore, user_id: str, session_id: str = "default", top_k: int = 3,
                 min_score: float | None = DEFAULT_MIN_SCORE, all_sessions: bool = True,
                 first_round: int = 1, recall_tokens: int | None = None) -> None:
        self.store = store
        self.user_id = validate_id(user_id, "user id")
        self.session_id = validate_id(session_id, "session id")
        self.top_k, self.min_score, self.all_sessions = top_k, min_score, all_sessions
        self.round = first_round
        self.recall_tokens, self.session_date = recall_tokens, ""
        if recall_tokens is not None and not store.has_memory_fields:
            raise ValueError("recall_tokens needs a store with memory fields: "
                             "MemoryStore(..., memory_fields=True) on a new collection")
        self.last_retrieved: list[Memory] = []
        self.turns_log: list[RetrievalTurn] = []
        self._written = WrittenTurns()
        self._pending: RetrievalTurn | None = None

    @property
    def name(self) -> str:
        if self.recall_tokens is not None:
            return f"retrieval (Milvus recall {self.recall_tokens} tokens)"
        return f"retrieval (Milvus top-{self.top_k})"

    def start_session(self, session_id: str, stored: Sequence[BaseMessage] = (),
                      date: str = "") -> list[BaseMessage]:
        """A new conversation: later turns are written under ``session_id`` from round 1.
        Milvus keeps every earlier session, and searches span them (``all_sessions``).

        Returns:
            ``[]``: retrieval keeps no message list.
        """
        self.session_id = validate_id(session_id, "session id")
        self.round, self.session_date = 1, date
        return []

    def prompt(self, system: SystemMessage, stored: Sequence[BaseMessage],
               new_message: HumanMessage) -> Prompt:
        """``[system, message]``: the question with the retrieved turns in front of it.

        Args:
            system: the system prompt.
            stored: ignored (retrieval keeps no message list).
            new_message: the user's message (its text is the query).

        Returns:
            A ``Prompt``: ``[system, HumanMessage(format_retrieved(...))]`` whose second message has
            a ``RETRIEVED`` and a ``QUESTION`` part, or ``[system, new_message]`` when nothing
            is found.
        """
        question = new_message.text
        calls = self.store.embedding_calls
        began = time.perf_counter()
        if self.recall_tokens is not None:
            memories, block = recall_within_budget(self.store, self.user_id, question,
                                                   self.recall_tokens)
        else:
            memories = self.store.search(self.user_id, question, self.top_k, self.min_score,
                                         None if self.all_sessions else self.session_id)
            block = history_block(memories)
        self.last_retrieved = memories
        self._pending = RetrievalTurn(
            round=self.round, question=question, retrieved=memories,
            query_embeddings=self.store.embedding_calls - calls,
            search_ms=(time.perf_counter() - began) * 1000,
        )
        if not memories:
            return Prompt([system, new_message], [part(SYSTEM, system), part(QUESTION, new_message)])
        message = HumanMessage(f"{block}\n\nQuestion: {question}")
        parts = (PromptPart(RETRIEVED, block, self._written.sources(memories)),
                 PromptPart(QUESTION, question, (new_message.id,) if new_message.id else ()))
        return Prompt([system, message], [part(SYSTEM, system), parts])

    def after_turn(self, model: BaseChatModel | None, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Write the last turn (``stored[-2]`` the user's message, ``stored[-1]`` the answer) to
        Milvus as round ``self.round``; return ``[]`` (no messages kept; ``model`` is not used).
        """
        user, reply = stored[-2], stored[-1]
        question = user.text
        turn = self._pending if self._pending and self._pending.question == question else \
            RetrievalTurn(round=self.round, question=question, retrieved=[])
        calls = self.store.embedding_calls
        began = time.perf_counter()
        if self.recall_tokens is not None:
            turn.ids = write_messages(self.store, self._written, self.user_id, self.session_id,
                                      self.round, user, reply, self.session_date)
        else:
            turn.ids = self.store.add_turn(self.user_id, self.session_id, self.round, question,
                                           reply.text)
        turn.write_ms = (time.perf_counter() - began) * 1000
        turn.stored_embeddings = self.store.embedding_calls - calls
        if self.recall_tokens is None:
            self._written.add(self.session_id, self.round, user, reply)
        self.turns_log.append(turn)
        self._pending = None
        self.round += 1
        return []
