"""Execute the lessons headless: the instructor's dry run, and what the tests use.

Command line (``make lessons`` runs the first form)::

    python -m helpers.course.lessons --out build/notebooks          # every lesson, in order
    python -m helpers.course.lessons 01_stateless_model 03          # some lessons (name or number prefix)

Each notebook runs top to bottom on a real Jupyter kernel (nbclient) with a per-cell timeout, in
the ``notebooks/`` folder as working directory; the executed copy (with outputs) goes to the
output folder, never back over the source. A table of run times is printed at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from helpers.config import project_root

DEFAULT_CELL_TIMEOUT = 300  # seconds per cell: the slowest cell (lesson 08's replay) takes ~60 s


def notebooks_dir() -> Path:
    """The course's ``notebooks/`` folder."""
    return project_root() / "notebooks"


def lesson_paths(selection: list[str] | None = None) -> list[Path]:
    """Lesson notebooks, sorted by name; ``selection`` keeps names or number prefixes (``"03"``).

    Raises:
        FileNotFoundError: a selected name matches no lesson.
    """
    paths = sorted(notebooks_dir().glob("[0-9][0-9]*.ipynb"))
    if not selection:
        return paths
    chosen = []
    for wanted in selection:
        matches = [p for p in paths if p.stem == wanted or p.stem.startswith(wanted)]
        if not matches:
            raise FileNotFoundError(f"No lesson matches {wanted!r} in {notebooks_dir()}")
        chosen.extend(m for m in matches if m not in chosen)
    return chosen


@dataclass
class LessonRun:
    """The outcome of one executed lesson."""

    name: str
    seconds: float
    cells: int
    probe: object = None  # JSON value printed by the probe code, if any
    output_path: Path | None = None


def execute_lesson(
    path: Path,
    out_dir: Path | None = None,
    cell_timeout: int = DEFAULT_CELL_TIMEOUT,
    probe: str | None = None,
) -> LessonRun:
    """Run one notebook top to bottom on a fresh kernel.

    Args:
        path: the ``.ipynb`` file.
        out_dir: where to write the executed copy (none written when ``None``).
        cell_timeout: seconds allowed per cell.
        probe: optional Python code run in the same kernel after the last cell; it must print
            one JSON value as its last output line, returned as ``LessonRun.probe``. Tests use
            it to check what the lesson showed.

    Returns:
        A ``LessonRun`` with the wall time in seconds.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised; the message names the cell and
            shows its error. ``CellTimeoutError`` when a cell runs past ``cell_timeout``.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        km=_kernel_manager(),
        timeout=cell_timeout,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    probe_value = None
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            if probe is not None:
                cell = nbformat.v4.new_code_cell(probe)
                nb.cells.append(cell)
                client.execute_cell(cell, len(nb.cells) - 1)
                nb.cells.pop()
                texts = [o.get("text", "") for o in cell.outputs if o.get("name") == "stdout"]
                probe_value = json.loads("".join(texts).strip().splitlines()[-1])
    finally:  # write what ran, also when a cell failed, so it can be inspected
        if client.km is not None and client.km.has_kernel:
            client.km.shutdown_kernel(now=True)
        output_path = None
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            output_path = out_dir / path.name
            nbformat.write(nb, output_path)
    seconds = time.perf_counter() - start
    return LessonRun(path.stem, seconds, len(nb.cells), probe_value, output_path)


def _kernel_manager():
    """A kernel manager for the ``python3`` kernel; IPC transport on POSIX (no TCP ports, and no
    "running over TCP without encryption" warning on every run)."""
    import os

    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="python3")
    if os.name == "posix":
        km.transport = "ipc"
        km.ip = str(Path(tempfile.mkdtemp(prefix="lesson-kernel-")) / "kernel")
    return km


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="names or number prefixes (default: all)")
    parser.add_argument("--out", type=Path, default=project_root() / "build" / "notebooks")
    parser.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT)
    args = parser.parse_args(argv)
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    try:
        paths = lesson_paths(args.lessons)
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    runs, failed = [], []
    for path in paths:
        print(f"running {path.name} ...", flush=True)
        try:
            runs.append(execute_lesson(path, args.out, args.cell_timeout))
        except (CellExecutionError, CellTimeoutError) as exc:
            failed.append(path.name)
            print(f"FAILED {path.name} (executed part: {args.out / path.name}):\n{exc}",
                  file=sys.stderr)
    print(f"\n{'lesson':<32} {'cells':>5} {'seconds':>8}")
    for run in runs:
        print(f"{run.name:<32} {run.cells:>5} {run.seconds:>8.1f}")
    print(f"\nexecuted notebooks: {args.out}")
    if failed:
        print(f"{len(failed)} lesson(s) failed: {', '.join(failed)}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
