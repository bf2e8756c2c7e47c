"""How long each lesson takes a learner, computed from the notebook (``python scripts/lesson_minutes.py``).

The yardstick, for a room reading English as a second language:

- **reading**: words of markdown prose (fenced code and HTML tags left out), plus the Why of every
  check the lesson asks (``helpers/course/checks/<lesson>.json``), at 100 words a minute;
- **running**: one minute per code cell (run it, read its output);
- **predicting**: one more minute per check (``ask("...")``): think, commit, read the verdict;
- **Try it**: a fixed three minutes for the lesson's ``## Try it`` (its own cells are not counted).

A cell belongs to a *Going further* section from a heading that starts with "Going further" to the
next heading of the same or a higher level; those minutes are counted apart, as optional. The core
path is everything else. ``tests/test_lesson_minutes.py`` checks each Goals cell,
``**Goals** (<core> min; ... *Going further* ... adds <optional> min)``, against this script, and
the core of lessons 01-08 against the workshop's slot (``CORE_LIMIT`` minutes; 00 is pre-work).
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 100
TRY_IT_MINUTES = 3
CORE_LIMIT = 150  # learner-minutes for the core of lessons 01-08


@dataclass
class Part:
    """Words, code cells and checks of one part of a lesson (core or going further)."""

    words: int = 0
    cells: int = 0
    checks: int = 0
    try_it: int = 0

    @property
    def minutes(self) -> int:
        """Rounded up: reading + running + predicting + Try it."""
        return math.ceil(self.words / WORDS_PER_MINUTE + self.cells + self.checks + self.try_it)


def prose_words(markdown: str) -> int:
    """Words a learner reads in a markdown cell: fenced code and HTML tags left out."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    return len(re.findall(r"[^\s#*|>\-`]+", text))


def lesson_minutes(path: Path, whys: dict[str, dict] | None = None) -> dict[str, Part]:
    """``{"core": Part, "going further": Part}`` for the notebook at ``path``."""
    if whys is None:
        whys = {k: v for f in sorted((ROOT / "helpers" / "course" / "checks").glob("*.json"))
                for k, v in json.loads(f.read_text(encoding="utf-8")).items()}
    parts = {"core": Part(), "going further": Part()}
    further_level, in_try_it = None, False
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        heading = re.match(r"(#+)\s+(.*)", source.lstrip()) if cell["cell_type"] == "markdown" else None
        if heading:
            level, title = len(heading.group(1)), heading.group(2).strip().lower()
            if further_level is not None and level <= further_level:
                further_level = None
            if title.startswith("going further"):
                further_level = level
            in_try_it = title.startswith("try it") if level <= 2 else in_try_it
        part = parts["going further" if further_level is not None else "core"]
        if in_try_it and not part.try_it:
            part.try_it = TRY_IT_MINUTES
        if cell["cell_type"] == "markdown":
            part.words += prose_words(source)
        elif not in_try_it:
            part.cells += 1
            for qid in re.findall(r'\bask\("([^"]+)"\)', source):
                part.checks += 1
                part.words += prose_words(whys.get(qid, {}).get("why", ""))
    return parts


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
    print("| lesson | words | code cells | checks | core min | stated | going further min | stated |")
    print("|---|---|---|---|---|---|---|---|")
    core_total = 0
    for path in paths:
        parts, (core, further) = lesson_minutes(path), stated_minutes(path)
        c, g = parts["core"], parts["going further"]
        if not path.name.startswith("00"):
            core_total += c.minutes
        print(f"| {path.stem} | {c.words} | {c.cells} | {c.checks} | {c.minutes} | {core} | "
              f"{g.minutes} | {further} |")
    print(f"\nCore of lessons 01-08: {core_total} min (the slot: {CORE_LIMIT}).")
    return 0 if core_total <= CORE_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
