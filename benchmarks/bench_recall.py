"""Benchmark: which retrieval change buys how much evidence recall, at what token cost (issue 10).

Run from the project root (Milvus Lite in a temporary folder, offline, ~5-10 minutes on 2 busy
cores; embeddings are cached under ``--cache``)::

    .venv/bin/python benchmarks/bench_recall.py                 # all three conversations
    .venv/bin/python benchmarks/bench_recall.py --only hard --budget 300

Measured at the *retrieval* level, no chat model: every turn of a conversation is stored in Milvus
Lite in order, and at each probe question the retrieval configuration selects memories; a probe
counts as recalled when its evidence turn ids are among the selected memories ("any": at least one
evidence turn; "all": every evidence turn, which multi-hop probes need). Tokens are those of the
formatted memories (``helpers.tokens.count_text_tokens``, tiktoken cl100k_base), i.e. what the
memories add to the prompt.

What is stored:

* hard (``hard_conversation.json``): both speakers' 540 dialog turns as they are, then the 120
  probes in order; each probe is stored after it is searched (as a replay would store it), so later
  probes see earlier ones, as in today's ``RetrievalMemory``. The probes' answers are not stored (no
  model runs here).
* easy (``long_conversation.json``, ``long_conversation_ko.json``): the user's 300 turns, probes
  included (they are asked inside the running conversation), and **no** assistant turns: the files
  have none, and stand-in replies would depend on the strategy under test. So "neighbours" there
  are the user's previous and next turns.

Rows (each adds one change to the row above):

0. baseline: today's ``RetrievalMemory``: one row per exchange ``"User: ...\\nAI: ..."``
   (``add_turn``), dense top-3, every turn stored (earlier questions and probes included),
   formatted as ``format_retrieved`` does.
1. + one row per message, as said, with its speaker (``add_memory``), dense top-3.
2. + kind filter: search only the user's ``statement`` rows (a Milvus filter; questions, requests
   and the assistant's replies are never hits).
3. + token budget: fill ``--budget`` tokens best-first instead of a fixed k (``select_memories``).
4. + neighbours: each hit brings the turns next to it, within the budget.
5. + hybrid: Milvus BM25 full-text search fused with dense (RRF, k=60, BM25 weight 0.5).
6. + dates: each session's memories under a header with its date (``format_memories``).
7. row 6 without hybrid: the configuration recommended by these measurements.

Then: fusion (RRF vs weighted), kinds (statements vs statements + replies), neighbour window,
budget sweep, a control (random user statements, no search: how much a budget buys by sheer
coverage of a small pool), the Korean analyzer (bigrams vs the standard analyzer), unanswerable
probes (best scores of what would be retrieved, and whether a threshold separates them), and the
search time per probe.

Measured (2026-11-30, re-run after the strategy refactor and issue 10's kinds: statements that
ask back, small talk; 2 loaded cores, multilingual-e5-small 4-bit, Milvus Lite 3.2.2, budget 300;
data we generated ourselves, a first look), recall any / all of the evidence turns, tokens/probe:

=====================================  ====================  ===================  ===============
row                                    hard                  easy                 easy (Korean)
=====================================  ====================  ===================  ===============
0 baseline (top-3, all stored)         0.29 / 0.21, 70       0.80, 49             0.93, 80
2 + kind filter, top-3                 0.69 / 0.44, 91       1.00, 48             0.97, 81
3 + token budget 300                   0.95 / 0.75, 276      1.00, 257            1.00, 275
6 + neighbours, hybrid, dates          0.88 / 0.70, 278      1.00, 258            0.95, 275
7 = 6 without hybrid (recommended)     0.91 / 0.74, 279      1.00, 258            1.00, 275
random statements, no search (300)     0.08 / 0.04           0.55                 0.28
=====================================  ====================  ===================  ===============

The hard conversation's user statements are only 1,611 tokens (115 turns): a budget of 300 is 19%
of what the kind filter searches, so re-measure on longer conversations before trusting a budget.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from helpers import recall  # noqa: E402
from helpers.milvus_store import MemoryStore, format_turn  # noqa: E402
from helpers.tokens import count_text_tokens  # noqa: E402

CONVERSATIONS = {
    "hard": ROOT / "data" / "evaluation" / "hard_conversation.json",
    "easy": ROOT / "data" / "evaluation" / "long_conversation.json",
    "easy-ko": ROOT / "data" / "evaluation" / "long_conversation_ko.json",
}
CANDIDATES = 40  # hits kept per probe for the selection step
WINDOW = 2  # neighbours fetched each side (rounds); filtered per configuration


@dataclass
class Item:
    """One retrieved memory, mapped back to the conversation's turn ids."""

    turn_id: str  # the first dataset turn id it holds (keys the selection)
    covers: tuple[str, ...]  # dataset turn ids it holds (2 for a baseline "User/AI" row)
    content: str
    session_id: str
    round: int
    date: str = ""
    speaker: str = ""
    kind: str = ""
    score: float = 0.0
    dense_score: float | None = None
    lexical_score: float | None = None


@dataclass
class ProbeRun:
    probe: dict
    hits: list[Item]
    neighbours: dict[str, list[Item]] = field(default_factory=dict)
    search_ms: float = 0.0  # MemoryStore.search (+ neighbours), embedding excluded


# --- data -----------------------------------------------------------------------------------------


def load(name: str) -> dict:
    data = json.loads(CONVERSATIONS[name].read_text(encoding="utf-8"))
    by_turn = {p["turn_id"]: p for p in data["probes"]}
    dates = {s["id"]: s["date"] for s in data.get("sessions", [])}
    position: dict[str, int] = {}
    for turn in data["turns"]:
        turn.setdefault("speaker", "user")
        turn.setdefault("date", dates.get(turn["session_id"], ""))
        position[turn["session_id"]] = position.get(turn["session_id"], 0) + 1
        turn["round"] = position[turn["session_id"]]
        turn["probe"] = by_turn.get(turn["id"])
    for probe in data["probes"]:
        probe.setdefault("category", "updated-fact" if probe.get("changed") else "single-hop")
    return data


def embed_all(name: str, data: dict, cache: Path) -> dict[str, np.ndarray]:
    """Passage vectors of every turn and of every baseline exchange row; query vectors of the
    probes. Cached by the file's hash (embedding is the slow part on a busy machine)."""
    digest = hashlib.sha256(CONVERSATIONS[name].read_bytes()).hexdigest()[:16]
    path = cache / f"{name}-{digest}.npz"
    if path.exists():
        return dict(np.load(path))
    from helpers.embeddings import E5Embeddings

    model = E5Embeddings()
    turns = data["turns"]
    pairs = [format_turn(t["text"], n["text"] if n else None) for t, n in _exchanges(turns)]
    began = time.perf_counter()
    out = {
        "turns": np.array(model.embed_documents([t["text"] for t in turns]), dtype=np.float32),
        "pairs": np.array(model.embed_documents(pairs) if pairs else np.zeros((0, 384)), dtype=np.float32),
        "queries": np.array([model.embed_query(p["question"]) for p in data["probes"]], dtype=np.float32),
    }
    print(f"  embedded {name}: {len(turns)} turns, {len(pairs)} exchanges, {len(data['probes'])} "
          f"queries in {time.perf_counter() - began:.0f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, **out)
    return out


def _exchanges(turns):
    """(user turn, the assistant turn right after it or None), for the baseline's rows."""
    i = 0
    while i < len(turns):
        turn = turns[i]
        following = turns[i + 1] if i + 1 < len(turns) else None
        if turn["speaker"] == "user" and following is not None and following["speaker"] == "assistant":
            yield turn, following
            i += 2
        else:
            yield turn, None
            i += 1


# --- replay ---------------------------------------------------------------------------------------


def replay(name: str, data: dict, vectors: dict, folder: Path, *, layout: str,
           kinds: tuple[str, ...] | None, hybrid: str | None, lexical_weight: float = 1.0,
           flush_every: int = 100) -> list[ProbeRun]:
    """Store the conversation turn by turn; at each probe, search and record the candidates."""
    user = re.sub(r"[^A-Za-z0-9_.-]", "-", data["user_id"])
    collection = re.sub(r"\W", "_", f"{name}_{layout}_{'-'.join(kinds or ['all'])}_{hybrid}"
                                     f"_{lexical_weight}")
    store = MemoryStore(str(folder / "bench.db"), collection=collection, dim=384,
                        embeddings=_NoEmbeddings(), memory_fields=True, full_text=True,
                        drop_existing=True, flush_every=None)
    by_id: dict[str, Item] = {}  # Milvus turn uuid -> item
    turn_index = {t["id"]: i for i, t in enumerate(data["turns"])}
    probe_index = {p["turn_id"]: i for i, p in enumerate(data["probes"])}
    runs: list[ProbeRun] = []
    pending_flush = 0

    def store_row(turn: dict, reply: dict | None, pair_vector=None) -> None:
        nonlocal pending_flush
        if layout == "paired":
            ids = store.add_turn(user, turn["session_id"], turn["round"], turn["text"],
                                 reply["text"] if reply else None, vectors=[pair_vector],
                                 timestamp=(turn["date"] or "2025-01-01") + "T00:00:00+00:00")
            content = format_turn(turn["text"], reply["text"] if reply else None)
            covers = (turn["id"], reply["id"]) if reply else (turn["id"],)
            speaker, kind = "", ""
        else:
            kind = recall.classify_turn(turn["text"], turn["speaker"])
            ids = store.add_memory(user, turn["session_id"], turn["round"], turn["text"],
                                   kind=kind, speaker=turn["speaker"], date=turn["date"],
                                   vector=vectors["turns"][turn_index[turn["id"]]])
            content, covers, speaker = turn["text"], (turn["id"],), turn["speaker"]
        by_id[ids[0].rsplit("-", 1)[0]] = Item(covers[0], covers, content, turn["session_id"],
                                               turn["round"], turn["date"], speaker, kind)
        pending_flush += 1

    def item(memory) -> Item:
        base = by_id[memory.turn_id]
        return Item(**{**base.__dict__, "score": memory.score, "dense_score": memory.dense_score,
                       "lexical_score": memory.lexical_score})

    pair_vectors = iter(vectors["pairs"])
    units = _exchanges(data["turns"]) if layout == "paired" else ((t, None) for t in data["turns"])
    for turn, reply in units:
        probe = turn["probe"]
        if probe is not None:
            if pending_flush >= flush_every or (pending_flush and not runs):
                store.flush()
                pending_flush = 0
            started = time.perf_counter()
            hits = store.search(user, probe["question"], CANDIDATES, kinds=kinds,
                                hybrid=hybrid is not None, fusion=hybrid or "rrf",
                                lexical_weight=lexical_weight,
                                query_vector=vectors["queries"][probe_index[turn["id"]]])
            items = [item(m) for m in hits]
            near = {}
            if layout == "messages":
                found = store.neighbours(user, hits, before=WINDOW, after=WINDOW)
                near = {by_id[k].turn_id: [by_id[m.turn_id] for m in v] for k, v in found.items()}
            runs.append(ProbeRun(probe, items, near, (time.perf_counter() - started) * 1000))
        pair_vector = next(pair_vectors) if layout == "paired" else None
        store_row(turn, reply, pair_vector)
    store.drop()
    return runs


class _NoEmbeddings:
    """Every vector is precomputed; embedding at search time would be a bug here."""

    def embed_query(self, text):  # pragma: no cover
        raise AssertionError("unexpected embed_query")

    def embed_documents(self, texts):  # pragma: no cover
        raise AssertionError("unexpected embed_documents")


def random_runs(data: dict, seed: int = 0) -> list[ProbeRun]:
    """A control: for each probe, the user's earlier statements in a random order (no search).
    Its recall at a budget says how much of the recall a budget buys by sheer coverage of a small
    pool of statements."""
    import random

    rng = random.Random(seed)
    runs, pool = [], []
    for turn in data["turns"]:
        if turn["probe"] is not None:
            hits = pool[:]
            rng.shuffle(hits)
            runs.append(ProbeRun(turn["probe"], hits))
        if turn["speaker"] == "user" and recall.classify_turn(turn["text"], "user") == "statement":
            pool.append(Item(turn["id"], (turn["id"],), turn["text"], turn["session_id"],
                             turn["round"], turn["date"], "user", "statement"))
    return runs


def latency(name: str, data: dict, vectors: dict, folder: Path, repeats: int = 3) -> str:
    """Per-probe time of what a strategy would run (embedding excluded), all turns stored and
    flushed: today's dense top-3, and the recommended search (top-30 user statements + the
    neighbours of the top hit). Median over ``repeats`` passes over the probes."""
    user = re.sub(r"[^A-Za-z0-9_.-]", "-", data["user_id"])
    collection = "lat_" + re.sub(r"\W", "_", name)
    store = MemoryStore(str(folder / "bench.db"), collection=collection,
                        dim=384, embeddings=_NoEmbeddings(), memory_fields=True, full_text=True,
                        drop_existing=True, flush_every=None)
    for i, turn in enumerate(data["turns"]):
        if turn["probe"] is None:
            store.add_memory(user, turn["session_id"], turn["round"], turn["text"],
                             kind=recall.classify_turn(turn["text"], turn["speaker"]),
                             speaker=turn["speaker"], date=turn["date"], vector=vectors["turns"][i])
    store.flush()
    times: dict[str, list[float]] = {"dense top-3": [], "statements top-30 + neighbours of top hit": [],
                                     "same, hybrid RRF": []}
    for _ in range(repeats):
        for j, probe in enumerate(data["probes"]):
            query = vectors["queries"][j]
            began = time.perf_counter()
            store.search(user, probe["question"], 3, query_vector=query)
            times["dense top-3"].append(time.perf_counter() - began)
            for label, hybrid in (("statements top-30 + neighbours of top hit", False),
                                  ("same, hybrid RRF", True)):
                began = time.perf_counter()
                hits = store.search(user, probe["question"], 30, query_vector=query,
                                    kinds=("statement",), hybrid=hybrid, lexical_weight=0.5)
                store.neighbours(user, hits[:1], before=2, after=2)
                times[label].append(time.perf_counter() - began)
    store.drop()
    return (f"\n{name}: per-probe search time, p50 / p95 ms (Milvus Lite, all turns flushed, "
            "embedding excluded): " + "; ".join(
                f"{label} {statistics.median(v) * 1000:.1f} / {sorted(v)[int(0.95 * len(v))] * 1000:.1f}"
                for label, v in times.items()))


# --- selection and scoring ------------------------------------------------------------------------

_TOKEN_CACHE: dict[str, int] = {}


def tokens(text: str) -> int:
    if text not in _TOKEN_CACHE:
        _TOKEN_CACHE[text] = count_text_tokens(text)
    return _TOKEN_CACHE[text]


def baseline_text(items: list[Item]) -> str:
    """What today's ``format_retrieved`` sends, without the question."""
    if not items:
        return ""
    ordered = sorted(items, key=lambda m: (m.date, m.session_id, m.round))
    return "Relevant history:\n" + "\n".join(
        f"- [round {m.round}] {m.content.replace(chr(10), chr(10) + '  ')}" for m in ordered)


def neighbour_filter(run: ProbeRun, mode: str) -> dict[str, list[Item]]:
    """``mode``: ``none``; ``1`` (turn before/after, any speaker); ``2`` (two each side);
    ``user1`` (the same speaker's previous/next turn, i.e. skipping the other speaker's line)."""
    if mode == "none":
        return {}
    out = {}
    for key, near in run.neighbours.items():
        hit = next(h for h in run.hits if h.turn_id == key)
        if mode == "user1":
            out[key] = recall.nearest_same_speaker(hit, near, 1)
        else:
            out[key] = [n for n in near if abs(n.round - hit.round) <= int(mode)]
    return out


def select(run: ProbeRun, *, k: int | None, budget: int | None, neighbours: str, dates: bool,
           formatted: str, neighbour_hits: int | None = None) -> tuple[list[Item], int]:
    if budget is None:
        chosen = run.hits[:k]
    else:
        cost = (lambda m: tokens(memory_line_baseline(m)) + 1) if formatted == "baseline" else \
            (lambda m: tokens(recall.memory_line(m)) + 1)
        head = tokens("Relevant memories (oldest first):") + 1
        chosen = recall.select_memories(run.hits, budget - head, cost,
                                        neighbours=neighbour_filter(run, neighbours),
                                        group_cost=recall.header_cost(dates, tokens),
                                        neighbour_hits=neighbour_hits)
    text = baseline_text(chosen) if formatted == "baseline" else \
        recall.format_memories(chosen, show_dates=dates)
    return chosen, tokens(text)


def memory_line_baseline(m: Item) -> str:
    return f"- [round {m.round}] {m.content}"


def score(runs: list[ProbeRun], **config) -> dict:
    """Recall (any / all evidence turns selected) over answerable probes, per category; tokens."""
    per_cat: dict[str, list[bool]] = {}
    any_hits, all_hits, cost, unans_cost = [], [], [], []
    for run in runs:
        chosen, n = select(run, **config)
        covered = {c for m in chosen for c in m.covers}
        evidence = run.probe["evidence"]
        cost.append(n)
        if not evidence:
            unans_cost.append(n)
            continue
        got_any = any(e in covered for e in evidence)
        got_all = all(e in covered for e in evidence)
        any_hits.append(got_any)
        all_hits.append(got_all)
        per_cat.setdefault(run.probe["category"], []).append(got_all)
    return {
        "any": _mean(any_hits), "all": _mean(all_hits),
        "cats": {c: _mean(v) for c, v in per_cat.items()},
        "tokens": _mean(cost), "tokens_max": max(cost) if cost else 0,
        "unans_tokens": _mean(unans_cost) if unans_cost else None,
    }


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


# --- tables ---------------------------------------------------------------------------------------

CATEGORY_ORDER = ["single-hop", "multi-hop", "temporal", "updated-fact"]


def table(title: str, rows: list[tuple[str, dict]]) -> str:
    cats = [c for c in CATEGORY_ORDER if any(c in r["cats"] for _, r in rows)]
    head = ["configuration", "recall any", "recall all", *cats, "tokens/probe", "max"]
    lines = [f"\n**{title}**\n", "| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for label, r in rows:
        lines.append("| " + " | ".join([label, f"{r['any']:.2f}", f"{r['all']:.2f}",
                                        *(f"{r['cats'].get(c, float('nan')):.2f}" for c in cats),
                                        f"{r['tokens']:.0f}", str(r["tokens_max"])]) + " |")
    return "\n".join(lines)


def unanswerable_report(name: str, runs: list[ProbeRun], data: dict, final: dict,
                        budget: int, lexical_runs: list[ProbeRun] | None = None) -> str:
    """Best dense score of what would be retrieved, answerable vs unanswerable probes."""
    answerable, unanswerable = [], []
    for run in runs:
        best = max((h.dense_score if h.dense_score is not None else h.score for h in run.hits
                    if (h.dense_score if h.dense_score is not None else h.score) is not None), default=0.0)
        (answerable if run.probe["evidence"] else unanswerable).append(best)
    if not unanswerable:
        return f"\n{name}: no unanswerable probes."
    best_acc, best_t = _best_threshold(answerable, unanswerable)
    tempting = []
    for run in runs:
        if not run.probe["evidence"]:
            words = [w.lower() for w in run.probe.get("tempting", [])]
            chosen, _ = select(run, budget=budget, **final)
            text = " ".join(m.content.lower() for m in chosen)
            tempting.append(any(w in text for w in words))

    def q(v):
        v = sorted(v)
        return f"{v[0]:.3f} / {statistics.median(v):.3f} / {v[-1]:.3f}"

    lexical_line = ""
    if lexical_runs is not None:
        la = [max((h.lexical_score or 0.0 for h in r.hits), default=0.0) for r in lexical_runs
              if r.probe["evidence"]]
        lu = [max((h.lexical_score or 0.0 for h in r.hits), default=0.0) for r in lexical_runs
              if not r.probe["evidence"]]
        acc, t = _best_threshold(la, lu)
        lexical_line = (f" Best BM25 score: answerable {q(la)}, unanswerable {q(lu)}; best "
                        f"threshold ({t:.2f}) right on {acc:.0%} (balanced).")
    return (f"\n{name}, unanswerable probes ({len(unanswerable)}): best cosine of the top statement "
            f"(min / median / max) answerable {q(answerable)}, unanswerable {q(unanswerable)}; the "
            f"best single threshold ({best_t:.3f}) is right on {best_acc:.0%} (balanced) - "
            f"{'no threshold separates them' if best_acc < 0.9 else 'a usable threshold'}. "
            f"With the final configuration (dense run), {sum(tempting)} of {len(tempting)} "
            "unanswerable probes got a memory containing one of its tempting words "
            "(e.g. the friend's cat's name)." + lexical_line)


def _best_threshold(answerable: list[float], unanswerable: list[float]) -> tuple[float, float]:
    """(balanced accuracy, threshold) of the best rule "answer when score >= threshold"."""
    best_acc, best_t = 0.0, 0.0
    for t in sorted(set(answerable + unanswerable)):
        acc = (_mean(a >= t for a in answerable) + _mean(u < t for u in unanswerable)) / 2
        if acc > best_acc:
            best_acc, best_t = acc, t
    return best_acc, best_t


# --- main -----------------------------------------------------------------------------------------


def run_conversation(name: str, budget: int, cache: Path, folder: Path) -> str:
    data = load(name)
    vectors = embed_all(name, data, cache)
    out = [f"\n## {name}: {CONVERSATIONS[name].name} ({len(data['turns'])} turns, "
           f"{len(data['probes'])} probes)"]
    began = time.perf_counter()
    stmt = ("statement",)
    runs = {
        "paired": replay(name, data, vectors, folder, layout="paired", kinds=None, hybrid=None),
        "all": replay(name, data, vectors, folder, layout="messages", kinds=None, hybrid=None),
        "stmt": replay(name, data, vectors, folder, layout="messages", kinds=stmt, hybrid=None),
        "stmt+reply": replay(name, data, vectors, folder, layout="messages",
                             kinds=("statement", "reply"), hybrid=None),
        "rrf": replay(name, data, vectors, folder, layout="messages", kinds=stmt, hybrid="rrf"),
        "rrf-0.5": replay(name, data, vectors, folder, layout="messages", kinds=stmt, hybrid="rrf",
                          lexical_weight=0.5),
        "rrf-0.25": replay(name, data, vectors, folder, layout="messages", kinds=stmt, hybrid="rrf",
                           lexical_weight=0.25),
        "weighted": replay(name, data, vectors, folder, layout="messages", kinds=stmt,
                           hybrid="weighted"),
    }
    if name == "easy-ko":
        saved = recall.lexical_text
        recall.lexical_text = lambda text: " ".join(re.findall(r"\w+", text))
        try:
            runs["rrf-standard"] = replay(name, data, vectors, folder, layout="messages", kinds=stmt,
                                          hybrid="rrf")
        finally:
            recall.lexical_text = saved
    out.append(f"({len(runs)} replays in {time.perf_counter() - began:.0f} s on Milvus Lite)")
    out.append("\nsearch p50 ms per probe (top-40, embedding excluded; neighbours query included "
               "for message rows): " + ", ".join(
                   f"{key} {statistics.median(r.search_ms for r in value):.1f}"
                   for key, value in runs.items()))
    near = "user1" if name == "hard" else "1"
    b = budget
    new = dict(formatted="new")
    rows = [
        ("0 baseline: exchange rows, dense top-3, all stored",
         score(runs["paired"], k=3, budget=None, neighbours="none", dates=False, formatted="baseline")),
        ("1 + message rows with speaker, top-3",
         score(runs["all"], k=3, budget=None, neighbours="none", dates=False, **new)),
        ("2 + kind filter (user statements), top-3",
         score(runs["stmt"], k=3, budget=None, neighbours="none", dates=False, **new)),
        (f"3 + token budget {b}",
         score(runs["stmt"], k=None, budget=b, neighbours="none", dates=False, **new)),
        (f"4 + neighbours ({near}) of the top hit",
         score(runs["stmt"], k=None, budget=b, neighbours=near, neighbour_hits=1, dates=False, **new)),
        ("5 + hybrid BM25 (RRF k=60, BM25 weight 0.5)",
         score(runs["rrf-0.5"], k=None, budget=b, neighbours=near, neighbour_hits=1, dates=False, **new)),
        ("6 + session dates in the text",
         score(runs["rrf-0.5"], k=None, budget=b, neighbours=near, neighbour_hits=1, dates=True, **new)),
        ("7 = 6 without hybrid (recommended: dense)",
         score(runs["stmt"], k=None, budget=b, neighbours=near, neighbour_hits=1, dates=True, **new)),
    ]
    out.append(table(f"{name}: ablation (budget {b} tokens)", rows))
    final = dict(k=None, neighbours=near, neighbour_hits=1, dates=True, formatted="new")
    variants = [
        ("final (row 6)", score(runs["rrf-0.5"], budget=b, **final)),
        ("fusion RRF, BM25 weight 1.0", score(runs["rrf"], budget=b, **final)),
        ("fusion RRF, BM25 weight 0.25", score(runs["rrf-0.25"], budget=b, **final)),
        ("fusion weighted 0.5/0.5 (min-max)", score(runs["weighted"], budget=b, **final)),
        ("no hybrid (dense only)", score(runs["stmt"], budget=b, **final)),
        ("kinds statement + reply", score(runs["stmt+reply"], budget=b, **final)),
        ("all kinds (no filter)", score(runs["all"], budget=b, **final)),
        ("neighbours: none", score(runs["rrf-0.5"], budget=b, **{**final, "neighbours": "none"})),
        ("neighbours of every hit", score(runs["rrf-0.5"], budget=b, **{**final, "neighbour_hits": None})),
        ("neighbours of the top 3 hits", score(runs["rrf-0.5"], budget=b, **{**final, "neighbour_hits": 3})),
        ("neighbours +-1 any speaker, top hit",
         score(runs["rrf-0.5"], budget=b, **{**final, "neighbours": "1"})),
        ("neighbours +-2 any speaker, top hit",
         score(runs["rrf-0.5"], budget=b, **{**final, "neighbours": "2"})),
    ]
    variants.append(("control: random user statements (no search)",
                     score(random_runs(data), budget=b, **{**final, "neighbours": "none"})))
    if "rrf-standard" in runs:
        variants.append(("Korean: standard analyzer, no bigrams (BM25 weight 1.0)",
                         score(runs["rrf-standard"], budget=b, **final)))
        variants.append(("Korean: bigrams (BM25 weight 1.0)", score(runs["rrf"], budget=b, **final)))
    out.append(table(f"{name}: variants of the final configuration (budget {b})", variants))
    sweep = []
    for x in (100, 200, 300, 500, 800):
        sweep.append((f"final, budget {x}", score(runs["rrf-0.5"], budget=x, **final)))
        sweep.append((f"dense, no neighbours, budget {x}",
                      score(runs["stmt"], budget=x, **{**final, "neighbours": "none"})))
    out.append(table(f"{name}: budget sweep", sweep))
    out.append(unanswerable_report(name, runs["stmt"], data, final, b, runs["rrf"]))
    out.append(latency(name, data, vectors, folder))
    full = sum(tokens(t["text"]) for t in data["turns"] if t["probe"] is None)
    pool = [t for t in data["turns"] if t["probe"] is None and t["speaker"] == "user"
            and recall.classify_turn(t["text"], "user") == "statement"]
    evidence = {e for p in data["probes"] for e in p["evidence"]}
    lost = [t["id"] for t in data["turns"] if t["id"] in evidence
            and recall.classify_turn(t["text"], t["speaker"]) != "statement"]
    out.append(f"\n{name}: all dialog text {full} tokens; the user's statements (what row 2 on "
               f"searches) {len(pool)} turns, {sum(tokens(t['text']) for t in pool)} tokens. "
               f"Evidence turns the kind filter hides: {len(lost)} {lost[:5]}.")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=sorted(CONVERSATIONS), action="append")
    parser.add_argument("--budget", type=int, default=300, help="tokens for memories (300)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "bench_recall_cache")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_recall_") as folder:
        for name in args.only or ["hard", "easy", "easy-ko"]:
            print(run_conversation(name, args.budget, args.cache, Path(folder)), flush=True)


if __name__ == "__main__":
    main()
