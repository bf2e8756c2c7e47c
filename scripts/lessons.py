"""Execute the lessons headless: the instructor's dry run, and what the tests use.

``python scripts/lessons.py [01_stateless_model 03 ...] --out build/notebooks`` (``make lessons``:
all, in order) runs each top to bottom on a real Jupyter kernel (nbclient) in ``notebooks/``, a timeout
per cell; the executed copy goes to the output folder (never over the source); it prints the run times."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.config import project_root  # noqa: E402

DEFAULT_CELL_TIMEOUT = 300  # seconds per cell, well above the slowest cell (lesson 08's replay)


def lesson_paths(selection: list[str] | None = None) -> list[Path]:
    """Lesson notebooks (``notebooks/``), sorted by name; ``selection`` keeps names or number prefixes
    (``"03"``). FileNotFoundError: a selected name matches no lesson."""
    folder = project_root() / "notebooks"
    paths, chosen = sorted(folder.glob("[0-9][0-9]*.ipynb")), []
    for wanted in selection or ():
        matches = [p for p in paths if p.stem == wanted or p.stem.startswith(wanted)]
        if not matches:
            raise FileNotFoundError(f"No lesson matches {wanted!r} in {folder}")
        chosen.extend(m for m in matches if m not in chosen)
    return chosen if selection else paths


@dataclass
class LessonRun:
    """The outcome of one executed lesson (``seconds``: wall time)."""

    name: str
    seconds: float
    cells: int
    probe: object = None  # JSON value printed by the probe code, if any
    output_path: Path | None = None


def execute_lesson(path: Path, out_dir: Path | None = None, cell_timeout: int = DEFAULT_CELL_TIMEOUT,
                   probe: str | None = None, passes: int = 1) -> LessonRun:
    """Run the notebook ``path`` top to bottom on a fresh kernel, ``cell_timeout`` seconds per cell;
    write the executed copy to ``out_dir`` (if given), also when a cell failed. ``probe``: code run
    after the last cell that prints one JSON value as its last output line (``LessonRun.probe``).
    ``passes``: how many times to run every cell in the same kernel (2: Run All twice).
    Raises nbclient's ``CellExecutionError`` (naming the cell and its error) or ``CellTimeoutError``."""
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb, km = nbformat.read(path, as_version=4), KernelManager(kernel_name="python3")
    if os.name == "posix":  # over IPC: no TCP port, no unencrypted-TCP warning
        km.transport = "ipc"
        km.ip = str(Path(tempfile.mkdtemp(prefix="lesson-kernel-")) / "kernel")
    client = NotebookClient(nb, km=km, timeout=cell_timeout,
                            resources={"metadata": {"path": str(path.parent)}})
    start, probe_value, output_path = time.perf_counter(), None, None
    try:
        with client.setup_kernel():
            for _ in range(passes):
                for index, cell in enumerate(nb.cells):
                    client.execute_cell(cell, index)
            if probe is not None:
                nb.cells.append(cell := nbformat.v4.new_code_cell(probe))
                client.execute_cell(cell, len(nb.cells) - 1)
                nb.cells.pop()
                texts = [o.get("text", "") for o in cell.outputs if o.get("name") == "stdout"]
                probe_value = json.loads("".join(texts).strip().splitlines()[-1])
    finally:  # write what ran, also when a cell failed, so it can be inspected
        if client.km is not None and client.km.has_kernel:
            client.km.shutdown_kernel(now=True)
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, output_path := out_dir / path.name)
    return LessonRun(path.stem, time.perf_counter() - start, len(nb.cells), probe_value, output_path)


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
            print(f"FAILED {path.name} (executed part: {args.out / path.name}):\n{exc}", file=sys.stderr)
    print(f"\n{'lesson':<32} {'cells':>5} {'seconds':>8}",
          *(f"{run.name:<32} {run.cells:>5} {run.seconds:>8.1f}" for run in runs),
          f"\nexecuted notebooks: {args.out}", sep="\n")
    if failed:
        print(f"{len(failed)} lesson(s) failed: {', '.join(failed)}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
