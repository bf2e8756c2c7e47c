"""What the Milvus pieces of the course share (lesson 06): constants of the collection, the safe
``pymilvus`` import, quiet logs, plain-sentence errors, user/session ids, escaped filters, UTF-8
chunking, timestamps, and ``Memory`` (one stored turn as a search returns it).

Everything here is small and pure (no connection): ``helpers.milvus_collection`` opens and
creates the collection, ``helpers.milvus_store.MemoryStore`` writes and searches turns.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from helpers.history import InvalidSessionIdError, validate_session_id

DEFAULT_COLLECTION = "conversation_memory"
CONTENT_MAX_BYTES = 5000  # the article's VARCHAR(5000); a server counts UTF-8 bytes
ID_MAX_LENGTH = 64
USER_ID_MAX_LENGTH = 128  # validate_session_id allows 1-128 ASCII characters
TIMESTAMP_MAX_LENGTH = 100
DEFAULT_NLIST = 128
DEFAULT_NPROBE = 128
"""Cells searched per segment (of ``nlist=128``). Measured by benchmarks/bench_retrieval.py (384-d
random unit vectors, 10 users, query = a paraphrase of a stored turn, recall@3 against exact
search), search p50 ms / recall@3 for nprobe 16 / 64 / 128:

* Milvus Lite, 10k turns: 14.8 / 0.74, 22.4 / 0.89, 22.2 / 1.0; 100k: 175 / 0.60, 203 / 0.86,
  155 / 1.0. No speed gain from a smaller nprobe: Lite's time goes to per-row bookkeeping in
  Python (~2 ms per 1,000 rows per search), not to scanning cells; and Lite clamps ``nlist`` to
  the rows of each small segment, so a few cells already hold everything.
* Server 2.3.5, 100k turns: 9.0 / 0.57, 9.0 / 0.83, 10.2 / 0.97 (a server indexes only segments
  of >= 1,024 rows; smaller and growing ones go through its interim index, whose nprobe is the
  server's setting, 16, whatever a request says).

Random vectors have no cluster structure, the worst case for IVF (real embeddings cluster), but a
memory that misses a stored fact is the failure this lesson is about, so the default searches
every cell: exact within each segment, for no measurable cost at course sizes. Lower it (e.g. 16)
for millions of rows per segment, after measuring recall on your own data."""
DEFAULT_LITE_FLUSH_EVERY = 100
"""Rows written by this process between flushes on Milvus Lite. Lite searches unflushed rows by
brute force over Python objects: measured (10k stored turns, 384-d), a search took ~65 ms longer
with 1,000 unflushed rows, ~0.07 ms per row. A flush costs ~50-70 ms for 50-100 rows (0.2-0.3 s
for 1,000). Per-turn overhead over 300 turns with flush_every 100 / 300 / 1000: p50 34 / 42 /
43 ms, mean 35 / 41 / 44 ms, worst turn 111 / 171 / 92 ms. 100 keeps the unflushed cost under
~7 ms for ~0.7 ms of flushing per turn; 50 was no better on average and had a 0.3 s outlier."""
DEFAULT_MIN_SCORE: float | None = None
"""Cosine similarity below which retrieval leaves a memory out (``RetrievalMemory``,
``LayeredMemory``, the lesson-06 explorer's slider); ``None`` keeps the top-k whatever their
scores. It depends on the embedding model (each model's similarities sit in its own band), so it is
set here, once, for the model the course ships."""
SEARCH_LIMIT_MAX = 16384  # Milvus' topk limit
CHUNK_OVERFETCH = 4  # search top_k * 4 rows, so chunks of one long turn do not crowd out others
OUTPUT_FIELDS = ["content", "round", "timestamp", "session_id", "turn_id", "chunk", "chunks"]
MEMORY_FIELDS = ["kind", "speaker", "date"]  # optional columns (MemoryStore(memory_fields=True))
MEMORY_FIELD_MAX_LENGTH = 32
LEXICAL_MAX_BYTES = 16384  # recall.lexical_text doubles Korean text (bigrams); 3 bytes a syllable
HYBRID_CANDIDATES = 50  # rows each of the dense and the BM25 search contribute to the fusion
BM25_MIN_SERVER = (2, 5)  # BM25 Functions were added in Milvus 2.5
_NOISY_LOGGERS = ("pymilvus", "milvus_lite")
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def import_pymilvus():
    """Import ``pymilvus`` safely and return it.

    pymilvus reads a ``MILVUS_URI`` environment variable of its own when it is imported (and
    loads the nearest ``.env`` file to find one), and refuses any value that is not
    ``http[s]://...``: a Milvus Lite path, which this course allows there, would make the import
    itself fail. So the import runs with a placeholder server URI in the environment, which
    pymilvus only records as a default it never uses here, and the variable is restored after.
    """
    import importlib
    import os
    import sys

    if "pymilvus" in sys.modules:
        return sys.modules["pymilvus"]
    saved = os.environ.get("MILVUS_URI")
    os.environ["MILVUS_URI"] = "http://localhost:19530"
    try:
        module = importlib.import_module("pymilvus")
    finally:
        if saved is None:
            os.environ.pop("MILVUS_URI", None)
        else:
            os.environ["MILVUS_URI"] = saved
    quiet_milvus_logs()  # importing pymilvus sets its logger back to WARNING
    return module


def quiet_milvus_logs(level: int = logging.CRITICAL) -> None:
    """Set the ``pymilvus`` and ``milvus_lite`` loggers to ``level``.

    A failed call logs ~46 lines of traceback to stderr even when the caller catches the
    exception; this module raises its own plain-sentence errors instead, so the
    loggers are quieted when it is imported. Pass ``logging.DEBUG`` to see them again.
    """
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(level)


quiet_milvus_logs()


# --- errors ------------------------------------------------------------------------------------


class MilvusStoreError(RuntimeError):
    """Base class of this module's Milvus errors; the message is a plain sentence with a fix."""


class MilvusUnavailableError(MilvusStoreError):
    """The Milvus server at the URI cannot be reached (not started, wrong host or port)."""


class StoreClosedError(MilvusStoreError):
    """The ``MemoryStore`` was closed (``close()``) or its collection dropped (``drop()``)."""


class LiteLockedError(MilvusStoreError):
    """Another process (often another notebook kernel) has the Milvus Lite folder open."""


class CollectionNotLoadedError(MilvusStoreError):
    """The collection is not loaded into memory and could not be loaded."""


class DimensionMismatchError(MilvusStoreError, ValueError):
    """Vectors of one length meet a collection or model of another (different embedding model).

    Raised when a store is opened, before any insert or search, so nothing is written with
    vectors the collection cannot compare.
    """


class InvalidIdError(InvalidSessionIdError):
    """A user or session id that is not allowed (see ``validate_id``). A ``ValueError``."""


# --- small pure functions ------------------------------------------------------------------------


def validate_id(value: str, what: str = "user id") -> str:
    """Check a user or session id and return it unchanged.

    Args:
        value: 1-128 ASCII letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit
            (the rules of ``helpers.history.validate_session_id``, reused so the same id works as
            a history file name and in a Milvus filter).
        what: ``"user id"`` or ``"session id"``, for the message.

    Raises:
        InvalidIdError: (a ``ValueError``) anything else, e.g. ``'a" or user_id != "x'``.
    """
    try:
        return validate_session_id(value)
    except InvalidSessionIdError as exc:
        raise InvalidIdError(str(exc).replace("session id", what, 1)) from None


def filter_literal(value: str) -> str:
    """``value`` as a double-quoted Milvus filter string literal, escaped.

    Backslash becomes ``\\\\``, ``"`` becomes ``\\"``, and newline, carriage return and tab become
    ``\\n``, ``\\r``, ``\\t`` (Milvus boolean expression rules; milvus-io/milvus-docs#2525). The
    result matches ``value`` exactly on Milvus Lite 3.2.2 and on a 2.3 server (tested), so a
    hostile string such as ``a" or user_id != "x`` stays one literal.

    Raises:
        TypeError: ``value`` is not a str.
    """
    if not isinstance(value, str):
        raise TypeError(f"filter values must be str, got {type(value).__name__}")
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"')
               .replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t"))
    return f'"{escaped}"'


def eq_filter(**fields: str | int) -> str:
    """A filter that requires every ``field == value`` (joined with ``and``), values escaped.

    Example: ``eq_filter(user_id="ann", session_id="s1")`` gives
    ``user_id == "ann" and session_id == "s1"``.

    Raises:
        ValueError: a field name that is not a plain identifier.
    """
    parts = []
    for name, value in fields.items():
        if not _FIELD_NAME.fullmatch(name):
            raise ValueError(f"not a field name: {name!r}")
        literal = str(int(value)) if isinstance(value, int) else filter_literal(value)
        parts.append(f"{name} == {literal}")
    return " and ".join(parts)


def in_filter(name: str, values: Sequence[str]) -> str:
    """``name in ["a", "b"]`` with every value escaped (``filter_literal``)."""
    if not _FIELD_NAME.fullmatch(name):
        raise ValueError(f"not a field name: {name!r}")
    return f"{name} in [{', '.join(filter_literal(v) for v in values)}]"


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes, the unit a Milvus server counts VARCHAR limits in."""
    return len(text.encode("utf-8"))


def split_utf8(text: str, max_bytes: int = CONTENT_MAX_BYTES) -> list[str]:
    """Split ``text`` into pieces of at most ``max_bytes`` UTF-8 bytes each.

    Cuts fall only between characters (never inside a multi-byte character), and at the last
    space or line break in the final quarter of a piece when there is one, so words stay whole.
    ``"".join(pieces) == text`` always.

    Args:
        text: any str (Korean syllables are 3 bytes, most emoji 4).
        max_bytes: byte budget per piece, at least 4 (the longest UTF-8 character).

    Returns:
        ``[text]`` when it fits (also for ``""``), else 2 or more non-empty pieces.

    Raises:
        ValueError: ``max_bytes`` < 4.
    """
    if max_bytes < 4:
        raise ValueError(f"max_bytes must be at least 4 (one UTF-8 character), got {max_bytes}")
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return [text]
    pieces, start = [], 0
    while start < len(data):
        end = start + max_bytes
        if end >= len(data):
            pieces.append(data[start:].decode("utf-8"))
            break
        while data[end] & 0xC0 == 0x80:  # a continuation byte: step back to a character start
            end -= 1
        floor = start + (3 * max_bytes) // 4
        space = max(data.rfind(b" ", floor, end), data.rfind(b"\n", floor, end))
        if space >= floor:
            end = space + 1
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    return pieces


def format_turn(user_text: str, ai_text: str | None = None) -> str:
    """The stored text of one turn: ``"User: <user_text>\\nAI: <ai_text>"`` (the article's
    format); just ``"User: <user_text>"`` when there is no answer yet."""
    if not isinstance(user_text, str) or not (ai_text is None or isinstance(ai_text, str)):
        raise TypeError("user_text must be a str and ai_text a str or None")
    return f"User: {user_text}" if ai_text is None else f"User: {user_text}\nAI: {ai_text}"


def iso_timestamp(value: datetime | str | None = None) -> str:
    """An ISO 8601 timestamp string for the ``timestamp`` field (Milvus has no datetime type).

    Args:
        value: ``None`` (now, UTC), a ``datetime`` (a naive one is taken as UTC), or a str that
            ``datetime.fromisoformat`` accepts (kept as given).

    Returns:
        e.g. ``"2026-01-31T09:30:00.123+00:00"``; at most 100 bytes.

    Raises:
        ValueError: a str that is not ISO 8601, or longer than 100 bytes.
        TypeError: anything else.
    """
    if value is None:
        value = datetime.now(UTC)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.isoformat(timespec="milliseconds")
    if not isinstance(value, str):
        raise TypeError(f"timestamp must be a datetime, an ISO 8601 str or None, not {type(value).__name__}")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"timestamp {value!r} is not ISO 8601 (e.g. 2026-01-31T09:30:00+00:00)") from None
    if utf8_len(value) > TIMESTAMP_MAX_LENGTH:
        raise ValueError(f"timestamp is longer than {TIMESTAMP_MAX_LENGTH} bytes")
    return value


def _lite_folder_locked(path: str) -> bool:
    """True if another open file holds the advisory lock Milvus Lite keeps on ``<path>/LOCK``."""
    lock = Path(path) / "LOCK"
    if not lock.exists():
        return False
    try:
        import fcntl
    except ImportError:  # Windows: cannot probe; the error is almost always this
        return True
    with open(lock, "a+b") as file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)
    return False


# --- results ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """One stored turn, as ``search`` or ``turns`` returns it.

    Attributes:
        content: the whole turn, ``"User: ...\\nAI: ..."``, reassembled from all its chunks.
        round: the turn's number within its session.
        timestamp: ISO 8601 str, when it was written.
        session_id: the conversation it came from.
        score: cosine similarity to the query (-1..1, higher is closer) of the turn's best
            chunk; ``None`` from ``turns``.
        ids: primary keys of all its rows, in chunk order (one for most turns).
        turn_id: the uuid4 hex shared by its chunks.
        user_id: whose memory it is.
        kind, speaker, date: the optional columns (``""`` when the collection has none or the
            row was written by ``add_turn``); see ``MemoryStore.add_memory``.
        dense_score / lexical_score: a hybrid search's cosine and BM25 parts (``None`` if absent).
    """

    content: str
    round: int
    timestamp: str
    session_id: str
    score: float | None
    ids: tuple[str, ...]
    turn_id: str = ""
    user_id: str = ""
    kind: str = ""
    speaker: str = ""
    date: str = ""
    dense_score: float | None = None
    lexical_score: float | None = None

    @property
    def chunks(self) -> int:
        """How many rows (chunks) the turn is stored in."""
        return len(self.ids)


def bm25_analyzer() -> dict:
    """The ``analyzer_params`` of the BM25 field: the ``standard`` tokenizer (Milvus Lite 3.2.2
    has only it and ``jieba``) with ``recall.STOP_WORDS`` removed. Korean and other CJK text
    reaches it as character bigrams (``recall.lexical_text``)."""
    from helpers.recall import STOP_WORDS

    return {"tokenizer": "standard", "filter": [{"type": "stop", "stop_words": list(STOP_WORDS)}]}


def best_per_turn(hits) -> dict[str, tuple[float, dict]]:
    """``{turn_id: (score, entity)}`` for the first (best-ranked) chunk of each turn in ``hits``
    (Milvus returns hits best first whatever the sign of its scores)."""
    best: dict[str, tuple[float, dict]] = {}
    for hit in hits:
        entity = hit["entity"]
        if entity["turn_id"] not in best:
            best[entity["turn_id"]] = (float(hit["distance"]), {**entity, "id": hit["id"]})
    return best


def cut_utf8(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, between characters."""
    data = text.encode("utf-8")
    return text if len(data) <= max_bytes else data[:max_bytes].decode("utf-8", "ignore")
