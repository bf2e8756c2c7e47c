"""One message per row, with its kind, speaker and date (issue 10, part 3): the ``MemoryStore``
methods behind ``helpers.recall``.

``MemoryStore(..., memory_fields=True)`` adds the ``kind``, ``speaker`` and ``date`` columns
(``full_text=True`` also BM25's, see ``helpers.milvus_collection``). This mixin holds what uses
them: ``add_memory`` (one speaker's words, as said), ``neighbours`` (the turns around a hit), and
the kind filter and BM25 fusion of ``MemoryStore.search``.

Measured (``benchmarks/bench_recall.py``, hard conversation, evidence turn among the selected
memories): dense top-3 0.29; the kind filter (statements only, in Milvus, before the top-k is
cut, so past questions cannot crowd out the statements that answer them) 0.69; with a 300-token
best-first budget 0.95. Hybrid (BM25 fused by RRF) did not raise recall over that (0.92); it finds
exact rare words (a name) that dense ranks low, so it is offered, not the default. Lite returns
BM25 scores as negative distances; ``lexical_score`` is the magnitude. Lite keeps BM25's IDF per
segment, so its scores shift with flushes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from helpers.milvus_common import (
    LEXICAL_MAX_BYTES,
    MEMORY_FIELD_MAX_LENGTH,
    MEMORY_FIELDS,
    SEARCH_LIMIT_MAX,
    Memory,
    MilvusStoreError,
    best_per_turn,
    cut_utf8,
    eq_filter,
    in_filter,
    split_utf8,
    validate_id,
)


class MessageMemories:
    """Mixin of ``MemoryStore``: rows of one message each, filtered by kind, with neighbours; and
    reading rows back (``turns``, ``count``, reassembling chunks into ``Memory`` objects)."""

    def add_memory(self, user_id: str, session_id: str, round: int, text: str, *,
                   kind: str = "statement", speaker: str = "user", date: str = "",
                   timestamp: datetime | str | None = None,
                   vector: Sequence[float] | None = None) -> list[str]:
        """Store one message (one speaker's words, as said) with its kind, speaker and date.

        Unlike ``add_turn`` nothing is prefixed and the user's and the assistant's words are
        separate rows (give each its own ``round``, e.g. the message's position in the session,
        so ``neighbours`` finds the reply after a statement). Needs ``memory_fields=True``.

        Args:
            user_id, session_id, round, timestamp: as in ``add_turn``.
            text: the message (any length; chunked like ``add_turn``).
            kind: ``recall.classify_turn(text, speaker)``, ``"fact"`` or ``"summary"``.
            speaker: ``"user"`` or ``"assistant"`` (``""`` for a summary).
            date: the session's ISO date (``"2025-02-22"``) or ``""``.
            vector: a precomputed embedding of ``text`` (one chunk only), else it is embedded.

        Returns:
            The ids written, one per chunk.

        Raises:
            MilvusStoreError: the collection has no ``kind`` / ``speaker`` / ``date`` columns.
            ValueError: a kind, speaker or date longer than 32 characters, a date that is not
                ISO, a vector for a text of several chunks; and ``add_turn``'s errors.
        """
        if not self.has_memory_fields:
            raise MilvusStoreError(
                f"collection {self.collection!r} has no kind/speaker/date columns: open a new "
                "collection with MemoryStore(..., memory_fields=True), or use add_turn.")
        validate_id(user_id, "user id")
        validate_id(session_id, "session id")
        if not isinstance(text, str):
            raise TypeError("text must be a str")
        for name, value in (("kind", kind), ("speaker", speaker), ("date", date)):
            if not isinstance(value, str) or len(value) > MEMORY_FIELD_MAX_LENGTH:
                raise ValueError(f"{name} must be a str of at most {MEMORY_FIELD_MAX_LENGTH} "
                                 f"characters, got {value!r}")
        if date:
            try:
                datetime.fromisoformat(date)
            except ValueError:
                raise ValueError(f"date {date!r} is not ISO 8601 (e.g. 2025-02-22)") from None
        chunks = split_utf8(text, self.max_chunk_bytes)
        vectors = None
        if vector is not None:
            if len(chunks) != 1:
                raise ValueError(f"one vector given for a text of {len(chunks)} chunks")
            vectors = [vector]
        return self._insert_chunks(user_id, session_id, round, chunks, timestamp, vectors,
                                   {"kind": kind, "speaker": speaker, "date": date})

    def _extra_columns(self, rows: list[dict], extra: dict | None) -> None:
        """Fill the optional columns of rows about to be inserted."""
        if self.has_memory_fields:
            for row in rows:
                row.update({name: (extra or {}).get(name, "") for name in MEMORY_FIELDS})
        if self.full_text:
            from helpers.hybrid import lexical_text

            for row in rows:
                row["lexical"] = cut_utf8(lexical_text(row["content"]), LEXICAL_MAX_BYTES)

    def _kind_filter(self, kinds: Sequence[str] | None, exclude_kinds: Sequence[str] | None) -> str:
        """`` and kind in [...]`` / `` and not (kind in [...])``, or ``""``."""
        if kinds is None and exclude_kinds is None:
            return ""
        if not self.has_memory_fields:
            raise MilvusStoreError(
                f"collection {self.collection!r} has no kind column: open a new collection with "
                "MemoryStore(..., memory_fields=True) to filter by kind.")
        where = f" and {in_filter('kind', list(kinds))}" if kinds is not None else ""
        if exclude_kinds:
            where += f" and not ({in_filter('kind', list(exclude_kinds))})"
        return where

    def _hybrid(self, user_id: str, query: str, where: str, best: dict, top_k: int, limit: int,
                min_score: float | None, fusion: str, rrf_k: int, dense_weight: float,
                lexical_weight: float) -> list[Memory]:
        """BM25 search on ``query`` fused with the dense hits ``best`` (``best_per_turn``)."""
        from helpers.hybrid import lexical_text, rrf_fuse, weighted_fuse

        lexical_hits = self._call(
            self._client.search, self.collection, data=[lexical_text(query)], filter=where,
            limit=min(limit, SEARCH_LIMIT_MAX), output_fields=self.output_fields,
            search_params={"metric_type": "BM25"}, anns_field="sparse",
            consistency_level=self.consistency_level, timeout=self.timeout,
        )[0] if query.strip() else []
        # Lite returns BM25 scores as negative distances, a 2.5 server as positive scores
        lexical = {turn: (abs(score), entity)
                   for turn, (score, entity) in best_per_turn(lexical_hits).items()}
        if fusion == "rrf":
            fused = rrf_fuse([sorted(best, key=lambda t: -best[t][0]),
                              sorted(lexical, key=lambda t: -lexical[t][0])],
                             k=rrf_k, weights=[1.0, lexical_weight])
        else:
            fused = weighted_fuse([{t: best[t][0] for t in best}, {t: lexical[t][0] for t in lexical}],
                                  [dense_weight, 1.0 - dense_weight])
        if min_score is not None:  # a threshold on the cosine part: BM25-only hits have none
            fused = [(t, s) for t, s in fused if t in best and best[t][0] >= min_score]
        ranked = [(score, (best.get(turn) or lexical[turn])[1]) for turn, score in fused[:top_k]]
        return [replace(m, dense_score=best[m.turn_id][0] if m.turn_id in best else None,
                        lexical_score=lexical[m.turn_id][0] if m.turn_id in lexical else None)
                for m in self._assemble(user_id, ranked)]

    def neighbours(self, user_id: str, memories: Sequence[Memory], before: int = 1,
                   after: int = 1) -> dict[str, list[Memory]]:
        """The turns around each memory: same session, ``round - before`` .. ``round + after``.

        One query for all ``memories``. With ``add_memory`` rows numbered by position in the
        session, the turn after a user's statement is the assistant's reply to it.

        Returns:
            ``{hit.turn_id: [neighbour, ...]}``, nearest first (round - 1, round + 1, round - 2,
            ...), the hit itself excluded; ``score`` is ``None``.

        Raises:
            ValueError: negative ``before`` / ``after``.
        """
        validate_id(user_id, "user id")
        if before < 0 or after < 0:
            raise ValueError(f"before and after must be >= 0, got {before}, {after}")
        if not memories or before + after == 0:
            return {m.turn_id: [] for m in memories}
        wanted: dict[str, set[int]] = {}
        for memory in memories:
            wanted.setdefault(memory.session_id, set()).update(
                range(memory.round - before, memory.round + after + 1))
        clauses = [f"({eq_filter(session_id=session)} and round in [{', '.join(map(str, sorted(r)))}])"
                   for session, r in wanted.items()]
        rows = self._query(f"{eq_filter(user_id=user_id)} and ({' or '.join(clauses)})")
        by_place = {(m.session_id, m.round): m for m in self._group(user_id, rows, {})}
        result: dict[str, list[Memory]] = {}
        for memory in memories:
            order = [memory.round + step * sign for step in range(1, max(before, after) + 1)
                     for sign in (-1, 1) if (sign < 0 and step <= before) or (sign > 0 and step <= after)]
            result[memory.turn_id] = [by_place[(memory.session_id, r)] for r in order
                                      if (memory.session_id, r) in by_place
                                      and by_place[(memory.session_id, r)].turn_id != memory.turn_id]
        return result

    # -- reading rows back ----------------------------------------------------------------------

    def turns(self, user_id: str, session_id: str | None = None, limit: int = 1000) -> list[Memory]:
        """All stored turns of ``user_id`` (optionally one session), oldest round first.

        Args:
            user_id, session_id: as in ``search``.
            limit: at most this many rows are read (1..16384).

        Returns:
            ``Memory`` objects with ``score=None``, sorted by (timestamp, session, round).
        """
        validate_id(user_id, "user id")
        if session_id is not None:
            validate_id(session_id, "session id")
        where = eq_filter(user_id=user_id, **({"session_id": session_id} if session_id else {}))
        rows = self._query(where, limit=limit)
        return sorted(self._group(user_id, rows, {}), key=lambda m: (m.timestamp, m.session_id, m.round))

    def count(self, user_id: str | None = None) -> int:
        """Rows (chunks) stored, for one user or for everyone. On a server a duplicate primary
        key counts twice (see the module docstring)."""
        where = eq_filter(user_id=validate_id(user_id)) if user_id is not None else ""
        result = self._call(self._client.query, self.collection, filter=where,
                            output_fields=["count(*)"], consistency_level=self.consistency_level,
                            timeout=self.timeout)
        return int(result[0]["count(*)"])

    def _assemble(self, user_id: str, ranked: list[tuple[float, dict]]) -> list[Memory]:
        scores = {entity["turn_id"]: score for score, entity in ranked}
        rows = [entity for _, entity in ranked if int(entity["chunks"]) == 1]
        long_turns = [entity["turn_id"] for _, entity in ranked if int(entity["chunks"]) > 1]
        if long_turns:
            rows += self._query(f"{eq_filter(user_id=user_id)} and {in_filter('turn_id', long_turns)}")
        memories = {m.turn_id: m for m in self._group(user_id, rows, scores)}
        return [memories[turn] for turn in scores if turn in memories]

    def _query(self, where: str, limit: int = SEARCH_LIMIT_MAX) -> list[dict]:
        return self._call(self._client.query, self.collection, filter=where,
                          output_fields=["id", *self.output_fields], limit=limit,
                          consistency_level=self.consistency_level, timeout=self.timeout)

    @staticmethod
    def _group(user_id: str, rows: list[dict], scores: dict[str, float]) -> list[Memory]:
        by_turn: dict[str, list[dict]] = {}
        for row in rows:
            by_turn.setdefault(row["turn_id"], []).append(row)
        memories = []
        for turn, parts in by_turn.items():
            parts = sorted({int(p["chunk"]): p for p in parts}.values(), key=lambda p: int(p["chunk"]))
            first = parts[0]
            memories.append(Memory(
                content="".join(p["content"] for p in parts), round=int(first["round"]),
                timestamp=first["timestamp"], session_id=first["session_id"],
                score=scores.get(turn), ids=tuple(p["id"] for p in parts), turn_id=turn,
                user_id=user_id, kind=first.get("kind") or "", speaker=first.get("speaker") or "",
                date=first.get("date") or "",
            ))
        return memories
