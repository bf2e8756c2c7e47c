"""helpers.course.selfcheck: predict, then check, with nothing shown before a prediction."""

from __future__ import annotations

import json
import re

import pytest
from lessons import lesson_paths

from helpers.course import selfcheck
from helpers.course.selfcheck import REFERENCE_ENV, RESULTS, ask, checks, verdict


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    RESULTS.clear()
    yield
    RESULTS.clear()


def test_verdict_numbers_and_text():
    assert verdict(4, 4) == (True, "✅ Right: you predicted 4, measured 4.")
    assert verdict(8, 4) == (False, "❌ Not quite: you predicted 8, measured 4 (off by -4).")
    assert verdict(15, 17, tolerance=3) == (True, "✅ Right: you predicted 15, measured 17, within 3.")
    assert "(off by +4; tolerance 3)" in verdict(13, 17, tolerance=3)[1]
    assert [verdict(p, a)[0] for p, a in [(" AI ", "ai"), ("4", 4), ("2.5", 2.5), ("human", "ai")]] == [
        True, True, True, False]


def _held(q) -> bool:
    return q.held.layout.display == "none"


def test_nothing_shows_before_a_prediction():
    q = ask("01.second_call")
    q.measured(2, works="1, 2", tried=4)
    assert _held(q) and q.feedback.value == "" and RESULTS == []
    q.box.value = ""
    q.button.click()  # Check with an empty box: a reminder, still nothing revealed
    assert _held(q) and "measured" not in q.feedback.value and RESULTS == []
    q.box.value = "3"
    q.button.click()
    assert not _held(q)
    assert "❌ Not quite: you predicted '3', measured 2 (off by -1)." in q.feedback.value
    assert "Why." in q.feedback.value
    assert RESULTS[-1].ok is False and RESULTS[-1].question == "01.second_call"


def test_check_before_the_cell_measured_is_a_reminder():
    q = ask("01.second_call")
    q.box.value = "2"
    q.button.click()
    assert _held(q) and "Run the cell" in q.feedback.value and RESULTS == []


def test_errors_inside_the_block_are_raised_and_shown():
    q = ask("01.second_call")
    with pytest.raises(KeyError), q:
        {}["missing"]
    assert not _held(q)


def test_reference_mode_checks_the_reference_answer(monkeypatch):
    monkeypatch.setenv(REFERENCE_ENV, "1")
    answer = checks()["01.second_call"]["answer"]
    ask("01.second_call").measured(answer, works="1, 2", tried=4)
    assert (RESULTS[-1].prediction, RESULTS[-1].ok, RESULTS[-1].used_reference) == (answer, True, True)
    ask("01.second_call").measured(answer + 1, works="1, 2, 3", tried=4)  # a drifted lesson fails its check
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


def test_answer_before_the_value_is_measured_is_a_reminder(capsys):
    q = ask("01.second_call")
    q.answer("2")
    assert RESULTS == [] and "Run the cell" in capsys.readouterr().out
    q.measured(2, works="1, 2", tried=4)
    q.answer("2")
    assert (RESULTS[-1].ok, RESULTS[-1].prediction, len(RESULTS)) == (True, "2", 1)
    assert "Why. Requests 1, 2 sent the name, of the 4." in capsys.readouterr().out
    assert "Right: you predicted '2', measured 2." in q.feedback.value  # the widget says so too


def _outputs(cell) -> str:
    """A cell's outputs as one text: streams, and the text/html or text/plain of displays."""
    return "".join(o.get("text", "") or o.get("data", {}).get("text/html", "")
                   or o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def test_in_a_kernel_the_output_stays_hidden_until_an_answer_then_shows_in_order(tmp_path, monkeypatch):
    """The fallback where widgets do not render: a kernel with no front end (as nbclient's) never shows the
    block's output in the check cell; ``q.answer`` in the next cell prints the verdict, the Why and the
    held output in its order."""
    import nbformat
    from lessons import execute_lesson

    cells = [
        "from IPython.display import HTML, display\nfrom helpers.course.selfcheck import ask",
        'with ask("01.second_call") as q:\n    print("first line")\n    display(HTML("<b>a table</b>"))\n'
        '    print("last line")\n    q.measured(2, works="1, 2", tried=4)',
        'q.answer("3")',
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    path = tmp_path / "99_check.ipynb"
    nbformat.write(nb, path)
    run = execute_lesson(path, out_dir=tmp_path / "out", cell_timeout=60)
    shown = [_outputs(cell) for cell in nbformat.read(run.output_path, as_version=4).cells]
    assert "first line" not in shown[1] and "a table" not in shown[1]  # held: nothing given away
    assert "❌ Not quite: you predicted '3', measured 2 (off by -1)." in shown[2]
    assert "Why. Requests 1, 2 sent the name, of the 4." in shown[2]
    assert shown[2].index("first line") < shown[2].index("<b>a table</b>") < shown[2].index("last line")
    assert "CheckResult" not in shown[2]  # nothing but the verdict, the Why and the output


def test_a_check_that_fails_is_shown_under_the_box_not_raised():
    q = ask("01.second_call")
    q.measured(2)  # the Why names {works}: a fact the lesson forgot to pass
    q.box.value = "2"
    q.button.click()  # JupyterLab would show nothing of an error raised here
    assert "The check itself failed (KeyError" in q.feedback.value


def test_a_korean_prediction_typed_on_macos_matches():
    import unicodedata

    assert verdict(unicodedata.normalize("NFD", "부산"), "부산")[0]


def test_a_menu_answer_is_its_text_its_number_or_its_letter(capsys):
    choices = checks()["06.moved"]["choices"]  # the answer is the third choice
    answer = checks()["06.moved"]["answer"]
    assert choices.index(answer) == 2
    for typed in (3, "3", " 3 ", "c", "C", answer, answer.upper()):
        q = ask("06.moved")
        q.measured(answer, rounds="13, 3, 10")
        q.answer(typed)
        assert RESULTS[-1].ok is True and RESULTS[-1].prediction == answer, typed
        assert f"you predicted choice 3, {answer!r}" in capsys.readouterr().out, typed
    for typed, chosen in ((1, choices[0]), ("a", choices[0]), ("2", choices[1])):
        q = ask("06.moved")
        q.measured(answer, rounds="13, 3, 10")
        q.answer(typed)
        assert (RESULTS[-1].ok, RESULTS[-1].prediction) == (False, chosen), typed


def test_a_number_or_letter_outside_the_menu_names_no_choice():
    choices = ["yes", "no"]
    assert selfcheck.choice_of(2, choices) == (2, "no") and selfcheck.choice_of("B", choices) == (2, "no")
    assert [selfcheck.choice_of(p, choices) for p in (0, 3, "c", "-1", True, "maybe", 2.0)] == [None] * 7
    assert selfcheck.choice_of("２", choices) == selfcheck.choice_of(" ｂ ", choices) == (2, "no")  # an IME
    q = ask("09.forecast_visible")
    q.measured("no", window="yes")
    for typed in (3, "banana"):  # names no choice: not graded, the choices are named instead
        assert q.answer(typed) is None and RESULTS == [] and _held(q)
        assert "is none of the 2 choices: give its number (1-2)" in q.feedback.value
    q.answer("2")
    assert RESULTS[-1].ok is True and RESULTS[-1].prediction == "no"


def test_check_pressed_twice_shows_the_held_output_once():
    """The held output goes into the widget's Output area; a second Check clears it first (Output
    widgets keep what they hold, so it would show twice)."""
    calls = []

    class Area:  # stands in for the ipywidgets.Output the front end renders
        layout = type("Layout", (), {"display": "none"})()

        def clear_output(self):
            calls.append("clear")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    q = ask("01.second_call")
    q.held, q.captured = Area(), type("Held", (), {"show": lambda self: calls.append("show")})()
    q.measured(2, works="1, 2", tried=4)
    q.box.value = "2"
    q.button.click()
    q.button.click()
    assert calls == ["clear", "show", "clear", "show"] and len(RESULTS) == 2


def test_the_menu_numbers_its_choices_and_checks_the_choice_it_holds():
    q = ask("06.moved")
    labels = [label for label, _ in q.box.options]
    assert labels[0] == "choose…" and labels[2] == "2. the move to Madrid (round 10)"
    q.measured("the move to Madrid (round 10)", rounds="10, 3, 13")
    q.box.value = q.box.options[2][1]
    q.button.click()
    assert "✅ Right: you predicted choice 2, 'the move to Madrid (round 10)'" in q.feedback.value
