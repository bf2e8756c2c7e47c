"""Not adopted (row ``default+named``; docs/design-notes.md, "A question that names a person"): a question
that names one speaker searches that person's rows apart, and the two lists are fused by rank.

Layered memory's default puts the named person's hits first (``LayeredMemory.prefer``). This option
instead searches their rows with the person's ``name`` as a Milvus filter before the cut (so a line of
theirs far down among everyone's is found), then fuses it with everyone's list by reciprocal rank
(``helpers.fulltext.fuse``), everyone's list weighted ``EVERYONE_WEIGHT``: at 0.5 the person's ~60 best
come before the other speaker's best. A hit's score is then its fused score."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from helpers.fulltext import fuse
from helpers.kinds import named_speaker
from helpers.safe import eq_filter
from helpers.text import nfc

EVERYONE_WEIGHT = 0.5  #: everyone's ranking as a smaller voice than the named person's in the fusion


class NamedSearch:
    """A store whose ``search`` for a question naming one of ``names`` (role -> name) fuses that person's
    rows (searched apart) with everyone's; any other search, and everything else, goes to ``store``.
    The question is embedded once for both searches."""

    def __init__(self, store, names: Mapping[str, str] | None) -> None:
        self.store, self.names = store, names

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def search(self, user_id: str, query: str, top_k: int = 3, **kwargs) -> list:
        name = named_speaker(query, self.names) if isinstance(query, str) else None
        if name is None:
            return self.store.search(user_id, query, top_k, **kwargs)
        kwargs.setdefault("query_vector", self.store.embed([query], query=True)[0])
        theirs = self._search_of(name, user_id, query, top_k, **kwargs)
        everyone = self.store.search(user_id, query, top_k, **kwargs)
        fused = fuse([(1.0, theirs), (EVERYONE_WEIGHT, everyone)],
                     key=lambda hit: (hit.turn_id, hit.chunk_of))
        return [dataclasses.replace(hit, score=score) for score, hit in fused]

    def _search_of(self, name: str, user_id: str, query: str, top_k: int, **kwargs) -> list:
        """``store.search`` with the row's ``name`` column filtered too (every filter the store builds
        starts from its ``_where``: here, for this one call, that person's rows only)."""
        store, where = self.store, self.store._where
        store._where = lambda *ids: f"{where(*ids)} and {eq_filter(name=nfc(name))}"
        try:
            return store.search(user_id, query, top_k, **kwargs)
        finally:
            del store._where
