"""Benchmark: where the time of a long replay through layered memory goes, stage by stage.

Run from the project root (Milvus Lite in a temporary folder, the offline models)::

    .venv/bin/python benchmarks/bench_replay_stages.py --conversation .runtime/beam_500K_2.json
    .venv/bin/python benchmarks/bench_replay_stages.py --conversation data/evaluation/hard_conversation.json
    .venv/bin/python benchmarks/bench_replay_stages.py --conversation ... --turns 40 --profile

The conversation is a file in the course's long-conversation format (``data/README.md``), e.g. one
converted from a public set by ``lab.public_sets`` into an ignored folder (never commit
it). It is replayed as ``scripts/measure.py`` replays it: ``helpers.evaluate.evaluate_strategy``
with the layered memory of ``helpers.evaluate.default_strategies`` (only that one), the offline
stand-in model, the course's embedder, a store made by ``open_store`` (Lite flushes as it would).

Each stage is timed where it is entered (a wrapper around the function that does it); a stage
inside another (the stand-in's embedding inside a summary call, token counting inside both) counts
in the innermost one only, so the rows add up to the whole. **CPU s** is the process's CPU time
(user + sys, all threads: Milvus Lite serves calls on threads of this process) while the stage ran;
**wall s** its elapsed time. The machine is shared: compare CPU seconds across runs, and wall
seconds only at a similar load (printed). ``--profile`` adds cProfile's top functions.

``--reply-chunks K`` embeds the first ``K`` chunks of a long assistant reply (``LayeredMemory``'s
``embed_reply_chunks``; default: the course's, its first chunk), ``--reply-chunks all`` every chunk (the
behaviour before that default); the later chunks are stored either way. Measured:
docs/design-notes.md, "Where a replay's time goes".
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REST = "the rest (memory rules, evaluate_strategy, LangChain)"


class Stages:
    """Exclusive CPU and wall seconds per stage: a stage entered inside another pauses the outer one."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.wall: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.items: dict[str, int] = defaultdict(int)
        self._stack: list[list] = []  # [name, cpu at (re)start, wall at (re)start]

    def _pause(self) -> None:
        if self._stack:
            name, cpu, wall = self._stack[-1]
            self.cpu[name] += time.process_time() - cpu
            self.wall[name] += time.perf_counter() - wall

    def _resume(self) -> None:
        if self._stack:
            self._stack[-1][1:] = [time.process_time(), time.perf_counter()]

    def wrap(self, owner, attribute: str, name, items=None) -> None:
        """Time ``owner.attribute`` as stage ``name`` (a str, or a function of the call's arguments);
        ``items(args, kwargs)`` counts what one call handles (e.g. texts embedded)."""
        inner = getattr(owner, attribute)

        @functools.wraps(inner)
        def timed(*args, **kwargs):
            stage = name if isinstance(name, str) else name(args, kwargs)
            self.calls[stage] += 1
            self.items[stage] += items(args, kwargs) if items else 0
            self._pause()
            self._stack.append([stage, time.process_time(), time.perf_counter()])
            try:
                return inner(*args, **kwargs)
            finally:
                self._pause()
                self._stack.pop()
                self._resume()

        setattr(owner, attribute, timed)


def instrument(stages: Stages) -> None:
    """Wrap the functions each stage runs in."""
    import tiktoken

    from helpers.course import offline_model
    from helpers.course.embeddings import E5Embeddings
    from helpers.store import MemoryStore

    stages.wrap(E5Embeddings, "embed_documents", "embed stored parts (store)", lambda a, k: len(a[1]))
    stages.wrap(E5Embeddings, "embed_query", "embed queries (store)", lambda a, k: 1)
    stages.wrap(offline_model, "_passages", "stand-in: embed sentences", lambda a, k: len(a[0]))
    stages.wrap(offline_model, "_query", "stand-in: embed sentences", lambda a, k: 0)
    stages.wrap(offline_model.OfflineChatModel, "_generate", "stand-in: summary call (rest)")
    stages.wrap(tiktoken.Encoding, "encode", "token counting (tiktoken)")
    stages.wrap(MemoryStore, "_call", lambda a, k: f"Milvus Lite: {a[1]}")


def layered(store, conversation: dict):
    """The layered memory of ``default_strategies`` (the one lesson 08 measures)."""
    from helpers.evaluate import default_strategies
    from helpers.layered import LayeredMemory

    return next(s for s in default_strategies(store, conversation["user_id"], conversation.get("speakers"))
                if isinstance(s, LayeredMemory))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversation", type=Path, required=True, help="a long-conversation JSON file")
    parser.add_argument("--turns", type=int, default=None, help="only its first data turns")
    parser.add_argument("--profile", action="store_true", help="also print cProfile's top 40")
    parser.add_argument("--reply-chunks", type=lambda v: None if v == "all" else int(v), default=0,
                        metavar="K|all", help="parts of a long assistant reply embedded (default: the "
                        "memory's own; all: every part)")
    args = parser.parse_args()

    from helpers.course.embeddings import vector_cache
    from helpers.course.milvus import open_store, quiet_milvus_logs
    from helpers.course.offline_model import OfflineChatModel
    from helpers.evaluate import (
        evaluate_strategy,
        load_long_conversation,
        per_category_recall,
        recall_totals,
        runs_to_json,
    )
    from helpers.memory import totals

    quiet_milvus_logs()
    conversation = load_long_conversation(args.conversation)
    stages = Stages()
    instrument(stages)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        began, cpu = time.perf_counter(), time.process_time()
        with open_store("stages", uri=f"{folder}/stages.db", drop_existing=True) as store:
            strategy = layered(store, conversation)
            if args.reply_chunks != 0:
                strategy.embed_reply_chunks = args.reply_chunks
            if args.profile:
                import cProfile
                import pstats

                with cProfile.Profile() as profile:
                    records = evaluate_strategy(strategy, conversation, OfflineChatModel(), args.turns,
                                                progress=False)
            else:
                records = evaluate_strategy(strategy, conversation, OfflineChatModel(), args.turns,
                                            progress=False)
            waiting, stored = len(store.waiting), store.count()
            unembedded = store._count("embedded == 0")  # rows stored without an embedding
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    rest_cpu, rest_wall = cpu - sum(stages.cpu.values()), wall - sum(stages.wall.values())
    rows = sorted(stages.cpu, key=lambda s: -stages.cpu[s])
    width = max(map(len, [*rows, REST]))
    keep = strategy.embed_reply_chunks
    policy = f"; embedded: {'every part' if keep is None else f'the first {keep} part(s)'} of a long reply"
    print(f"{conversation['id']}: {len(records)} steps, layered memory of default_strategies{policy}")
    print(f"{'stage':<{width}} {'calls':>7} {'texts':>7} {'CPU s':>8} {'wall s':>8}")
    for stage in rows:
        texts = stages.items[stage] or ""
        print(f"{stage:<{width}} {stages.calls[stage]:>7} {texts:>7} {stages.cpu[stage]:>8.1f} "
              f"{stages.wall[stage]:>8.1f}")
    print(f"{REST:<{width}} {'':>7} {'':>7} {rest_cpu:>8.1f} {rest_wall:>8.1f}")
    print(f"{'all (store opened to closed)':<{width}} {'':>7} {'':>7} {cpu:>8.1f} {wall:>8.1f}")
    total = totals(records)
    print(f"overhead p50 without embedding {total['overhead ms without embedding (p50)']} ms, with "
          f"{total['overhead ms (p50)']} ms; texts embedded by the store {total['extra embeddings']}; "
          f"summary calls {total['extra calls']}; parts waiting at the end {waiting}; rows stored {stored}, "
          f"{unembedded} of them without an embedding (kinds never searched, replies' later parts)")
    print(f"e5 vector cache: {vector_cache.misses} texts embedded, {vector_cache.hits} found embedded")
    print(f"prompt tokens {total['prompt tokens (total)']}, extra call tokens {total['extra call tokens']}, "
          f"{recall_totals(records)}")
    print("probes reached:", " ".join(f"{r.turn_id}={'yes' if r.evidence_reached else 'no'}" for r in records
                                      if r.probe), "| per category:",
          per_category_recall(runs_to_json({"layered": records}), conversation)["layered"])
    print(f"load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after, "
          f"on {os.cpu_count()} cores")
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
