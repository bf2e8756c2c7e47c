"""The course on a second supported Python: setup from the same lock, the unit tests, lessons 00-03.

The whole suite runs on the Python of ``.venv``; this test builds a venv with another supported
version (3.11, 3.12 or 3.13, whichever else is on the machine: on PATH as ``python3.1x`` or under
pyenv) from the same ``requirements-dev.txt``, then runs there the unit tests of the code whose
behaviour could differ between versions (``VERSION_SENSITIVE_TESTS``, Milvus Lite only), and lessons
00-03 on a real kernel of that Python. The work starts with the session (``start``, called by
``tests/conftest.py``) and runs in a thread on the machine's other core while the rest of the suite
runs; the test waits for it and checks what it did.

When no second Python is found the test skips with the reason, except in CI (``CI=true``), where it
fails: CI must prove the lock installs on two versions. The venv is kept under
``build/other-python/`` and rebuilt only when the lock changes (with uv when it can).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUPPORTED = ("3.13", "3.12", "3.11")
VERSION_SENSITIVE_TESTS = ("test_config.py", "test_tokens.py", "test_history.py", "test_truncation.py",
                           "test_summarization.py", "test_offline_model.py", "test_milvus_store.py",
                           "test_selfcheck.py", "test_retrieval.py")


def _version(python: str) -> str | None:
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2], sep='.')"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def other_python() -> tuple[str, str] | None:
    """(path, "3.x") of a supported Python other than this one, or None."""
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [f"python{v}" for v in SUPPORTED if v != mine]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for version in SUPPORTED:
        if version != mine:
            candidates += sorted(str(p) for p in pyenv_root.glob(f"{version}.*/bin/python{version}"))
    for candidate in candidates:
        path = shutil.which(candidate) or (candidate if Path(candidate).is_file() else None)
        if path and (found := _version(path)) in SUPPORTED and found != mine:
            return path, found
    return None


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, **kwargs)


def _build_venv(python: str, version: str, venv: Path) -> None:
    """A venv of ``python`` at ``venv`` with the exact dev lock and this checkout, editable.

    With uv (in the dev lock) this takes seconds; pip, the fallback when uv is missing or cannot
    reach the index the machine's pip is configured for, takes minutes on a 2-core machine.
    """
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    vpy = str(venv / "bin" / "python")
    if uv:
        shutil.rmtree(venv, ignore_errors=True)
        steps = ([uv, "venv", "-q", "--python", python, str(venv)],
                 [uv, "pip", "install", "-q", "--python", vpy, "-r", "requirements-dev.txt"],
                 [uv, "pip", "install", "-q", "--python", vpy, "--no-deps", "-e", "."])
        for step in steps:
            done = _run(step, timeout=1200)
            if done.returncode != 0:
                print(f"uv could not build the venv ({' '.join(step[1:3])}), pip builds it:\n"
                      f"{done.stderr[-1000:]}")
                break
        else:
            return
    shutil.rmtree(venv, ignore_errors=True)
    made = _run([python, "-m", "venv", str(venv)])
    assert made.returncode == 0, made.stderr[-2000:]
    for step in (["-m", "pip", "install", "-q", "--disable-pip-version-check", "pip==26.3"],
                 ["-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", "requirements-dev.txt"],
                 ["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "-e", "."]):
        done = _run([vpy, *step], timeout=1200)
        assert done.returncode == 0, f"{' '.join(step)} on Python {version}:\n{done.stderr[-3000:]}"


_started: dict[str, Future] = {}


def start(milvus_uri: str) -> None:
    """Start the second Python's work in a thread, once a session (``tests/conftest.py`` calls this
    when the session has collected the test below): it runs on the machine's other core while the
    rest of the suite runs, and the test only waits for it. The environment is copied now, before
    any test changes it; the lessons get a runtime folder of their own."""
    if "work" not in _started:
        env = {**os.environ, "MILVUS_TEST_URI": milvus_uri,
               "COURSE_RUNTIME_DIR": tempfile.mkdtemp(prefix="other-python-runtime-")}
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="other-python")
        _started["work"] = pool.submit(_work, env)
        pool.shutdown(wait=False)


def _work(env: dict[str, str]) -> dict:
    """Build (or reuse) the venv, then run the unit tests and lessons 00-03 there: what ran, for the test."""
    found = other_python()
    if found is None:
        return {"missing": f"no second Python among {', '.join(SUPPORTED)} on this machine"}
    python, version = found
    venv = ROOT / "build" / "other-python" / version
    lock = (ROOT / "requirements.txt").read_bytes() + (ROOT / "requirements-dev.txt").read_bytes()
    stamp = venv / ".lock-sha256"
    digest = hashlib.sha256(lock).hexdigest()
    vpy = venv / "bin" / "python"
    if not (stamp.is_file() and stamp.read_text() == digest and vpy.exists()):
        _build_venv(python, version, venv)
        stamp.write_text(digest)
    env = {**env, "PYTHONPYCACHEPREFIX": str(venv / "pycache")}  # never into the checkout
    # An editable install of the checkout under test: the other venv must import *this* helpers.
    where = _run([str(vpy), "-c", "import helpers, sys; print(helpers.__file__, sys.version)"],
                 env=env, timeout=120)
    # The unit tests of the code whose behaviour could differ between Python versions (text and
    # Unicode handling, files and locks, the tokenizer, the stand-in, the windows and summaries, the
    # store on Milvus Lite, the checks); the rest of the suite does not depend on the version and runs
    # once, on the main Python, which keeps CI within its time budget. So do the pasted-file tests:
    # counting and splitting one 20,000-token text, the same on every version, and the first of them
    # to reach the stand-in has it embed ~1,000 lines (most of a minute on 2 cores).
    unit = _run([str(vpy), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                 "-m", "not notebook and not browser and not other_python and not slow",
                 "-k", "not server and not long_message and not pasted_file",
                 *(f"tests/{name}" for name in VERSION_SENSITIVE_TESTS)],
                env=env, timeout=1800)
    out = Path(tempfile.mkdtemp(prefix="other-python-lessons-"))
    lessons = _run([str(vpy), "scripts/lessons.py", "--out", str(out), "00", "01", "02", "03"],
                   env=env, timeout=1200)
    return {"version": version, "where": where, "unit": unit, "lessons": lessons,
            "written": sorted(p.name for p in out.glob("*.ipynb"))}


@pytest.mark.other_python
def test_setup_unit_tests_and_first_lessons_on_another_python(milvus_server):
    start(milvus_server.uri)  # started with the session already, unless this test runs alone
    ran = _started["work"].result(timeout=3600)
    if "missing" in ran:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run on a second Python: {ran['missing']}")
        pytest.skip(ran["missing"])
    version, where, unit, lessons = ran["version"], ran["where"], ran["unit"], ran["lessons"]
    assert where.stdout.startswith(str(ROOT / "helpers")), where.stdout + where.stderr
    assert f"{version}." in where.stdout
    assert unit.returncode == 0, f"unit tests on Python {version}:\n{unit.stdout[-4000:]}"
    assert " passed" in unit.stdout.splitlines()[-1]
    assert lessons.returncode == 0, f"lessons 00-03 on Python {version}:\n{lessons.stdout[-3000:]}" \
                                    f"{lessons.stderr[-3000:]}"
    assert ran["written"][:4] == ["00_setup.ipynb", "01_stateless_model.ipynb", "02_in_memory_history.ipynb",
                                  "03_file_history.ipynb"]
