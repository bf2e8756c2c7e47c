"""Conversation memory in one Milvus collection (lessons 06-08): rows of text found by meaning.

``MemoryStore`` writes rows (a turn, or one message with its kind, speaker and date; a long one in chunks:
``helpers.chunks``) and finds, lists, counts and deletes one user's rows (``user_id`` is the partition key
and every filter names it). Why the settings: docs/design-notes.md, "Milvus settings". Source: the
article's collection (VARCHAR(5000), IVF_FLAT + COSINE). Ids, filter values, byte limits: ``helpers.safe``."""

from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass

from helpers.chunks import CHUNK_MAX_BYTES, EMBEDDED, VISIBLE, ChunkWriter
from helpers.collection import (  # noqa: F401 - the course imports the errors from here
    Collection,
    DimensionMismatchError,
    MilvusStoreError,
    StoreClosedError,
)
from helpers.config import check_setting
from helpers.history import in_order
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
# Scores equal to this many decimals rank as ties, broken by age: one text stored twice scores a few last
# bits apart when the engine reads one copy from a sealed segment and one from a growing one, and another
# CPU's floats move every score as much (docs/design-notes.md, "Saved numbers on another machine").
SCORE_DECIMALS = 4
#: Fields after ``id`` VARCHAR(64), ``vector`` FLOAT_VECTOR(dim): VARCHAR UTF-8 byte limits, None = INT64.
FIELDS = {"content": CONTENT_MAX_BYTES, "user_id": 128, "session_id": 128, "round": None, "kind": 32,
          "speaker": 32, "name": 64, "date": 32, "timestamp": 100, "turn_id": 64, "chunk": None,
          "chunks": None, "embedded": None}  # embedded: 1, or 0 for a row stored without (chunks.EMBEDDED)
RANKED_FIELDS = ("turn_id", "chunks", "timestamp")  #: a search returns these and ids; the rest: read after
_Best = namedtuple("_Best", "score id of")  # a search's best chunk of a row: score, id, of how many chunks
_TEXT = ("user_id", "session_id", "kind", "speaker", "name", "date", "timestamp", "turn_id")


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
    chunk_of: tuple[int, int] | None = None  # (chunk number from 1, chunks): one chunk of a long message


@dataclass(frozen=True)
class Hit(Row):
    score: float = 0.0  # cosine similarity (-1..1) of its best chunk to the query; a HybridStore: fused rank


class MemoryStore(ChunkWriter, Collection):
    """A Milvus collection of conversation rows, searched by meaning; thread-safe, a context manager. Args:
    ``client`` a ``pymilvus.MilvusClient``, owned (``close`` closes it); ``collection`` letters, digits, ``_``
    (made with ``FIELDS``, IVF_FLAT + COSINE if missing); ``embeddings`` a LangChain ``Embeddings``; ``dim``
    (default: one probe embedding); ``nlist`` IVF cells at creation, ``nprobe`` searched; ``flush_every`` rows
    written between flushes (``None``: never); ``max_chunk_bytes`` 4..5000, a stored chunk's size (default
    ``CHUNK_MAX_BYTES``: one e5 window); ``consistency_level`` of reads (``"Strong"``: others' writes too);
    ``timeout`` seconds per call; ``uri``, ``backend`` (lite / server / cloud) for messages. Raises TypeError
    (``embeddings`` None), DimensionMismatchError (another length), MilvusStoreError (another schema),
    ValueError."""

    FIELDS = FIELDS  # the columns after id and vector, and their byte limits

    def __init__(self, client, collection: str, embeddings, *, dim: int | None = None,
                 nlist: int = DEFAULT_NLIST, nprobe: int = DEFAULT_NPROBE, flush_every: int | None = None,
                 max_chunk_bytes: int = CHUNK_MAX_BYTES, consistency_level: str = "Session",
                 drop_existing: bool = False, timeout: float = 30.0, uri: str = "", backend: str = "lite"):
        if embeddings is None:
            raise TypeError("MemoryStore(client, collection, embeddings): embeddings must be a LangChain "
                            "Embeddings, got None (helpers.course.milvus.open_store picks the course's)")
        check_setting("max_chunk_bytes", max_chunk_bytes, 4, CONTENT_MAX_BYTES)
        check_setting("nlist", nlist, 1, 65536), check_setting("nprobe", nprobe, 1, 65536)  # Milvus's limits
        self.client, self.collection, self.embeddings, self.uri, self.backend = (
            client, collection, embeddings, uri, backend)
        self.nlist, self.nprobe, self.flush_every, self.timeout = nlist, nprobe, flush_every, timeout
        self.max_chunk_bytes, self.consistency_level = max_chunk_bytes, consistency_level
        super().__init__()  # ChunkWriter: what is written, waiting, embedded
        self._open(drop_existing, dim)  # helpers.collection: made if missing, checked, loaded

    def search(self, user_id: str, query: str | None, top_k: int = 3, *,
               kinds: Sequence[str] | None = None, session_id: str | None = None,
               min_score: float | None = None, query_vector: Sequence[float] | None = None,
               chunks: bool = False, words: bool | str = False) -> list[Hit]:
        """The ``top_k`` (1..4096) rows of ``user_id`` closest in meaning to ``query`` (or its embedding
        ``query_vector``), best first, whole; ``chunks=True``: the closest chunks (``chunk_of`` set), never
        one stored without an embedding (``chunks.EMBEDDED``). If given: only rows of ``kinds`` (filtered
        before the cut), of ``session_id``, of a cosine >= ``min_score``; ``words``: by words too where it
        can (``fulltext.HybridStore``), the query's or a str.
        Raises InvalidIdError, DimensionMismatchError, ValueError, TypeError (``query`` not a str)."""
        where = self._where(user_id, session_id)
        check_setting("top_k", top_k, 1, MAX_TOP_K)
        if query_vector is None and not isinstance(query, str):
            raise TypeError(f"query must be a str (the text to search by), got {query!r:.40}")
        if query_vector is None and is_blank(query):  # nothing to read (text.is_blank): nothing found
            return []
        query_vector = self.embed([query], query=True)[0] if query_vector is None else query_vector
        where += f" and {in_filter('kind', list(kinds))}" if kinds is not None else ""
        by_words = None  # the text searched by words: none, the query, or the str given
        if isinstance(words, str):
            by_words = words
        elif words:
            by_words = query
        text = bounded_text(nfc(by_words), CHUNK_MAX_BYTES) if isinstance(by_words, str) else None  # "": none
        # 4 chunks per row asked: the chunks of one long row cannot crowd out others
        found = self._search_chunks(text if min_score is None else None, query_vector, where, 4 * top_k)
        best: dict[str, _Best] = {}  # a row's (or a chunk's) key -> its best chunk
        for hit in found:  # best first: a row's first chunk is its best
            key = hit["id"] if chunks else hit["entity"]["turn_id"]
            best.setdefault(key, _Best(float(hit["distance"]), hit["id"], hit["entity"]["chunks"]))
        kept = {key: chunk for key, chunk in list(best.items())[:top_k]
                if min_score is None or chunk.score >= min_score}
        # read every column of what is kept: a chunk or a one-chunk row by its chunk id, a long row by its
        # turn id apart (its chunks can be many: they must not crowd the short rows out of one capped read)
        ids = [chunk.id for chunk in kept.values() if chunks or chunk.of == 1]
        long = [key for key, chunk in kept.items() if not chunks and chunk.of > 1]
        read: list[dict] = []
        if ids:
            read += self._query(f"{where} and {in_filter('id', ids)}")
        if long:
            read += self._query(f"{where} and {in_filter('turn_id', long)}")
        if chunks:  # a chunk stands alone
            rows = {chunk["id"]: self._group([chunk])[0] for chunk in read}
        else:  # a whole row; a blank one (stored by an older version) is no hit
            rows = {row.turn_id: row for row in self._group(read) if not is_blank(row.content)}
        return [Hit(**vars(rows[key]), score=chunk.score) for key, chunk in kept.items() if key in rows]

    def _search_chunks(self, query: str | None, query_vector: Sequence[float], where: str,
                       limit: int) -> list[dict]:
        """The ``limit`` embedded chunks (``EMBEDDED``) matching ``where`` closest to ``query_vector``, best
        first, with ``RANKED_FIELDS`` only (``query``: the text, for a subclass that also searches words;
        ``None``: a score threshold). Scores equal to ``SCORE_DECIMALS`` come oldest first (time stored,
        then turn id, then id), not in whatever order the engine's last bits put them."""
        found = self._call("search", data=[self._vector(query_vector)], anns_field="vector", limit=limit,
                           filter=f"{where} and {EMBEDDED}", output_fields=list(RANKED_FIELDS),
                           consistency_level=self.consistency_level,
                           search_params={"metric_type": "COSINE", "params": {"nprobe": self.nprobe}})[0]
        def rank(hit: dict) -> tuple:
            row = hit["entity"]
            return -round(hit["distance"], SCORE_DECIMALS), row["timestamp"], row["turn_id"], hit["id"]

        return sorted(found, key=rank)

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
        nearest = {hit.turn_id: [(hit.session_id, hit.round + step) for step in steps] for hit in hits}
        return {turn: [at[key] for key in keys if key in at and at[key].turn_id != turn]  # not the hit itself
                for turn, keys in nearest.items()}

    def rows(self, user_id: str, session_id: str | None = None, limit: int = 1000) -> list[Row]:
        """The rows of ``user_id`` (or of one session), oldest first in UTC; at most ``limit`` chunks read."""
        return sorted(self._group(self._query(self._where(user_id, session_id), limit)),
                      key=lambda row: (utc_time(row.timestamp), in_order(row.session_id), row.round))

    def count(self, user_id: str | None = None) -> int:  # chunks, of one user or all (duplicates on a server)
        return self._count(f"{self._where(user_id)} and {VISIBLE}" if user_id is not None else VISIBLE)

    def delete_user(self, user_id: str) -> int:
        """Delete every row of ``user_id`` and its chunks ``waiting`` (never written later); returns how
        many chunks went. Counted ``"Strong"``: a 2.3 server's delete leaves a session's read timestamp."""
        where = self._where(user_id)
        self.forget_waiting(user_id)
        if before := self._count(where, "Strong"):
            self._call("delete", filter=where)
        return before - self._count(where, "Strong") if before else 0

    def _where(self, user_id: str, session_id: str | None = None) -> str:
        if session_id is None:
            return eq_filter(user_id=validate_id(user_id))
        return eq_filter(user_id=validate_id(user_id), session_id=validate_id(session_id, "session id"))

    def _query(self, where: str, limit: int | None = 16384) -> list[dict]:  # chunks; limit None: all
        return self._call("query", filter=f"{where} and {VISIBLE}", output_fields=["id", *FIELDS],
                          consistency_level=self.consistency_level, **({"limit": limit} if limit else {}))

    @staticmethod
    def _group(chunks: list[dict]) -> list[Row]:
        """Rows from chunks: each row's chunks (a repeat once) joined in order; a row read in part (fewer
        chunks than it has) is that chunk, ``chunk_of`` = (its number from 1, the row's chunks)."""
        by_turn: dict[str, dict[int, dict]] = {}  # turn id -> chunk number -> chunk
        for chunk in chunks:
            by_turn.setdefault(chunk["turn_id"], {})[chunk["chunk"]] = chunk
        rows = []
        for found in by_turn.values():
            pieces = [found[number] for number in sorted(found)]
            first = pieces[0]
            chunk_of = (first["chunk"] + 1, first["chunks"]) if len(pieces) < first["chunks"] else None
            rows.append(Row(content="".join(p["content"] for p in pieces), round=int(first["round"]),
                            ids=tuple(p["id"] for p in pieces), chunk_of=chunk_of,
                            **{field: first[field] or "" for field in _TEXT}))
        return rows
