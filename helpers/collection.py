"""A Milvus collection, the course's way (the plumbing under ``store.MemoryStore``): made from a schema
if missing, checked against it (columns, vector length), loaded; every call with a timeout, a released
collection loaded again once; ``flush``, ``drop``, ``close``; errors as plain sentences with a fix."""

import contextlib
import time
from collections.abc import Sequence


class MilvusStoreError(RuntimeError):
    """Base of the course's Milvus errors; the message is a plain sentence with a fix."""


class DimensionMismatchError(MilvusStoreError, ValueError):
    """Vectors of one length meet a collection of another; raised before anything is written."""


class StoreClosedError(MilvusStoreError):
    """The store was closed (``close()``) or its collection dropped (``drop()``)."""


class Collection(contextlib.AbstractContextManager):
    """What ``MemoryStore`` needs of its collection. Expects ``client``, ``collection``, ``embeddings``,
    ``FIELDS`` (the columns after ``id`` and ``vector``: VARCHAR byte limit, ``None`` = INT64), ``nlist``,
    ``consistency_level``, ``timeout`` (seconds a call), ``uri`` and ``backend`` (lite / server / cloud)."""

    _closed_by = ""

    def _open(self, drop_existing: bool, dim: int | None) -> None:
        """Drop the collection first if asked, make it (IVF_FLAT + COSINE) if missing, check it, load it.
        ``dim``: the vector length (``None``: one probe embedding's). DimensionMismatchError: another
        length; MilvusStoreError: another schema."""
        from pymilvus import DataType, MilvusClient
        if drop_existing:
            self.client.drop_collection(self.collection, timeout=self.timeout)
        self.dim = dim or len(self.embeddings.embed_query("dimension probe"))
        if not self.client.has_collection(self.collection, timeout=self.timeout):
            schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
            schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
            for field, size in self.FIELDS.items():
                options = {"max_length": size, "is_partition_key": field == "user_id"} if size else {}
                schema.add_field(field, DataType.VARCHAR if size else DataType.INT64, **options)
            index = MilvusClient.prepare_index_params()
            index.add_index(field_name="vector", index_type="IVF_FLAT", metric_type="COSINE",
                            params={"nlist": self.nlist})
            self._extend_schema(schema, index)
            self.client.create_collection(self.collection, schema=schema, index_params=index,
                                          timeout=self.timeout, consistency_level=self.consistency_level)
        described = self.client.describe_collection(self.collection, timeout=self.timeout)
        fields = {f["name"]: f for f in described["fields"]}
        name, uri = self.collection, self.uri
        if missing := [n for n in ("id", "vector", *self.FIELDS) if n not in fields]:
            raise MilvusStoreError(f"Collection {name!r} at {uri} lacks {', '.join(missing)}: not this "
                                   "course's, or an older version's. Use another name or drop_existing=True.")
        if (old := int(fields["vector"]["params"]["dim"])) != self.dim:
            why = (f"dim={dim} was passed (pass {old}, or no dim for the model's length)" if dim else
                   f"the embedding model makes {self.dim}-dimensional ones (another model wrote it)")
            raise DimensionMismatchError(
                f"Collection {name!r} at {uri} stores {old}-dimensional vectors, but {why}. Nothing "
                f"was inserted or searched. Use another collection name, e.g. '{name}_{self.dim}', or drop "
                f"it: drop_existing=True or helpers.course.milvus.drop_collection({name!r}, uri={uri!r}).")
        self._load()

    def _load(self, tries: int = 5) -> None:
        # A process killed right after a flush (a kernel restart) can leave its Lite server writing an
        # index file for a moment: loading it then fails with EAGAIN ("temporarily unavailable"). Wait.
        from pymilvus.exceptions import MilvusException
        for attempt in range(tries):
            try:
                return self.client.load_collection(self.collection, timeout=self.timeout)
            except MilvusException as exc:
                if "temporarily unavailable" not in str(exc) or attempt == tries - 1:
                    raise
                time.sleep(0.5)

    def _extend_schema(self, schema, index) -> None:
        """A subclass's fields and indexes for a new collection (``helpers.fulltext``); none here."""

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

    def _count(self, where: str, level: str | None = None) -> int:
        return self._call("query", filter=where, output_fields=["count(*)"],
                          consistency_level=level or self.consistency_level)[0]["count(*)"]

    def flush(self) -> float:  # seal the rows written into indexed segments now; returns the seconds
        began = time.perf_counter()
        self._call("flush")
        with self._lock:
            self._unflushed = 0
        return time.perf_counter() - began

    def drop(self) -> None:  # delete the collection (released first: Lite would print FAISS warnings)
        with contextlib.suppress(Exception):
            self.client.release_collection(self.collection, timeout=self.timeout)
        self.client.drop_collection(self.collection, timeout=self.timeout)
        self._closed_by = "drop()"

    def close(self) -> None:  # close the client; later calls raise StoreClosedError (Lite keeps its lock)
        self._closed_by = self._closed_by or "close()"
        with contextlib.suppress(Exception):
            self.client.close()

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.backend} at {self.uri!r}, collection={self.collection!r}, "
                f"dim={getattr(self, 'dim', None)}, nlist={self.nlist}, nprobe={self.nprobe})")
