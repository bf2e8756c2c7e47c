"""A message written in chunks (lessons 06-07): each chunk findable, the embedding a turn bounded.

e5 reads 512 tokens of a text; a longer one's windows are averaged, so a fact in a pasted file is lost in
the mean. A message is stored as chunks of at most ``max_chunk_bytes`` UTF-8 bytes (``CHUNK_MAX_BYTES``: one
e5 window, even code), a Milvus entity each, sharing its ``turn_id`` (``chunk``: place from 0, of ``chunks``).
Embedding a pasted file of 40 chunks at once takes seconds, so at most ``embed_chunks`` chunks are embedded a
call, oldest first; the others wait: written at once without their embedding (``WAITING``: a process that
ends early loses none), but neither found nor listed until it comes, forgotten with their user (a
row's life: docs/design-notes.md, "The life of a stored row"; measured: "Long messages")."""

import contextlib
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime

from helpers.collection import MilvusStoreError
from helpers.safe import bounded_text, split_utf8, utf8_len
from helpers.text import is_blank, nfc, utc_iso, utf8_encode

CHUNK_MAX_BYTES = 1200  # a chunk's, a query's bytes: one e5 window, even code (docs/design-notes.md)
EMBEDDED = "embedded == 1"  # every dense search's filter (a search by words may find the rows without)
WAITING = 2  # ``embedded`` of a chunk written before its embedding; catch_up replaces it embedded
VISIBLE = f"embedded != {WAITING}"  # what every read sees: a chunk waiting, as if not written yet


class ChunkWriter:
    """How ``store.MemoryStore`` writes (its base class: uses its ``embeddings``, ``FIELDS``, ``_call`` ...).
    ``waiting``: chunks not embedded yet, oldest first; ``embedding_calls``: texts embedded (queries too)."""

    def __init__(self) -> None:
        self.embedding_calls, self.embedding_seconds = 0, 0.0  # texts embedded (queries + chunks)
        self._unflushed, self._lock = 0, threading.Lock()
        self.waiting, self._batch = [], threading.local()  # chunks not embedded yet; rows held by one_insert
        self._held: set[str] = set()  # ids of the chunks waiting that are written (as WAITING)

    def _counted(self, texts: int, began: float) -> None:
        with self._lock:
            self.embedding_calls += texts
            self.embedding_seconds += time.perf_counter() - began

    def embed(self, texts: list[str], query: bool = False) -> list[list[float]]:
        """Embed ``texts`` as passages in one call, or each as a query (``query=True``; its start and end if
        over ``CHUNK_MAX_BYTES``): ``len(texts)`` calls counted. DimensionMismatchError: another length."""
        began = time.perf_counter()
        if query:
            vectors = [self.embeddings.embed_query(bounded_text(nfc(t), CHUNK_MAX_BYTES)) for t in texts]
        else:
            vectors = self.embeddings.embed_documents(list(texts))
        self._counted(len(texts), began)
        return [self._vector(v) for v in vectors]

    def add(self, user_id: str, session_id: str, round: int, text: str, *, kind: str = "turn",
            speaker: str = "", name: str = "", date: str = "", timestamp: datetime | str | None = None,
            embed_chunks: int | None = None, embedded_chunks: int | None = None, embed: bool = True,
            vector: Sequence[float] | None = None) -> list[str]:
        """Store ``text`` exactly (kept NFC), a row per chunk; returns their ids (``<turn_id>-<chunk>``).

        What the row is:
        - ``round``: int >= 0; ``kind``: a ``kinds.KINDS`` name;
        - ``speaker``: ``"user"``, ``"assistant"`` or ``""``, and ``name`` theirs;
        - ``date``: ISO or ``""`` (compared in UTC); ``timestamp``: see ``text.utc_iso`` (kept in UTC).

        What is embedded, and when:
        - ``embed_chunks`` (int >= 1, ``None``: every chunk now): this many embedded in this call, the
          first chunk, then the chunks ``waiting`` (oldest first), then the next; the rest wait, written
          now as ``WAITING`` (no read sees them until ``catch_up``, at the latest ``close`` or the next open);
        - ``embedded_chunks`` (int >= 1, ``None``: all), or ``embed=False`` (none): only the first this
          many chunks ever get a vector; the others are stored now with ``[1, 0 ...]`` and
          ``embedded`` 0: never a dense search's hit (``EMBEDDED``), but listed, neighbours, in their row;
        - ``vector``: a one-chunk ``text``'s embedding, given.

        Raises (nothing written) InvalidIdError, TypeError, DimensionMismatchError, ValueError (blank,
        too long, not ISO, not UTF-8)."""
        self._where(user_id, session_id)  # validates both ids
        whole = isinstance(round, int) and not isinstance(round, bool)
        if not (whole and 0 <= round < 2**63) or not isinstance(text, str):  # round: a Milvus INT64
            raise TypeError(f"round must be an int in [0, 2**63) and text a str, got {round!r}, {text!r:.40}")
        if is_blank(text):  # a blank row matches every short question ("Hello?") and says nothing
            raise ValueError(f"text is blank ({text!r:.20}): nothing to find by meaning; nothing written")
        if isinstance(name, str):
            utf8_encode(name, "name")  # its own error, before nfc's generic one
        text, name, when = nfc(text), nfc(name) if isinstance(name, str) else name, utc_iso(timestamp)
        columns = {"kind": kind, "speaker": speaker, "name": name, "date": date, "timestamp": when}
        for field, value in columns.items():
            if not isinstance(value, str) or utf8_len(value, field) > (most := self.FIELDS[field]):
                raise ValueError(f"{field} must be a str of at most {most} bytes, got {value!r}")
        if date:
            try:
                datetime.fromisoformat(date)
            except ValueError:
                raise ValueError(f"date must be ISO 8601 (such as 2025-03-01), got {date!r}; nothing "
                                 "written") from None
        chunks = split_utf8(text, self.max_chunk_bytes)
        if vector is not None and len(chunks) != 1:
            raise ValueError(f"one vector given for a text of {len(chunks)} chunks")
        if any(n is not None and (type(n) is not int or n < 1) for n in (embed_chunks, embedded_chunks)):
            raise ValueError(f"each must be an int >= 1 or None: {embed_chunks=}, {embedded_chunks=}")
        turn_id = uuid.uuid4().hex  # the message's: every chunk carries it
        rows = [{"id": f"{turn_id}-{i}", "content": chunk, "user_id": user_id, "session_id": session_id,
                 "round": round, **columns, "turn_id": turn_id, "chunk": i, "chunks": len(chunks),
                 "embedded": 1} for i, chunk in enumerate(chunks)]
        if not embed:
            with_vector = 0
        elif embedded_chunks is None:
            with_vector = len(rows)
        else:
            with_vector = embedded_chunks  # the first this many chunks get a vector
        for row in rows[with_vector:]:  # stored now without an embedding
            row.update(embedded=0, vector=self._placeholder())
        if vector is not None and embed:
            rows[0]["vector"] = self._vector(vector)
        held = []  # this message's chunks that wait: written now without their embedding
        if embed_chunks is not None and embed:  # the first chunk now, then the oldest waiting, in bound
            with self._lock:
                queue = self.waiting + rows[1:with_vector]  # the chunks still to embed, oldest first
                now = embed_chunks - 1  # how many of them are embedded with the first chunk
                rows = rows[:1] + rows[with_vector:] + queue[:now]
                self.waiting = queue[now:]
                held = [{**row, "embedded": WAITING, "vector": self._placeholder()}
                        for row in self.waiting if row["turn_id"] == turn_id]
        self._write_or_wait(rows + held, turn_id)
        with self._lock:
            self._held.update(row["id"] for row in held)
        return [f"{turn_id}-{i}" for i in range(len(chunks))]

    def _placeholder(self) -> list[float]:  # the vector of a row without an embedding (never searched)
        return [1.0] + [0.0] * (self.dim - 1)

    def catch_up(self, limit: int | None = None) -> int:
        """Embed and insert the chunks ``waiting``, oldest first, ``limit`` at most (``None``: all); if
        embedding or Milvus raise, they wait again."""
        with self._lock:
            cut = len(self.waiting) if limit is None else limit
            rows, self.waiting = self.waiting[:cut], self.waiting[cut:]
        self._write_or_wait(rows)
        return len(rows)

    def _open(self, drop_existing: bool, dim: int | None) -> None:  # helpers.collection's, then resume
        super()._open(drop_existing, dim)
        self.resume_waiting()

    def resume_waiting(self) -> int:
        """Embed the chunks an earlier process wrote as ``WAITING`` and never embedded (it ended before
        ``close``); returns how many. Called when a store opens."""
        found = self._call("query", filter=f"embedded == {WAITING}", output_fields=["id", *self.FIELDS])
        rows = [{**row, "embedded": 1} for row in found]
        with self._lock:
            self._held.update(row["id"] for row in rows)
            self.waiting = sorted(rows, key=lambda row: (row["timestamp"], row["turn_id"], row["chunk"]))
        return self.catch_up() if rows else 0

    def _write_or_wait(self, rows: list[dict], turn_id: str = "") -> None:  # failed: taken ones wait again
        try:
            self._write(rows)
        except BaseException:  # ``turn_id``'s chunks (an add that failed) neither written nor waiting
            with self._lock:
                self.waiting = [row for row in [*rows, *self.waiting]
                                if row["turn_id"] != turn_id and row["embedded"] != WAITING]
            raise

    @contextlib.contextmanager
    def one_insert(self):
        """``with store.one_insert(): store.add(...) ...``: the rows are written in one insert at the end."""
        self._batch.rows = []
        try:
            yield
        finally:
            rows, self._batch.rows = self._batch.rows, None
            self._write(rows)

    def _write(self, rows: list[dict]) -> None:  # embed the rows without a vector (one call), insert
        if missing := [row for row in rows if "vector" not in row]:
            for row, vector in zip(missing, self.embed([row["content"] for row in missing]), strict=True):
                row["vector"] = vector
        if getattr(self._batch, "rows", None) is not None:
            return self._batch.rows.extend(rows)
        with self._lock:  # a chunk written as WAITING is replaced, after the new rows are in
            embedded = [row for row in rows if row["id"] in self._held and row["embedded"] != WAITING]
        done = {row["id"] for row in embedded}  # within one insert: its WAITING row need not be written
        if new := [row for row in rows if row["id"] not in done]:
            self._call("insert", new)
        if embedded:  # delete, then insert: a 2.3 server's upsert deleted them and inserted nothing seen
            self._call("delete", ids=[row["id"] for row in embedded])
            self._call("insert", embedded)
            with self._lock:
                self._held.difference_update(row["id"] for row in embedded)
        with self._lock:
            self._unflushed += len(rows)
            due = self.flush_every is not None and self._unflushed >= self.flush_every
        if due:
            self.flush()

    def forget_waiting(self, user_id: str, session_id: str | None = None, round: int | None = None) -> None:
        """Forget the chunks waiting of a user (of one session, of one round), never embedded later."""
        def of_it(row: dict) -> bool:
            return row["user_id"] == user_id and session_id in (None, row["session_id"]) and round in (
                None, row["round"])
        with self._lock:
            self._held.difference_update(row["id"] for row in self.waiting if of_it(row))
            self.waiting = [row for row in self.waiting if not of_it(row)]

    def delete_round(self, user_id: str, session_id: str, round: int) -> None:
        """Delete one round of a session, its chunks waiting too: a turn run again after a failed call,
        with another reply, replaces what its first try wrote there (``layered.write_messages``)."""
        self.forget_waiting(user_id, session_id, round)
        self._call("delete", filter=f"{self._where(user_id, session_id)} and round == {int(round)}")

    def drop(self) -> None:  # delete the collection, and the chunks waiting to be written with it
        super().drop()
        self.waiting, self._held = [], set()

    def close(self) -> None:
        """Write the chunks ``waiting`` (``catch_up``), then close the client; later calls raise
        StoreClosedError (Lite keeps its lock). MilvusStoreError naming each chunk it could not write: the
        store stays open."""
        try:
            self.catch_up() if self.waiting and not self._closed_by else None
        except Exception as exc:
            ids = ", ".join(row["id"] for row in self.waiting)
            raise MilvusStoreError(f"Chunks waiting not written ({exc!r}), so the store stays open: {ids}. "
                                   "Fix the cause, close() again (waiting.clear(): give them up).") from exc
        super().close()
