"""``MemoryStore`` (lesson 06): write conversation turns to Milvus and find them by meaning.

``add_turn`` embeds and writes a turn (chunked by UTF-8 bytes), ``search`` finds a user's turns
closest to a question (cosine similarity), ``turns`` lists them, ``count`` counts rows, ``flush``
seals them; ``add_memory`` / ``neighbours`` / ``search(kinds=..., hybrid=...)`` store and find
one message per row with its kind, speaker and date (``helpers.milvus_memories``, which also
reads rows back). The collection itself (schema, index, connecting, errors, design decisions) is
``helpers.milvus_collection``; ids, filters, chunking and ``Memory`` are ``helpers.milvus_common``.
The strategy that uses it every turn is ``helpers.retrieval.RetrievalMemory``.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime

from langchain_core.embeddings import Embeddings

from helpers.config import Settings, lesson_of_collection, milvus_connection, milvus_kind
from helpers.milvus_collection import MilvusCollection
from helpers.milvus_common import (
    _FIELD_NAME,
    CHUNK_OVERFETCH,
    CONTENT_MAX_BYTES,
    DEFAULT_COLLECTION,
    DEFAULT_LITE_FLUSH_EVERY,
    DEFAULT_NLIST,
    DEFAULT_NPROBE,
    HYBRID_CANDIDATES,
    SEARCH_LIMIT_MAX,
    DimensionMismatchError,
    InvalidIdError,
    Memory,
    best_per_turn,
    eq_filter,
    format_turn,
    iso_timestamp,
    quiet_milvus_logs,
    split_utf8,
    utf8_len,
    validate_id,
)
from helpers.milvus_memories import MessageMemories

# MemoryStore, plus what the lessons import from here (defined in helpers.milvus_common)
__all__ = ["InvalidIdError", "Memory", "MemoryStore", "eq_filter", "format_turn", "quiet_milvus_logs",
           "utf8_len"]


class MemoryStore(MessageMemories, MilvusCollection):
    """A Milvus collection of conversation turns, searched by meaning, isolated per user.

    Args:
        uri: a Milvus Lite path ending in ``.db`` (a folder is created there), ``http://host:19530``
            for a server, or a Zilliz Cloud URI. Default: ``MILVUS_URI`` of ``settings``
            (``helpers.config.milvus_connection``): with no ``MILVUS_URI``, a collection named
            ``lessonNN...`` gets that lesson's own Lite folder (``<runtime dir>/milvus/06_retrieval.db``),
            any other ``<runtime dir>/milvus/course.db``.
        token: server / cloud token (default ``MILVUS_TOKEN``; none for Lite).
        collection: collection name (letters, digits, ``_``).
        embeddings: a LangChain ``Embeddings`` (default ``helpers.models.get_embeddings(settings)``,
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
            chunks embed better with models that read only their first tokens (MiniLM: 256, e5: 512).
        consistency_level: ``"Session"`` (default: this store reads its own writes), ``"Strong"``
            (also other processes' writes, ~200-400 ms per search on a server), ``"Bounded"``
            (fastest, may miss writes of the last seconds). See the module docstring.
        drop_existing: drop the collection first if it exists (re-running a lesson starts clean).
        timeout: seconds for each Milvus call (also for connecting).
        settings: the ``Settings`` from ``show_setup()``, for the default ``uri`` and ``token``
            (default: read from the environment).
        memory_fields: create the collection with the ``kind``, ``speaker``, ``date`` columns
            (``add_memory``, ``search(kinds=...)``); an existing collection keeps its schema
            (``has_memory_fields`` says what it has).
        full_text: also the BM25 columns (``search(hybrid=True)``); implies ``memory_fields``.
            Without BM25 on the server (< 2.5) ``full_text`` is ``False``, ``full_text_note`` says
            why, and hybrid searches run dense only.

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
        settings: Settings | None = None,
        memory_fields: bool = False,
        full_text: bool = False,
    ) -> None:
        if uri is None:
            # lesson06 -> the lesson's own Lite folder (helpers.config.lesson_milvus_uri)
            uri, default_token = milvus_connection(settings, lesson_of_collection(collection))
            token = token or default_token
        if not _FIELD_NAME.fullmatch(collection):
            raise ValueError(f"collection name {collection!r}: use letters, digits and '_' only")
        if nlist < 1 or nprobe < 1:
            raise ValueError(f"nlist and nprobe must be >= 1, got {nlist}, {nprobe}")
        if not 4 <= max_chunk_bytes <= CONTENT_MAX_BYTES:
            raise ValueError(f"max_chunk_bytes must be 4..{CONTENT_MAX_BYTES}, got {max_chunk_bytes}")
        if dim is not None and dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.uri = str(uri)
        self.kind = milvus_kind(self.uri)
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
        self.embedding_seconds = 0.0  # time spent in those calls
        self.flush_count = 0
        self.flush_seconds = 0.0
        self._embeddings = embeddings
        self._settings = settings
        self._lock = threading.Lock()
        self._unflushed = 0
        self._closed = False
        self.has_memory_fields, self.full_text = bool(memory_fields or full_text), bool(full_text)
        self.last_search_note = ""  # what the latest search did instead of what was asked
        self._client = self._connect(token)
        if drop_existing:
            self._client.drop_collection(collection, timeout=timeout)
        self.dim = self._open_collection(dim)

    # -- properties ------------------------------------------------------------------------------

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model (``helpers.models.get_embeddings(settings)`` unless one was given)."""
        if self._embeddings is None:
            from helpers.models import get_embeddings

            self._embeddings = get_embeddings(self._settings)
        return self._embeddings

    @property
    def unflushed(self) -> int:
        """Rows this store wrote since its last flush."""
        return self._unflushed

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
                whole turn is still stored and returned. With all-MiniLM-L6-v2, "What is my name?"
                scored 0.56 against "My name is Aiko." but 0.36 against the whole turn with its
                greeting: the reply and the prefixes diluted the fact. With multilingual-e5-small
                the two are close (0.850 vs 0.840, lesson 07), so the choice matters less, but
                the user's words still rank first. Turns longer than one chunk are embedded per
                chunk.

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

    def _insert_chunks(self, user_id, session_id, round, chunks, timestamp, vectors,
                       extra: dict | None = None) -> list[str]:
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
        self._extra_columns(rows, extra)
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
        kinds: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] | None = None,
        hybrid: bool = False,
        fusion: str = "rrf",
        rrf_k: int = 60,
        dense_weight: float = 0.5,
        lexical_weight: float = 1.0,
        candidates: int = HYBRID_CANDIDATES,
    ) -> list[Memory]:
        """The ``top_k`` turns of ``user_id`` closest in meaning to ``query`` (cosine similarity).

        Args:
            user_id: whose memories (``validate_id``); other users' turns are never returned.
            query: the question (str); embedded with one call unless ``query_vector`` is given.
            top_k: how many turns, 1..4096.
            min_score: drop turns with a similarity below this (e.g. 0.3); ``None`` keeps all.
            session_id: only this conversation's turns (``None``: all of the user's sessions).
            query_vector: a precomputed embedding of length ``dim`` (skips the model).
            kinds / exclude_kinds: only / no rows of these kinds (a Milvus filter, applied before
                the top-k is cut); needs ``memory_fields``.
            hybrid: also BM25 full-text search on ``query``, fused with the dense ranking
                (``fusion`` ``"rrf"``, k=``rrf_k``, BM25 weight ``lexical_weight``; or
                ``"weighted"``, min-max scaled, ``dense_weight``); ``candidates`` rows from each.
                Without BM25 columns: dense only, and ``last_search_note`` says so.

        Returns:
            Up to ``top_k`` ``Memory`` objects, best first, each a whole turn (all its chunks
            reassembled); ``[]`` when the user has no stored turns. A hybrid search's ``score``
            is the fused score (``dense_score`` / ``lexical_score`` hold the parts).

        Raises:
            InvalidIdError: unsafe user or session id.
            DimensionMismatchError: ``query_vector`` (or the model's output) has the wrong length.
            CollectionNotLoadedError: the collection is released and cannot be loaded.
            MilvusUnavailableError: the server went away.
            MilvusStoreError: ``kinds`` / ``exclude_kinds`` without the kind column.
            ValueError: an unknown ``fusion``.
        """
        validate_id(user_id, "user id")
        if session_id is not None:
            validate_id(session_id, "session id")
        self.last_search_note = ""
        if fusion not in ("rrf", "weighted"):
            raise ValueError(f"fusion must be 'rrf' or 'weighted', got {fusion!r}")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 4096:
            raise ValueError(f"top_k must be an int in 1..4096, got {top_k!r}")
        if query_vector is None:
            if not isinstance(query, str):
                raise TypeError("query must be a str (or pass query_vector)")
            vector = self._embed_query(query)
        else:
            vector = self._check_vector(query_vector)
        where = eq_filter(user_id=user_id, **({"session_id": session_id} if session_id else {}))
        where += self._kind_filter(kinds, exclude_kinds)
        if hybrid and not self.full_text:
            self.last_search_note = self.full_text_note or (
                f"collection {self.collection!r} has no BM25 columns: dense search only.")
            hybrid = False
        limit = max(top_k * CHUNK_OVERFETCH, candidates if hybrid else 0)
        hits = self._call(
            self._client.search, self.collection, data=[vector], filter=where,
            limit=min(limit, SEARCH_LIMIT_MAX), output_fields=self.output_fields,
            search_params={"metric_type": "COSINE", "params": {"nprobe": self.nprobe}},
            anns_field="vector", consistency_level=self.consistency_level, timeout=self.timeout,
        )[0]
        best = best_per_turn(hits)  # best-scoring chunk per turn, in rank order
        if hybrid:
            return self._hybrid(user_id, query or "", where, best, top_k, limit, min_score,
                                fusion, rrf_k, dense_weight, lexical_weight)
        ranked = sorted(best.values(), key=lambda pair: -pair[0])[:top_k]
        if min_score is not None:
            ranked = [pair for pair in ranked if pair[0] >= min_score]
        return self._assemble(user_id, ranked)

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
        began = time.perf_counter()
        vector = self.embeddings.embed_query(text)
        with self._lock:
            self.embedding_calls += 1
            self.embedding_seconds += time.perf_counter() - began
        return self._check_vector(vector)

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        began = time.perf_counter()
        vectors = self.embeddings.embed_documents(texts)
        with self._lock:
            self.embedding_calls += len(texts)
            self.embedding_seconds += time.perf_counter() - began
        return [self._check_vector(v) for v in vectors]

    def __repr__(self) -> str:
        return (f"MemoryStore(kind={self.kind!r}, uri={self.uri!r}, collection={self.collection!r}, "
                f"dim={getattr(self, 'dim', None)}, nlist={self.nlist}, nprobe={self.nprobe})")
