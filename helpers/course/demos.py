"""Lesson 03's demo: processes racing to append to one history file (langchain_community's
``FileChatMessageHistory``: no lock; ``helpers.history.FileHistory``: lock + atomic replace)."""

from __future__ import annotations

import json
import multiprocessing
import queue
import threading
import time
from pathlib import Path

from langchain_core.messages import HumanMessage, messages_from_dict

from helpers.history import FileHistory

KINDS = ("langchain", "helpers")


def _open(kind: str, path: Path):
    """The ``kind`` history stored in the file ``path``."""
    if kind == "langchain":
        from langchain_community.chat_message_histories import FileChatMessageHistory

        return FileChatMessageHistory(str(path), encoding="utf-8", ensure_ascii=False)
    return FileHistory(path.stem, path.parent)


def _writer(kind: str, path: Path, writer: int, appends: int, start, errors) -> None:
    """One writer process: wait at ``start`` until every writer is ready, append ``appends`` messages one
    ``add_message`` at a time, then put (failed appends, ids of the appends that returned) on ``errors``."""
    history = _open(kind, path)
    start.wait()
    failed, returned = [], []
    for number in range(appends):  # Korean text, id w<writer>-<number>
        text = f"작성자 {writer}의 {number}번째 메시지입니다. (writer {writer}, message {number})"
        try:
            history.add_message(HumanMessage(text, id=f"w{writer}-{number}"))
            returned.append(f"w{writer}-{number}")
        except Exception as exc:  # e.g. the library's writer reads a half-written file
            failed.append(f"{type(exc).__name__}: {exc}")
    errors.put((failed, returned))


def _stored_ids(kind: str, path: Path) -> list[str]:
    """The message ids the file holds, read back the way its own class reads it."""
    if kind == "langchain":
        messages = messages_from_dict(json.loads(path.read_text(encoding="utf-8")))
    else:
        messages = FileHistory(path.stem, path.parent).messages
    return [message.id or "" for message in messages]


def run_concurrent_appends(kind: str, path_or_dir: str | Path, writers: int = 2, appends: int = 200,
                           timeout: float = 120.0) -> dict:
    """Race ``writers`` processes, each appending ``appends`` numbered messages one ``add_message`` at a
    time to one ``kind`` history (``"langchain"``, ``"helpers"``) at ``path_or_dir`` (a ``.json`` path or
    a folder: session ``demo-<kind>``), reset first; writers still running after ``timeout`` s are
    stopped. Returns kind, path, expected, what the file holds (stored, lost, valid_json, error),
    writer_errors (appends that raised; writer_error_examples: up to 3), lost_silently (appends that
    returned normally yet are not in the file) and outcome (a sentence): a damaged file is reported, never
    raised. ValueError: a bad kind, writers or appends."""
    if kind not in KINDS or writers < 1 or appends < 0:
        raise ValueError(f"need kind in {KINDS}, writers >= 1, appends >= 0: {kind!r}, {writers}, {appends}")
    path = Path(path_or_dir)
    if path.suffix != ".json":
        path = path / f"demo-{kind}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "langchain":  # an empty history, written before the race so start-up does not race
        path.write_text("[]", encoding="utf-8")
    else:
        FileHistory(path.stem, path.parent).clear()
    processes = multiprocessing.get_context("spawn")  # fresh interpreters: nothing of the kernel copied
    start, errors = processes.Barrier(writers + 1), processes.Queue()
    racers = [processes.Process(target=_writer, args=(kind, path, writer, appends, start, errors))
              for writer in range(writers)]
    for racer in racers:
        racer.start()
    deadline = time.monotonic() + timeout
    failed, returned = [], set()
    try:
        start.wait(timeout)  # every writer has imported and opened its history: all start at once
    except threading.BrokenBarrierError:
        failed.append("the writers were not ready in time")
    for _ in racers:
        try:
            writer_failed, writer_returned = errors.get(timeout=max(1.0, deadline - time.monotonic()))
            failed += writer_failed
            returned.update(writer_returned)
        except queue.Empty:
            failed.append("a writer did not finish in time")
            break
    for racer in racers:
        racer.join(1.0)
        if racer.is_alive():
            racer.terminate()
    expected = writers * appends
    try:
        ids, error = _stored_ids(kind, path), None
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError, HistoryFileError, ...
        ids, error = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    wanted = {f"w{writer}-{number}" for writer in range(writers) for number in range(appends)}
    result = {"kind": kind, "path": str(path), "expected": expected,
              "stored": None if ids is None else len(ids),
              "lost": expected if ids is None else len(wanted - set(ids)),
              "valid_json": ids is not None, "error": error,
              "writer_errors": len(failed), "writer_error_examples": list(dict.fromkeys(failed))[:3],
              "lost_silently": None if ids is None else len(returned - set(ids))}
    if ids is None:
        told = (f"the file is no longer valid JSON ({error}): none of them can be read back; "
                f"{len(failed)} appends failed while writing.")
    elif result["lost"]:
        told = f"the file holds {result['stored']}: {result['lost']} were lost."
    else:
        told = f"the file holds all {result['stored']}, none lost, none duplicated."
    return result | {"outcome": f"{writers} processes appended {expected} messages; {told}"}
