"""Lesson 08's capstone over a grid of reasonable budgets: more than one design reaches the target, the
best of them keeps all three layers doing work, turning the summary off is not a way there, and a
summary that carries a question alone can send the fact itself, not only the answer's word.

The month, its five questions and ``TOKEN_LIMIT`` are read from the lesson's cells (one source). The
grid is 24 settings of ``LayeredMemory`` (window 40/60, summary cap 40/60, fold past 800/300/200
tokens, retrieval 120/200), each a 17-turn replay on Milvus Lite with the offline models: about 15 s.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from pathlib import Path

import pytest

LESSON = Path(__file__).resolve().parent.parent / "notebooks" / "08_measuring_memory.ipynb"
GRID = list(itertools.product((40, 60), (40, 60), (800, 300, 200), (120, 200)))  # w, s, fold past, r
NEVER_FOLDS = 800  # the month's history stays under it until its last question: the summary is off


def lesson_values() -> dict:
    """``TOKEN_LIMIT`` and ``questions`` as the lesson's code cells assign them."""
    values = {}
    for cell in json.loads(LESSON.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.parse("".join(cell["source"])).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if isinstance(target, ast.Name) and target.id in ("TOKEN_LIMIT", "questions"):
                values[target.id] = ast.literal_eval(node.value)
    assert set(values) == {"TOKEN_LIMIT", "questions"}, values
    return values


@pytest.fixture(scope="module")
def designs(tmp_path_factory, model):
    """Each grid setting -> (largest prompt, probes reached, the layers carrying each probe's evidence, the
    window's tokens at each probe, whether the summary sent at each probe holds its evidence's words)."""
    from helpers.course.data import load_conversation
    from helpers.course.measure import probe_task
    from helpers.course.milvus import open_store, quiet_milvus_logs
    from helpers.evaluate import evaluate_strategy
    from helpers.layered import LayeredMemory
    from helpers.memory import message_id

    quiet_milvus_logs()
    values, month = lesson_values(), load_conversation("minsu_month_ko")
    questions, limit = values["questions"], values["TOKEN_LIMIT"]
    task = probe_task(month, questions)  # the lesson's run_budgets replays the same

    def stating(turn: int, word: str) -> list[str]:  # the sentences of the evidence turn with the answer
        return [s for s in re.split(r"(?<=[.!?])\s+", month.turns[turn - 1]) if word in s]

    found = {}
    uri = str(tmp_path_factory.mktemp("capstone") / "capstone.db")
    with open_store("capstone_grid", uri=uri, drop_existing=True) as store:
        for n, (window, summary, fold, retrieval) in enumerate(GRID):
            memory = LayeredMemory(store, f"design-{n}", "session-1", window_tokens=window,
                                   max_summary_tokens=summary, summarize_over=fold,
                                   retrieval_tokens=retrieval)
            rows = evaluate_strategy(memory, task, model, progress=False)
            carriers = [{kind for kind in ("verbatim", "summary", "retrieved")
                         for part in r.prompt.of_kind(kind)
                         if message_id(questions[r.turn][0], "user") in part.sources}
                        for r in rows if r.probe]
            found[window, summary, fold, retrieval] = (
                max(r.prompt_tokens for r in rows), sum(bool(r.evidence_reached) for r in rows if r.probe),
                carriers, [t.window_section_tokens for t, r in zip(memory.log, rows, strict=True) if r.probe],
                [any(sentence in p.text for p in r.prompt.of_kind("summary")
                     for sentence in stating(*questions[r.turn])) for r in rows if r.probe])
    return found, len(questions), limit


def test_more_than_one_design_reaches_the_target_and_the_best_uses_every_layer(designs):
    found, probes, limit = designs
    passing = {setting: d for setting, d in found.items() if d[1] == probes and d[0] <= limit}
    print(f"{len(passing)} of {len(GRID)} designs pass:", sorted(passing))
    assert 2 <= len(passing) <= len(GRID) // 2, sorted(passing)  # reachable, and not by any setting
    (window, summary, fold, retrieval), (largest, _, carriers, windows, _) = min(passing.items(),
                                                                             key=lambda d: d[1][0])
    assert any(c == {"summary"} for c in carriers), carriers  # the summary alone carries a fact
    assert any("retrieved" in c for c in carriers), carriers  # retrieval carries others
    assert all(w > 0 for w in windows) and fold < NEVER_FOLDS, (window, summary, fold, retrieval)


def test_turning_the_summary_off_is_not_a_way_there(designs):
    found, probes, limit = designs
    passing = [setting for setting, d in found.items() if d[1] == probes and d[0] <= limit]
    assert passing and all(fold < NEVER_FOLDS for _, _, fold, _ in passing), passing
    off = [d for (_, _, fold, _), d in found.items() if fold == NEVER_FOLDS]
    # with the summary off, a retrieval budget that reaches every fact breaks the limit
    assert all(d[0] > limit or d[1] < probes for d in off), off


def test_a_passing_summary_sends_the_fact_not_only_its_word(designs):
    """Evidence reached by a summary counts the answer's word kept: a 40-token summary keeps only the
    new job's line ("대전에서는 ...") and the move question passes on its 대전. A 60-token one sends the
    move itself; the lesson's hints lead there."""
    found, probes, limit = designs
    passing = {setting: d for setting, d in found.items() if d[1] == probes and d[0] <= limit}
    whole = [setting for setting, (_, _, carriers, _, kept) in passing.items()
             if all(k for c, k in zip(carriers, kept, strict=True) if c == {"summary"})]
    by_word = [setting for setting in passing if setting not in whole]
    assert whole and by_word, (whole, by_word)
    assert all(summary == 60 for _, summary, _, _ in whole), whole
    assert (40, 60, 300, 120) in whole, whole  # the hints' design, as the lesson's test runs it
