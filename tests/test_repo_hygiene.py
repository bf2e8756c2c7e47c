"""House rules checked on every run: notebooks are source (no outputs), every lesson has the
course's structure, ruff is clean over .py and .ipynb, and no key-shaped string is committed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from lessons import lesson_paths

from helpers.config import project_root

ROOT = project_root()
# Shapes of real secrets: OpenAI/DeepSeek-style sk- keys, AWS access key ids, GitHub and
# Hugging Face tokens, Slack tokens, private key blocks.
KEY_PATTERNS = [
    r"sk-(?:proj-)?[A-Za-z0-9_\-]{20,}",
    r"AKIA[0-9A-Z]{16}",
    r"gh[pousr]_[A-Za-z0-9]{36}",
    r"hf_[A-Za-z0-9]{30,}",
    r"xox[abprs]-[A-Za-z0-9-]{10,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
]


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / line for line in out.stdout.splitlines() if (ROOT / line).is_file()]


def key_shaped_strings(text: str) -> list[str]:
    return [m.group(0) for p in KEY_PATTERNS for m in re.finditer(p, text)]


def test_key_detector_finds_keys():
    fake = "sk-" + "a1B2" * 6
    assert key_shaped_strings(f"OPENAI_API_KEY={fake}") == [fake]
    assert key_shaped_strings("OPENAI_API_KEY=sk-...") == []


def test_no_key_shaped_strings_committed():
    found = {}
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if hits := key_shaped_strings(text):
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}


@pytest.mark.parametrize("path", lesson_paths(), ids=lambda p: p.stem)
def test_notebook_is_stripped_and_structured(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    dirty = [i for i, c in enumerate(code) if c.get("outputs") or c.get("execution_count")]
    assert dirty == [], f"{path.name}: code cells {dirty} carry outputs; strip them"
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    # markdown written as "# text" comments renders as a stack of headings
    commented = [line for line in markdown.splitlines() if re.match(r"#(\s+#|\s*$)", line)]
    assert commented == [], f"{path.name}: commented-out markdown lines {commented[:3]}"
    for part in ["**Goals**", "## Try it", "## Summary", "**Next:**"]:
        assert part in markdown, f"{path.name} lacks {part!r}"
    assert "show_setup()" in "".join(code[0]["source"]), "first code cell must call show_setup()"
    # cells stay short: the logic lives in helpers
    longest = max(len("".join(c["source"]).splitlines()) for c in code)
    assert longest <= 40, f"{path.name} has a code cell of {longest} lines"


def test_next_links_point_to_the_following_lesson():
    paths = lesson_paths()
    for current, following in pairwise(paths):
        assert f"]({following.name})" in current.read_text(encoding="utf-8"), current.name


def test_ruff_is_clean_over_py_and_ipynb():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_runtime_files_are_ignored():
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    for folder in [".runtime/", "build/", ".venv/", ".env"]:
        assert folder in ignored


MEMORY_MODULES = sorted(p for p in (ROOT / "helpers").glob("*.py") if p.name != "__init__.py")


def test_memory_modules_never_import_course_plumbing_nor_each_others_privates():
    for path in MEMORY_MODULES:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) helpers\.course", text, re.M), path.name
        # "from helpers.x import _name" reaches into another module
        assert not re.search(r"from helpers\.\w+ import [^\n]*\b_\w", text), path.name


def test_neither_helpers_nor_a_lesson_imports_the_lab():
    """The lab (options not adopted, public-set tools) serves the benchmarks and tests only."""
    for path in [*(ROOT / "helpers").rglob("*.py"), *lesson_paths()]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*\"?(from|import) lab\b", text, re.M), path.name


def lines_of(module: str) -> int:
    return len((ROOT / "helpers" / module).read_text(encoding="utf-8").splitlines())


def reading_lists() -> list[tuple[str, list[str], int, list[str]]]:
    """(lesson, core modules, the lines stated for them, going-further modules) of helpers/README.md."""
    readme = (ROOT / "helpers" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) [^|]+\| ([^|]+) \| (\d+) \| ([^|]*) \|$", readme, re.M)
    return [(lesson, re.findall(r"`(\w+\.py)`", core), int(stated), re.findall(r"`(\w+\.py)`", further))
            for lesson, core, stated, further in rows]


def test_each_lessons_core_reading_fits_one_sitting():
    """What a learner must read to follow a lesson's mechanism (its core list in helpers/README.md) is
    at most 400 lines, counted from the files; the rest of what it touches is listed as going further."""
    lists = reading_lists()
    assert [lesson for lesson, *_ in lists] == ["01", "02", "03", "04", "05", "06", "07", "08", "09"]
    for lesson, core, stated, further in lists:
        assert core and set(core).isdisjoint(further), lesson
        for module in [*core, *further]:
            assert (ROOT / "helpers" / module).is_file(), f"lesson {lesson}: no helpers/{module}"
        lines = sum(map(lines_of, core))
        assert stated == lines, f"lesson {lesson}: README says {stated}, {core} have {lines}"
        assert lines <= 400, f"lesson {lesson} asks a learner to read {lines} lines to follow it"


def test_each_memory_module_is_read_in_one_sitting():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in MEMORY_MODULES}
    assert max(sizes.values()) <= 300, sizes
