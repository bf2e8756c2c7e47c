"""The Goals cells state the minutes ``scripts/lesson_minutes.py`` computes, and the core fits the slot."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from helpers.course.lessons import lesson_paths

_spec = importlib.util.spec_from_file_location(
    "lesson_minutes", Path(__file__).resolve().parent.parent / "scripts" / "lesson_minutes.py")
minutes = importlib.util.module_from_spec(_spec)
sys.modules["lesson_minutes"] = minutes  # dataclasses look their module up
_spec.loader.exec_module(minutes)


@pytest.mark.parametrize("path", lesson_paths(), ids=lambda p: p.stem)
def test_goals_state_the_computed_minutes(path):
    parts = minutes.lesson_minutes(path)
    core, further = minutes.stated_minutes(path)
    core_part, further_part = parts["core"], parts["going further"]
    assert core == core_part.minutes, f"{path.name}: Goals say {core} min, the yardstick {core_part}"
    if further_part.words or further_part.cells:
        assert further == further_part.minutes, f"{path.name}: Going further {further_part}"


def test_the_core_of_lessons_01_to_08_fits_the_slot():
    total = sum(minutes.lesson_minutes(p)["core"].minutes
                for p in lesson_paths() if not p.name.startswith("00"))
    assert total <= minutes.CORE_LIMIT, total


def test_code_cells_are_short():
    """The mean code cell is under 8 lines of code (blank lines not counted)."""
    lines = [sum(1 for line in "".join(c["source"]).splitlines() if line.strip()) for p in lesson_paths()
             for c in json.loads(p.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    assert sum(lines) / len(lines) < 8, sum(lines) / len(lines)


def test_the_yardstick_counts_what_it_says(tmp_path):
    def cell(kind, text):
        code = {"outputs": [], "execution_count": None} if kind == "code" else {}
        return {"cell_type": kind, "source": [text], "metadata": {}, **code}
    goals = "**Goals** (5 min; the *Going further* section adds 2 min)\n"
    nb = {"cells": [cell("markdown", goals + "word " * 190),
                    cell("code", 'with ask("q1") as q:\n    q.measured(1)'),
                    cell("markdown", "## Going further: more\n" + "w " * 96), cell("code", "x = 1"),
                    cell("markdown", "## Try it\nplay"), cell("code", "# your experiments here")],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    parts = minutes.lesson_minutes(path, {"q1": {"why": "one two three four five six seven eight nine ten"}})
    core, further = parts["core"], parts["going further"]
    assert (core.words, core.cells, core.checks, core.try_it) == (213, 1, 1, 3)
    assert core.minutes == 8  # ceil(2.13 + 1 + 1 + 3): the Goals, the prose, the Why, Try it
    assert (further.words, further.cells, further.minutes) == (99, 1, 2)
    assert minutes.stated_minutes(path) == (5, 2)


def test_the_instructor_guide_schedules_the_stated_minutes():
    """docs/instructor_guide.md's schedule gives each lesson the minutes its Goals state, and its
    clock adds up: each lesson's slot is as long as its minutes, the rows follow on to 3:00."""
    guide = (Path(__file__).resolve().parent.parent / "docs" / "instructor_guide.md").read_text("utf-8")
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in guide.splitlines()
            if re.match(r"\| \d:\d\d–\d:\d\d \|", line)]
    assert rows, "no schedule table"
    clock = 0
    for when, what, core, further in rows:
        (h1, m1), (h2, m2) = (part.split(":") for part in when.split("–"))
        start, end = int(h1) * 60 + int(m1), int(h2) * 60 + int(m2)
        assert start == clock, f"{what[:40]}: starts at {start}, the row before ends at {clock}"
        clock = end
        lesson = re.match(r"\*\*(\d\d) · ", what)
        if lesson:
            (path,) = [p for p in lesson_paths() if p.name.startswith(lesson.group(1))]
            stated = minutes.stated_minutes(path)
            assert int(core) == stated[0] == end - start, (path.name, core, stated, end - start)
            assert re.search(r"\(\+(\d+)\)$", further).group(1) == str(stated[1]), (path.name, further)
    assert clock == 180


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
