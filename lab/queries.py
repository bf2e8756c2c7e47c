"""Not adopted (rows ``+parts``: docs/design-notes.md, "Real chats").

One search per part of a question: "Which of Marta's kids broke her wrist, and how old is she?"
asks two things whose answers sit in different messages; one embedding of the whole question lands
between them. ``question_parts`` cuts a question into its parts (rules, no model); ``PartsSearch``
searches each part and fuses the lists by reciprocal rank (RRF), so every part's best hits come early.

LangChain's ``MultiQueryRetriever`` writes the sub-queries with a model call; this uses none."""

from __future__ import annotations

import re
from collections.abc import Sequence

from helpers.fulltext import RRF_K
from helpers.kinds import content_words

_JOINS = re.compile(r",?\s+\band\b\s+(?=(what|which|who|whom|whose|when|where|why|how|did|does|do|is|are|was|"
                    r"were|has|have|can|could|would|should)\b)|;\s+|,\s+(?=(what|which|who|when|where|why|how)\b)",
                    re.IGNORECASE)


def question_parts(question: str, min_words: int = 1) -> list[str]:
    """The parts of ``question`` to search for apart: its sentences (cut after . ? ! and a space),
    each cut before "and" / "," that
    opens another question ("..., and how old is she?"). Parts with fewer than ``min_words`` content
    words are dropped; one part or none: ``[question]``."""
    parts = []
    for sentence in re.split(r"(?<=[.?!])\s+", question.strip()) or [question]:
        pieces = [p for p in _JOINS.split(sentence) if p and not _JOINS.fullmatch(p)]
        parts += [p.strip(" ,;") for p in pieces if p and p.lower() not in _QUESTION_WORDS]
    kept = [p for p in parts if len(content_words(p)) >= min_words]
    kept = list(dict.fromkeys(kept))
    return kept if len(kept) > 1 else [question]


_QUESTION_WORDS = set("what which who whom whose when where why how did does do is are was were has have can "
                      "could would should".split())


class PartsSearch:
    """A store whose ``search`` runs one search per ``question_parts`` part and fuses them by rank (each
    list gives ``1 / (RRF_K + rank)``); everything else goes to ``store`` unchanged."""

    def __init__(self, store) -> None:
        self.store = store

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def search(self, user_id: str, query: str, top_k: int = 3, **kwargs) -> Sequence:
        parts = question_parts(query) if isinstance(query, str) else [query]
        if len(parts) == 1:
            return self.store.search(user_id, query, top_k, **kwargs)
        scores, rows = {}, {}
        for part in parts:
            for rank, hit in enumerate(self.store.search(user_id, part, top_k, **kwargs), start=1):
                scores[hit.turn_id] = scores.get(hit.turn_id, 0.0) + 1 / (RRF_K + rank)
                rows.setdefault(hit.turn_id, hit)
        return [rows[t] for t in sorted(scores, key=lambda t: -scores[t])][:top_k]
