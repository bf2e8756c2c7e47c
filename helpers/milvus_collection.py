"""The Milvus collection of conversation turns (lesson 06): connecting, creating, loading, errors.

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

Optional, when the collection is created with ``memory_fields=True`` (``kind``, ``speaker``,
``date``: VARCHAR(32), ``MemoryStore.add_memory``) or ``full_text=True`` (``lexical``, analysed
VARCHAR of ``recall.lexical_text(content)``, and ``sparse``, its BM25 output from a ``Function``;
Milvus Lite 3.2.2 and servers >= 2.5 only, else left out with a one-line ``full_text_note``).

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
import re
from pathlib import Path

from helpers.config import Settings, milvus_connection, milvus_kind
from helpers.milvus_common import (
    BM25_MIN_SERVER,
    CONTENT_MAX_BYTES,
    DEFAULT_COLLECTION,
    ID_MAX_LENGTH,
    LEXICAL_MAX_BYTES,
    MEMORY_FIELD_MAX_LENGTH,
    MEMORY_FIELDS,
    OUTPUT_FIELDS,
    TIMESTAMP_MAX_LENGTH,
    USER_ID_MAX_LENGTH,
    CollectionNotLoadedError,
    DimensionMismatchError,
    LiteLockedError,
    MilvusStoreError,
    MilvusUnavailableError,
    StoreClosedError,
    _lite_folder_locked,
    bm25_analyzer,
    import_pymilvus,
)


class MilvusCollection:
    """One Milvus collection with this course's schema: connect (Lite path, server or cloud URI),
    open or create it (fields, IVF_FLAT + COSINE index), keep it loaded, translate errors into
    plain sentences, drop or close it. ``helpers.milvus_store.MemoryStore`` builds on it; the
    subclass sets ``uri``, ``kind``, ``collection``, ``nlist``, ``consistency_level``, ``timeout``
    and provides ``embeddings`` (for the dimension probe).
    """

    has_memory_fields = False  # the kind / speaker / date columns (set when opened)
    full_text = False  # the BM25 columns (set when opened)
    full_text_note = ""  # why full_text is off although it was asked for (one line), or ""

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
                    from helpers.config import LESSON_LITE_FOLDERS

                    owner = next((f"lesson {n}" for n, name in LESSON_LITE_FOLDERS.items()
                                  if Path(self.uri).name == name), None)
                    who = (f"another kernel running {owner} (JupyterLab keeps a kernel running "
                           "when its tab closes; Kernel → Shut Down All Kernels, or the Running "
                           "panel)" if owner else "often another notebook's kernel")
                    raise LiteLockedError(
                        f"The Milvus Lite folder {self.uri} is open in another process: {who}. "
                        "Milvus Lite allows one process per folder. Shut down or restart that "
                        "kernel (closing the client is not enough), use another path, or run a "
                        "Milvus server (docker compose up -d) and set "
                        "MILVUS_URI=http://localhost:19530."
                    ) from None
                raise MilvusStoreError(f"Milvus Lite could not open {self.uri}: {exc.message}") from None
            raise
        except MilvusException as exc:
            raise MilvusUnavailableError(self._unreachable_message(exc)) from None

    def _closed_message(self) -> str:
        how = getattr(self, "_closed_by", "close()")
        return (
            f"This MemoryStore ({self.collection!r} at {self.uri}) was closed by store.{how}, so "
            "it can no longer be used. Reopen it: re-run the cell that created it, or "
            f"store = MemoryStore(collection={self.collection!r}, uri={self.uri!r})"
            + (" (its memories were deleted with the collection)." if how == "drop()" else ".")
        )

    def _unreachable_message(self, exc: Exception) -> str:
        if self.kind == "lite":
            return (
                f"Milvus Lite at {self.uri} stopped answering in this process "
                f"({getattr(exc, 'message', exc)}). Milvus Lite runs inside your kernel: this "
                "happens after close(release_lite=True) or a crash of its engine. Re-run the cell "
                "that opens the store; if that fails too, restart the kernel."
            )
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
        wanted_full_text = self.full_text
        self.has_memory_fields = all(n in fields for n in MEMORY_FIELDS)
        self.full_text = "sparse" in fields and "lexical" in fields
        if wanted_full_text and not self.full_text:
            self.full_text_note = (f"collection {self.collection!r} was created without BM25 "
                                   "columns: hybrid search falls back to dense.")
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
        if self.has_memory_fields:
            for name in MEMORY_FIELDS:
                schema.add_field(name, DataType.VARCHAR, max_length=MEMORY_FIELD_MAX_LENGTH)
        self.full_text = self.full_text and self._server_has_bm25()
        if self.full_text:
            from pymilvus import Function, FunctionType

            schema.add_field("lexical", DataType.VARCHAR, max_length=LEXICAL_MAX_BYTES,
                             enable_analyzer=True, analyzer_params=bm25_analyzer())
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(Function(name="lexical_bm25", function_type=FunctionType.BM25,
                                         input_field_names=["lexical"],
                                         output_field_names=["sparse"]))
            index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX",
                            metric_type="BM25")
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

    def _server_has_bm25(self) -> bool:
        """Milvus Lite 3.2.2 runs BM25 Functions; a server needs >= 2.5 (sets ``full_text_note``)."""
        if self.kind == "lite":
            return True
        try:
            version = str(self._client.get_server_version(timeout=self.timeout))
        except Exception:  # noqa: BLE001 - unknown version: try BM25 and let the server say
            return True
        found = re.search(r"(\d+)\.(\d+)", version)
        if found and (int(found[1]), int(found[2])) < BM25_MIN_SERVER:
            self.full_text_note = (f"Milvus server {version} has no BM25 full-text search (added "
                                   "in 2.5): hybrid search falls back to dense.")
            return False
        return True

    @property
    def output_fields(self) -> list[str]:
        """The fields read back for each row (``OUTPUT_FIELDS`` plus the optional columns)."""
        return [*OUTPUT_FIELDS, *(MEMORY_FIELDS if self.has_memory_fields else [])]

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

    @property
    def client(self):
        """The underlying ``pymilvus.MilvusClient``, for demonstrations (e.g. raw insert/upsert)."""
        return self._client

    def load(self) -> None:
        """Load the collection into memory (searches need it). Idempotent.

        Raises:
            CollectionNotLoadedError: loading failed.
        """
        self._ensure_loaded()

    # -- calls, errors -----------------------------------------------------------------------------

    def _call(self, method, *args, **kwargs):
        """Run a client call; load the collection once if it was released; translate errors."""
        from pymilvus.exceptions import MilvusException

        if self._closed:
            raise StoreClosedError(self._closed_message())
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
        self._closed, self._closed_by = True, "drop()"

    @staticmethod
    def drop_collection(collection: str = DEFAULT_COLLECTION, uri: str | None = None,
                        token: str | None = None, settings: Settings | None = None) -> bool:
        """Delete ``collection`` without opening it as a store (works when its dimension does not
        match the current embedding model).

        Args:
            collection: the name.
            uri, token: as for ``MemoryStore`` (default: ``milvus_connection(settings)``).
            settings: the ``Settings`` from ``show_setup()`` (default: the environment).

        Returns:
            ``True`` if it existed.

        Raises:
            MilvusUnavailableError / LiteLockedError: as for ``MemoryStore``.
        """
        store = MilvusCollection.__new__(MilvusCollection)
        if uri is None:
            uri, default_token = milvus_connection(settings)
            token = token or default_token
        store.uri, store.kind, store.timeout = str(uri), milvus_kind(str(uri)), 30.0
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
        if not self._closed:
            self._closed, self._closed_by = True, "close()"
        with contextlib.suppress(Exception):
            self._client.close()
        if release_lite and self.kind == "lite":
            from milvus_lite.server_manager import server_manager_instance

            server_manager_instance.release_server(self.uri)

    def __enter__(self) -> MilvusCollection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _not_loaded(exc) -> bool:
    text = str(getattr(exc, "message", exc)).lower()
    return getattr(exc, "code", None) == 101 or "not loaded" in text or "call load()" in text


def _unreachable(exc) -> bool:
    text = str(getattr(exc, "message", exc)).lower()
    cause = repr(exc.__cause__ or exc.__context__ or "").lower()
    return "fail connecting" in text or "unavailable" in text or "unavailable" in cause
