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
the ``with`` block are shown and re-raised, never hidden."""

from __future__ import annotations

import html
import json
import math
import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from numbers import Number
from pathlib import Path
from typing import Any

from helpers.config import OFFLINE, load_settings

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

    def __bool__(self) -> bool:
        return self.ok


RESULTS: list[CheckResult] = []


def reference_mode() -> bool:
    """True when ``COURSE_REFERENCE_ANSWERS`` is set to ``1``/``true``/``yes``."""
    return os.environ.get(REFERENCE_ENV, "").strip().lower() in {"1", "true", "yes"}


def _normalize(value: Any) -> Any:
    """Compare like with like: strip, NFC and lower-case text (Korean typed on macOS is decomposed),
    numeric text as a number, tuples as lists."""
    if isinstance(value, str):
        text = unicodedata.normalize("NFC", value.strip())
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
    in no ``checks`` file). Use as a context manager; call ``measured(actual, **facts)`` in or after it."""

    def __init__(self, question_id: str) -> None:
        import ipywidgets as w

        self.id, self.spec = question_id, checks()[question_id]
        self.actual, self.facts, self.result = None, {}, None
        choices = self.spec.get("choices")
        self.box = (w.Dropdown(options=[("choose…", None), *[(str(c), c) for c in choices]])
                    if choices else w.Text(placeholder="your prediction"))
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
                                   f"{html.escape(str(error))}); nothing was recorded.</p>")

    def __enter__(self) -> ask:
        from IPython.display import display

        display(self.view)
        self.held.__enter__()
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        self.held.__exit__(None, None, None)  # the error, if any, shows in the cell and stops Run All
        if error is not None:
            self.held.layout.display = ""
        return False

    def measured(self, actual: Any, **facts: Any) -> None:
        """Record the measured value (and the Why's named facts); reference mode checks at once."""
        self.actual, self.facts = actual, facts
        if reference_mode():
            self.check(self.spec["answer"], reference=True)

    def why(self) -> str:
        """The Why, its ``{names}`` filled from this run (HTML; `code` becomes <code>code</code>)."""
        settings = load_settings()  # "{models}": e.g. "the offline stand-in and multilingual-e5-small"
        chat = "the offline stand-in" if settings.chat_provider == OFFLINE else settings.chat_model
        models = f"{chat} and {settings.embedding_model}"
        text = self.spec["why"].format(actual=self.actual, models=models, **self.facts)
        return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)

    def check(self, prediction: Any, reference: bool = False) -> CheckResult | None:
        """What the Check button does: the verdict, the Why and the held output, or a reminder."""
        if prediction is None or (isinstance(prediction, str) and not prediction.strip()):
            self.feedback.value = "✍️ Write your prediction first, then press Check."
            return None
        if self.actual is None:
            self.feedback.value = "⏳ Run the cell to its end first."
            return None
        ok, line = verdict(prediction, self.actual, self.spec.get("tolerance", 0))
        source = " (reference answer)" if reference else ""
        self.feedback.value = f"<p><b>{line}</b>{source}</p><p><b>Why.</b> {self.why()}</p>"
        self.held.layout.display = ""
        self.result = CheckResult(self.id, prediction, self.actual, ok, reference)
        RESULTS.append(self.result)
        return self.result
