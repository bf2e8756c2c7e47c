"""Predict, then check: feedback for the lessons' "Check yourself" cells, without a grader.

The learner writes ``prediction = ...``, a cell measures the real value and calls
``check(prediction, window[0].type, question="04.slice_first")``: one line, ✅, ❌ with the difference,
or a reminder while the prediction is ``None``; it never raises, so "Run All" runs through a lesson.
Every question id has a reference answer in ``ANSWERS``; with ``COURSE_REFERENCE_ANSWERS=1`` (the
notebook tests set it) an empty prediction is replaced by it, so executing a lesson checks that its
reference answers (explained in its ``<details>`` cells) still match what it measures. Every call is
recorded in ``RESULTS``; the tests read it after the lesson ran."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Number
from typing import Any

REFERENCE_ENV = "COURSE_REFERENCE_ANSWERS"

# question id -> reference answer: the value the lesson measures (and its <details> explains)
ANSWERS: dict[str, Any] = {
    "00.tokens": 17,  # tokens of "안녕하세요, 제 이름은 민수예요." (the English twin costs 9)
    "01.second_call": "no",  # does call 2 ("제 이름이 뭐였죠?") get the name 민수? ("yes" / "no")
    "02.messages_sent": 10,  # messages sent at turn 5 of the loop (system + 8 stored + new)
    "03.escapes": 14,  # \uXXXX escapes the library writes for "안녕하세요! 제 이름은 김민수예요."
    "04.slice_first": "ai",  # type of the first message slice(-4) keeps
    "04.trim_system": "no",  # does the system prompt survive the article's trim to 100 tokens?
    "05.left_after_crash": 0,  # messages left when the process dies between clear() and re-add
    "05.last_two": ["ai", "ai"],  # types of the last two stored messages after the article's step
    "06.ko_first": 7,  # round ranked first for "제 이름이 뭐였죠?": the sister's name, above the name
    "06.dropped_at_0.3": 0,  # day-1 memories that min_score=0.3 drops with e5 (all score > 0.8)
    "07.largest_layer": "retrieved",  # at turn 120: window 135, summary 52, retrieved 200 tokens
    "08.best_per_token": "retrieval",  # most evidence recall per prompt token
}


@dataclass(frozen=True)
class CheckResult:
    """One comparison: what was predicted, what was measured, and whether they agree."""

    question: str | None
    prediction: Any
    actual: Any
    ok: bool | None  # None: no prediction written yet
    used_reference: bool = False  # the prediction came from ``ANSWERS`` (reference mode)

    def __bool__(self) -> bool:
        return bool(self.ok)


RESULTS: list[CheckResult] = []


def reference_mode() -> bool:
    """True when ``COURSE_REFERENCE_ANSWERS`` is set to ``1``/``true``/``yes``."""
    return os.environ.get(REFERENCE_ENV, "").strip().lower() in {"1", "true", "yes"}


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


def _matches(prediction: Any, actual: Any, tolerance: float) -> bool:
    if _is_number(prediction) and _is_number(actual):
        return math.isclose(prediction, actual, rel_tol=0, abs_tol=tolerance)
    return prediction == actual


def check(prediction: Any, actual: Any, *, tolerance: float = 0, explain: str = "",
          question: str | None = None) -> None:
    """Compare a learner's prediction with the measured value and print ✅ or ❌.

    Args:
        prediction (int | float | str | list | None): ``None`` means "not written yet". Text is
            compared without case or surrounding spaces; numeric text counts as a number; tuples
            compare equal to lists.
        actual (int | float | str | list): the value the lesson just measured.
        tolerance (float): for numbers, the largest accepted ``abs(prediction - actual)`` (0: exact).
        explain (str): one sentence printed after the verdict (the full reasoning is in the lesson's
            collapsed "Why" cell); not printed while the prediction is ``None``.
        question (str | None): the question's id in ``ANSWERS`` (reference mode, above).

    Returns nothing (a cell shows only the verdict); appends a ``CheckResult`` to ``RESULTS``.
    """
    used_reference = False
    if prediction is None and question is not None and reference_mode():
        prediction, used_reference = ANSWERS[question], True
    if prediction is None:
        print("✍️  No prediction yet: write it in the `prediction = None` cell, run that cell, then "
              "run this one again.")
        RESULTS.append(CheckResult(question, None, actual, None))
        return
    expected, got = _normalize(prediction), _normalize(actual)
    ok = _matches(expected, got, tolerance)
    source = " (reference answer)" if used_reference else ""
    if ok:
        close = f", within {tolerance}" if tolerance and expected != got else ""
        print(f"✅ Right: you predicted {prediction!r}{source}, measured {actual!r}{close}.")
    elif _is_number(expected) and _is_number(got):
        diff = got - expected
        print(f"❌ Not quite: you predicted {prediction!r}{source}, measured {actual!r} "
              f"(off by {diff:+g}{f'; tolerance {tolerance}' if tolerance else ''}).")
    else:
        print(f"❌ Not quite: you predicted {prediction!r}{source}, measured {actual!r}.")
    if explain:
        print("   " + explain)
    RESULTS.append(CheckResult(question, prediction, actual, ok, used_reference))
