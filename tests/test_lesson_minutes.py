"""The minutes a room needs: each Goals cell states what ``scripts/lesson_minutes.py`` times, the guide's
table shows that arithmetic and its schedule the same minutes, the core of 01-08 fits 140 minutes with
a buffer, and the script counts what it says."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from lessons import lesson_paths

_spec = importlib.util.spec_from_file_location(
    "lesson_minutes", Path(__file__).resolve().parent.parent / "scripts" / "lesson_minutes.py")
minutes = importlib.util.module_from_spec(_spec)
sys.modules["lesson_minutes"] = minutes  # dataclasses look their module up
_spec.loader.exec_module(minutes)


GUIDE = Path(__file__).resolve().parent.parent / "docs" / "instructor_guide.md"
# 00 is pre-work; 09 is Going further only, after the day: not in the workshop's schedule
WORKSHOP = [p for p in lesson_paths() if "01" <= p.name[:2] <= "08"]


def _table_rows(pattern: str) -> list[list[str]]:
    """The cells of the guide's table rows whose first cell matches ``pattern``."""
    return [[cell.strip() for cell in line.split("|")[1:-1]]
            for line in GUIDE.read_text("utf-8").splitlines() if re.match(pattern, line)]


def _schedule() -> dict[str, tuple[int, int, int]]:
    """The guide's schedule: lesson number -> (start, end, Going further minutes); also checks that the
    rows follow on from 0:00 to 3:00 and returns them under "rows"."""
    rows, clock, lessons = _table_rows(r"\| \d:\d\d–\d:\d\d \|"), 0, {}
    assert rows, "no schedule table"
    for when, what, _core, further in rows:
        (h1, m1), (h2, m2) = (part.split(":") for part in when.split("–"))
        start, end = int(h1) * 60 + int(m1), int(h2) * 60 + int(m2)
        assert start == clock, f"{what[:40]}: starts at {start}, the row before ends at {clock}"
        clock = end
        lesson = re.match(r"\*\*(\d\d) · ", what)
        if lesson:
            lessons[lesson.group(1)] = (start, end, int(re.search(r"\(\+(\d+)\)$", further).group(1)))
    assert clock == 180, clock
    lessons["rows"] = rows
    return lessons


def _walk() -> dict[str, tuple[int, int, int, float, int]]:
    """The guide's table "How the minutes were estimated": lesson number -> (words read, code lines
    outside a demo, checks and explorers, waits and capstone in minutes, core minutes)."""
    walk = {}
    for lesson, words, lines, tasks, extra, _sum, total in _table_rows(r"\| 0\d \| \d+ \| \d+ \| \d+ \| "):
        walk[lesson] = (int(words), int(lines), int(tasks), float(extra), int(total))
    return walk


@pytest.mark.parametrize("path", WORKSHOP, ids=lambda p: p.stem)
def test_goals_walk_and_schedule_agree(path):
    """A lesson's Goals cell, the script's timing of it, the guide's arithmetic and its slot in the
    schedule give the same minutes, from the same counts."""
    core, further = minutes.stated_minutes(path)
    number, timed = path.name[:2], minutes.timed_minutes(path)
    start, end, scheduled_further = _schedule()[number]
    assert core == timed.minutes == end - start, (path.name, core, timed, end - start)
    assert _walk()[number] == (timed.words, timed.lines, timed.tasks, timed.extra, timed.minutes), \
        (path.name, _walk()[number], timed)
    assert scheduled_further == further, (path.name, scheduled_further, further)


def test_the_core_fits_the_slot_with_a_buffer():
    """The core of 01-08 is at most CORE_LIMIT minutes, summed before each lesson is rounded (eight
    lessons rounded down can hide several minutes), and the schedule keeps a buffer of 10 or more."""
    core = sum(minutes.stated_minutes(p)[0] for p in WORKSHOP)
    unrounded = minutes.unrounded_core(WORKSHOP)
    assert max(core, unrounded) <= minutes.CORE_LIMIT == 140, (core, unrounded)
    rows = _schedule()["rows"]
    buffer = [r for r in rows if r[1].startswith("*Buffer*")]
    assert len(buffer) == 1, "one buffer row"
    (h1, m1), (h2, m2) = (part.split(":") for part in buffer[0][0].split("–"))
    assert int(h2) * 60 + int(m2) - (int(h1) * 60 + int(m1)) >= 10, buffer


@pytest.mark.parametrize("path", WORKSHOP, ids=lambda p: p.stem)
def test_each_lesson_keeps_its_prose_budget(path):
    """A lesson's core prose (core + after words, outside Going further) is within its stated budget."""
    words = minutes.core_prose(path)
    assert words <= minutes.PROSE_BUDGET[path.name[:2]], (path.name, words)


def test_the_core_prose_of_01_08_fits_3500_words():
    """The budgets add up to at most PROSE_LIMIT, and so do the lessons' words."""
    words = {p.name[:2]: minutes.core_prose(p) for p in WORKSHOP}
    assert set(words) == set(minutes.PROSE_BUDGET) and sum(minutes.PROSE_BUDGET.values()) <= 3500
    assert sum(words.values()) <= minutes.PROSE_LIMIT == 3500, words


def test_the_guide_states_the_total_it_schedules():
    """The plan's sentence names the same core total as the Goals cells."""
    core = sum(minutes.stated_minutes(p)[0] for p in WORKSHOP)
    assert f"takes {core} minutes" in GUIDE.read_text("utf-8"), core


def test_code_cells_are_short():
    """The mean code cell is under 8 lines of code (blank lines not counted)."""
    lines = [sum(1 for line in "".join(c["source"]).splitlines() if line.strip()) for p in lesson_paths()
             for c in json.loads(p.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    assert sum(lines) / len(lines) < 8, sum(lines) / len(lines)


def test_the_counts_are_what_they_say(tmp_path):
    """The script counts an estimate's inputs: prose, Whys, cells, lines, checks and explorers, by part."""
    def cell(kind, text):
        code = {"outputs": [], "execution_count": None} if kind == "code" else {}
        return {"cell_type": kind, "source": [text], "metadata": {}, **code}
    goals = "**Goals** (5 min; the *Going further* section adds 2 min)\n"
    nb = {"cells": [cell("markdown", goals + "word " * 190),
                    cell("code", 'with ask("q1") as q:\n    # a comment\n    q.measured(1)'),
                    cell("code", "explorer = TruncationExplorer(x)\nexplorer"),
                    cell("markdown", "▶ Demo"), cell("code", "x = 2\ny = 3\nLayeredExplorer(s)"),
                    cell("markdown", "## Going further: more\n" + "w " * 96), cell("code", "x = 1"),
                    cell("markdown", "## Try it\nplay"), cell("code", "# your experiments here")],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    parts = minutes.lesson_parts(path, {"q1": {"why": "one two three four five six seven eight nine ten"}})
    core, further, after = parts["core"], parts["going further"], parts["after"]
    assert (core.words, core.why_words, core.cells, core.lines, core.demo_lines, core.checks,
            core.explorers, core.demo_explorers) == (202, 10, 3, 8, 3, 1, 2, 1)  # the comment read too
    assert (further.words, further.cells, further.lines, further.checks) == (99, 1, 1, 0)
    assert (after.words, after.cells, after.lines) == (3, 1, 0)
    assert minutes.stated_minutes(path) == (5, 2)
    # 2 framing + (202 + 10 + 3 words)/100 + 8 lines (demo lanes, comments)/10 + 4 x (1 check + 1 explorer the
    # room works) + 3 (the explorer in a demo lane, watched) = 15.95
    timed = minutes.timed_minutes(path, {"q1": {"why": "one two three four five six seven eight nine ten"}})
    assert (timed.words, timed.lines, timed.tasks, timed.extra) == (215, 8, 2, 3)
    assert timed.raw == pytest.approx(15.95) and timed.minutes == 18  # x 1.1 = 17.5


def test_every_glossary_term_is_in_the_lesson_it_names():
    """docs/glossary.md: each term (a `code` name, or a word group before brackets, split on "/")
    appears in the lesson of its "First in" column."""
    root = Path(__file__).resolve().parent.parent
    text = {}
    for path in lesson_paths():
        notebook = json.loads(path.read_text("utf-8"))
        text[path.name[:2]] = "\n".join("".join(c["source"]) for c in notebook["cells"]).lower()
    missing = []
    for line in (root / "docs" / "glossary.md").read_text("utf-8").splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) != 4 or not re.fullmatch(r"\d\d", cells[3]):
            continue
        plain = re.sub(r"\(.*?\)", "", re.sub(r"`[^`]+`", "", cells[0]))
        names = re.findall(r"`([^`]+)`", cells[0])
        names += [name.strip() for name in re.split(r"[/,]", plain) if name.strip()]
        if not any(name.lower() in text[cells[3]] for name in names):
            missing.append((cells[3], cells[0]))
    assert not missing, missing
