"""Words and meaning together: Milvus's own BM25 full-text search fused with the dense search.

An embedding finds "my kitten" for "my cat" but misses rare words a question shares with its answer
("Socket.io"); BM25 finds those. ``HybridStore`` keeps a BM25 vector of each chunk (made by Milvus 2.5+ or
Lite 3+; an older server searches by meaning alone) and fuses both searches by reciprocal rank.
Sources: Milvus docs, "Full Text Search" and "Hybrid Search"; Cormack et al. 2009 (RRF, k=60)."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from helpers.chunks import VISIBLE
from helpers.store import RANKED_FIELDS, MemoryStore

SPARSE_FIELD = "sparse"  #: the BM25 vector of each chunk's content
RRF_K = 60  #: reciprocal-rank fusion's constant (Cormack et al. 2009)
#: How much the words' ranking counts against meaning's in the fusion: real chats' questions share rare
#: words with their answers (names, versions), paraphrased ones share none; chosen on two public chats
#: and the course's conversations (docs/design-notes.md, "Real chats").
WORDS_WEIGHT = 0.3


def fuse(ranked: Sequence[tuple[float, Sequence[Any]]],
         key: Callable[[Any], Hashable]) -> list[tuple[float, Any]]:
    """Weighted reciprocal-rank fusion (Cormack et al. 2009): each ``(weight, items)`` list, best first,
    gives an item ``weight / (RRF_K + rank)`` (ranks from 1; an item's first place in a list counts once),
    summed over the lists by ``key(item)``. Returns ``(score, item)`` best first (ties: the order first
    seen), the item as first seen. The course's one fusion (words and meaning here; the lab's options use
    it too)."""
    fused: dict[Hashable, list] = {}
    for weight, items in ranked:
        seen: set[Hashable] = set()
        for rank, item in enumerate(items, start=1):
            item_key = key(item)
            if item_key in seen:
                continue
            seen.add(item_key)
            fused.setdefault(item_key, [0.0, item])[0] += weight / (RRF_K + rank)
    return [(score, item) for score, item in sorted(fused.values(), key=lambda pair: -pair[0])]


def server_has_bm25(client) -> bool:
    """Can this Milvus run BM25 functions: Milvus Lite 3 or later, a server 2.5 or later."""
    try:
        version = str(client.get_server_version())
    except Exception:  # noqa: BLE001 - an unknown server: assume the old one
        return False
    numbers = [int(n) for n in re.findall(r"\d+", version.split("-")[-1])[:2]]
    if "lite" in version:
        return bool(numbers) and numbers[0] >= 3
    return len(numbers) == 2 and tuple(numbers) >= (2, 5)


class HybridStore(MemoryStore):
    """A ``MemoryStore`` that searches by words (BM25) and by meaning, fused by rank, where the
    Milvus it talks to can (``full_text``); else exactly a ``MemoryStore``. Same arguments, and
    ``words_weight`` (float in (0, 1], default ``WORDS_WEIGHT``): how much the words' ranking counts in
    the fusion (1: as much as meaning's, Milvus's ``RRFRanker``; 0.5: a row first by words and absent
    by meaning ranks like one 60 places further down by meaning). Only a search that asks
    (``search(words=True)``, as layered memory's does) uses words. A collection made without the BM25
    field stays dense-only (drop it to get one with it). With ``min_score`` a search is by meaning
    alone (a fused score is a rank, not a similarity). Raises ValueError for a weight outside (0, 1]."""

    def __init__(self, client, collection: str, embeddings, *, words_weight: float = WORDS_WEIGHT,
                 **kwargs) -> None:
        if not 0 < words_weight <= 1:
            raise ValueError(f"words_weight must be in (0, 1], got {words_weight!r}")
        self.words_weight = words_weight
        self.full_text = server_has_bm25(client)
        super().__init__(client, collection, embeddings, **kwargs)
        fields = {f["name"] for f in client.describe_collection(collection, timeout=self.timeout)["fields"]}
        self.full_text = self.full_text and SPARSE_FIELD in fields

    def _extend_schema(self, schema, index) -> None:
        if not self.full_text:
            return
        from pymilvus import DataType, Function, FunctionType

        content = next(f for f in schema.fields if f.name == "content")
        content.params["enable_analyzer"] = True  # BM25 reads the words Milvus's analyzer makes
        schema.add_field(SPARSE_FIELD, DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(Function(name="content_bm25", function_type=FunctionType.BM25,
                                     input_field_names=["content"], output_field_names=[SPARSE_FIELD]))
        index.add_index(field_name=SPARSE_FIELD, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")

    def _search_chunks(self, query: str | None, query_vector: Sequence[float], where: str,
                       limit: int) -> list[dict]:
        """Reciprocal-rank fusion with the words' list weighted: each chunk scores
        ``1 / (k + rank by meaning) + words_weight / (k + rank by words)`` (ranks from 1; a list it is
        absent from adds nothing; weight 1 is Milvus's ``RRFRanker``, which takes no weights: so two
        searches, fused here). By meaning alone without a query text or BM25."""
        if not (self.full_text and query and query.strip()):
            return super()._search_chunks(query, query_vector, where, limit)
        dense = super()._search_chunks(query, query_vector, where, limit)
        visible = f"{where} and {VISIBLE}"  # not a chunk waiting for its embedding (helpers.chunks)
        words = self._call("search", data=[query], anns_field=SPARSE_FIELD, limit=limit, filter=visible,
                           output_fields=list(RANKED_FIELDS), consistency_level=self.consistency_level,
                           search_params={"metric_type": "BM25"})[0]
        ranked = fuse([(1.0, dense), (self.words_weight, words)], key=lambda hit: hit["id"])[:limit]
        return [{**hit, "distance": score} for score, hit in ranked]
