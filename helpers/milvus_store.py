"""Retrieval memory in Milvus (lesson 06): store every turn as a vector, find old turns by meaning.

A window or a summary keeps the *recent* past. Retrieval memory keeps *everything* and, before each
answer, looks up only the few old turns that are relevant to the new question (the article's
"Milvus long-term memory"). The pieces:

* ``MemoryStore``: one Milvus collection of conversation turns. ``add_turn`` embeds and writes a
  turn, ``search`` finds a user's turns closest to a question (cosine similarity), ``turns`` lists
  them, ``flush`` / ``drop`` / ``close`` manage the collection.
* ``Memory``: one retrieved turn (content, round, timestamp, session, score, ids).
* ``RetrievalMemory``: the strategy for ``helpers.strategies.replay``: before answering it puts the
  retrieved turns in front of the question ("Relevant history: ... Question: ..."), after answering
  it writes the turn back. ``last_retrieved`` and ``turns_log`` show what was found and what it
  cost (extra embedding calls, milliseconds).
* ``langchain_retriever``: the library way, ``langchain_milvus.Milvus`` + ``as_retriever`` on the
  same data, with the same COSINE / IVF_FLAT settings.
* Errors, each with a plain sentence that says what to do: ``MilvusUnavailableError`` (server not
  reachable), ``LiteLockedError`` (another process has the Milvus Lite folder open),
  ``CollectionNotLoadedError``, ``DimensionMismatchError`` (collection made by another embedding
  model), ``InvalidIdError`` (unsafe user or session id).

The collection (the article's fields, plus what isolation and long turns need):

==============  ======================  ===========================================================
field           type                    meaning
==============  ======================  ===========================================================
``id``          VARCHAR(64), primary    ``<turn_id>-<chunk>``; unique by construction (uuid4)
``vector``      FLOAT_VECTOR(dim)       embedding of ``content``; dim from the embedding model
``content``     VARCHAR(5000)           ``"User: ...\\nAI: ..."`` (one chunk of it, see below)
``round``       INT64                   the turn's number within its session (1, 2, ...)
``timestamp``   VARCHAR(100)            ISO 8601 with time zone (Milvus has no datetime type)
``user_id``     VARCHAR(128), part. key whose memory; every search filters on it
``session_id``  VARCHAR(128)            which conversation the turn came from
``turn_id``     VARCHAR(64)             uuid4 hex shared by the chunks of one turn
``chunk``       INT64                   0, 1, ... position of this chunk in the turn
``chunks``      INT64                   how many chunks the turn has (1 for almost all turns)
==============  ======================  ===========================================================

Design decisions (numbers measured by ``benchmarks/bench_retrieval.py`` on 2 cores):

* **One row per turn, user and AI text together** (``"User: ...\\nAI: ..."``, as the article
  stores it): a hit returns the question with its answer, and one embedding call per turn. The
  ``User:`` / ``AI:`` prefixes let a reader (and the offline model) tell who said what.
* **Bytes, not characters.** A Milvus server counts VARCHAR ``max_length`` in UTF-8 bytes (a
  Hangul syllable is 3 bytes: 2,000 Korean characters are 6,000 bytes and do not fit 5,000);
  Milvus Lite 3.2.2 counts characters. This module measures bytes on both, so a collection behaves
  the same when you move from Lite to a server. A longer turn is split into chunks of at most
  ``max_chunk_bytes`` bytes, cut only between characters (preferring a space or line break near the
  end). Every chunk is embedded and stored; a search hit on any chunk returns the whole turn,
  reassembled in order. Nothing is rejected or cut off.
* **Ids**: ``uuid4().hex`` per turn, ``-<chunk>`` per row. Timestamp + round ids collide when two
  processes (or two users) write the same round in the same second.
* **Insert, never upsert.** On a *server* an insert with an existing primary key is accepted
  silently as a second row (both come back from a count); Milvus Lite overwrites instead (last
  write wins). ``upsert`` replaces (both copies, on a server), but on the 2.3.5 server an upserted
  row of this partition-key collection was then found by its id and, in most runs, *not* by a
  ``user_id`` filter, i.e. lost to search. Since ids are fresh uuids, ``add_turn`` just inserts.
* **Isolation**: ``user_id`` is the partition key, and every search and query filters on it. User
  and session ids are checked with ``helpers.history.validate_session_id`` (ASCII letters, digits,
  ``_.-``), and every string put in a filter is escaped (``filter_literal``): pymilvus'
  ``filter_params`` templates are not supported by Milvus Lite, so filters are built as strings.
* **Read-after-write**: ``consistency_level="Session"`` on every search and query: a client
  always sees its own writes, so a turn this store wrote is found by the next turn's search.
  Measured on the 2.3.5 server: ``Strong`` waited for a server time tick on *every* search
  (~200-400 ms, even with no writes); ``Session`` waits only when the search comes right after
  this client's own write (in a chat the next question comes seconds later: ~5 ms); ``Bounded``
  (the server's usual default) took ~4 ms but missed 20 of 20 turns written just before. Pass
  ``consistency_level="Strong"`` when *another* process writes memories that must be seen at
  once. Milvus Lite sees every write at once, whatever the level.
* **Index**: IVF_FLAT + COSINE as in the article, ``nlist=128`` cells, ``nprobe`` cells searched
  (see ``DEFAULT_NPROBE`` for the measured choice).
* **Flush policy**: Milvus Lite searches rows not yet flushed by brute force over Python objects
  (386 ms per search at 10k unflushed rows, measured on 2 cores); flushed rows are in indexed
  segments. ``MemoryStore`` flushes after ``flush_every`` rows written by this process (100 on
  Lite, see ``DEFAULT_LITE_FLUSH_EVERY`` for the measurement). A server seals and indexes
  segments on its own, and a flush there takes ~2 s and makes small segments: no flushing.
* **Speed** (benchmark, 2 cores, embedding excluded): a turn (search top-3 + insert) took p50
  ~12 ms at 1k stored turns, ~26-34 ms at 10k and ~200 ms at 100k on Milvus Lite (its search
  costs ~2 ms per 1,000 rows), and 15-21 ms from 1k to 100k on the 2.3.5 server.

Sources: the article's collection and IVF_FLAT/COSINE settings; Milvus docs "Boolean expression
rules" and milvus-io/milvus-docs#2525 (escaping: ``\\`` and the quote character inside a quoted
string); the Lite vs server behaviour was measured on Milvus Lite 3.2.2 and the Milvus 2.3.5 server.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from langchain_core.embeddings import Embeddings

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
SEARCH_LIMIT_MAX = 16384  # Milvus' topk limit
CHUNK_OVERFETCH = 4  # search top_k * 4 rows, so chunks of one long turn do not crowd out others
OUTPUT_FIELDS = ["content", "round", "timestamp", "session_id", "turn_id", "chunk", "chunks"]
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


def backend_kind(uri: str) -> str:
    """``"lite"`` for a local path, ``"cloud"`` for Zilliz Cloud, else ``"server"`` (the same
    rule as ``helpers.config.Settings.milvus_kind``)."""
    if not uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:")):
        return "lite"
    return "cloud" if "zilliz" in uri else "server"


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
    """

    content: str
    round: int
    timestamp: str
    session_id: str
    score: float | None
    ids: tuple[str, ...]
    turn_id: str = ""
    user_id: str = ""

    @property
    def chunks(self) -> int:
        """How many rows (chunks) the turn is stored in."""
        return len(self.ids)


# --- the store ---------------------------------------------------------------------------------


class MemoryStore:
    """A Milvus collection of conversation turns, searched by meaning, isolated per user.

    Args:
        uri: a Milvus Lite path ending in ``.db`` (a folder is created there), ``http://host:19530``
            for a server, or a Zilliz Cloud URI. Default: ``MILVUS_URI`` from
            ``helpers.config.load_settings()``, i.e. ``<runtime dir>/milvus/course.db``.
        token: server / cloud token (default ``MILVUS_TOKEN``; none for Lite).
        collection: collection name (letters, digits, ``_``).
        embeddings: a LangChain ``Embeddings`` (default ``helpers.models.get_embeddings()``,
            loaded only when text is first embedded if ``dim`` is given).
        dim: vector length. Default: the length of one probe embedding (one extra call at open).
        nlist: IVF_FLAT cells per segment when the collection is created (128).
        nprobe: cells searched per segment (``DEFAULT_NPROBE``; the docstring there has the
            measurement).
        flush_every: flush after this many rows written by this store; ``"auto"`` (default):
            ``DEFAULT_LITE_FLUSH_EVERY`` (100, measured there) on Milvus Lite, ``None`` (never)
            on a server, which seals and indexes segments itself (a flush there took ~2 s and
            makes small segments). ``None`` disables it; ``flush()`` flushes now.
        max_chunk_bytes: UTF-8 bytes per stored chunk (<= 5,000, the field's limit). Smaller
            chunks embed better with models that read only the first 256 tokens (MiniLM).
        consistency_level: ``"Session"`` (default: this store reads its own writes), ``"Strong"``
            (also other processes' writes, ~200-400 ms per search on a server), ``"Bounded"``
            (fastest, may miss writes of the last seconds). See the module docstring.
        drop_existing: drop the collection first if it exists (re-running a lesson starts clean).
        timeout: seconds for each Milvus call (also for connecting).

    Raises:
        MilvusUnavailableError: the server cannot be reached (the message says how to start one).
        LiteLockedError: another process has this Milvus Lite folder open.
        DimensionMismatchError: the collection exists with another vector length; nothing was
            inserted or searched. The message names both lengths and the fixes.
        MilvusStoreError: the collection exists but lacks this module's fields.
        ValueError: bad arguments (a Lite path not ending in ``.db``, ``nlist`` < 1 ...).

    A ``MemoryStore`` is safe to use from several threads. Use it as a context manager or call
    ``close()`` when done.
    """

    def __init__(
        self,
        uri: str | None = None,
        token: str | None = None,
        collection: str = DEFAULT_COLLECTION,
        embeddings: Embeddings | None = None,
        dim: int | None = None,
        *,
        nlist: int = DEFAULT_NLIST,
        nprobe: int = DEFAULT_NPROBE,
        flush_every: int | None | str = "auto",
        max_chunk_bytes: int = CONTENT_MAX_BYTES,
        consistency_level: str = "Session",
        drop_existing: bool = False,
        timeout: float = 30.0,
    ) -> None:
        if uri is None:
            from helpers.config import load_settings

            settings = load_settings()
            uri, token = settings.milvus_uri, token or settings.milvus_token
        if not _FIELD_NAME.fullmatch(collection):
            raise ValueError(f"collection name {collection!r}: use letters, digits and '_' only")
        if nlist < 1 or nprobe < 1:
            raise ValueError(f"nlist and nprobe must be >= 1, got {nlist}, {nprobe}")
        if not 4 <= max_chunk_bytes <= CONTENT_MAX_BYTES:
            raise ValueError(f"max_chunk_bytes must be 4..{CONTENT_MAX_BYTES}, got {max_chunk_bytes}")
        if dim is not None and dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.uri = str(uri)
        self.kind = backend_kind(self.uri)
        self.collection = collection
        self.nlist, self.nprobe = nlist, nprobe
        self.max_chunk_bytes = max_chunk_bytes
        self.consistency_level = consistency_level
        self.timeout = timeout
        if flush_every == "auto":
            flush_every = DEFAULT_LITE_FLUSH_EVERY if self.kind == "lite" else None
        self.flush_every: int | None = flush_every  # type: ignore[assignment]
        self.embedding_calls = 0
        """Texts embedded for queries and stored chunks (a batch of n chunks counts n, as
        per-input billing does). The dimension probe at open is not counted."""
        self.flush_count = 0
        self.flush_seconds = 0.0
        self._embeddings = embeddings
        self._lock = threading.Lock()
        self._unflushed = 0
        self._closed = False
        self._client = self._connect(token)
        if drop_existing:
            self._client.drop_collection(collection, timeout=timeout)
        self.dim = self._open_collection(dim)

    # -- opening -------------------------------------------------------------------------------

    def _connect(self, token: str | None):
        import_pymilvus()
        from pymilvus import MilvusClient
        from pymilvus.exceptions import ConnectionConfigException, MilvusException


        if self.kind == "lite":
            if not self.uri.endswith(".db"):
                raise ValueError(f"a Milvus Lite path must end in '.db', got {self.uri!r}")
            Path(self.uri).parent.mkdir(parents=True, exist_ok=True)
        try:
            return MilvusClient(uri=self.uri, token=token or "", timeout=self.timeout)
        except ConnectionConfigException as exc:
            if self.kind == "lite" and "Open local milvus failed" in str(exc):
                if _lite_folder_locked(self.uri):
                    raise LiteLockedError(
                        f"The Milvus Lite folder {self.uri} is open in another process (often "
                        "another notebook's kernel): Milvus Lite allows one process per folder. "
                        "Restart or shut down that kernel (closing the client is not enough), "
                        "use another path, or run a Milvus server (docker compose up -d) and "
                        "set MILVUS_URI=http://localhost:19530."
                    ) from None
                raise MilvusStoreError(f"Milvus Lite could not open {self.uri}: {exc.message}") from None
            raise
        except MilvusException as exc:
            raise MilvusUnavailableError(self._unreachable_message(exc)) from None

    def _unreachable_message(self, exc: Exception) -> str:
        return (
            f"Cannot reach the Milvus server at {self.uri} ({getattr(exc, 'message', exc)}). "
            "Start it with `docker compose up -d` and wait until it is healthy, check MILVUS_URI "
            "(e.g. http://localhost:19530) in .env, or remove MILVUS_URI to use the default "
            "Milvus Lite file under the runtime folder."
        )

    def _open_collection(self, dim: int | None) -> int:
        if self._client.has_collection(self.collection, timeout=self.timeout):
            existing = self._check_existing()
            if dim is None:
                dim = self._probe_dimension()
            if dim != existing:
                raise DimensionMismatchError(self._mismatch_message(existing, dim))
        else:
            dim = dim if dim is not None else self._probe_dimension()
            self._create(dim)
        self._ensure_loaded()
        return dim

    def _probe_dimension(self) -> int:
        return len(self.embeddings.embed_query("dimension probe"))

    def _mismatch_message(self, collection_dim: int, model_dim: int) -> str:
        return (
            f"Collection {self.collection!r} at {self.uri} stores {collection_dim}-dimensional "
            f"vectors, but the embedding model makes {model_dim}-dimensional ones (another model "
            "wrote it). Nothing was inserted or searched. Use another collection name, e.g. "
            f"MemoryStore(collection='{self.collection}_{model_dim}'), or delete the old "
            f"memories: MemoryStore.drop_collection({self.collection!r}, uri=...) or "
            "MemoryStore(..., drop_existing=True)."
        )

    def _check_existing(self) -> int:
        from pymilvus import DataType

        info = self._client.describe_collection(self.collection, timeout=self.timeout)
        fields = {f["name"]: f for f in info["fields"]}
        missing = [n for n in ("id", "vector", *OUTPUT_FIELDS, "user_id") if n not in fields]
        if missing or fields["vector"]["type"] != DataType.FLOAT_VECTOR:
            raise MilvusStoreError(
                f"Collection {self.collection!r} exists but is not a memory collection of this "
                f"course (missing fields: {', '.join(missing) or 'none'}; vector type "
                f"{fields.get('vector', {}).get('type')}). Use another collection name."
            )
        limit = int(fields["content"]["params"].get("max_length", CONTENT_MAX_BYTES))
        self.max_chunk_bytes = min(self.max_chunk_bytes, limit)
        return int(fields["vector"]["params"]["dim"])

    def _create(self, dim: int) -> None:
        from pymilvus import DataType, MilvusClient
        from pymilvus.exceptions import MilvusException

        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False,
                                            description="conversation turns (llm-memory-course)")
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX_LENGTH)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field("content", DataType.VARCHAR, max_length=CONTENT_MAX_BYTES)
        schema.add_field("round", DataType.INT64)
        schema.add_field("timestamp", DataType.VARCHAR, max_length=TIMESTAMP_MAX_LENGTH)
        schema.add_field("user_id", DataType.VARCHAR, max_length=USER_ID_MAX_LENGTH,
                         is_partition_key=True)
        schema.add_field("session_id", DataType.VARCHAR, max_length=USER_ID_MAX_LENGTH)
        schema.add_field("turn_id", DataType.VARCHAR, max_length=ID_MAX_LENGTH)
        schema.add_field("chunk", DataType.INT64)
        schema.add_field("chunks", DataType.INT64)
        index = MilvusClient.prepare_index_params()
        index.add_index(field_name="vector", index_type="IVF_FLAT", metric_type="COSINE",
                        params={"nlist": self.nlist})
        try:
            self._client.create_collection(self.collection, schema=schema, index_params=index,
                                           consistency_level=self.consistency_level,
                                           timeout=self.timeout)
        except MilvusException:
            # Another process created it between has_collection and here: check it instead.
            if not self._client.has_collection(self.collection, timeout=self.timeout):
                raise
            existing = self._check_existing()
            if existing != dim:
                raise DimensionMismatchError(self._mismatch_message(existing, dim)) from None

    def _ensure_loaded(self) -> None:
        from pymilvus.exceptions import MilvusException

        state = self._client.get_load_state(self.collection, timeout=self.timeout)
        if "Loaded" in str(state.get("state")) and "NotLoad" not in str(state.get("state")):
            return
        try:
            self._client.load_collection(self.collection, timeout=self.timeout)
        except MilvusException as exc:
            raise CollectionNotLoadedError(
                f"Collection {self.collection!r} is not loaded into memory and loading it failed "
                f"({exc.message}). Searches need a loaded collection: check the server's memory "
                "and logs, then call store.load()."
            ) from None

    # -- properties ------------------------------------------------------------------------------

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model (``helpers.models.get_embeddings()`` unless one was given)."""
        if self._embeddings is None:
            from helpers.models import get_embeddings

            self._embeddings = get_embeddings()
        return self._embeddings

    @property
    def client(self):
        """The underlying ``pymilvus.MilvusClient``, for demonstrations (e.g. raw insert/upsert)."""
        return self._client

    @property
    def unflushed(self) -> int:
        """Rows this store wrote since its last flush."""
        return self._unflushed

    def load(self) -> None:
        """Load the collection into memory (searches need it). Idempotent.

        Raises:
            CollectionNotLoadedError: loading failed.
        """
        self._ensure_loaded()

    # -- writing ---------------------------------------------------------------------------------

    def add_turn(
        self,
        user_id: str,
        session_id: str,
        round: int,
        user_text: str,
        ai_text: str | None = None,
        timestamp: datetime | str | None = None,
        *,
        vectors: Sequence[Sequence[float]] | None = None,
        embed: str = "turn",
    ) -> list[str]:
        """Embed and store one turn (``format_turn(user_text, ai_text)``), in chunks if it is
        longer than ``max_chunk_bytes`` UTF-8 bytes.

        Args:
            user_id: whose memory (``validate_id``); the partition key.
            session_id: which conversation (``validate_id``).
            round: the turn's number in the session, an int >= 0.
            user_text: what the user said (str, any length, any language).
            ai_text: the answer, or ``None`` to store only the user's text.
            timestamp: ``datetime``, ISO 8601 str, or ``None`` for now (see ``iso_timestamp``).
            vectors: precomputed embeddings, one per chunk (``chunks_of(...)`` tells how many),
                each of length ``dim``; skips the embedding model (benchmarks, tests).
            embed: what the vector is computed from. ``"turn"`` (the article's way): the stored
                text, ``"User: ...\nAI: ..."``. ``"user"``: the user's words alone, while the
                whole turn is still stored and returned. Measured with all-MiniLM-L6-v2, "What is
                my name?" scores 0.56 against "My name is Aiko." but 0.36 against the whole turn
                with its greeting, below "My sister is called Mei." (0.47): the reply and the
                prefixes dilute the fact. Turns longer than one chunk are embedded per chunk.

        Returns:
            The ids written (``<turn_id>-<chunk>``), one per chunk, in order.

        Raises:
            InvalidIdError: an unsafe user or session id (nothing is written).
            DimensionMismatchError: a vector's length is not ``dim`` (nothing is written).
            ValueError / TypeError: bad round, texts, timestamp or number of vectors.
            MilvusUnavailableError: the server went away.
        """
        validate_id(user_id, "user id")
        validate_id(session_id, "session id")
        if embed not in ("turn", "user"):
            raise ValueError(f"embed must be 'turn' or 'user', got {embed!r}")
        chunks = self.chunks_of(user_text, ai_text)
        if vectors is None and embed == "user" and len(chunks) == 1:
            vectors = self._embed_documents([user_text])
        return self._insert_chunks(user_id, session_id, round, chunks, timestamp, vectors)

    def _insert_chunks(self, user_id, session_id, round, chunks, timestamp, vectors) -> list[str]:
        if isinstance(round, bool) or not isinstance(round, int) or round < 0:
            raise ValueError(f"round must be an int >= 0, got {round!r}")
        stamp = iso_timestamp(timestamp)
        if vectors is None:
            vectors = self._embed_documents(chunks)
        elif len(vectors) != len(chunks):
            raise ValueError(f"{len(vectors)} vectors given for {len(chunks)} chunks")
        else:
            vectors = [self._check_vector(v) for v in vectors]
        turn_id = uuid.uuid4().hex
        rows = [
            {"id": f"{turn_id}-{i}", "vector": list(map(float, vector)), "content": chunk,
             "round": round, "timestamp": stamp, "user_id": user_id, "session_id": session_id,
             "turn_id": turn_id, "chunk": i, "chunks": len(chunks)}
            for i, (chunk, vector) in enumerate(zip(chunks, vectors, strict=True))
        ]
        self._call(self._client.insert, self.collection, rows, timeout=self.timeout)
        self._after_write(len(rows))
        return [row["id"] for row in rows]

    def add_text(self, user_id: str, session_id: str, round: int, text: str,
                 timestamp: datetime | str | None = None) -> list[str]:
        """Embed and store a memory that is not a turn (e.g. a summary of 20 turns, lesson 07),
        as ``text`` exactly, chunked like ``add_turn``.

        Args:
            user_id, session_id, round, timestamp: as in ``add_turn``.
            text: the memory's text (str, any length).

        Returns:
            The ids written, one per chunk.

        Raises:
            The same errors as ``add_turn``.
        """
        validate_id(user_id, "user id")
        validate_id(session_id, "session id")
        if not isinstance(text, str):
            raise TypeError("text must be a str")
        return self._insert_chunks(user_id, session_id, round, split_utf8(text, self.max_chunk_bytes),
                                   timestamp, None)

    def chunks_of(self, user_text: str, ai_text: str | None = None) -> list[str]:
        """The chunks ``add_turn`` would store for this turn (``split_utf8`` of ``format_turn``)."""
        return split_utf8(format_turn(user_text, ai_text), self.max_chunk_bytes)

    def _after_write(self, rows: int) -> None:
        with self._lock:
            self._unflushed += rows
            due = self.flush_every is not None and self._unflushed >= self.flush_every
        if due:
            self.flush()

    def flush(self) -> float:
        """Flush written rows into sealed, indexed segments now.

        Returns:
            Seconds the flush took (also added to ``flush_seconds``; ``flush_count`` + 1).
        """
        began = time.perf_counter()
        self._call(self._client.flush, self.collection, timeout=self.timeout)
        took = time.perf_counter() - began
        with self._lock:
            self._unflushed = 0
            self.flush_count += 1
            self.flush_seconds += took
        return took

    # -- reading -----------------------------------------------------------------------------------

    def search(
        self,
        user_id: str,
        query: str | None,
        top_k: int = 3,
        min_score: float | None = None,
        session_id: str | None = None,
        *,
        query_vector: Sequence[float] | None = None,
    ) -> list[Memory]:
        """The ``top_k`` turns of ``user_id`` closest in meaning to ``query`` (cosine similarity).

        Args:
            user_id: whose memories (``validate_id``); other users' turns are never returned.
            query: the question (str); embedded with one call unless ``query_vector`` is given.
            top_k: how many turns, 1..4096.
            min_score: drop turns with a similarity below this (e.g. 0.3); ``None`` keeps all.
            session_id: only this conversation's turns (``None``: all of the user's sessions).
            query_vector: a precomputed embedding of length ``dim`` (skips the model).

        Returns:
            Up to ``top_k`` ``Memory`` objects, best first, each a whole turn (all its chunks
            reassembled); ``[]`` when the user has no stored turns.

        Raises:
            InvalidIdError: unsafe user or session id.
            DimensionMismatchError: ``query_vector`` (or the model's output) has the wrong length.
            CollectionNotLoadedError: the collection is released and cannot be loaded.
            MilvusUnavailableError: the server went away.
        """
        validate_id(user_id, "user id")
        if session_id is not None:
            validate_id(session_id, "session id")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 4096:
            raise ValueError(f"top_k must be an int in 1..4096, got {top_k!r}")
        if query_vector is None:
            if not isinstance(query, str):
                raise TypeError("query must be a str (or pass query_vector)")
            vector = self._embed_query(query)
        else:
            vector = self._check_vector(query_vector)
        where = eq_filter(user_id=user_id, **({"session_id": session_id} if session_id else {}))
        hits = self._call(
            self._client.search, self.collection, data=[vector], filter=where,
            limit=min(top_k * CHUNK_OVERFETCH, SEARCH_LIMIT_MAX), output_fields=OUTPUT_FIELDS,
            search_params={"metric_type": "COSINE", "params": {"nprobe": self.nprobe}},
            anns_field="vector", consistency_level=self.consistency_level, timeout=self.timeout,
        )[0]
        best: dict[str, tuple[float, dict]] = {}
        for hit in hits:  # best-scoring chunk per turn, in rank order
            entity = hit["entity"]
            turn = entity["turn_id"]
            if turn not in best:
                best[turn] = (float(hit["distance"]), {**entity, "id": hit["id"]})
        ranked = sorted(best.values(), key=lambda pair: -pair[0])[:top_k]
        if min_score is not None:
            ranked = [pair for pair in ranked if pair[0] >= min_score]
        return self._assemble(user_id, ranked)

    def turns(self, user_id: str, session_id: str | None = None, limit: int = 1000) -> list[Memory]:
        """All stored turns of ``user_id`` (optionally one session), oldest round first.

        Args:
            user_id, session_id: as in ``search``.
            limit: at most this many rows are read (1..16384).

        Returns:
            ``Memory`` objects with ``score=None``, sorted by (timestamp, session, round).
        """
        validate_id(user_id, "user id")
        if session_id is not None:
            validate_id(session_id, "session id")
        where = eq_filter(user_id=user_id, **({"session_id": session_id} if session_id else {}))
        rows = self._query(where, limit=limit)
        return sorted(self._group(user_id, rows, {}), key=lambda m: (m.timestamp, m.session_id, m.round))

    def count(self, user_id: str | None = None) -> int:
        """Rows (chunks) stored, for one user or for everyone. On a server a duplicate primary
        key counts twice (see the module docstring)."""
        where = eq_filter(user_id=validate_id(user_id)) if user_id is not None else ""
        result = self._call(self._client.query, self.collection, filter=where,
                            output_fields=["count(*)"], consistency_level=self.consistency_level,
                            timeout=self.timeout)
        return int(result[0]["count(*)"])

    def _assemble(self, user_id: str, ranked: list[tuple[float, dict]]) -> list[Memory]:
        scores = {entity["turn_id"]: score for score, entity in ranked}
        rows = [entity for _, entity in ranked if int(entity["chunks"]) == 1]
        long_turns = [entity["turn_id"] for _, entity in ranked if int(entity["chunks"]) > 1]
        if long_turns:
            rows += self._query(f"{eq_filter(user_id=user_id)} and {in_filter('turn_id', long_turns)}")
        memories = {m.turn_id: m for m in self._group(user_id, rows, scores)}
        return [memories[turn] for turn in scores if turn in memories]

    def _query(self, where: str, limit: int = SEARCH_LIMIT_MAX) -> list[dict]:
        return self._call(self._client.query, self.collection, filter=where,
                          output_fields=["id", *OUTPUT_FIELDS], limit=limit,
                          consistency_level=self.consistency_level, timeout=self.timeout)

    @staticmethod
    def _group(user_id: str, rows: list[dict], scores: dict[str, float]) -> list[Memory]:
        by_turn: dict[str, list[dict]] = {}
        for row in rows:
            by_turn.setdefault(row["turn_id"], []).append(row)
        memories = []
        for turn, parts in by_turn.items():
            parts = sorted({int(p["chunk"]): p for p in parts}.values(), key=lambda p: int(p["chunk"]))
            first = parts[0]
            memories.append(Memory(
                content="".join(p["content"] for p in parts), round=int(first["round"]),
                timestamp=first["timestamp"], session_id=first["session_id"],
                score=scores.get(turn), ids=tuple(p["id"] for p in parts), turn_id=turn,
                user_id=user_id,
            ))
        return memories

    # -- embeddings ------------------------------------------------------------------------------

    def _check_vector(self, vector: Sequence[float]) -> list[float]:
        if len(vector) != self.dim:
            raise DimensionMismatchError(
                f"a {len(vector)}-dimensional vector was given to collection {self.collection!r}, "
                f"which stores {self.dim}-dimensional vectors. Use the embedding model the "
                "collection was made with, or another collection."
            )
        return [float(x) for x in vector]

    def _embed_query(self, text: str) -> list[float]:
        vector = self.embeddings.embed_query(text)
        with self._lock:
            self.embedding_calls += 1
        return self._check_vector(vector)

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self.embeddings.embed_documents(texts)
        with self._lock:
            self.embedding_calls += len(texts)
        return [self._check_vector(v) for v in vectors]

    # -- calls, errors -----------------------------------------------------------------------------

    def _call(self, method, *args, **kwargs):
        """Run a client call; load the collection once if it was released; translate errors."""
        from pymilvus.exceptions import MilvusException

        if self._closed:
            raise MilvusStoreError("this MemoryStore was closed or its collection dropped; open a new one")
        try:
            return method(*args, **kwargs)
        except MilvusException as exc:
            if _not_loaded(exc):
                self._ensure_loaded()
                try:
                    return method(*args, **kwargs)
                except MilvusException as again:
                    if _not_loaded(again):
                        raise CollectionNotLoadedError(
                            f"Collection {self.collection!r} is not loaded ({again.message}); "
                            "call store.load(), or check the server's memory and logs."
                        ) from None
                    raise
            if _unreachable(exc):
                raise MilvusUnavailableError(self._unreachable_message(exc)) from None
            raise

    # -- lifecycle ---------------------------------------------------------------------------------

    def drop(self) -> None:
        """Delete the collection and all its memories; this store cannot be used afterwards.

        On Milvus Lite the collection is released first: dropping a loaded collection with rows
        not yet indexed makes FAISS print "WARNING clustering ..." to the process's stderr."""
        if self.kind == "lite":
            with contextlib.suppress(Exception):
                self._client.release_collection(self.collection, timeout=self.timeout)
        self._client.drop_collection(self.collection, timeout=self.timeout)
        self._closed = True

    @staticmethod
    def drop_collection(collection: str = DEFAULT_COLLECTION, uri: str | None = None,
                        token: str | None = None) -> bool:
        """Delete ``collection`` without opening it as a store (works when its dimension does not
        match the current embedding model).

        Args:
            collection: the name.
            uri, token: as for ``MemoryStore`` (default from the settings).

        Returns:
            ``True`` if it existed.

        Raises:
            MilvusUnavailableError / LiteLockedError: as for ``MemoryStore``.
        """
        store = MemoryStore.__new__(MemoryStore)
        if uri is None:
            from helpers.config import load_settings

            settings = load_settings()
            uri, token = settings.milvus_uri, token or settings.milvus_token
        store.uri, store.kind, store.timeout = str(uri), backend_kind(str(uri)), 30.0
        client = store._connect(token)
        existed = client.has_collection(collection)
        if existed:
            client.drop_collection(collection)
        return existed

    def close(self, release_lite: bool = False) -> None:
        """Close the client connection.

        Args:
            release_lite: also stop this process's Milvus Lite engine for this path, which
                releases the folder's lock so another process (another notebook) can open it.
                Any other client of the same path in this process stops working then. Without it
                the lock is held until the process exits (measured on Milvus Lite 3.2.2).
        """
        self._closed = True
        with contextlib.suppress(Exception):
            self._client.close()
        if release_lite and self.kind == "lite":
            from milvus_lite.server_manager import server_manager_instance

            server_manager_instance.release_server(self.uri)

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"MemoryStore(kind={self.kind!r}, uri={self.uri!r}, collection={self.collection!r}, "
                f"dim={getattr(self, 'dim', None)}, nlist={self.nlist}, nprobe={self.nprobe})")


def _not_loaded(exc) -> bool:
    text = str(getattr(exc, "message", exc)).lower()
    return getattr(exc, "code", None) == 101 or "not loaded" in text or "call load()" in text


def _unreachable(exc) -> bool:
    text = str(getattr(exc, "message", exc)).lower()
    cause = repr(exc.__cause__ or exc.__context__ or "").lower()
    return "fail connecting" in text or "unavailable" in text or "unavailable" in cause
