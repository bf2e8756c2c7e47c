"""Predict, then check: the lessons' "Check yourself" cells, with nothing given away in advance.

A check cell shows an answer box and a Check button, and holds the rest of its own output::

    with ask("04.slice_first") as q:     # the box; everything below stays hidden until Check
        window = messages[-4:]
        display(render_messages(window))
        q.measured(window[0].type, first=window[0].text)

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
output. ``COURSE_CHECKS=text`` asks every question that way (no widgets at all)."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from numbers import Number
from pathlib import Path
from typing import Any

from helpers.config import OFFLINE, load_settings

REFERENCE_ENV = "COURSE_REFERENCE_ANSWERS"
TEXT_ENV = "COURSE_CHECKS"  # "text": ask in plain output, commit with q.answer(...)


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

    def __bool__(self) -> bool:
        return self.ok


RESULTS: list[CheckResult] = []


class HeldOutput:
    """Everything a block prints or displays (text, tables, plots), held in order in the kernel and shown
    later with ``show()``; a context manager (needs IPython). Unlike ``ipywidgets.Output``, which the
    front end fills, it works where widgets do not render."""

    def __init__(self) -> None:
        # ("stdout" or "stderr", text, None), or ("display", data, metadata)
        self.items: list[tuple[str, Any, Any]] = []
        self._saved = None

    def __enter__(self) -> HeldOutput:
        import io
        import sys

        from IPython import get_ipython
        from IPython.core.displaypub import DisplayPublisher

        items = self.items

        class _Publisher(DisplayPublisher):
            def publish(self, data, metadata=None, source=None, *, transient=None, update=False):
                items.append(("display", data, metadata))

        class _Stream(io.TextIOBase):
            def __init__(self, name: str) -> None:
                self.stream = name

            def write(self, text: str) -> int:
                items.append((self.stream, text, None))
                return len(text)

        shell = get_ipython()
        self._saved = (shell, sys.stdout, sys.stderr, shell.display_pub)
        shell.display_pub = _Publisher(shell=shell)
        sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
        return self

    def __exit__(self, *exc: Any) -> bool:
        import sys

        shell, sys.stdout, sys.stderr, shell.display_pub = self._saved
        self._saved = None
        return False

    def show(self) -> None:
        """Print and display the held items, in their order, where output goes now."""
        import sys

        from IPython.display import publish_display_data

        for kind, data, metadata in self.items:
            if kind == "display":
                publish_display_data(data, metadata)
            else:
                (sys.stdout if kind == "stdout" else sys.stderr).write(data)
        sys.stdout.flush()


def reference_mode() -> bool:
    """True when ``COURSE_REFERENCE_ANSWERS`` is set to ``1``/``true``/``yes``."""
    return os.environ.get(REFERENCE_ENV, "").strip().lower() in {"1", "true", "yes"}


def text_mode() -> bool:
    """True when ``COURSE_CHECKS`` is ``text``: questions are asked in plain output, with no widgets."""
    return os.environ.get(TEXT_ENV, "").strip().lower() == "text"


def _normalize(value: Any) -> Any:
    """Compare like with like: strip and lower-case text, numeric text as a number, tuples as lists."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            return text.lower()
    if isinstance(value, Mapping):
        return {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_normalize(v) for v in value]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, Number) and not isinstance(value, bool)


def verdict(prediction: Any, actual: Any, tolerance: float = 0) -> tuple[bool, str]:
    """``(ok, one line)`` comparing a prediction with the measured value. Text compares without case or
    surrounding spaces; numeric text counts as a number; ``"a, b"`` compares with a list ``["a", "b"]``;
    tuples equal lists. ``tolerance``: for numbers, the largest accepted ``abs(prediction - actual)``."""
    if isinstance(prediction, str) and isinstance(actual, (list, tuple)):
        prediction = [p for p in prediction.replace(",", " ").split() if p]
    expected, got = _normalize(prediction), _normalize(actual)
    numbers = _is_number(expected) and _is_number(got)
    ok = math.isclose(expected, got, rel_tol=0, abs_tol=tolerance) if numbers else expected == got
    if ok:
        close = f", within {tolerance}" if tolerance and expected != got else ""
        return True, f"✅ Right: you predicted {prediction!r}, measured {actual!r}{close}."
    off = f" (off by {got - expected:+g}{f'; tolerance {tolerance}' if tolerance else ''})" if numbers else ""
    return False, f"❌ Not quite: you predicted {prediction!r}, measured {actual!r}{off}."


class ask:  # noqa: N801 - reads as a verb in the lessons: ``with ask("02.messages_sent") as q``
    """An answer box, a Check button and a held output for the question ``question_id`` (KeyError: an id
    in no ``checks`` file). Use as a context manager; call ``measured(actual, **facts)`` in or after it.
    Commit with the button, or in code with ``answer(prediction)`` (the fallback where widgets do not
    render; ``COURSE_CHECKS=text`` shows no widgets at all)."""

    def __init__(self, question_id: str) -> None:
        self.id, self.spec = question_id, checks()[question_id]
        self.actual, self.facts, self.result = None, {}, None
        self.captured, self._capture = None, None  # the block's output, held in the kernel until a verdict
        self.text = text_mode()
        if self.text:
            self.box = self.button = self.feedback = self.held = self.view = None
            return
        import ipywidgets as w

        choices = self.spec.get("choices")
        self.box = (w.Dropdown(options=[("choose…", None), *[(str(c), c) for c in choices]])
                    if choices else w.Text(placeholder="your prediction"))
        self.button = w.Button(description="Check", button_style="primary")
        self.feedback = w.HTML()
        self.held = w.Output(layout=w.Layout(display="none"))
        self.button.on_click(lambda _: self.check(self.box.value))
        self.view = w.VBox([w.HBox([w.Label("Your prediction:"), self.box, self.button]),
                            self.feedback, self.held])

    def prompt(self) -> str:
        """The text-mode line that says how to commit: ``q.answer(...)``, with the choices if any."""
        choices = self.spec.get("choices")
        listed = "; choose one of: " + " | ".join(repr(c) for c in choices) if choices else ""
        return (f"✍️ Your prediction first: in a new cell, q.answer(...){listed}. "
                "The output stays hidden until then.")

    def __enter__(self) -> ask:
        from IPython import get_ipython
        from IPython.display import display

        if self.text:
            print(self.prompt())
        else:
            display(self.view)
        if get_ipython() is not None:  # in a kernel: hold everything the block shows
            self._capture = HeldOutput()
            self.captured = self._capture.__enter__()
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if self._capture is not None:
            self._capture.__exit__(None, None, None)
            self._capture = None
        if error is not None or self.result is not None:  # an error, or reference mode: show it now
            self._reveal()
        return False  # the error, if any, shows in the cell and stops Run All

    def measured(self, actual: Any, **facts: Any) -> None:
        """Record the measured value (and the Why's named facts); reference mode checks at once."""
        self.actual, self.facts = actual, facts
        if reference_mode():
            self.check(self.spec["answer"], reference=True)

    def why(self, html: bool = True) -> str:
        """The Why, its ``{names}`` filled from this run (``html``: `code` becomes <code>code</code>)."""
        settings = load_settings()  # "{models}": e.g. "the offline stand-in and multilingual-e5-small"
        chat = "the offline stand-in" if settings.chat_provider == OFFLINE else settings.chat_model
        models = f"{chat} and {settings.embedding_model}"
        text = self.spec["why"].format(actual=self.actual, models=models, **self.facts)
        return re.sub(r"`([^`]+)`", r"<code>\1</code>", text) if html else text

    def _verdict(self, prediction: Any, reference: bool) -> tuple[CheckResult | None, str]:
        if prediction is None or (isinstance(prediction, str) and not prediction.strip()):
            return None, "✍️ Write your prediction first, then press Check."
        if self.actual is None:
            return None, "⏳ Run the cell to its end first."
        ok, line = verdict(prediction, self.actual, self.spec.get("tolerance", 0))
        result = CheckResult(self.id, prediction, self.actual, ok, reference)
        RESULTS.append(result)
        self.result = result
        return result, line + (" (reference answer)" if reference else "")

    def _reveal(self) -> None:
        """Show the held output: in the widget, or (text mode, or ``answer``) in the current cell. Inside
        the block (reference mode) it waits for the block's end."""
        if self._capture is not None:
            return
        if self.held is not None:
            self.held.layout.display = ""
            if self.captured is not None:
                with self.held:
                    self.captured.show()
        elif self.captured is not None:
            self.captured.show()

    def check(self, prediction: Any, reference: bool = False) -> CheckResult | None:
        """What the Check button does: the verdict, the Why and the held output, or a reminder."""
        result, line = self._verdict(prediction, reference)
        if self.text:
            print(line if result is None else f"{line}\nWhy. {self.why(html=False)}")
        else:
            self.feedback.value = (f"<p><b>{line}</b></p><p><b>Why.</b> {self.why()}</p>"
                                   if result is not None else line)
        if result is not None:
            self._reveal()
        return result

    def answer(self, prediction: Any) -> CheckResult | None:
        """Commit ``prediction`` in code (a new cell below the check): prints the verdict and the Why, then
        shows the held output in this cell. The fallback where the answer box does not render."""
        result, line = self._verdict(prediction, False)
        print(line if result is None else f"{line}\nWhy. {self.why(html=False)}")
        if result is not None and self._capture is None and self.captured is not None:
            self.captured.show()  # here, in the cell that called answer(): visible without widgets
        if self.feedback is not None and result is not None:
            self.feedback.value = f"<p><b>{line}</b></p><p><b>Why.</b> {self.why()}</p>"
        return result
