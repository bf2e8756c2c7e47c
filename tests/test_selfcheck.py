"""helpers.course.selfcheck: the lessons' "Check yourself" feedback, and the reference-answer mode."""

from __future__ import annotations

import json

import pytest

from helpers.course import selfcheck
from helpers.course.lessons import lesson_paths
from helpers.course.selfcheck import ANSWERS, REFERENCE_ENV, RESULTS, check


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    RESULTS.clear()
    yield
    RESULTS.clear()


def test_right_number(capsys):
    check(4, 4)
    assert capsys.readouterr().out.startswith("✅ Right: you predicted 4, measured 4.")
    assert RESULTS[-1].ok is True and bool(RESULTS[-1])


def test_wrong_number_prints_the_difference(capsys):
    check(8, 4, explain="A turn is two messages.")
    out = capsys.readouterr().out
    assert out.startswith("❌ Not quite: you predicted 8, measured 4 (off by -4).")
    assert "A turn is two messages." in out
    assert RESULTS[-1].ok is False and not RESULTS[-1]


def test_tolerance_for_numbers(capsys):
    check(15, 17, tolerance=3)
    out = capsys.readouterr().out
    assert out.startswith("✅ Right: you predicted 15, measured 17, within 3.")
    assert RESULTS[-1].ok is True
    check(13, 17, tolerance=3)
    assert "(off by +4; tolerance 3)" in capsys.readouterr().out
    assert RESULTS[-1].ok is False


def test_text_and_lists_ignore_case_and_spaces():
    check(" AI ", "ai")
    check(["Human", "ai"], ["human", "ai"])
    check(("ai", "ai"), ["ai", "ai"])
    check("4", 4)  # numeric text counts as a number
    check("yes", "no")
    assert [r.ok for r in RESULTS] == [True, True, True, True, False]


def test_none_asks_for_a_prediction_and_does_not_raise(capsys):
    check(None, 4, question="04.slice_first", explain="the answer is 4")
    out = capsys.readouterr().out
    assert "No prediction yet" in out
    assert "4" not in out  # neither the measured value nor the explanation is given away
    assert RESULTS[-1].ok is None and RESULTS[-1].prediction is None


def test_reference_mode_substitutes_the_reference_answer(monkeypatch, capsys):
    monkeypatch.setenv(REFERENCE_ENV, "1")
    check(None, "ai", question="04.slice_first")
    assert "(reference answer)" in capsys.readouterr().out
    result = RESULTS[-1]
    assert (result.prediction, result.ok, result.used_reference) == ("ai", True, True)
    check(None, "human", question="04.slice_first")  # a drifted lesson fails its own check
    assert RESULTS[-1].ok is False
    check("human", "human", question="04.slice_first")  # a written prediction is never replaced
    assert RESULTS[-1].used_reference is False and RESULTS[-1].ok is True


def test_reference_mode_needs_a_question_id(monkeypatch):
    monkeypatch.setenv(REFERENCE_ENV, "yes")
    check(None, 3)
    assert RESULTS[-1].ok is None


@pytest.mark.parametrize("value", ["", "0", "no", "false"])
def test_reference_mode_off(monkeypatch, value):
    monkeypatch.setenv(REFERENCE_ENV, value)
    assert selfcheck.reference_mode() is False


def test_every_answer_is_asked_by_a_lesson_and_every_question_has_an_answer():
    asked = set()
    for path in lesson_paths():
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and "check(" in source:
                for part in source.split('question="')[1:]:
                    asked.add(part.split('"')[0])
    assert asked == set(ANSWERS)


@pytest.mark.parametrize("path", lesson_paths(["00", "01", "02", "03", "04", "05"]), ids=lambda p: p.stem)
def test_lessons_00_to_05_check_yourself(path):
    """Each of these lessons asks for a prediction, checks it, and explains it in a folded cell."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    predictions = [s for s in code if s.startswith("prediction = None  # ")]
    checks = [s for s in code if "check(prediction," in s]
    whys = [s for s in markdown if "<details><summary>Why</summary>" in s]
    assert predictions and len(predictions) == len(checks) == len(whys)
    assert any(m.startswith("**Goals** (") or "\n**Goals** (" in m for m in markdown)
