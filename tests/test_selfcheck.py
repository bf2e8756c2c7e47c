"""helpers.course.selfcheck: predict, then check, with nothing shown before a prediction."""

from __future__ import annotations

import json
import re

import pytest

from helpers.course import selfcheck
from helpers.course.lessons import lesson_paths
from helpers.course.selfcheck import REFERENCE_ENV, RESULTS, ask, checks, verdict


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    RESULTS.clear()
    yield
    RESULTS.clear()


def test_verdict_numbers_text_and_lists():
    assert verdict(4, 4) == (True, "✅ Right: you predicted 4, measured 4.")
    assert verdict(8, 4) == (False, "❌ Not quite: you predicted 8, measured 4 (off by -4).")
    assert verdict(15, 17, tolerance=3) == (True, "✅ Right: you predicted 15, measured 17, within 3.")
    assert "(off by +4; tolerance 3)" in verdict(13, 17, tolerance=3)[1]
    assert [verdict(p, a)[0] for p, a in [(" AI ", "ai"), ("4", 4), ("ai, AI", ["ai", "ai"]),
                                          (("ai", "ai"), ["ai", "ai"]), ("human", "ai")]] == \
        [True, True, True, True, False]


def _held(q) -> bool:
    return q.held.layout.display == "none"


def test_nothing_shows_before_a_prediction():
    q = ask("02.messages_sent")
    q.measured(10, stored=8)
    assert _held(q) and q.feedback.value == "" and RESULTS == []
    q.box.value = ""
    q.button.click()  # Check with an empty box: a reminder, still nothing revealed
    assert _held(q) and "10" not in q.feedback.value and RESULTS == []
    q.box.value = "9"
    q.button.click()
    assert not _held(q)
    assert "❌ Not quite: you predicted '9', measured 10 (off by +1)." in q.feedback.value
    assert "Why." in q.feedback.value
    assert RESULTS[-1].ok is False and RESULTS[-1].question == "02.messages_sent"


def test_check_before_the_cell_measured_is_a_reminder():
    q = ask("02.messages_sent")
    q.box.value = "10"
    q.button.click()
    assert _held(q) and "Run the cell" in q.feedback.value and RESULTS == []


def test_errors_inside_the_block_are_raised_and_shown():
    q = ask("02.messages_sent")
    with pytest.raises(KeyError), q:
        {}["missing"]
    assert not _held(q)


def test_reference_mode_checks_the_reference_answer(monkeypatch):
    monkeypatch.setenv(REFERENCE_ENV, "1")
    answer = checks()["02.messages_sent"]["answer"]
    ask("02.messages_sent").measured(answer, stored=answer - 2)
    assert (RESULTS[-1].prediction, RESULTS[-1].ok, RESULTS[-1].used_reference) == (answer, True, True)
    ask("02.messages_sent").measured(answer + 1, stored=answer - 1)  # a drifted lesson fails its check
    assert RESULTS[-1].ok is False


@pytest.mark.parametrize("value", ["", "0", "no", "false"])
def test_reference_mode_off(monkeypatch, value):
    monkeypatch.setenv(REFERENCE_ENV, value)
    assert selfcheck.reference_mode() is False


def test_every_question_is_asked_once_and_has_an_answer_and_a_why():
    asked = []
    for path in lesson_paths():
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                asked += re.findall(r'\bask\("([^"]+)"\)', "".join(cell["source"]))
    assert sorted(asked) == sorted(checks()), "each id in helpers/course/checks is asked exactly once"
    for qid, spec in checks().items():
        assert spec["answer"] is not None and spec["why"].strip(), qid
        assert spec.get("choices") is None or spec["answer"] in spec["choices"], qid


def test_a_check_that_fails_is_shown_under_the_box_not_raised():
    q = ask("02.messages_sent")
    q.measured(10)  # the Why names {stored}: a fact the lesson forgot to pass
    q.box.value = "10"
    q.button.click()  # JupyterLab would show nothing of an error raised here
    assert "The check itself failed (KeyError" in q.feedback.value and RESULTS == []


def test_a_korean_prediction_typed_on_macos_matches():
    import unicodedata

    assert verdict(unicodedata.normalize("NFD", "부산"), "부산")[0]
