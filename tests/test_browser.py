"""Lessons 04-07 in a real browser: JupyterLab, headless Chromium, Run All, move a slider.

For each lesson in ``EVERY_RUN`` (04 and 07; all of ``LESSONS`` with ``BROWSER_LESSONS=all``): open
it in JupyterLab (served from this venv, over a temporary copy of ``notebooks/``), Run All from the
menu, wait for the kernel, check that every code cell ran and that no output shows a traceback or
"Error displaying widget"; then move one control of the lesson's explorer with the keyboard and
check that the explorer's view changed and that the kernel logged no error (a widget callback's
traceback goes to JupyterLab's Log Console, not to the notebook). Screenshots in the light and the
dark theme go to ``build/browser/`` with a ``summary.txt`` of what was measured. And one "Check
yourself" cell (lesson 02's): before a prediction it shows no verdict, no Why and none of its held
output; after one, both appear.

Needs Debian's ``chromium`` (or ``$CHROMIUM``) and the Playwright Python package (never its
downloaded browsers). Without them the test skips with the reason; in CI (``CI=true``) it fails.
Run only this: ``.venv/bin/python -m pytest -m browser``; skip it: ``-m "not browser"``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "build" / "browser"
RUN_ALL_TIMEOUT = 600  # seconds per lesson; lesson 07 replays 120 turns through Milvus Lite


@dataclass(frozen=True)
class Explorer:
    """How to find a lesson's explorer and what to move in it.

    cell: text in the source of the code cell that displays the explorer.
    control: the description (label) of the slider to move.
    keys: keys pressed on the slider's handle; they must change what the explorer shows.
    """

    cell: str
    control: str
    keys: tuple[str, ...] = ("ArrowRight", "ArrowRight")


@dataclass(frozen=True)
class Lesson:
    """name: the notebook's file name without ``.ipynb``. explorer: None when the lesson has no
    explorer yet (Run All, no errors, screenshots only). show: for a lesson without an explorer,
    text in the source of the cell whose output the screenshots show."""

    name: str
    explorer: Explorer | None
    show: str | None = None


class ExplorerUnchanged(AssertionError):
    """The explorer showed the same thing after its control moved."""


# One row per lesson. To check a new explorer, give its lesson an Explorer(...).
LESSONS = [
    Lesson("04_truncation", Explorer("TruncationExplorer(", "max tokens")),
    Lesson("05_summarization", Explorer("SummaryExplorer(", "trigger > messages")),
    Lesson("06_retrieval_milvus", Explorer("RetrievalExplorer(", "top k")),
    Lesson("07_layered_memory", Explorer("LayeredExplorer(", "window tokens")),
]
# What every run drives: the first explorer and the one with every layer (Milvus included). The
# other two explorers use the same widgets and callbacks, driven headless in tests/test_explorers.py;
# BROWSER_LESSONS=all drives them here too (about a minute more: before a workshop, or after a change
# to their lesson or to the widgets).
EVERY_RUN = ("04_truncation", "07_layered_memory")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _cannot_run(reason: str):
    if _in_ci():
        pytest.fail(f"browser test cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium_path() -> str:
    from browser_lab import find_chromium

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as error:
        _cannot_run(f"the Playwright Python package is missing ({error}); install the project's "
                    "test requirements (no `playwright install`: the test uses the system Chromium)")
    path, reason = find_chromium()
    if path is None:
        _cannot_run(reason)
    return path


@pytest.fixture(scope="module")
def lab(chromium_path, tmp_path_factory):
    """JupyterLab over a copy of the lessons, with its own runtime folder (its own Milvus Lite)."""
    from browser_lab import Lab

    workdir = tmp_path_factory.mktemp("browser-lab")
    env = dict(os.environ)  # the offline environment of conftest.py
    env.pop("COURSE_REFERENCE_ANSWERS", None)  # a learner's kernel: the checks wait for a prediction
    env["COURSE_RUNTIME_DIR"] = str(workdir / "course-runtime")
    with Lab(ROOT / "notebooks", workdir, env) as running:
        yield running


@pytest.fixture(scope="module")
def browser(chromium_path, tmp_path_factory):
    from browser_lab import CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    # Chromium writes crash-report and dconf folders under $HOME: give it a temporary one.
    home = tmp_path_factory.mktemp("chromium-home")
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_CACHE_HOME": str(home / ".cache")}
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS,
                                              env=env)
        yield launched
        launched.close()


def _summary(line: str) -> None:
    with (SCREENSHOTS / "summary.txt").open("a", encoding="utf-8") as out:
        out.write(line + "\n")


@pytest.mark.browser
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name[:2])
def test_lesson_in_browser(lesson: Lesson, lab, browser):
    from browser_lab import LabPage

    if lesson.name not in EVERY_RUN and os.environ.get("BROWSER_LESSONS", "").strip().lower() != "all":
        pytest.skip(f"{lesson.name} in the browser only with BROWSER_LESSONS=all (its explorer runs headless "
                    "in tests/test_explorers.py)")

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    browser_errors: list[str] = []
    page.on("pageerror", lambda error: browser_errors.append(str(error)))
    lab_page = LabPage(page, lab)
    began = time.monotonic()
    view_before = view_after = None
    readouts = ("", "")
    try:
        lab_page.open(f"{lesson.name}.ipynb")
        open_seconds = time.monotonic() - began
        run_seconds = lab_page.run_all(RUN_ALL_TIMEOUT)
        output_errors = lab_page.errors() + lab_page.saved_error_outputs(f"{lesson.name}.ipynb")
        not_run = lab_page.cells_not_run()
        if output_errors or not_run:
            page.screenshot(path=str(SCREENSHOTS / f"{lesson.name}-error.png"))
        assert not output_errors, f"{lesson.name}: error output after Run All:\n" + "\n---\n".join(
            output_errors)
        assert not_run == 0, f"{lesson.name}: {not_run} code cells did not run (Run All stopped)"
        cell = None
        if lesson.explorer:
            cell = lab_page.code_cell(lesson.explorer.cell)
            lab_page.slider(cell, lesson.explorer.control)  # rendered, or fail here
            view_before = lab_page.view_html(cell)
            readouts = lab_page.move_slider(cell, lesson.explorer.control, list(lesson.explorer.keys))
            view_after = lab_page.view_after_change(cell, view_before)
        elif lesson.show:
            cell = lab_page.code_cell(lesson.show)
        shots_began = time.monotonic()
        for theme in ("light", "dark"):
            if theme != "light":
                lab_page.change_theme(theme)
            lab_page.screenshot(SCREENSHOTS / f"{lesson.name}-{theme}.png", cell)
        lab_page.change_theme("light")  # the theme is a saved setting: the next lesson opens light
        shots_seconds = time.monotonic() - shots_began
        kernel_log = lab_page.kernel_log_errors()
    finally:
        page.close()
        lab.shutdown_kernels()  # Milvus Lite's folder stays locked while a kernel holds it

    changed = view_before != view_after
    _summary(f"{lesson.name}: open {open_seconds:.0f} s, Run All {run_seconds:.0f} s, screenshots "
             f"{shots_seconds:.0f} s, test {time.monotonic() - began:.0f} s"
             + (f", {lesson.explorer.control!r} {readouts[0]} -> {readouts[1]}, view "
                f"{'changed' if changed else 'UNCHANGED'}" if lesson.explorer else ", no explorer")
             + (f", kernel log: {kernel_log[-1]}" if kernel_log else "")
             + (f", browser errors: {browser_errors}" if browser_errors else ""))

    if lesson.explorer:
        if not changed:
            raise ExplorerUnchanged(
                f"{lesson.name}: moving {lesson.explorer.control!r} from {readouts[0]} to "
                f"{readouts[1]} did not change the explorer's view"
                + (f"; the kernel logged: {kernel_log[-1]}" if kernel_log else ""))
    assert not kernel_log, f"{lesson.name}: the kernel logged errors:\n" + "\n".join(kernel_log)
    assert not browser_errors, f"{lesson.name}: uncaught errors in the page: {browser_errors}"


@pytest.mark.browser
def test_a_check_shows_nothing_until_a_prediction(lab, browser):
    """Lesson 01's check after Run All: an answer box and a Check button, and none of the verdict, the
    Why or the held output (the four requests and their replies) until a prediction is typed and Check
    pressed."""
    from browser_lab import LabPage

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    lab_page = LabPage(page, lab)
    try:
        lab_page.open("01_stateless_model.ipynb")
        lab_page.run_all(RUN_ALL_TIMEOUT)
        cell = lab_page.code_cell('ask("01.second_call")')
        output = cell.locator(".jp-OutputArea").first
        box = output.locator(".widget-text input").first
        box.wait_for(timeout=30_000)
        shown = output.inner_text()  # only what is visible: the held output is display: none
        for hidden in ("Right", "Not quite", "Why.", "민수 sent", "call 1's message"):
            assert hidden not in shown, f"{hidden!r} shows before a prediction:\n{shown}"
        lab_page.screenshot(SCREENSHOTS / "01-check-before.png", cell)
        box.fill("3")
        output.locator("button", has_text="Check").first.click()
        output.get_by_text("Why.").first.wait_for(timeout=15_000)
        # the held output (the requests and replies) is shown a moment after the verdict: wait for it too
        output.get_by_text("call 1's message").first.wait_for(timeout=15_000)
        shown = output.inner_text()
        assert "Not quite: you predicted '3', measured 2" in shown, shown
        assert "민수 sent" in shown and "call 1's message" in shown, shown
        for theme in ("light", "dark"):
            if theme != "light":
                lab_page.change_theme(theme)
            lab_page.screenshot(SCREENSHOTS / f"01-check-after-{theme}.png", cell)
        lab_page.change_theme("light")
    finally:
        page.close()
        lab.shutdown_kernels()


def test_lesson_table_names_real_lessons():
    """Every row of LESSONS names a lesson that exists, and its explorer cell is in it."""
    for row in LESSONS:
        lesson = row.values[0] if hasattr(row, "values") else row
        path = ROOT / "notebooks" / f"{lesson.name}.ipynb"
        assert path.is_file(), path
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        for snippet in (lesson.explorer.cell if lesson.explorer else None, lesson.show):
            if snippet:
                found = sum(snippet in source for source in sources)
                assert found == 1, f"{found} code cells of {path.name} contain {snippet!r}"
