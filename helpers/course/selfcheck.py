"""Predict, then check: the lessons' "Check yourself" cells, with nothing given away in advance.

A check cell shows an answer box and a Check button, and holds the rest of its own output::

    with ask("04.facts_sent") as q:      # the box; everything below stays hidden until Check
        records = replay(TokenWindow(200), turns, model)
        display(render_messages(records[14].prompt))
        q.measured(facts_sent, sent="13, 17")  # the value predicted; the Why's facts

Until the learner commits a prediction nothing of the measurement shows. Check reveals the verdict,
the Why and the held output. Each question's reference answer, choices and Why live in
``helpers/course/checks/<lesson>.json``; a Why is a template whose ``{names}`` are filled from this run's
``measured(actual, **facts)`` (``{actual}``, and ``{models}``: the active chat model and embedder),
so its numbers are measured, never typed. ``COURSE_REFERENCE_ANSWERS=1`` (the notebook tests)
commits the reference answer as soon as the value is measured, so executing a lesson checks that
its reference answers still hold. Every verdict is appended to ``RESULTS``; errors raised inside
the ``with`` block are shown and re-raised, never hidden.

The block's output (prints, tables, plots) is captured in the kernel, not by the widget front end,
so it is never lost. Where the answer box does not render, commit in code instead, in a new cell:
``q.answer("your prediction")`` prints the verdict, the Why and the held output as plain cell
output. A menu answer can be typed as its number or letter: ``q.answer(2)``, ``q.answer("b")``."""

from __future__ import annotations

import html
import json
import math
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from numbers import Number
from pathlib import Path
from typing import Any

from helpers.config import OFFLINE
from helpers.course.setup import active_settings
from helpers.text import nfc

REFERENCE_ENV = "COURSE_REFERENCE_ANSWERS"


@cache
def checks() -> dict[str, dict]:
    """``helpers/course/checks/<lesson>.json``, merged: question id -> ``{"answer", "why"}`` and optionally
    ``"choices"`` (a list: the box becomes a menu) and ``"tolerance"`` (for numbers)."""
    files = sorted((Path(__file__).parent / "checks").glob("*.json"))  # kept out of the lessons' folder
    return {k: v for f in files for k, v in json.loads(f.read_text(encoding="utf-8")).items()}


@dataclass(frozen=True)
class CheckResult:
    """One comparison: what was predicted, what was measured, and whether they agree."""

    question: str | None
    prediction: Any
    actual: Any
    ok: bool
    used_reference: bool = False  # the prediction came from the checks file (reference mode)


RESULTS: list[CheckResult] = []


class HeldOutput:
    """What a block prints or displays (text, tables, plots), held in order in the kernel until ``show()``; a
    context manager (needs IPython). Unlike ``ipywidgets.Output``, filled by the front end, it works where
    widgets do not render."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any, Any]] = []  # (stream name, text, None) or ("display", data, meta)

    def __enter__(self) -> HeldOutput:
        import io
        import sys

        from IPython import get_ipython
        from IPython.core.displaypub import DisplayPublisher

        items, shell = self.items, get_ipython()

        class Publisher(DisplayPublisher):
            def publish(self, data, metadata=None, *args, **kwargs):
                items.append(("display", data, metadata))

        class Stream(io.TextIOBase):
            def __init__(self, name: str) -> None:
                self.stream = name

            def write(self, text: str) -> int:
                items.append((self.stream, text, None))
                return len(text)

        self._saved = (shell, sys.stdout, sys.stderr, shell.display_pub)
        shell.display_pub, sys.stdout, sys.stderr = Publisher(shell=shell), Stream("stdout"), Stream("stderr")
        return self

    def __exit__(self, *exc: Any) -> bool:
        import sys

        shell, sys.stdout, sys.stderr, shell.display_pub = self._saved
        return False

    def show(self) -> None:
        """Print and display the held items, in their order, where output goes now."""
        import sys

        from IPython.display import publish_display_data

        for kind, data, metadata in self.items:
            _ = publish_display_data(data, metadata) if kind == "display" else getattr(sys, kind).write(data)
        sys.stdout.flush()


def reference_mode() -> bool:
    """True when ``COURSE_REFERENCE_ANSWERS`` is set to ``1``/``true``/``yes``."""
    return os.environ.get(REFERENCE_ENV, "").strip().lower() in {"1", "true", "yes"}


def _normalize(value: Any) -> Any:
    """Compare like with like: strip, NFC and lower-case text (Korean typed on macOS is decomposed),
    numeric text as a number."""
    if not isinstance(value, str):
        return value
    text = nfc(value.strip())
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return text.lower()


def _is_number(value: Any) -> bool:
    return isinstance(value, Number) and not isinstance(value, bool)


def choice_of(prediction: Any, choices: Sequence[Any]) -> tuple[int, Any] | None:
    """``(number, choice)``: the choice of a menu that ``prediction`` names, by its text, its 1-based
    number (``2`` or ``"2"``) or its letter (``"b"`` or ``"B"``); ``None`` when it names none."""
    for number, choice in enumerate(choices, start=1):
        if _normalize(prediction) == _normalize(choice):
            return number, choice
    typed = unicodedata.normalize("NFKC", str(prediction)).strip().lower()  # full-width "２", "ｂ": a CJK IME
    letters = "abcdefghijklmnopqrstuvwxyz"[: len(choices)]
    number = None
    if typed.isdigit() and not isinstance(prediction, bool):
        number = int(typed)
    elif len(typed) == 1 and typed in letters:
        number = letters.index(typed) + 1
    if number is None or not 1 <= number <= len(choices):
        return None
    return number, choices[number - 1]


def verdict(prediction: Any, actual: Any, tolerance: float = 0,
            choice: int | None = None) -> tuple[bool, str]:
    """``(ok, one line)`` comparing a prediction with the measured value (a number or a text). Text
    compares without case or surrounding spaces; numeric text counts as a number. ``tolerance``: for
    numbers, the largest accepted ``abs(prediction - actual)``. ``choice``: the number of the menu choice
    that is ``prediction``, named in the line."""
    said = f"{prediction!r}" if choice is None else f"choice {choice}, {prediction!r}"
    expected, got = _normalize(prediction), _normalize(actual)
    numbers = _is_number(expected) and _is_number(got)
    ok = math.isclose(expected, got, rel_tol=0, abs_tol=tolerance) if numbers else expected == got
    if ok:
        close = f", within {tolerance}" if tolerance and expected != got else ""
        return True, f"✅ Right: you predicted {said}, measured {actual!r}{close}."
    off = f" (off by {got - expected:+g}{f'; tolerance {tolerance}' if tolerance else ''})" if numbers else ""
    return False, f"❌ Not quite: you predicted {said}, measured {actual!r}{off}."


class ask:  # noqa: N801 - reads as a verb in the lessons: ``with ask("01.second_call") as q``
    """An answer box, a Check button and the held output of question ``question_id`` (KeyError: an id in no
    ``checks`` file). Use as a context manager; call ``measured(actual, **facts)`` in or after it. Commit
    with the button or, where widgets do not render, ``answer(prediction)`` in a new cell."""

    def __init__(self, question_id: str) -> None:
        self.id, self.spec = question_id, checks()[question_id]
        self.actual, self.facts, self.result = None, {}, None
        self.captured, self._capture = None, None  # the block's output, held in the kernel
        import ipywidgets as w

        choices = self.spec.get("choices")
        if choices:  # numbered, as ``answer`` accepts them: ``q.answer(2)``
            numbered = [(f"{number}. {choice}", choice) for number, choice in enumerate(choices, start=1)]
            self.box = w.Dropdown(options=[("choose…", None), *numbered])
        else:
            self.box = w.Text(placeholder="your prediction")
        self.button = w.Button(description="Check", button_style="primary")
        self.feedback = w.HTML()
        self.held = w.Output(layout=w.Layout(display="none"))
        self.button.on_click(self._on_click)
        self.view = w.VBox([w.HBox([w.Label("Your prediction:"), self.box, self.button]),
                            self.feedback, self.held])

    def _on_click(self, _button) -> None:
        """The Check button: an error is shown under the box, never raised (JupyterLab would show nothing)."""
        try:
            self.check(self.box.value)
        except Exception as error:  # noqa: BLE001 - shown to the learner, not lost
            self.feedback.value = (f"<p>⚠️ The check itself failed ({html.escape(type(error).__name__)}: "
                                   f"{html.escape(str(error))}).</p>")

    def __enter__(self) -> ask:
        from IPython import get_ipython
        from IPython.display import display

        display(self.view)
        if get_ipython() is not None:  # in a kernel: hold everything the block shows
            self._capture = HeldOutput()
            self.captured = self._capture.__enter__()
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if self._capture is not None:
            self._capture.__exit__()
            self._capture = None
        if error is not None or self.result is not None:  # an error, or reference mode: show it now
            self._reveal(in_widget=True)
        return False  # the error, if any, shows in the cell and stops Run All

    def measured(self, actual: Any, **facts: Any) -> None:
        """Record the measured value (and the Why's named facts); reference mode checks at once."""
        self.actual, self.facts = actual, facts
        if reference_mode():
            self.check(self.spec["answer"], reference=True)

    def why(self, html: bool = True) -> str:
        """The Why, its ``{names}`` filled from this run (``html``: `code` becomes <code>code</code>)."""
        settings = active_settings()  # "{models}": the ones show_setup chose, e.g. after a refused key
        chat = "the offline stand-in" if settings.chat_provider == OFFLINE else settings.chat_model
        models = f"{chat} and {settings.embedding_model}"
        text = self.spec["why"].format(actual=self.actual, models=models, **self.facts)
        return re.sub(r"`([^`]+)`", r"<code>\1</code>", text) if html else text

    def _reveal(self, in_widget: bool) -> None:
        """Show the held output in the widget or in the current cell; inside the block, at its end."""
        if self._capture is not None:
            return
        if in_widget:
            self.held.layout.display = ""
            self.held.clear_output()  # Check pressed again: the output once, not twice
            with self.held:
                _ = self.captured.show() if self.captured is not None else None
        elif self.captured is not None:
            self.captured.show()

    def check(self, prediction: Any, reference: bool = False, in_widget: bool = True) -> CheckResult | None:
        """The verdict, the Why and the held output (what the Check button does), or a reminder; with
        ``in_widget=False`` (``answer``) they are printed in the current cell."""
        result = None
        if prediction is None or (isinstance(prediction, str) and not prediction.strip()):
            line = "✍️ Write your prediction first, then press Check."
        elif self.actual is None:
            line = "⏳ Run the cell to its end first."
        else:
            choices = self.spec.get("choices") or []
            named = choice_of(prediction, choices)
            number = None
            if named is not None:
                number, prediction = named
            elif choices:  # a menu answer that names none of its choices is not graded
                line = (f"🔢 {prediction!r} is none of the {len(choices)} choices: give its number "
                        f"(1-{len(choices)}), its letter or its text.")
                self.feedback.value = f"<p><b>{html.escape(line)}</b></p>"
                if not in_widget:
                    print(line)
                return None
            ok, line = verdict(prediction, self.actual, self.spec.get("tolerance", 0), number)
            line += " (reference answer)" if reference else ""
            result = self.result = CheckResult(self.id, prediction, self.actual, ok, reference)
            RESULTS.append(result)
        why = f"<p><b>Why.</b> {self.why()}</p>" if result is not None else ""
        self.feedback.value = f"<p><b>{line}</b></p>{why}"
        if not in_widget:
            print(f"{line}\nWhy. {self.why(html=False)}" if result is not None else line)
        if result is not None:
            self._reveal(in_widget)
        return result

    def answer(self, prediction: Any) -> None:
        """Commit ``prediction`` in code, in a new cell below the check: prints the verdict and the Why, then
        shows the held output in that cell (the result goes to ``RESULTS``). The fallback where the answer
        box does not render; a menu answer can be its number (``2``, ``"2"``) or letter (``"b"``)."""
        self.check(prediction, in_widget=False)
