"""Lesson 03's demo: processes racing to append to one history file (langchain_community's
``FileChatMessageHistory``: no lock; ``helpers.history.FileHistory``: lock + atomic replace)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from langchain_core.messages import HumanMessage, messages_from_dict

from helpers.history import FileHistory

KINDS = ("langchain", "helpers")
_ID = re.compile(r"w(\d+)-(\d+)")
ROOT = Path(__file__).resolve().parents[2]  # the project root, where ``python -m helpers...`` runs


def run_concurrent_appends(kind: str, path_or_dir: str | Path, writers: int = 2, appends: int = 200,
                           timeout: float = 120.0) -> dict:
    """Race ``writers`` processes, each appending ``appends`` numbered messages one ``add_message`` at a
    time to one ``kind`` history (``"langchain"``, ``"helpers"``) at ``path_or_dir`` (a ``.json`` path or
    a folder: session ``demo-<kind>``), reset first; writers are killed after ``timeout`` s. Returns kind,
    path, expected, what the file holds (stored, lost, duplicates, out_of_order, valid_json, error),
    writer_errors (+ writer_error_examples), lost_silently, seconds and outcome (a sentence): a damaged
    file is reported, never raised. ValueError: a bad kind, writers or appends."""
    if kind not in KINDS or writers < 1 or appends < 0:
        raise ValueError(f"need kind in {KINDS}, writers >= 1, appends >= 0: {kind!r}, {writers}, {appends}")
    path = p if (p := Path(path_or_dir)).suffix == ".json" else p / f"demo-{kind}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "langchain":  # an empty history, written before the race so start-up does not race
        path.write_text("[]", encoding="utf-8")
    else:
        FileHistory(path.stem, path.parent).clear()
    returned, errors = set(), []  # ids whose add_message returned; one line per failed append or writer
    with tempfile.TemporaryDirectory(prefix="demo-sync-") as sync:  # run from the root: helpers imports
        procs = [subprocess.Popen([sys.executable, "-m", "helpers.course.demos", "writer", json.dumps(
            {"kind": kind, "path": str(path.resolve()), "writer": w, "appends": appends, "sync": sync})],
            cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for w in range(writers)]
        deadline = time.monotonic() + timeout
        while (not all((Path(sync) / f"ready-{w}").exists() for w in range(writers))  # all imported
               and time.monotonic() < deadline and all(p.poll() is None for p in procs)):
            time.sleep(0.01)
        start = time.perf_counter()
        (Path(sync) / "go").touch()  # release all writers at once
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                err += "\nkilled: did not finish in time"
            last = ([line for line in err.splitlines() if line.strip()] or ["no output"])[-1]  # if it died
            report = next((json.loads(x) for x in reversed(out.splitlines()) if x[:1] + x[-1:] == "{}"),
                          {"returned": [], "errors": [f"writer exited with code {proc.returncode}: {last}"]})
            returned |= set(report["returned"])
            errors += report["errors"]
        seconds = time.perf_counter() - start
    fields, stored_ids = _check_file(kind, path, writers, appends)
    result = {"kind": kind, "path": str(path), "expected": writers * appends, **fields,
              "writer_errors": len(errors), "writer_error_examples": list(dict.fromkeys(errors))[:3],
              "lost_silently": None if stored_ids is None else len(returned - stored_ids),
              "seconds": round(seconds, 2)}
    return result | {"outcome": f"{writers} processes appended {writers * appends} messages; " + (
        f"the file is no longer valid JSON ({result['error']}): none of them can be read back; "
        f"{len(errors)} appends failed while writing." if not result["valid_json"] else
        f"the file holds {result['stored']}: {result['lost']} were lost." if result["lost"] else
        f"the file holds all {result['stored']}, none lost, none duplicated.")}


def _check_file(kind: str, path: Path, writers: int, appends: int) -> tuple[dict, set | None]:
    """Read the file back the way its own class would: the result fields and the stored ids."""
    try:
        messages = (messages_from_dict(json.loads(path.read_text(encoding="utf-8"))) if kind == "langchain"
                    else FileHistory(path.stem, path.parent).messages)
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError, HistoryFileError, ...
        return {"stored": None, "lost": writers * appends, "duplicates": None, "out_of_order": None,
                "valid_json": False, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}, None
    ids = [m.id or "" for m in messages]
    found = [m for m in map(_ID.fullmatch, ids) if m]
    orders = [[int(m[2]) for m in found if m[1] == w] for w in {m[1] for m in found}]  # per writer
    lost = len({f"w{w}-{n}" for w in range(writers) for n in range(appends)} - set(ids))
    return {"stored": len(messages), "lost": lost, "duplicates": len(ids) - len(set(ids)), "out_of_order":
            sum(ns != sorted(ns) for ns in orders), "valid_json": True, "error": None}, set(ids)


def _writer(kind: str, path: str, writer: int, appends: int, sync: str) -> None:
    """One writer process: say it is ready, wait for ``go``, append, print a JSON report line."""
    if kind == "langchain":
        from langchain_community.chat_message_histories import FileChatMessageHistory

        history = FileChatMessageHistory(path, encoding="utf-8", ensure_ascii=False)
    else:
        history = FileHistory(Path(path).stem, Path(path).parent)
    (Path(sync) / f"ready-{writer}").touch()
    while not (Path(sync) / "go").exists():
        time.sleep(0.001)
    returned, errors = [], []
    for number in range(appends):  # Korean text, id w<writer>-<number>
        try:
            history.add_message(HumanMessage(f"작성자 {writer}의 {number}번째 메시지입니다. (writer "
                                             f"{writer}, message {number})", id=f"w{writer}-{number}"))
            returned.append(f"w{writer}-{number}")
        except Exception as exc:  # e.g. the library's writer reads a half-written file
            errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
    print(json.dumps({"returned": returned, "errors": errors}))


def main(argv: list[str] | None = None) -> None:
    """``race FOLDER [--writers N] [--appends N]``: both demos, a JSON line each; ``writer SPEC``: one."""
    parser = argparse.ArgumentParser(prog="python -m helpers.course.demos")
    parser.add_argument("command", choices=("race", "writer"))
    parser.add_argument("target", help="race: the folder; writer: its JSON spec (internal)")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--appends", type=int, default=200)
    a = parser.parse_args(argv)
    if a.command == "writer":
        return _writer(**json.loads(a.target))
    for kind in KINDS:
        print(json.dumps(run_concurrent_appends(kind, a.target, a.writers, a.appends), ensure_ascii=False))


if __name__ == "__main__":
    main()
