"""Benchmark: the frontier of each memory strategy, evidence recall against tokens, as data.

Run from the project root (Milvus Lite in a temporary folder, offline models)::

    .venv/bin/python benchmarks/bench_frontier.py                    # every point, hard and friends
    .venv/bin/python benchmarks/bench_frontier.py --quick            # two points per strategy, hard
    .venv/bin/python benchmarks/bench_frontier.py --conversation data/evaluation/long_conversation.json
    .venv/bin/python benchmarks/bench_frontier.py --out build/frontier.json

Each strategy is replayed at several budgets (``SWEEP``: window sizes, summary caps, top-k, layered
memory's retrieval share and window) with the course's one loop (``helpers.evaluate.evaluate_strategy``)
and what ``make evaluate`` counts: **evidence recall** (answerable probes whose evidence reached the
prompt, by id) and **% of full history's input tokens**: the answer calls' prompt tokens plus the
summary calls' prompts, over full history's prompt tokens on the same conversation (replayed once).
Retrieval and layered memory get the conversation's ``speakers`` as names, as ``make evaluate`` does.

Writes ``data/evaluation/frontier.json`` (``--out``): ``measured`` (command, models, date) and one
point per (conversation, strategy, setting): ``recall``, ``pct_input``, ``unanswerable_answered``.
Lesson 08 plots it. A full run takes about 40 minutes on 2 cores; every point is one replay.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CONVERSATIONS = ["data/evaluation/hard_conversation.json",
                         "data/evaluation/friends_conversation.json"]
#: strategy -> the settings swept (a dict of arguments each); ``QUICK`` takes the first and the last.
SWEEP = {
    "count window": [{"max_messages": n} for n in (4, 10, 20, 40)],
    "token window": [{"max_tokens": n} for n in (200, 800, 3200)],
    "running summary": [{"max_summary_tokens": n} for n in (150, 300, 600)],
    "retrieval": [{"top_k": k} for k in (1, 3, 10)],
    "layered": [{"retrieval_share": 0.05}, {}, {"retrieval_share": 0.2}],
}


def make_strategy(kind: str, setting: dict, store, user_id: str, names: dict | None):
    """The strategy ``kind`` of ``SWEEP`` with ``setting`` (a running summary folds past twice
    its cap and keeps half of it, like the default 600 / 1200 / 300)."""
    from helpers.layered import LayeredMemory
    from helpers.retrieval import RetrievalMemory
    from helpers.summary import RunningSummary, TokenTrigger
    from helpers.window import CountWindow, TokenWindow

    if kind == "count window":
        return CountWindow(**setting)
    if kind == "token window":
        return TokenWindow(**setting)
    if kind == "running summary":
        cap = setting["max_summary_tokens"]
        return RunningSummary(TokenTrigger(2 * cap, cap // 2), max_summary_tokens=cap)
    if kind == "retrieval":
        return RetrievalMemory(store, f"{user_id}-retrieval", "session-1", names=names, **setting)
    return LayeredMemory(store, f"{user_id}-layered", "session-1", names=names, **setting)


def replay_point(conversation: dict, kind: str | None, setting: dict) -> dict:
    """One replay (``kind=None``: full history); recall, input tokens, unanswerable answered."""
    from helpers.course.milvus import open_store
    from helpers.course.offline_model import OfflineChatModel
    from helpers.evaluate import evaluate_strategy, recall_totals
    from helpers.memory import totals
    from helpers.window import FullHistory

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:  # Lite may lag
        with open_store("frontier", uri=f"{folder}/frontier.db", drop_existing=True) as store:
            strategy = FullHistory() if kind is None else make_strategy(
                kind, setting, store, conversation["user_id"], conversation.get("speakers"))
            records = evaluate_strategy(strategy, conversation, OfflineChatModel(), progress=False)
    total = totals(records)
    unanswerable = [r for r in records if r.how == "unanswerable"]
    return {"strategy": kind or "full history", "setting": setting, "name": strategy.name,
            "recall": recall_totals(records)["evidence recall"],
            "input_tokens": total["prompt tokens (total)"] + total["extra call tokens"],
            "unanswerable_answered": f"{sum(r.answer_correct is False for r in unanswerable)}/"
                                     f"{len(unanswerable)}",
            "seconds": round(time.perf_counter() - started)}


def main(argv: list[str] | None = None) -> None:
    from helpers.course.milvus import quiet_milvus_logs
    from helpers.course.setup import show_setup
    from helpers.evaluate import load_long_conversation

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversation", nargs="*", default=None, help="default: hard and friends")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "evaluation" / "frontier.json")
    parser.add_argument("--quick", action="store_true", help="the first and last setting each, hard only")
    args = parser.parse_args(argv)
    paths = args.conversation or DEFAULT_CONVERSATIONS[: 1 if args.quick else None]
    sweep = {k: [v[0], v[-1]] if args.quick else v for k, v in SWEEP.items()}
    settings = show_setup()
    quiet_milvus_logs()
    points = []
    for path in paths:
        conversation = load_long_conversation(ROOT / path)
        full = replay_point(conversation, None, {})
        for kind, settings_swept in [(None, [{}]), *sweep.items()]:
            for setting in settings_swept:
                point = full if kind is None else replay_point(conversation, kind, setting)
                point = {"conversation": conversation["id"], **point,
                         "pct_input": round(100 * point["input_tokens"] / full["input_tokens"], 2)}
                points.append(point)
                print(f"{point['conversation']:22} {point['name'][:60]:60} recall {point['recall']:.3f}"
                      f"  {point['pct_input']:6.2f}% of full history's input  ({point['seconds']} s)",
                      flush=True)
    command = "python benchmarks/bench_frontier.py" + (" --quick" if args.quick else "") + (
        f" --conversation {' '.join(paths)}" if args.conversation else "")
    measured = (f"{command} ({settings.describe().split(' | Database')[0]} | Database: Milvus Lite), "
                f"{datetime.date.today().isoformat()}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"measured": measured, "points": points}, indent=1,
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
