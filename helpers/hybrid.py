"""Hybrid search pieces (issue 10, part 3): the text Milvus' BM25 analyzer indexes, its stop
words, and the fusion of a dense and a BM25 ranking. Pure functions, no Milvus;
``helpers.milvus_store.MemoryStore.search(hybrid=True)`` uses them, ``helpers.recall`` re-exports
them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Mapping, Sequence

RRF_K = 60
"""The constant of reciprocal rank fusion, score = sum 1 / (k + rank): Cormack, Clarke and
Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning Methods",
SIGIR 2009, chose k = 60 (it damps the weight of the very first ranks); Milvus' ``RRFRanker``
uses the same default."""

#: English stop words for the BM25 analyzer (``analyzer_params`` filter ``stop``; Milvus Lite
#: 3.2.2 and Milvus >= 2.5 both take an explicit list). Without them a question's "what", "my",
#: "is" match every other question and statement. The function words of NLTK's English list,
#: shortened; names and content words are never in it.
STOP_WORDS = tuple("""a an the and or but if then so of to in on at by for with from about as into
over after before than that this these those is are was were be been being am do does did done
have has had having i me my mine myself you your yours we our us he him his she her hers it its
they them their what which who whom whose when where why how s t d ll m re ve not no can could
would should will shall may might must just very too also there here all any some""".split())

_CJK_RUN = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f\u3040-\u30ff\u4e00-\u9fff]+|"
                      r"[^\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f\u3040-\u30ff\u4e00-\u9fff]+")


def _is_cjk(char: str) -> bool:
    name = unicodedata.name(char, "")
    return name.startswith(("HANGUL", "CJK UNIFIED", "HIRAGANA", "KATAKANA"))


def lexical_text(text: str) -> str:
    """The text Milvus' BM25 analyzer indexes for ``text``: Latin words unchanged, every run of
    Hangul / CJK characters replaced by its overlapping character bigrams (a single character
    stays itself).

    Why: Milvus Lite 3.2.2 has only the ``standard`` (regex ``\\w+``, lowercased) and ``jieba``
    analyzers (``milvus_lite/analyzer/factory.py``; ``run_analyzer`` is not implemented there).
    ``standard`` keeps a Korean word with its particle as one token, so "이름이" (the question) never
    matches "이름은" (the fact): measured, BM25 returned nothing for "이름이 뭐예요" against
    "제 이름은 수아예요". Bigrams ("이름 름이" / "이름 름은") share "이름". This works on any
    server with BM25 and the standard analyzer; on a Milvus >= 2.5 server a Korean tokenizer
    (lindera ko-dic) is the alternative.

    Returns:
        e.g. ``"제 이름 름은 수아 아예 예요 Luna"`` for ``"제 이름은 수아예요 Luna"``.
    """
    out: list[str] = []
    for word in re.findall(r"\w+", text):
        for run in _CJK_RUN.findall(word):
            if not _is_cjk(run[0]):
                out.append(run)
            elif len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return " ".join(out)


# --- fusion ---------------------------------------------------------------------------------------


def rrf_fuse(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K,
             weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Reciprocal rank fusion: each key scores ``sum(weight_i / (k + rank_i))`` over the rankings
    it appears in (rank 1 = first), and keys are returned best first.

    Args:
        rankings: lists of keys (e.g. turn ids), best first; a key may be missing from some.
            Repeated keys within one list count once, at their best rank.
        k: the RRF constant (``RRF_K`` = 60, Cormack et al. 2009), >= 0.
        weights: one per ranking (default all 1.0).

    Returns:
        ``[(key, score), ...]`` sorted by score, ties broken by the best single rank, then by
        first appearance.

    Raises:
        ValueError: ``k`` < 0 or ``weights`` of the wrong length.

    Example: ``rrf_fuse([["a", "b", "c"], ["c", "a"]])`` ranks ``a`` (1/61 + 1/62) first, then
    ``c`` (1/63 + 1/61), then ``b`` (1/62).
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores: dict[Hashable, float] = {}
    best_rank: dict[Hashable, int] = {}
    order: dict[Hashable, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[Hashable] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            best_rank[key] = min(best_rank.get(key, rank), rank)
            order.setdefault(key, len(order))
    return sorted(scores.items(), key=lambda kv: (-kv[1], best_rank[kv[0]], order[kv[0]]))


def weighted_fuse(score_maps: Sequence[Mapping[Hashable, float]],
                  weights: Sequence[float]) -> list[tuple[Hashable, float]]:
    """Weighted score fusion: each list's scores are min-max scaled to 0..1 (a key missing from a
    list gets 0 there), then summed with ``weights``; best first.

    Scaling is needed because the scales differ: cosine similarity of e5 sits in ~0.70-0.92,
    BM25 scores are unbounded (1-15 here). A list with one score, or all scores equal, scales to
    1.0 for every key in it.

    Raises:
        ValueError: ``weights`` of the wrong length.
    """
    if len(weights) != len(score_maps):
        raise ValueError(f"{len(weights)} weights for {len(score_maps)} score lists")
    total: dict[Hashable, float] = {}
    order: dict[Hashable, int] = {}
    for scores, weight in zip(score_maps, weights, strict=True):
        if not scores:
            continue
        low, high = min(scores.values()), max(scores.values())
        for key, value in scores.items():
            scaled = 1.0 if high == low else (value - low) / (high - low)
            total[key] = total.get(key, 0.0) + weight * scaled
            order.setdefault(key, len(order))
    return sorted(total.items(), key=lambda kv: (-kv[1], order[kv[0]]))
