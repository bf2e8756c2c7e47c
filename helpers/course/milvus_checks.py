"""The article's self-check list for a Milvus memory collection, run as real checks (lesson 06).

The article ends with a list to go through before trusting a Milvus memory: can the database be
reached, does the collection have its fields, does the vector length match the embedding model,
is the index built and the collection loaded, do searches return the fields, are ids unique, and
does an empty result fall back to the plain question. ``self_check`` asks Milvus each of these
(``describe_collection``, ``list_indexes`` / ``describe_index``, ``get_load_state``, a search, a
count) and returns one row per check with what it found, so a wrong setting shows as a red row
instead of a wrong answer three lessons later.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pandas as pd
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage, SystemMessage

from helpers.milvus_common import OUTPUT_FIELDS, SEARCH_LIMIT_MAX, eq_filter, validate_id
from helpers.milvus_store import MemoryStore
from helpers.retrieval import RetrievalMemory

ARTICLE_FIELDS = ("id", "vector", "content", "round", "timestamp")
"""The article's five fields; this course adds ``user_id`` (partition key) and chunk bookkeeping."""

EXPECTED_INDEX = ("IVF_FLAT", "COSINE")
PROBE_QUESTION = "What is my job?"


def self_check(store: MemoryStore, user_id: str, embeddings: Embeddings | None = None) -> pd.DataFrame:
    """Run the self-check list against ``store``'s collection.

    Args:
        store: an open ``MemoryStore``.
        user_id: a user with stored memories (the search check reads their turns).
        embeddings: the embedding model the application uses (default: the store's own). Its
            vector length must match the collection's.

    Returns:
        A DataFrame with one row per check and columns ``check``, ``ok`` (bool) and ``detail``
        (what was found, in a sentence). A check that raises is a failed row whose detail is the
        error; ``self_check`` itself does not raise for a failed check.

    Note:
        The dimension check embeds one probe text; the fallback check searches once for a fresh
        user id that has no memories (one query embedding, counted in
        ``store.embedding_calls``). Nothing is written. A released collection is reported as not
        loaded, and then loaded again by the checks after it that go through the store (its
        searches load a released collection once), as the lesson's own searches would.

    Raises:
        InvalidIdError: ``user_id`` is not a valid id.
    """
    validate_id(user_id, "user id")
    name = store.collection
    client = store.client

    def fields() -> dict[str, dict]:
        return {f["name"]: f for f in client.describe_collection(name)["fields"]}

    def reachable():
        collections = client.list_collections()
        ok = name in collections
        where = "Milvus Lite file" if store.kind == "lite" else f"Milvus {store.kind}"
        return ok, (f"{where} {store.uri} answered; {len(collections)} collection(s), "
                    f"{name!r} {'among them' if ok else 'missing'}")

    def schema():
        found = fields()
        missing = [f for f in ARTICLE_FIELDS if f not in found]
        partition_key = bool(found.get("user_id", {}).get("is_partition_key"))
        types = ", ".join(f"{f} {_type_name(found[f])}" for f in ARTICLE_FIELDS if f in found)
        detail = types + ("; user_id is the partition key" if partition_key
                          else "; user_id is NOT a partition key")
        if missing:
            detail = f"missing: {', '.join(missing)}; " + detail
        return not missing and partition_key and found["id"].get("is_primary", False), detail

    def dimension():
        collection_dim = int(fields()["vector"]["params"]["dim"])
        model_dim = len((embeddings or store.embeddings).embed_query("dimension check"))
        return collection_dim == model_dim, (f"collection {collection_dim}, embedding model "
                                             f"{model_dim} dimensions")

    def index():
        described = [client.describe_index(name, index_name=i) for i in client.list_indexes(name)]
        on_vector = [d for d in described if d.get("field_name") == "vector"]
        if not on_vector:
            return False, "no index on the vector field (searches would fail or scan everything)"
        d = on_vector[0]
        kind, metric = d.get("index_type"), d.get("metric_type")
        params = {k: d[k] for k in ("nlist",) if k in d}
        return (kind, metric) == EXPECTED_INDEX, f"{kind} + {metric} {params or ''}".strip()

    def loaded():
        state = str(client.get_load_state(name).get("state"))
        return state.endswith("Loaded") and "NotLoad" not in state, f"load state: {state}"

    def output_fields():
        vector = (embeddings or store.embeddings).embed_query(PROBE_QUESTION)
        hits = client.search(name, data=[vector], filter=eq_filter(user_id=user_id), limit=1,
                             output_fields=OUTPUT_FIELDS, anns_field="vector",
                             search_params={"metric_type": "COSINE", "params": {"nprobe": store.nprobe}},
                             consistency_level=store.consistency_level)[0]
        if not hits:
            return False, f"user {user_id!r} has no stored turns to search"
        entity = hits[0]["entity"]
        missing = [f for f in OUTPUT_FIELDS if f not in entity]
        got = ", ".join(f for f in OUTPUT_FIELDS if f in entity)
        return not missing, f"a hit for {user_id!r} came back with {got}" + (
            f"; missing {', '.join(missing)}" if missing else "")

    def unique_ids():
        rows = store.count()
        ids = [r["id"] for r in client.query(name, filter="", output_fields=["id"],
                                             limit=min(max(rows, 1), SEARCH_LIMIT_MAX))]
        distinct = len(set(ids))
        if rows > SEARCH_LIMIT_MAX:
            return distinct == len(ids), (f"{distinct} distinct ids in the first {len(ids)} of "
                                          f"{rows} rows")
        return distinct == rows, f"{rows} rows, {distinct} distinct ids"

    def fallback():
        nobody = f"self-check-{uuid.uuid4().hex[:12]}"
        memory = RetrievalMemory(store, nobody, "self-check")
        system, question = SystemMessage("self-check"), HumanMessage(PROBE_QUESTION)
        sent = memory.prompt(system, [], question)
        ok = memory.last_retrieved == [] and sent == [system, question] and sent[1] is question
        what = "only the question" if ok else f"{sent[-1].text[:60]!r}"
        return ok, f"a user with no memories: {len(memory.last_retrieved)} results, the model is sent {what}"

    checks: list[tuple[str, Callable[[], tuple[bool, str]]]] = [
        ("database reachable", reachable),
        ("article fields + user_id partition key", schema),
        ("vector dimension = embedding model", dimension),
        ("index IVF_FLAT + COSINE", index),
        ("collection loaded", loaded),
        ("search returns the output fields", output_fields),
        ("ids unique", unique_ids),
        ("empty result falls back to the question", fallback),
    ]
    rows = []
    for label, check in checks:
        try:
            ok, detail = check()
        except Exception as error:  # a check list reports, it does not stop at the first failure
            ok, detail = False, f"{type(error).__name__}: {error}"
        rows.append({"check": label, "ok": bool(ok), "detail": detail})
    return pd.DataFrame(rows)


def _type_name(field: dict) -> str:
    kind = getattr(field.get("type"), "name", str(field.get("type")))
    params = field.get("params") or {}
    size = params.get("dim", params.get("max_length"))
    return f"{kind}({size})" if size is not None else kind
