"""Filling a token budget with hits (lessons 07-08): best first, with neighbours, in one format.

A fixed top-k wastes the budget or drops a hit that does not fit, the fact is often in the row *next to*
the hit, and words said twice take the budget twice: ``fill_budget`` fixes each (docs/design-notes.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence

from helpers.kinds import NEVER_NEIGHBOURS, SEARCHED_KINDS, normalized
from helpers.retrieval import HEADER, format_hits, memory_line, session_header
from helpers.store import CHUNK_MAX_BYTES, Hit, MemoryStore, Row, split_utf8
from helpers.text import memory_block
from helpers.tokens import count_text_tokens, default_counter


def fill_budget(store: MemoryStore, user_id: str, question: str, budget_tokens: int, *,
                candidates: int = 30, neighbours_of: int = 1, skip: Callable[[Row], bool] | None = None,
                prefer: Callable[[Hit], bool] | None = None,
                words: bool | str = False) -> tuple[list[Row], str]:
    """One retrieval step: search ``candidates`` rows of ``kinds.SEARCHED_KINDS`` for ``question``, drop
    repeats (``kinds.normalized``; a neighbour's too) and rows where ``skip`` is true (e.g. in the window;
    hits and neighbours), put hits where ``prefer`` is true first (e.g. the lines of the person a question
    names); bring the ``neighbours_of`` top hits' nearest rows of their speaker before and after (never of
    ``kinds.NEVER_NEIGHBOURS``), fill ``budget_tokens`` (int >= 0, for the whole text) best first; a long
    message is searched and sent by its chunks; ``words``: by words too where the store can (``True``, or the
    text searched by words: ``MemoryStore.search``). Returns ``(rows, text)``: the rows in the order taken
    and ``retrieval.format_hits`` of them (``""`` if none); ``count_text_tokens(text) <= budget_tokens``.
    Raises what ``store.search`` raises (``store``: a ``MemoryStore``, or anything with its methods)."""
    found = store.search(user_id, question, candidates, kinds=SEARCHED_KINDS, chunks=True, words=words)
    hits, seen = [], set()  # the same words said twice: once
    for hit in found:
        if normalized(hit.content) in seen or (skip is not None and skip(hit)):
            continue
        seen.add(normalized(hit.content))
        hits.append(hit)
    if prefer is not None:
        hits.sort(key=lambda hit: not prefer(hit))  # stable: the preferred first, each group in rank order
    near: dict[Hashable, list[Row]] = {}
    chunk_bytes = getattr(store, "max_chunk_bytes", CHUNK_MAX_BYTES)  # a long neighbour: its nearest chunk
    if neighbours_of > 0 and hits:
        around = store.neighbours(user_id, hits[:neighbours_of], before=2, after=2)
        for hit in hits[:neighbours_of]:  # a neighbour already in the window: not again
            rows = [r for r in around.get(hit.turn_id, [])
                    if r.kind not in NEVER_NEIGHBOURS and (skip is None or not skip(r))]
            near[_key(hit)] = nearest_same_speaker(hit, rows, chunk_bytes=chunk_bytes)
    if budget_tokens < _FRAME_TOKENS:  # the block's tags and note, their line breaks
        return [], ""
    chosen = select_hits(hits, budget_tokens - _FRAME_TOKENS, _line_cost, neighbours=near,
                         group_cost=_header_cost)
    return chosen, format_hits(chosen)


def select_hits(ranked: Sequence[Row], budget_tokens: int, cost: Callable[[Row], int], *,
                neighbours: Mapping[Hashable, Sequence[Row]] | None = None,
                group_cost: Callable[[Row], tuple[Hashable, int]] | None = None) -> list[Row]:
    """Best-first budget fill: each hit in rank order (``ranked``, ``turn_id`` identifies a row) is taken if
    it fits (else the next is tried: never stop at the first that overflows), then its ``neighbours`` (turn id
    -> rows, nearest first) that fit. Returns the rows in the order taken. ``budget_tokens``: for everything
    taken (int >= 0, else ValueError); ``cost``: a row's tokens as sent; ``group_cost``: ``row -> (group,
    tokens)``, paid by a group's first row (its session header line)."""
    if budget_tokens < 0:
        raise ValueError(f"budget_tokens must be >= 0, got {budget_tokens}")
    taken: dict[Hashable, Row] = {}
    groups, used, texts = set(), 0, set()

    def take(row: Row) -> bool:
        nonlocal used
        if normalized(row.content) in texts:  # the same words said twice (a neighbour too) go once
            return False
        need, group = cost(row), None
        if group_cost is not None:
            group, extra = group_cost(row)
            need += extra if group not in groups else 0
        if used + need > budget_tokens:
            return False
        taken[_key(row)], used = row, used + need
        groups.add(group)
        texts.add(normalized(row.content))
        return True

    for hit in ranked:
        if _key(hit) in taken or not take(hit):
            continue
        for near in (neighbours or {}).get(_key(hit), ()):
            if _key(near) not in taken:
                take(near)
    return list(taken.values())


_FRAME_TOKENS = count_text_tokens(memory_block("retrieved", HEADER, "")) + 1  # tags, note, line breaks


def _line_cost(row: Row) -> int:
    return default_counter().text_tokens(memory_line(row)) + 1  # the line and its line break (cached)


def _header_cost(row: Row) -> tuple[Hashable, int]:
    return (row.session_id, row.date), default_counter().text_tokens(session_header(row)) + 1


def nearest_same_speaker(hit: Row, around: Sequence[Row], chunk_bytes: int) -> list[Row]:
    """Of ``around`` (e.g. ``MemoryStore.neighbours(..., before=2, after=2)[hit.turn_id]``), the nearest
    row of the hit's own speaker before it and the nearest after it (each if any): in a two-person
    conversation the row right after a user's statement is the other speaker's reply; the user's next
    words ("A she! We named her Luna.") are two rounds on. ``chunk_bytes``: a neighbour longer than this
    (UTF-8 bytes, ``store.max_chunk_bytes``) comes as its chunk nearest the hit (the last chunk of one
    before, the first of one after): context for a hit, not a second document."""
    same = [row for row in around if row.speaker == hit.speaker]
    before = sorted((r for r in same if r.round < hit.round), key=lambda r: -r.round)[:1]
    after = sorted((r for r in same if r.round > hit.round), key=lambda r: r.round)[:1]
    before = [_nearest_chunk(r, chunk_bytes, -1) for r in before]
    after = [_nearest_chunk(r, chunk_bytes, 0) for r in after]
    return before + after


def _nearest_chunk(row: Row, chunk_bytes: int, which: int) -> Row:  # a long row's first (0) or last (-1)
    chunks = split_utf8(row.content, chunk_bytes)
    if len(chunks) < 2:
        return row
    number = which % len(chunks)
    ids = (row.ids[number],) if len(row.ids) == len(chunks) else row.ids
    return dataclasses.replace(row, content=chunks[number], chunk_of=(number + 1, len(chunks)), ids=ids)


def _key(row: Row) -> Hashable:  # a row's turn id, a chunk's (turn id, chunk_of)
    turn, chunk_of = getattr(row, "turn_id", None), getattr(row, "chunk_of", None)
    return (turn if chunk_of is None else (turn, chunk_of)) if turn else id(row)
