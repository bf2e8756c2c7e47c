"""Conversation memory in one Milvus collection (lessons 06-08): rows of text found by meaning.

``MemoryStore`` writes rows (a turn, or one message with its kind, speaker and date; a long one in parts:
``helpers.parts``) and finds, lists, counts and deletes one user's rows (``user_id`` is the partition key
and every filter names it). Why the settings: docs/design-notes.md, "Milvus settings". Source: the
article's collection (VARCHAR(5000), IVF_FLAT + COSINE). Ids, filter values, byte limits: ``helpers.safe``."""

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from helpers.config import check_setting
from helpers.history import in_order
from helpers.parts import EMBEDDED, PART_MAX_BYTES, PartWriter
from helpers.safe import (  # noqa: F401 - lessons import them from here
    CONTENT_MAX_BYTES,
    MAX_TOP_K,
    bounded_text,
    eq_filter,
    in_filter,
    split_utf8,
    utf8_len,
    validate_id,
)
from helpers.text import is_blank, nfc, utc_time

DEFAULT_COLLECTION = "conversation_memory"
DEFAULT_NLIST = 128  # IVF_FLAT cells per segment
DEFAULT_NPROBE = 128  # cells searched per segment: all of them (docs/design-notes.md)
LITE_FLUSH_EVERY = 100  # rows written between flushes on Milvus Lite (docs/design-notes.md)
#: Fields after ``id`` VARCHAR(64), ``vector`` FLOAT_VECTOR(dim): VARCHAR UTF-8 byte limits, None = INT64.
FIELDS = {"content": CONTENT_MAX_BYTES, "user_id": 128, "session_id": 128, "round": None, "kind": 32,
          "speaker": 32, "name": 64, "date": 32, "timestamp": 100, "turn_id": 64, "chunk": None,
          "chunks": None, "embedded": None}  # embedded: 1, or 0 for a row stored without (parts.EMBEDDED)
RANKED_FIELDS = ("turn_id", "chunks")  #: all a search returns, with ids; what it keeps is read after
_TEXT = ("user_id", "session_id", "kind", "speaker", "name", "date", "timestamp", "turn_id")


class MilvusStoreError(RuntimeError):
    """Base of the course's Milvus errors; the message is a plain sentence with a fix."""


class DimensionMismatchError(MilvusStoreError, ValueError):
    """Vectors of one length meet a collection of another; raised before anything is written."""


class StoreClosedError(MilvusStoreError):
    """The store was closed (``close()``) or its collection dropped (``drop()``)."""


@dataclass(frozen=True)
class Row:
    """One stored message or turn, reassembled from its chunks (``ids``, in order)."""

    content: str
    user_id: str
    session_id: str
    round: int
    kind: str
    speaker: str
    name: str
    date: str
    timestamp: str
    turn_id: str
    ids: tuple[str, ...]
    part: tuple[int, int] | None = None  # (part number from 1, parts): one part of a long message


@dataclass(frozen=True)
class Hit(Row):
    score: float = 0.0  # cosine similarity (-1..1) of its best chunk to the query


class MemoryStore(PartWriter, contextlib.AbstractContextManager):
    """A Milvus collection of conversation rows, searched by meaning; thread-safe, a context manager. Args:
    ``client`` a ``pymilvus.MilvusClient``, owned (``close`` closes it); ``collection`` letters, digits, ``_``
    (made with ``FIELDS``, IVF_FLAT + COSINE if missing); ``embeddings`` a LangChain ``Embeddings``; ``dim``
    (default: one probe embedding); ``nlist`` IVF cells at creation, ``nprobe`` searched; ``flush_every`` rows
    written between flushes (``None``: never); ``max_chunk_bytes`` 4..5000, a stored part's size (default
    ``PART_MAX_BYTES``: one e5 window); ``consistency_level`` of reads (``"Strong"``: others' writes too);
    ``timeout`` seconds per call; ``uri``, ``kind`` (lite / server / cloud) for messages. Raises TypeError
    (``embeddings`` None), DimensionMismatchError (another length), MilvusStoreError (another schema),
    ValueError."""

    FIELDS = FIELDS  # the columns after id and vector, and their byte limits

    def __init__(self, client, collection: str, embeddings, *, dim: int | None = None,
                 nlist: int = DEFAULT_NLIST, nprobe: int = DEFAULT_NPROBE, flush_every: int | None = None,
                 max_chunk_bytes: int = PART_MAX_BYTES, consistency_level: str = "Session",
                 drop_existing: bool = False, timeout: float = 30.0, uri: str = "", kind: str = "lite"):
        from pymilvus import DataType, MilvusClient
        if embeddings is None:
            raise TypeError("MemoryStore(client, collection, embeddings): embeddings must be a LangChain "
                            "Embeddings, got None (helpers.course.milvus.open_store picks the course's)")
        check_setting("max_chunk_bytes", max_chunk_bytes, 4, CONTENT_MAX_BYTES)
        check_setting("nlist", nlist, 1, 65536), check_setting("nprobe", nprobe, 1, 65536)  # Milvus's limits
        self.client, self.collection, self.embeddings, self.uri, self.kind = (
            client, collection, embeddings, uri, kind)
        self.nlist, self.nprobe, self.flush_every, self.timeout = nlist, nprobe, flush_every, timeout
        self.max_chunk_bytes, self.consistency_level = max_chunk_bytes, consistency_level
        super().__init__()  # PartWriter: what is written, waiting, embedded
        self._closed_by = ""
        if drop_existing:
            client.drop_collection(collection, timeout=timeout)
        self.dim = dim or len(embeddings.embed_query("dimension probe"))
        if not client.has_collection(collection, timeout=timeout):
            schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
            schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
            for field, size in FIELDS.items():
                options = {"max_length": size, "is_partition_key": field == "user_id"} if size else {}
                schema.add_field(field, DataType.VARCHAR if size else DataType.INT64, **options)
            index = MilvusClient.prepare_index_params()
            index.add_index(field_name="vector", index_type="IVF_FLAT", metric_type="COSINE",
                            params={"nlist": nlist})
            self._extend_schema(schema, index)
            client.create_collection(collection, schema=schema, index_params=index, timeout=timeout,
                                     consistency_level=consistency_level)
        fields = {f["name"]: f for f in client.describe_collection(collection, timeout=timeout)["fields"]}
        if missing := [n for n in ("id", "vector", *FIELDS) if n not in fields]:
            raise MilvusStoreError(f"Collection {collection!r} at {uri} lacks {', '.join(missing)}: not this "
                                   "course's, or an older version's. Use another name or drop_existing=True.")
        if (old := int(fields["vector"]["params"]["dim"])) != self.dim:
            why = (f"dim={dim} was passed (pass {old}, or no dim for the model's length)" if dim else
                   f"the embedding model makes {self.dim}-dimensional ones (another model wrote it)")
            raise DimensionMismatchError(
                f"Collection {collection!r} at {uri} stores {old}-dimensional vectors, but {why}. Nothing "
                f"was inserted or searched. Use another collection name, e.g. '{collection}_{self.dim}', or "
                f"drop it: drop_existing=True or helpers.course.milvus.drop_collection({collection!r}).")
        client.load_collection(collection, timeout=timeout)

    def _call(self, method: str, *args, **kwargs):
        """``client.<method>(collection, *args, timeout=..., **kwargs)``; StoreClosedError once closed; a
        released collection is loaded once and the call retried."""
        from pymilvus.exceptions import MilvusException
        if self._closed_by:
            raise StoreClosedError(
                f"This MemoryStore ({self.collection!r} at {self.uri}) was closed by store."
                f"{self._closed_by}, so it can no longer be used. Reopen it: re-run the cell that created "
                f"it, or store = open_store(collection={self.collection!r}, uri={self.uri!r}).")
        call = getattr(self.client, method)
        try:
            return call(self.collection, *args, timeout=self.timeout, **kwargs)
        except MilvusException as exc:  # code 101: released ("call load() before search")
            if exc.code != 101 and "not loaded" not in str(exc.message).lower():
                raise
        self.client.load_collection(self.collection, timeout=self.timeout)
        return call(self.collection, *args, timeout=self.timeout, **kwargs)

    def _vector(self, vector: Sequence[float]) -> list[float]:
        if len(vector) != self.dim:
            raise DimensionMismatchError(f"a {len(vector)}-dimensional vector was given to collection "
                                         f"{self.collection!r}, which stores {self.dim}-dimensional "
                                         "ones: use the embedding model it was made with.")
        return [float(x) for x in vector]

    def search(self, user_id: str, query: str | None, top_k: int = 3, *,
               kinds: Sequence[str] | None = None, session_id: str | None = None,
               min_score: float | None = None, query_vector: Sequence[float] | None = None,
               parts: bool = False, words: bool | str = False, name: str | None = None) -> list[Hit]:
        """The ``top_k`` (1..4096) rows of ``user_id`` closest in meaning to ``query`` (or its embedding
        ``query_vector``), best first, whole; ``parts=True``: the closest parts (``part`` set), never one
        stored without an embedding (``parts.EMBEDDED``). If given: only rows of ``kinds`` and of the person
        ``name`` (the ``name`` column; both filtered before the cut), of ``session_id``, of a cosine >=
        ``min_score``; ``words``: by words too where it can (``fulltext.HybridStore``), the query's or a str.
        Raises InvalidIdError, DimensionMismatchError, ValueError, TypeError (``query`` not a str)."""
        where = self._where(user_id, session_id)
        check_setting("top_k", top_k, 1, MAX_TOP_K)
        if query_vector is None and not isinstance(query, str):
            raise TypeError(f"query must be a str (the text to search by), got {query!r:.40}")
        if query_vector is None and is_blank(query):  # nothing to read (text.is_blank): nothing found
            return []
        query_vector = self.embed([query], query=True)[0] if query_vector is None else query_vector
        where += f" and {in_filter('kind', list(kinds))}" if kinds is not None else ""
        where += f" and {eq_filter(name=nfc(name))}" if name is not None else ""
        said = words if isinstance(words, str) else query if words else None  # the text searched by words
        text = bounded_text(nfc(said), PART_MAX_BYTES) if isinstance(said, str) else None  # "": meaning only
        # 4 chunks per row asked: the chunks of one long row cannot crowd out others
        found = self._search_chunks(text if min_score is None else None, query_vector, where, 4 * top_k)
        best: dict[str, tuple[float, str, int]] = {}  # each row's (or part's) best chunk, in rank order
        for hit in found:
            best.setdefault(hit["id"] if parts else hit["entity"]["turn_id"],
                            (float(hit["distance"]), hit["id"], hit["entity"]["chunks"]))
        kept = [(key, score, chunk, chunks) for key, (score, chunk, chunks) in list(best.items())[:top_k]
                if min_score is None or score >= min_score]
        ids = [chunk for _, _, chunk, chunks in kept if parts or chunks == 1]  # read apart from long rows:
        long = [key for key, _, _, chunks in kept if not parts and chunks > 1]  # their chunks can be many
        read = [*(self._query(f"{where} and {in_filter('id', ids)}") if ids else []),  # every column
                *(self._query(f"{where} and {in_filter('turn_id', long)}") if long else [])]
        rows = ({chunk["id"]: self._group([chunk])[0] for chunk in read} if parts else  # a part: alone
                {row.turn_id: row for row in self._group(read) if not is_blank(row.content)})  # old blanks
        return [Hit(**vars(rows[key]), score=score) for key, score, _, _ in kept if key in rows]

    def _extend_schema(self, schema, index) -> None:
        """A subclass's fields and indexes for a new collection (``helpers.fulltext``); none here."""

    def _search_chunks(self, query: str | None, query_vector: Sequence[float], where: str,
                       limit: int) -> list[dict]:
        """The ``limit`` embedded chunks (``EMBEDDED``) matching ``where`` closest to ``query_vector``, best
        first, with ``RANKED_FIELDS`` only (``query``: the text, for a subclass that also searches words;
        ``None``: a score threshold)."""
        return self._call("search", data=[self._vector(query_vector)], anns_field="vector", limit=limit,
                          filter=f"{where} and {EMBEDDED}", output_fields=list(RANKED_FIELDS),
                          consistency_level=self.consistency_level,
                          search_params={"metric_type": "COSINE", "params": {"nprobe": self.nprobe}})[0]

    def neighbours(self, user_id: str, hits: Sequence[Row], before: int = 1,
                   after: int = 1) -> dict[str, list[Row]]:
        """``{hit.turn_id: rows}``: each hit's session's rows, ``round - before`` to ``round + after``,
        nearest first (round - 1, round + 1 ...), the hit left out; one query. ValueError: either < 0."""
        where = self._where(user_id)
        if before < 0 or after < 0:
            raise ValueError(f"before and after must be >= 0, got {before}, {after}")
        steps = sorted([*range(-before, 0), *range(1, after + 1)], key=abs)  # -1, 1, -2, 2 ...
        clauses = sorted({f"({eq_filter(session_id=hit.session_id)} and round in "
                          f"[{', '.join(str(hit.round + step) for step in steps)}])" for hit in hits})
        found = self._query(f"{where} and ({' or '.join(clauses)})") if clauses and steps else []
        at = {(row.session_id, row.round): row for row in self._group(found)}
        return {hit.turn_id: [at[key] for step in steps if (key := (hit.session_id, hit.round + step))
                              in at and at[key].turn_id != hit.turn_id] for hit in hits}

    def rows(self, user_id: str, session_id: str | None = None, limit: int = 1000) -> list[Row]:
        """The rows of ``user_id`` (or of one session), oldest first in UTC; at most ``limit`` chunks read."""
        return sorted(self._group(self._query(self._where(user_id, session_id), limit)),
                      key=lambda row: (utc_time(row.timestamp), in_order(row.session_id), row.round))

    def count(self, user_id: str | None = None) -> int:  # chunks, of one user or all (duplicates on a server)
        return self._count(self._where(user_id) if user_id is not None else "")

    def delete_user(self, user_id: str) -> int:
        """Delete every row of ``user_id`` and their parts ``waiting`` (never written later); returns how many
        rows went. Counted ``"Strong"``: a 2.3 server's delete leaves a session's read timestamp behind."""
        where = self._where(user_id)
        with self._lock:
            self.waiting = [row for row in self.waiting if row["user_id"] != user_id]
        if before := self._count(where, "Strong"):
            self._call("delete", filter=where)
        return before - self._count(where, "Strong") if before else 0

    def _where(self, user_id: str, session_id: str | None = None) -> str:
        if session_id is None:
            return eq_filter(user_id=validate_id(user_id))
        return eq_filter(user_id=validate_id(user_id), session_id=validate_id(session_id, "session id"))

    def _count(self, where: str, level: str | None = None) -> int:
        return self._call("query", filter=where, output_fields=["count(*)"],
                          consistency_level=level or self.consistency_level)[0]["count(*)"]

    def _query(self, where: str, limit: int | None = 16384) -> list[dict]:  # chunks; limit None: all
        return self._call("query", filter=where, output_fields=["id", *FIELDS],
                          consistency_level=self.consistency_level, **({"limit": limit} if limit else {}))

    @staticmethod
    def _group(chunks: list[dict]) -> list[Row]:  # rows from chunks, each row's chunks joined in order
        by_turn: dict[str, dict[int, dict]] = {}  # turn id -> chunk number -> chunk (a repeat: once)
        for chunk in chunks:
            by_turn.setdefault(chunk["turn_id"], {})[chunk["chunk"]] = chunk
        return [Row(content="".join(p["content"] for p in parts), round=int(parts[0]["round"]),
                    ids=tuple(p["id"] for p in parts), **{f: parts[0][f] or "" for f in _TEXT},
                    part=(parts[0]["chunk"] + 1, parts[0]["chunks"]) if len(parts) < parts[0]["chunks"]
                    else None)
                for parts in ([found[i] for i in sorted(found)] for found in by_turn.values())]

    def flush(self) -> float:  # seal the rows written into indexed segments now; returns the seconds
        began = time.perf_counter()
        self._call("flush")
        with self._lock:
            self._unflushed = 0
        return time.perf_counter() - began

    def drop(self) -> None:  # delete the collection, what waits too (released first: Lite's FAISS warnings)
        with contextlib.suppress(Exception):
            self.client.release_collection(self.collection, timeout=self.timeout)
        self.client.drop_collection(self.collection, timeout=self.timeout)
        self._closed_by, self.waiting = "drop()", []

    def close(self) -> None:
        """Write the parts ``waiting`` (``catch_up``), close the client; later calls raise StoreClosedError
        (Lite keeps its lock). MilvusStoreError naming each part it could not write: the store stays open."""
        try:
            self.catch_up() if self.waiting and not self._closed_by else None
        except Exception as exc:
            ids = ", ".join(row["id"] for row in self.waiting)
            raise MilvusStoreError(f"Parts waiting not written ({exc!r}), so the store stays open: {ids}. "
                                   "Fix the cause, close() again (waiting.clear(): give them up).") from exc
        self._closed_by = self._closed_by or "close()"
        with contextlib.suppress(Exception):
            self.client.close()

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.kind} at {self.uri!r}, collection={self.collection!r}, "
                f"dim={getattr(self, 'dim', None)}, nlist={self.nlist}, nprobe={self.nprobe})")
