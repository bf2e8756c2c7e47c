"""The article's self-check list for a Milvus memory collection, run as real checks (lesson 06):
each asks Milvus, so a wrong setting shows as a red row, not as a wrong answer later."""

from __future__ import annotations

import uuid

import pandas as pd
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage, SystemMessage

from helpers.retrieval import RetrievalMemory
from helpers.store import FIELDS, MemoryStore, eq_filter, validate_id

ARTICLE_FIELDS = ("id", "vector", "content", "round", "timestamp")  # the course adds user_id etc.
EXPECTED_INDEX = ("IVF_FLAT", "COSINE")
PROBE_QUESTION = "What is my job?"
QUERY_LIMIT = 16384  # the most rows one Milvus query returns


def self_check(store: MemoryStore, user_id: str, embeddings: Embeddings | None = None) -> pd.DataFrame:
    """The checks of ``store``'s collection for ``user_id`` (who has rows) and ``embeddings`` (default:
    the store's): a DataFrame of ``check``, ``ok`` (bool), ``detail``; a check that raises is a failed
    row. Writes nothing; a released collection is reported as not loaded (the store's search then
    loads it). Raises InvalidIdError for an unsafe ``user_id``."""
    validate_id(user_id, "user id")
    name, client, model = store.collection, store.client, embeddings or store.embeddings

    def fields() -> dict[str, dict]:
        return {f["name"]: f for f in client.describe_collection(name)["fields"]}

    def reachable():
        collections = client.list_collections()
        where = "Milvus Lite file" if store.backend == "lite" else f"Milvus {store.backend}"
        return name in collections, (f"{where} {store.uri} answered; {len(collections)} collection(s), "
                                     f"{name!r} {'among them' if name in collections else 'missing'}")

    def schema():
        found = fields()
        missing = [f for f in ARTICLE_FIELDS if f not in found]
        key = bool(found.get("user_id", {}).get("is_partition_key"))
        detail = ", ".join(f"{f} {_type_name(found[f])}" for f in ARTICLE_FIELDS if f in found) + (
            "; user_id is the partition key" if key else "; user_id is NOT a partition key")
        return not missing and key and found["id"].get("is_primary", False), (
            f"missing: {', '.join(missing)}; " if missing else "") + detail

    def dimension():
        ours, theirs = int(fields()["vector"]["params"]["dim"]), len(model.embed_query("dimension check"))
        return ours == theirs, f"collection {ours}, embedding model {theirs} dimensions"

    def index():
        described = [client.describe_index(name, index_name=i) for i in client.list_indexes(name)]
        on_vector = [d for d in described if d.get("field_name") == "vector"]
        if not on_vector:
            return False, "no index on the vector field (searches would fail or scan everything)"
        kind, metric = on_vector[0].get("index_type"), on_vector[0].get("metric_type")
        params = {k: on_vector[0][k] for k in ("nlist",) if k in on_vector[0]} or ""
        return (kind, metric) == EXPECTED_INDEX, f"{kind} + {metric} {params}".strip()

    def loaded():
        state = str(client.get_load_state(name).get("state"))
        return state.endswith("Loaded") and "NotLoad" not in state, f"load state: {state}"

    def output_fields():
        hits = client.search(name, data=[model.embed_query(PROBE_QUESTION)], limit=1, anns_field="vector",
                             filter=eq_filter(user_id=user_id), output_fields=list(FIELDS),
                             search_params={"metric_type": "COSINE", "params": {"nprobe": store.nprobe}},
                             consistency_level=store.consistency_level)[0]
        if not hits:
            return False, f"user {user_id!r} has no stored turns to search"
        got = [f for f in FIELDS if f in hits[0]["entity"]]
        missing = ", ".join(f for f in FIELDS if f not in got)
        return not missing, f"a hit for {user_id!r} came back with {', '.join(got)}" + (
            f"; missing {missing}" if missing else "")

    def unique_ids():
        rows = store.count()
        ids = [r["id"] for r in client.query(name, filter="", output_fields=["id"],
                                             limit=min(max(rows, 1), QUERY_LIMIT))]
        distinct = len(set(ids))
        if rows > QUERY_LIMIT:
            return distinct == len(ids), f"{distinct} distinct ids in the first {len(ids)} of {rows} rows"
        return distinct == rows, f"{rows} rows, {distinct} distinct ids"

    def fallback():
        memory = RetrievalMemory(store, f"self-check-{uuid.uuid4().hex[:12]}", "self-check")
        system, question = SystemMessage("self-check"), HumanMessage(PROBE_QUESTION)
        sent = memory.prompt(system, [], question)
        ok = memory.last_retrieved == [] and list(sent) == [system, question] and sent[1] is question
        what = "only the question" if ok else f"{sent[-1].text[:60]!r}"
        return ok, f"a user with no memories: {len(memory.last_retrieved)} results, the model is sent {what}"

    checks = [("database reachable", reachable), ("article fields + user_id partition key", schema),
              ("vector dimension = embedding model", dimension), ("index IVF_FLAT + COSINE", index),
              ("collection loaded", loaded), ("search returns the output fields", output_fields),
              ("ids unique", unique_ids), ("empty result falls back to the question", fallback)]
    rows = []
    for label, check in checks:
        try:
            rows.append((label, *check()))
        except Exception as error:  # a check list reports, it does not stop at the first failure
            rows.append((label, False, f"{type(error).__name__}: {error}"))
    return pd.DataFrame(rows, columns=["check", "ok", "detail"]).astype({"ok": bool})


def _type_name(field: dict) -> str:
    kind, params = getattr(field.get("type"), "name", str(field.get("type"))), field.get("params") or {}
    return kind if (size := params.get("dim", params.get("max_length"))) is None else f"{kind}({size})"
