"""Demos for lesson 03: several processes appending to one history file at the same time.

``run_concurrent_appends("langchain", folder)`` starts writer processes that all append to one
``FileChatMessageHistory`` file (langchain_community, no lock, rewrites the file in place);
``run_concurrent_appends("helpers", folder)`` does the same with ``helpers.history.FileHistory``
(lock + atomic replace). The result dict says how many messages survived and whether the file is
still valid JSON. The tests reuse it.

The writer processes run this module: ``python -m helpers.course.demos writer --kind ... --path ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from langchain_core.messages import HumanMessage, messages_from_dict

from helpers.history import FileHistory

KINDS = ("langchain", "helpers")
_ID = re.compile(r"w(\d+)-(\d+)")


def demo_message(writer: int, number: int) -> HumanMessage:
    """The ``number``-th message of writer ``writer``: id ``w<writer>-<number>``, Korean text."""
    return HumanMessage(
        content=f"작성자 {writer}의 {number}번째 메시지입니다. (writer {writer}, message {number})",
        id=f"w{writer}-{number}",
    )


def run_concurrent_appends(
    kind: str,
    path_or_dir: str | Path,
    writers: int = 2,
    appends: int = 200,
    timeout: float = 120.0,
) -> dict:
    """Start ``writers`` processes together; each appends ``appends`` numbered messages to the
    same session, one ``add_message`` call per message; then check the file.

    Args:
        kind: ``"langchain"`` (``FileChatMessageHistory(path, encoding="utf-8",
            ensure_ascii=False)``) or ``"helpers"`` (``FileHistory``).
        path_or_dir: a folder (the session is ``demo-<kind>``, file ``<folder>/demo-<kind>.json``)
            or a ``.json`` file path (its folder and name are used). The file is reset first.
        writers: number of processes.
        appends: messages per process.
        timeout: seconds to wait for the writers before they are killed.

    Returns:
        ``{"kind", "path", "expected": writers*appends, "stored": messages read back (None if the
        file cannot be read), "lost": expected - stored (all of them if unreadable),
        "duplicates": ids stored more than once, "out_of_order": writers whose messages are not
        in order, "valid_json": bool, "error": why the file cannot be read or None,
        "writer_errors": number of appends that raised in the writers (or writers that died),
        "writer_error_examples": up to 3 distinct error lines, "lost_silently": lost messages
        whose append raised no error (None if unreadable), "seconds": wall time of the appends}``.
        Never raises for a damaged file: it reports it. Raises ``ValueError`` for an unknown kind.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if writers < 1 or appends < 0:
        raise ValueError(f"need writers >= 1 and appends >= 0, got {writers} and {appends}")
    path = Path(path_or_dir)
    if path.suffix == ".json":
        folder, session = path.parent, path.stem
    else:
        folder, session = path, f"demo-{kind}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.json"
    # Start from an empty history. (FileChatMessageHistory writes "[]" when the file is missing;
    # done here, before the race, so the writers' start-up does not race too.)
    if kind == "langchain":
        path.write_text("[]", encoding="utf-8")
    else:
        FileHistory(session, folder).clear()

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="demo-sync-") as sync:
        go = Path(sync) / "go"
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "helpers.course.demos",
                    "writer",
                    "--kind",
                    kind,
                    "--path",
                    str(path),
                    "--writer",
                    str(w),
                    "--appends",
                    str(appends),
                    "--ready",
                    str(Path(sync) / f"ready-{w}"),
                    "--go",
                    str(go),
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for w in range(writers)
        ]
        deadline = time.monotonic() + timeout
        # Release all writers at once, after each has finished importing.
        while not all((Path(sync) / f"ready-{w}").exists() for w in range(writers)):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                break
            time.sleep(0.01)
        start = time.perf_counter()
        go.touch()
        returned, error_count, examples = set(), 0, []
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                err += "\nkilled: did not finish in time"
            seconds = time.perf_counter() - start
            report = _last_json_line(out)
            if report is None:  # the process died
                error_count += 1
                lines = [line for line in err.strip().splitlines() if line.strip()]
                examples.append(
                    f"writer exited with code {proc.returncode}: "
                    f"{lines[-1] if lines else 'no output'}"
                )
            else:
                failed = set(report["failed"])
                returned |= {f"w{report['writer']}-{n}" for n in range(appends) if n not in failed}
                error_count += len(failed)
                examples.extend(report["examples"])

    result = {"kind": kind, "path": str(path), "expected": writers * appends}
    fields, stored_ids = _check_file(kind, path, session, writers, appends)
    result.update(fields)
    result["writer_errors"] = error_count
    # Appends that returned normally in a writer and still are not in the file.
    result["lost_silently"] = None if stored_ids is None else len(returned - stored_ids)
    result["writer_error_examples"] = list(dict.fromkeys(examples))[:3]
    result["seconds"] = round(seconds, 2)
    result["outcome"] = _outcome(result, writers)
    return result


def _outcome(result: dict, writers: int) -> str:
    """One sentence saying what the race left behind."""
    done = f"{writers} processes appended {result['expected']} messages"
    if not result["valid_json"]:
        return (f"{done}; the file is no longer readable ({result['error']}), so all of them are "
                f"unreadable; {result['writer_errors']} appends failed while writing.")
    if result["lost"]:
        return f"{done}; the file holds {result['stored']}: {result['lost']} were lost."
    return f"{done}; the file holds all {result['stored']}, none lost, none duplicated."


def _check_file(
    kind: str, path: Path, session: str, writers: int, appends: int
) -> tuple[dict, set[str] | None]:
    """Read the file back the way its own class would and count what survived.
    Returns the result fields and the set of stored message ids (None if unreadable)."""
    try:
        if kind == "langchain":
            messages = messages_from_dict(json.loads(path.read_text(encoding="utf-8")))
        else:
            messages = FileHistory(session, path.parent).messages
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError, HistoryFileError, ...
        reason = str(exc).splitlines()[0][:300]
        fields = {
            "stored": None,
            "lost": writers * appends,
            "duplicates": None,
            "out_of_order": None,
            "valid_json": False,
            "error": f"{type(exc).__name__}: {reason}",
        }
        return fields, None
    ids = [m.id or "" for m in messages]
    numbers: dict[int, list[int]] = {w: [] for w in range(writers)}
    for match in filter(None, (_ID.fullmatch(i) for i in ids)):
        numbers.setdefault(int(match[1]), []).append(int(match[2]))
    expected = {f"w{w}-{n}" for w in range(writers) for n in range(appends)}
    fields = {
        "stored": len(messages),
        "lost": len(expected - set(ids)),
        "duplicates": len(ids) - len(set(ids)),
        "out_of_order": sum(1 for ns in numbers.values() if ns != sorted(ns)),
        "valid_json": True,
        "error": None,
    }
    return fields, set(ids)


def _last_json_line(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def _writer(args: argparse.Namespace) -> None:
    """One writer process: wait for the start signal, append, print a JSON report line."""
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain_community's sunset notice
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    path = Path(args.path)
    if args.kind == "langchain":
        from langchain_community.chat_message_histories import FileChatMessageHistory

        history = FileChatMessageHistory(str(path), encoding="utf-8", ensure_ascii=False)
    else:
        history = FileHistory(path.stem, path.parent)
    Path(args.ready).touch()
    while not Path(args.go).exists():
        time.sleep(0.001)
    failed, examples = [], []
    for number in range(args.appends):
        try:
            history.add_message(demo_message(args.writer, number))
        except Exception as exc:  # e.g. the library's writer reads a half-written file
            failed.append(number)
            line = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            if line not in examples and len(examples) < 3:
                examples.append(line)
    print(json.dumps({"writer": args.writer, "failed": failed, "examples": examples}))


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m helpers.course.demos writer ...`` (used by ``run_concurrent_appends``)
    or ``python -m helpers.course.demos race FOLDER`` to run both demos and print the results."""
    parser = argparse.ArgumentParser(prog="python -m helpers.course.demos")
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("writer", help="one writer process of run_concurrent_appends")
    w.add_argument("--kind", choices=KINDS, required=True)
    w.add_argument("--path", required=True, help="the session's .json file")
    w.add_argument("--writer", type=int, required=True)
    w.add_argument("--appends", type=int, default=200)
    w.add_argument("--ready", required=True, help="file to create once started")
    w.add_argument("--go", required=True, help="file whose appearance starts the appends")
    r = sub.add_parser("race", help="run run_concurrent_appends for both kinds")
    r.add_argument("folder")
    r.add_argument("--writers", type=int, default=2)
    r.add_argument("--appends", type=int, default=200)
    args = parser.parse_args(argv)
    if args.command == "writer":
        _writer(args)
    else:
        for kind in KINDS:
            print(
                json.dumps(
                    run_concurrent_appends(kind, args.folder, args.writers, args.appends),
                    ensure_ascii=False,
                )
            )


if __name__ == "__main__":
    main()
