"""What each lesson asks of a learner, counted from the notebook (``python scripts/lesson_minutes.py``):
the inputs to a human estimate of its minutes, not the minutes.

A formula (words at 100 a minute, a minute per code cell) counted a 30-line Milvus cell like a
one-liner and nothing for talk, waiting, sliders or the checks' thinking; an instructor's walk put
the real core at about 1.4 times it. So the minutes are estimated by walking each lesson as a
learner of the room would (read at ESL pace, predict, run, wait, look, move the sliders), section
by section. The walk is in ``docs/instructor_guide.md`` ("How the minutes were estimated"), each
Goals cell states its result, and ``tests/test_lesson_minutes.py`` checks that the Goals cells, the
walk and the guide's schedule agree and that the core of lessons 01-08 fits ``CORE_LIMIT``.

This script prints what the walk starts from, per lesson and part (core, *Going further*): words of
prose (fenced code and HTML tags left out; the Whys of the checks asked counted apart), code cells,
lines of code, checks and explorers. Re-run it after changing a lesson: a part whose counts moved
needs walking again. A cell belongs to *Going further* from a heading that starts with "Going
further" to the next heading of the same or a higher level; the Try it, Summary and Next sections
(done after the day) are counted apart as ``after``.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_LIMIT = 140  # minutes of the core of 01-08 in the 3-hour slot (besides: welcome, breaks, buffer, close)
#: Words of prose each lesson's core may hold (core + after the day: everything outside Going further),
#: so that one idea is shown once; the walk reads them at 100 words a minute (issue 39).
PROSE_BUDGET = {"01": 310, "02": 280, "03": 330, "04": 400, "05": 420, "06": 500, "07": 520, "08": 570}
PROSE_LIMIT = 3500  # words of core prose in 01-08 together
AFTER_THE_DAY = ("try it", "summary", "where to go", "clean-up")  # level-2 sections done after the day


@dataclass
class Part:
    """What one part of a lesson asks of a learner."""

    words: int = 0  # prose, in markdown cells
    why_words: int = 0  # the Whys of the checks asked, read after each verdict
    cells: int = 0  # code cells
    lines: int = 0  # non-blank lines of code
    checks: int = 0  # ask("...") predictions
    explorers: int = 0  # widgets with sliders (a line that builds a ...Explorer)


def prose_words(markdown: str) -> int:
    """Words a learner reads in a markdown cell: fenced code and HTML tags left out."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    return len(re.findall(r"[^\s#*|>\-`]+", text))


def lesson_parts(path: Path, whys: dict[str, dict] | None = None) -> dict[str, Part]:
    """``{"core": Part, "going further": Part, "after": Part}`` for the notebook at ``path``; ``whys``:
    question id -> ``{"why": ...}`` (default: ``helpers/course/checks/*.json``)."""
    if whys is None:
        whys = {k: v for f in sorted((ROOT / "helpers" / "course" / "checks").glob("*.json"))
                for k, v in json.loads(f.read_text(encoding="utf-8")).items()}
    parts = {"core": Part(), "going further": Part(), "after": Part()}
    further_level, after = None, False
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        heading = re.match(r"(#+)\s+(.*)", source.lstrip()) if cell["cell_type"] == "markdown" else None
        if heading:
            level, title = len(heading.group(1)), heading.group(2).strip().lower()
            if further_level is not None and level <= further_level:
                further_level = None
            if title.startswith("going further"):
                further_level = level
            if level <= 2:
                after = title.startswith(AFTER_THE_DAY)
        part = parts["after" if after else "going further" if further_level is not None else "core"]
        if cell["cell_type"] == "markdown":
            part.words += prose_words(source)
            continue
        part.cells += 1
        part.lines += sum(1 for line in source.splitlines()
                          if line.strip() and not line.lstrip().startswith("#"))
        part.explorers += len(re.findall(r"\b\w+Explorer\(", source))
        for qid in re.findall(r'\bask\("([^"]+)"\)', source):
            part.checks += 1
            part.why_words += prose_words(whys.get(qid, {}).get("why", ""))
    return parts


def core_prose(path: Path) -> int:
    """Words of prose outside *Going further* (the core and what is done after the day), as the budget
    ``PROSE_BUDGET`` counts them."""
    parts = lesson_parts(path)
    return parts["core"].words + parts["after"].words


def stated_minutes(path: Path) -> tuple[int | None, int | None]:
    """``(core, going further)`` minutes as the Goals cell states them (None where it does not)."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        text = "".join(cell["source"])
        goals = re.search(r"\*\*Goals\*\* \((\d+) min(.*?)\)\n", text)
        if goals:
            further = re.search(r"adds? (\d+) min", goals.group(2))
            return int(goals.group(1)), int(further.group(1)) if further else None
    return None, None


def main() -> int:
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    print("| lesson | part | words | Why words | code cells | code lines | checks | explorers | stated min |")
    print("|---|---|---|---|---|---|---|---|---|")
    core_total = 0
    for path in paths:
        parts, stated = lesson_parts(path), stated_minutes(path)
        for (name, part), minutes in zip(parts.items(), (*stated, None), strict=True):
            print(f"| {path.stem} | {name} | {part.words} | {part.why_words} | {part.cells} | {part.lines} | "
                  f"{part.checks} | {part.explorers} | {'' if minutes is None else minutes} |")
        if not path.name.startswith("00"):
            core_total += stated[0] or 0
    prose = {p.name[:2]: core_prose(p) for p in paths if p.name[:2] in PROSE_BUDGET}
    print(f"\nThe Goals cells state {core_total} min for the core of lessons 01-08 "
          f"(the limit: {CORE_LIMIT}).")
    shares = ", ".join(f"{n} {w}/{PROSE_BUDGET[n]}" for n, w in prose.items())
    print(f"Core prose (core + after words / budget): {shares}; {sum(prose.values())}/{PROSE_LIMIT} in all")
    over = [n for n, w in prose.items() if w > PROSE_BUDGET[n]] or sum(prose.values()) > PROSE_LIMIT
    return 0 if core_total <= CORE_LIMIT and not over else 1


if __name__ == "__main__":
    sys.exit(main())
