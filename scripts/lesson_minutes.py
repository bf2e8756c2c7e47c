"""How many minutes each lesson's core takes a room, counted from the notebook
(``python scripts/lesson_minutes.py``).

The minutes are timed as a fresh instructor would time them (issue 39): per lesson, ``FRAMING``
minutes to frame it, every word of prose outside *Going further* (Try it and Summary included) and
each check's Why read at ``WORDS_PER_MINUTE``, every code line the room sees (comments too) at
``LINES_PER_MINUTE`` (a "▶ Demo" lane's too: it is read on the projector), ``PER_TASK`` minutes for
each check and each explorer the room works itself, ``DEMO_EXPLORER`` for an explorer in a demo lane
(the instructor moves the sliders, the room watches and calls out), the measured waits (``WAITS``)
and a capstone's minutes in all (``CAPSTONE``), then ``STRAGGLERS`` (+10%), rounded. Each Goals cell
states its result; the guide's table "How the minutes were estimated" shows the arithmetic;
``tests/test_lesson_minutes.py`` checks that the three agree with this script, with the guide's
schedule, and that the core of lessons 01-08 fits ``CORE_LIMIT``, rounded and before rounding. The
rates for checks, explorer demos and the capstone are those three fresh readers of the executed
lessons used (design notes, "Stop 48"); ours were a minute lower each, and their estimates came out
~20 minutes over what the Goals cells stated.

A cell belongs to *Going further* from a heading that starts with "Going further" to the next
heading of the same or a higher level; the Try it, Summary and Next sections (done after the day,
yet counted in the minutes) are counted apart as ``after``. A demo lane is the code cells after a
markdown cell holding "▶ Demo", up to the next markdown cell.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_LIMIT = 140  # minutes of the core of 01-08 in the 3-hour slot, summed before rounding (besides: welcome,
#                   breaks, buffer, close)
#: Words of prose each lesson's core may hold (core + after the day: everything outside Going further),
#: so that one idea is shown once; the walk reads them at 100 words a minute (issue 39).
PROSE_BUDGET = {"01": 310, "02": 270, "03": 330, "04": 380, "05": 330, "06": 420, "07": 430, "08": 450}
PROSE_LIMIT = 3500  # words of core prose in 01-08 together
AFTER_THE_DAY = ("try it", "summary", "where to go", "clean-up")  # level-2 sections done after the day
FRAMING = 2  # minutes to frame a lesson
WORDS_PER_MINUTE = 100  # the room reads English as a second language
LINES_PER_MINUTE = 10  # code the room reads, runs or watches run
PER_TASK = 4  # minutes for each check (read, predict, run, talk; its Why is in the words) and each explorer
DEMO_EXPLORER = 3  # minutes for an explorer run from the front (a demo lane): watched, not worked
WAITS = {"07": 0.5, "08": 1}  # minutes the room waits on slow cells (07: two sessions; 08: 300 turns)
CAPSTONE = {"08": 10}  # a capstone run from the front: the task, the defaults, hints and runs, in all
STRAGGLERS = 1.1  # +10% for the slowest in the room
PLACEHOLDER = "# your experiments here"  # a Try it's empty cell: the one code line not read


@dataclass
class Part:
    """What one part of a lesson asks of a learner."""

    words: int = 0  # prose, in markdown cells
    why_words: int = 0  # the Whys of the checks asked, read after each verdict
    cells: int = 0  # code cells
    lines: int = 0  # non-blank lines of code, comments included (the room reads them), not PLACEHOLDER
    demo_lines: int = 0  # of those, in a "▶ Demo" lane: run from the front, not read by the room
    checks: int = 0  # ask("...") predictions
    explorers: int = 0  # widgets with sliders (a line that builds a ...Explorer)
    demo_explorers: int = 0  # of those, in a "▶ Demo" lane


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
    further_level, after, demo = None, False, False
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
            demo = "▶ Demo" in source
            continue
        part.cells += 1
        lines = sum(1 for line in source.splitlines() if line.strip() and line.strip() != PLACEHOLDER)
        part.lines += lines
        part.demo_lines += lines if demo else 0
        explorers = len(re.findall(r"\b\w+Explorer\(", source))
        part.explorers += explorers
        part.demo_explorers += explorers if demo else 0
        for qid in re.findall(r'\bask\("([^"]+)"\)', source):
            part.checks += 1
            part.why_words += prose_words(whys.get(qid, {}).get("why", ""))
    return parts


def core_prose(path: Path) -> int:
    """Words of prose outside *Going further* (the core and what is done after the day), as the budget
    ``PROSE_BUDGET`` counts them."""
    parts = lesson_parts(path)
    return parts["core"].words + parts["after"].words


@dataclass
class Timing:
    """A lesson's core minutes by the method (module docstring), with the counts they come from."""

    words: int  # prose outside Going further (Try it and Summary included) and the Whys of its checks
    lines: int  # code lines, demo lanes included
    tasks: int  # checks, and explorers the room works itself
    extra: float  # explorer demos, waits and capstone, minutes
    raw: float  # minutes before the stragglers' 10%
    minutes: int  # raw * STRAGGLERS, rounded


def timed_minutes(path: Path, whys: dict[str, dict] | None = None) -> Timing:
    """The core minutes of the lesson at ``path`` by the method (module docstring); ``whys`` as for
    ``lesson_parts``."""
    number, parts = path.name[:2], lesson_parts(path, whys)
    read = [parts["core"], parts["after"]]
    words = sum(p.words + p.why_words for p in read)
    lines = sum(p.lines for p in read)
    tasks = sum(p.checks + p.explorers - p.demo_explorers for p in read)
    demos = sum(p.demo_explorers for p in read)
    extra = DEMO_EXPLORER * demos + WAITS.get(number, 0) + CAPSTONE.get(number, 0)
    raw = FRAMING + words / WORDS_PER_MINUTE + lines / LINES_PER_MINUTE + PER_TASK * tasks + extra
    return Timing(words, lines, tasks, extra, raw, int(raw * STRAGGLERS + 0.5))


def unrounded_core(paths) -> float:
    """The core minutes of the lessons at ``paths`` summed before each is rounded (what ``CORE_LIMIT``
    also bounds: eight lessons each rounded down can hide several minutes)."""
    return sum(timed_minutes(path).raw * STRAGGLERS for path in paths)


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
    print("| lesson | part | words | Why words | code cells | code lines | in a demo | checks | explorers "
          "| stated min |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    core_total = 0
    for path in paths:
        parts, stated = lesson_parts(path), stated_minutes(path)
        for (name, part), minutes in zip(parts.items(), (*stated, None), strict=True):
            print(f"| {path.stem} | {name} | {part.words} | {part.why_words} | {part.cells} | {part.lines} | "
                  f"{part.demo_lines} | {part.checks} | {part.explorers} | "
                  f"{'' if minutes is None else minutes} |")
        if not path.name.startswith("00"):
            core_total += stated[0] or 0
    prose = {p.name[:2]: core_prose(p) for p in paths if p.name[:2] in PROSE_BUDGET}
    timed = {n: timed_minutes(p) for p in paths if (n := p.name[:2]) in PROSE_BUDGET}
    rest = {n: f" + {t.extra:g}" if t.extra else "" for n, t in timed.items()}
    print(f"\nTimed (2 + words/100 + lines/10 + {PER_TASK} x checks + demos, waits, capstone, x 1.1): "
          + ", ".join(f"{n} 2 + {t.words}/100 + {t.lines}/10 + {PER_TASK}x{t.tasks}{rest[n]} = "
                      f"{t.raw:.2f} -> {t.minutes}" for n, t in timed.items())
        + f"; {sum(t.minutes for t in timed.values())} in all")
    unrounded = unrounded_core(p for p in paths if p.name[:2] in PROSE_BUDGET)
    print(f"\nThe Goals cells state {core_total} min for the core of lessons 01-08; unrounded, "
          f"{unrounded:.1f} (the limit for both: {CORE_LIMIT}).")
    shares = ", ".join(f"{n} {w}/{PROSE_BUDGET[n]}" for n, w in prose.items())
    print(f"Core prose (core + after words / budget): {shares}; {sum(prose.values())}/{PROSE_LIMIT} in all")
    over = [n for n, w in prose.items() if w > PROSE_BUDGET[n]] or sum(prose.values()) > PROSE_LIMIT
    stale = any(stated_minutes(p)[0] != timed[p.name[:2]].minutes for p in paths if p.name[:2] in timed)
    return 0 if max(core_total, unrounded) <= CORE_LIMIT and not over and not stale else 1


if __name__ == "__main__":
    sys.exit(main())
