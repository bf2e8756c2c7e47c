"""Benchmark: the offline stand-in's (THRESHOLD, GROWTH) pair, chosen on two families of development chats.

Run from the project root, after ``benchmarks/bench_abstention.py --record`` (LoCoMo and the course's
conversations) and with BEAM's 500K chats converted, each cut to its first 100,000 tokens (the size of
the chats BEAM's 100K set holds)::

    python -m lab.public_sets --out .runtime/public/beam100k --max-tokens 100000 \
        --beam <BEAM>/chats/500K/{1..35}
    nice .venv/bin/python benchmarks/bench_abstention_pairs.py --record    # about 1.5 min a chat on 2 cores
    .venv/bin/python benchmarks/bench_abstention_pairs.py                  # the table from the cache

BEAM rows are one call per probe with the whole cut chat sent (user and assistant messages), not a
replay: the stand-in's replies to earlier probes are not in the history. Each row keeps n (sentences
ranked) and the five best scores, enough to sweep the bar ``THRESHOLD + GROWTH * ln n``.

The rule: every development family (LoCoMo 41-44; BEAM 500K 1-35 cut to 100K) answers at most 20% of its
unanswerable probes with full history; among those pairs, the most invented examples right
(``offline_model_dev.py``), then the most LoCoMo answers right, then the most BEAM answerable probes
answered. The other conversations are reported on."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_abstention import CACHE, CHOSEN_ON, REPORTED_ON, DiskEngine, dev_examples, reply  # noqa: E402

BEAM_CUT = ROOT / ".runtime" / "public" / "beam100k"
BEAM_ROWS = CACHE / "beam100k.json"
MOST = 0.20  # the development families' share of unanswerable probes answered, at most


def record_beam() -> None:
    """Append to ``BEAM_ROWS`` each converted chat of ``BEAM_CUT`` not yet recorded."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    import helpers.course.offline_model as model
    from helpers.course import embeddings

    engine = DiskEngine(embeddings._engine())
    embeddings._engine, embeddings.vector_cache.maxsize = (lambda: engine), 400_000
    rows = json.loads(BEAM_ROWS.read_text()) if BEAM_ROWS.exists() else {}
    for path in sorted(BEAM_CUT.glob("*.json")):
        if path.stem in rows:
            continue
        chat = json.loads(path.read_text(encoding="utf-8"))
        messages = [SystemMessage(chat.get("system") or "")] + [
            HumanMessage(t["text"]) if t["speaker"] == "user" else AIMessage(t["text"])
            for t in chat["turns"]]
        facts = model.evidence(model.read(messages)[0])
        texts = [f.text for f in facts]
        probes = []
        for probe in chat["probes"]:
            parts = []
            for part in model.split_question(probe["question"]):
                scores = model.relevance(part, texts)
                parts.append([len(facts), sorted(map(float, scores), reverse=True)[:5]])
            probes.append({"answerable": probe["category"] != "unanswerable", "parts": parts})
        rows[path.stem] = probes
        engine.save()
        BEAM_ROWS.write_text(json.dumps(rows))
        print(f"recorded {path.stem}: {len(facts)} sentences, {len(probes)} probes", flush=True)


def answers(n: int, best: float, threshold: float, growth: float) -> bool:
    return best >= threshold + growth * math.log(max(n, 1))


def beam_score(rows: dict, threshold: float, growth: float) -> tuple[int, int, int, int]:
    """(unanswerable answered, unanswerable, answerable answered, answerable) over every BEAM chat."""
    said = [(p["answerable"], any(answers(n, top[0], threshold, growth) for n, top in p["parts"] if top))
            for chat in rows.values() for p in chat]
    return (sum(s for a, s in said if not a), sum(not a for a, _ in said),
            sum(s for a, s in said if a), sum(a for a, _ in said))


def rows_score(rows: list, threshold: float, growth: float) -> tuple[int, int, int, int]:
    """(unanswerable answered, unanswerable, answerable right, answerable) of one recorded conversation."""
    from helpers.course.offline_model import UPDATE

    counts = [0, 0, 0, 0]
    for r in rows:
        text = reply(r, growth, UPDATE, threshold)  # the line(s) quoted, or None: "I don't know"
        if r["expects"]:
            counts[2] += text is not None and all(w.lower() in text.lower() for w in r["expects"])
            counts[3] += 1
        else:
            counts[0] += text is not None
            counts[1] += 1
    return tuple(counts)


def main() -> None:
    import helpers.course.offline_model as model

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", action="store_true", help="record the BEAM chats not yet cached")
    args = parser.parse_args()
    if args.record:
        record_beam()
    beam = json.loads(BEAM_ROWS.read_text())
    recorded = {n: json.loads((CACHE / f"{n}.json").read_text())
                for n in (*CHOSEN_ON, *REPORTED_ON) if (CACHE / f"{n}.json").exists()}
    locomo = [n for n in CHOSEN_ON if n.startswith("locomo") and n in recorded]
    table = []
    for threshold in np.arange(-0.020, 0.0026, 0.0025):
        for growth in np.arange(0.008, 0.0146, 0.0005):
            t, g = round(float(threshold), 4), round(float(growth), 4)
            dev = [rows_score(recorded[n], t, g) for n in locomo]
            b = beam_score(beam, t, g)
            table.append({"pair": (t, g), "locomo": sum(d[0] for d in dev) / sum(d[1] for d in dev),
                          "beam": b[0] / b[1], "examples": dev_examples(g, model.UPDATE, t)[0],
                          "locomo right": sum(d[2] for d in dev), "beam answered": b[2] / b[3]})
    allowed = sorted((r for r in table if r["locomo"] <= MOST and r["beam"] <= MOST),
                     key=lambda r: (-r["examples"], -r["locomo right"], -r["beam answered"]))
    print(f"Development families: {', '.join(locomo)}; BEAM 500K cut to 100K ({len(beam)} chats).")
    print(f"Pairs with every family at most {MOST:.0%} unanswerable answered, best first "
          f"(the module's: THRESHOLD = {model.THRESHOLD}, GROWTH = {model.GROWTH}):")
    print("THRESHOLD  GROWTH  LoCoMo unans  BEAM unans  examples right  LoCoMo right  BEAM answerable"
          " answered")
    for r in allowed[:8]:
        print(f"{r['pair'][0]:>9} {r['pair'][1]:>7} {r['locomo']:>13.0%} {r['beam']:>11.0%} "
              f"{r['examples']:>15} {r['locomo right']:>13} {r['beam answered']:>25.0%}")
    print("\nReported on, full history: unanswerable answered, answerable right")
    for name in (n for n in REPORTED_ON if n in recorded):
        pairs = ((-0.005, 0.009), (model.THRESHOLD, model.GROWTH))
        cells = [rows_score(recorded[name], t, g) for t, g in pairs]
        print(f"  {name:<22}" + "   ->   ".join("{}/{} {}/{}".format(*c) for c in cells))
    print("  (-0.005, 0.009 -> the module's pair)")


if __name__ == "__main__":
    main()
