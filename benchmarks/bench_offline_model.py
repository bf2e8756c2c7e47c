"""Benchmark: the offline stand-in's answer threshold, chosen on examples no lesson uses.

Run from the project root::

    .venv/bin/python benchmarks/bench_offline_model.py

For every example of ``benchmarks/offline_model_dev.py`` (invented conversations, each with a question
whose answer is in it or not), the stand-in's reading and ranking (``helpers.course.offline_model``)
gives the best sentence and its score. The table sweeps the threshold: examples answered right (the
best sentence holds the expected word and reaches the threshold) and "don't know" right (no answer
sent, best score below it), with the module's ``GROWTH``: ``THRESHOLD`` is chosen with it in
``benchmarks/bench_abstention.py`` (this table shows the small conversations alone). It prints a
table; it is not a timed test.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from langchain_core.messages import HumanMessage

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offline_model_dev import EXAMPLES  # noqa: E402

from helpers.course.offline_model import GROWTH, THRESHOLD, evidence, read, relevance  # noqa: E402


def best(lines: list[str], question: str) -> tuple[str, float]:
    """The best sentence and its score less the growth of the bar with n (``GROWTH * ln n``)."""
    facts = evidence(read([HumanMessage("\n".join(lines))])[0])
    scores = relevance(question, [s.text for s in facts]).round(4)
    if not len(scores):
        return "", -1.0
    return facts[int(scores.argmax())].text, float(scores.max()) - GROWTH * math.log(len(facts))


def main() -> None:
    rows = [(expected, *best(lines, question)) for lines, question, expected in EXAMPLES]
    print(f"{len(rows)} examples, {sum(e is not None for e, _, _ in rows)} with the answer sent\n")
    print(f"{'threshold':>9} {'answered right':>14} {'dont-know right':>15} {'all right':>9}")
    results = []
    for step in range(-40, 41):
        t = step / 1000
        answered = sum(e is not None and e in text and score >= t for e, text, score in rows)
        unknown = sum(e is None and score < t for e, text, score in rows)
        results.append((answered + unknown, t))
        if step % 5 == 0:
            print(f"{t:>9.3f} {answered:>14} {unknown:>15} {answered + unknown:>9}")
    top = max(r for r, _ in results)
    good = [t for r, t in results if r == top]
    print(f"\nmost right: {top}/{len(rows)} for thresholds {min(good):.3f} .. {max(good):.3f}; "
          f"the module's THRESHOLD = {THRESHOLD}")


if __name__ == "__main__":
    main()
