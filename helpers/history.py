"""A chat history kept as one readable JSON file per session, safe against crashes and races.

``FileHistory(session_id, directory)`` stores a conversation in ``<directory>/<session_id>.json``::

    {"format": "llm-memory-course/history", "version": 1, "session_id": "alice",
     "messages": [{"type": "human", "data": {"content": "안녕하세요", ...}}, ...]}

The ``messages`` list is LangChain's own serialization (``messages_to_dict``), so any LangChain
code can read it back with ``messages_from_dict``.

How this differs from the library way (``FileChatMessageHistory`` in langchain_community):

* Text: the library writes Korean as ``\\uXXXX`` escapes and uses the locale's encoding unless you
  pass ``encoding="utf-8", ensure_ascii=False``. Here the file is always UTF-8 JSON, one message
  per line, with Hangul stored as-is.
* Crashes: the library rewrites the file in place, so a process killed mid-write leaves half a
  file. Here every write goes to a temporary file in the same folder, is flushed to disk, then
  swapped in with ``os.replace``: the file on disk is always a complete old or a complete new one.
  (A killed writer may leave a hidden ``.<session_id>.json.<hex>.tmp``; the next write removes it.)
* Races: the library reads, appends and rewrites with no lock, so two processes appending at once
  lose messages or corrupt the file. Here a per-session lock file (``<session_id>.json.lock``,
  ``filelock``, works on Linux, macOS and Windows) is held around every read-modify-write.
* Names: the library takes any path. Here the session id is checked (``validate_session_id``), so a
  user-supplied id such as ``../../etc/x`` cannot reach outside the folder.
* Bad files: the library raises a bare ``JSONDecodeError``/``KeyError`` and may later overwrite the
  file. Here a damaged file raises ``HistoryFileError`` naming the file and the reason, and reads
  and no method ever overwrites it.

The lock only coordinates programs that use ``FileHistory``; it is advisory, and it assumes a
local disk (network file systems may not honour it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from helpers.config import runtime_dir

FORMAT = "llm-memory-course/history"
VERSION = 1
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# Names Windows refuses as file names, with or without an extension.
_RESERVED = {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)}
_ALLOWED = (
    "1-128 characters: ASCII letters, digits, '_', '.', '-'; starting with a letter or digit, "
    "not ending with '.', no '..', not a reserved device name such as 'con' or 'nul'"
)


class InvalidSessionIdError(ValueError):
    """A session id that is not a safe file name (see ``validate_session_id``)."""


class HistoryFileError(ValueError):
    """A history file that cannot be read: not UTF-8, not JSON, or not the expected structure.

    The message names the file and the reason. The file is left exactly as it was.
    """


def validate_session_id(session_id: str) -> str:
    """Check that ``session_id`` is safe to use as a file name and return it unchanged.

    Args:
        session_id: 1-128 ASCII letters, digits, ``_``, ``.`` or ``-``; it must start with a letter
            or digit, must not end with ``.`` or contain ``..``, and must not be a name Windows
            reserves (``con``, ``nul``, ``com1``, ...). Ids are case-sensitive, but avoid ids that
            differ only by case: macOS and Windows file systems treat them as the same file.

    Returns:
        ``session_id``.

    Raises:
        InvalidSessionIdError: (a ``ValueError``) for anything else, e.g. ``"../x"``, ``"a/b"``,
            ``""``, ``"/etc/passwd"``, ids with NUL bytes or spaces. The message quotes the id.
    """
    if not isinstance(session_id, str):
        raise InvalidSessionIdError(
            f"session id must be a str, got {type(session_id).__name__}: {session_id!r}"
        )
    bad = (
        not SESSION_ID_PATTERN.fullmatch(session_id)
        or ".." in session_id
        or session_id.endswith(".")
        or session_id.split(".")[0].lower() in _RESERVED
    )
    if bad:
        raise InvalidSessionIdError(f"invalid session id {session_id!r}; allowed: {_ALLOWED}")
    return session_id


def default_directory() -> Path:
    """``helpers.config.runtime_dir() / "history"`` (``FileHistory`` creates it when needed)."""
    return runtime_dir() / "history"


def list_sessions(directory: str | Path | None = None) -> list[str]:
    """Session ids that have a history file in ``directory`` (default ``default_directory()``).

    Returns:
        Sorted list of ids; empty if the folder does not exist. Files are not opened, so a damaged
        file is still listed (reading it raises ``HistoryFileError``).
    """
    folder = Path(directory) if directory is not None else default_directory()
    if not folder.is_dir():
        return []
    ids = []
    for path in folder.glob("*.json"):
        try:
            ids.append(validate_session_id(path.name[: -len(".json")]))
        except InvalidSessionIdError:
            continue  # not ours (temp files start with '.')
    return sorted(ids)


class FileHistory(BaseChatMessageHistory):
    """One conversation stored in ``<directory>/<session_id>.json`` (see the module docstring).

    Every read goes to disk, so a new instance or another process sees the same messages. Every
    write holds the session's lock and replaces the whole file atomically.

    Args:
        session_id: which conversation; checked by ``validate_session_id``.
        directory: folder for the files (default ``runtime_dir() / "history"``); created if missing.
        lock_timeout: seconds to wait for another writer's lock before ``filelock.Timeout``
            (a ``TimeoutError``) is raised.

    Raises:
        InvalidSessionIdError: for an unsafe session id (nothing is created then).
    """

    def __init__(
        self, session_id: str, directory: str | Path | None = None, *, lock_timeout: float = 30.0
    ) -> None:
        self._session_id = validate_session_id(session_id)
        self._directory = Path(directory) if directory is not None else default_directory()
        if self._directory.exists() and not self._directory.is_dir():
            raise NotADirectoryError(f"history directory {str(self._directory)!r} is a file")
        self._directory.mkdir(parents=True, exist_ok=True)
        self._path = self._directory / f"{self._session_id}.json"
        self._lock = self._directory / f"{self._session_id}.json.lock"
        self._lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"FileHistory(session_id={self._session_id!r}, path={str(self._path)!r})"

    @property
    def session_id(self) -> str:
        """The session id (a validated file-name stem)."""
        return self._session_id

    @property
    def path(self) -> Path:
        """The JSON file of this session (it may not exist yet: that means an empty history)."""
        return self._path

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """All messages, oldest first, read from disk now (``[]`` if the file does not exist).

        Raises:
            HistoryFileError: the file is damaged; it is left untouched.
        """
        with self._locked():
            return self._read()

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` (in order) in one locked read-modify-write and one atomic write.

        Args:
            messages: a list (or any sequence) of ``BaseMessage``; several at once is cheaper
                than one call each, since the whole file is rewritten per call.

        Raises:
            TypeError: an item is not a ``BaseMessage``; nothing is written.
            HistoryFileError: the existing file is damaged; it is left untouched.
        """
        new = _check_messages(messages)
        with self._locked():
            self._write(self._read() + new)

    def replace(self, messages: Sequence[BaseMessage]) -> None:
        """Swap the whole history for ``messages`` in one atomic write, e.g. a running summary plus
        the last turns. Readers see the old list or the new one, never a mix.

        Note that ``h.replace(f(h.messages))`` is two locked steps: a message another process
        appends in between is dropped. Use ``update(f)`` for one locked read-modify-write.

        Args:
            messages: the complete new history, a sequence of ``BaseMessage`` (may be empty).

        Raises:
            TypeError: an item is not a ``BaseMessage``; nothing is written.
            HistoryFileError: the existing file is damaged; it is left untouched (move it away
                to start over).
        """
        new = _check_messages(messages)
        with self._locked():
            self._read()  # refuse to overwrite a damaged file
            self._write(new)

    def update(self, change: Callable[[list[BaseMessage]], Sequence[BaseMessage]]) -> list[BaseMessage]:
        """Read, change and write the history under one lock, in one atomic write.

        Args:
            change: called with the current messages (oldest first); returns the complete new
                list. If it raises, nothing is written and the error propagates (later lessons
                rely on this: a failed summary call leaves the history as it was).

        Returns:
            The new list of messages, as written.

        Raises:
            HistoryFileError: the existing file is damaged; it is left untouched.
            TypeError: ``change`` returned something that is not a sequence of messages.
        """
        with self._locked():
            new = _check_messages(change(self._read()))
            self._write(new)
            return new

    def clear(self) -> None:
        """Make the history empty: writes a valid file holding no messages.

        Raises:
            HistoryFileError: the existing file is damaged; it is left untouched.
        """
        self.replace([])

    # -- internals ---------------------------------------------------------------------------

    def _locked(self) -> FileLock:
        return FileLock(self._lock, timeout=self._lock_timeout, poll_interval=0.002)

    def _read(self) -> list[BaseMessage]:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return []
        except IsADirectoryError as exc:
            raise self._error("it is a folder, not a file") from exc
        if not raw.strip():
            raise self._error("the file is empty (a write was cut short?)")
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise self._error(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
        except json.JSONDecodeError as exc:
            raise self._error(f"not valid JSON, truncated or corrupted? ({exc})") from exc
        except RecursionError as exc:
            raise self._error("JSON nested too deeply to be a history file") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise self._error(f"not a history file: expected a JSON object with format={FORMAT!r}")
        if data.get("version") != VERSION:
            raise self._error(f"unsupported version {data.get('version')!r}, expected {VERSION}")
        items = data.get("messages")
        if not isinstance(items, list):
            raise self._error("'messages' is missing or is not a list")
        try:
            return messages_from_dict(items)
        except Exception as exc:  # KeyError, ValueError (unknown type), pydantic errors
            raise self._error(f"a message cannot be loaded ({type(exc).__name__}: {exc})") from exc

    def _write(self, messages: list[BaseMessage]) -> None:
        data = _dump(self._session_id, messages).encode("utf-8")
        self._remove_stale_temp_files()
        tmp = self._directory / f".{self._path.name}.{secrets.token_hex(8)}.tmp"
        try:
            with open(tmp, "xb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, self._path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_directory(self._directory)

    def _remove_stale_temp_files(self) -> None:
        # Only a writer killed mid-write leaves one; we hold the lock, so none is in use.
        pattern = re.compile(rf"\.{re.escape(self._path.name)}\.[0-9a-f]{{16}}\.tmp")
        for path in self._directory.glob(f".{self._path.name}.*.tmp"):
            if pattern.fullmatch(path.name):
                path.unlink(missing_ok=True)

    def _error(self, reason: str) -> HistoryFileError:
        return HistoryFileError(
            f"history file {str(self._path)!r} is damaged: {reason}. It was left untouched: "
            "repair it or move it away to start over."
        )


def _dump(session_id: str, messages: list[BaseMessage]) -> str:
    """The file's text: pretty JSON with one message per line (readable, and fast: the indented
    ``json.dumps`` is pure Python and was 4x slower on long histories)."""
    dicts = messages_to_dict(messages)
    items = ",\n".join(f"    {json.dumps(d, ensure_ascii=False)}" for d in dicts)
    head = {"format": FORMAT, "version": VERSION, "session_id": session_id}
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    body = f'  "messages": [\n{items}\n  ]' if items else '  "messages": []'
    return "{\n" + "\n".join(lines) + "\n" + body + "\n}\n"


def _check_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    items = list(messages)
    for i, item in enumerate(items):
        if not isinstance(item, BaseMessage):
            raise TypeError(f"messages[{i}] is a {type(item).__name__}, not a BaseMessage")
    return items


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX only; Windows cannot open folders this way)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
