"""A chat history kept as one readable JSON file per session, safe against crashes and races.

``FileHistory(session_id, directory)`` keeps ``<directory>/<session_id>.json`` (messages as LangChain's
``messages_to_dict``, UTF-8). A per-session lock around each read-modify-write (no writer loses another's
messages), each write fsync'd to a temporary file then ``os.replace``-d in (a crash leaves the old file or
the new), and a damaged file raises ``HistoryFileError`` instead of reading as empty."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from helpers.config import runtime_dir
from helpers.text import nfc_message, utf8_encode

FORMAT, VERSION = "llm-memory-course/history", 1
LOCK_SECONDS = 30.0  #: how long a write waits for another writer's lock
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_RESERVED = {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)}
_ALLOWED = ("1-128 characters: ASCII letters, digits, '_', '.', '-'; starting with a letter or digit, "
            "not ending with '.', no '..', not a reserved device name such as 'con' or 'nul'")


class InvalidSessionIdError(ValueError):
    """A session id that is not a safe file name (see ``validate_session_id``)."""


class HistoryFileError(ValueError):
    """A history file that cannot be read; the message names the file and why (it is left untouched)."""


def validate_session_id(session_id: str) -> str:
    """Return ``session_id`` unchanged if it is safe as a file name (rules: ``_ALLOWED``), so ``../x``
    cannot escape the folder nor ``con`` name a Windows device; else raise ``InvalidSessionIdError``
    (a non-str too). Ids are case-sensitive, but macOS and Windows see ids differing in case as one file."""
    if not isinstance(session_id, str):
        raise InvalidSessionIdError(f"session id must be a str, got {type(session_id).__name__}: "
                                    f"{session_id!r:.60}")
    if (not SESSION_ID_PATTERN.fullmatch(session_id) or ".." in session_id or session_id.endswith(".")
            or session_id.split(".")[0].lower() in _RESERVED):
        shown = repr(session_id[:40]) + (f"... ({n} characters)" if (n := len(session_id)) > 40 else "")
        raise InvalidSessionIdError(f"invalid session id {shown}; allowed: {_ALLOWED}")
    return session_id


def default_directory() -> Path:
    """``helpers.config.runtime_dir() / "history"`` (``FileHistory`` creates it when needed)."""
    return runtime_dir() / "history"


class FileHistory(BaseChatMessageHistory):
    """One conversation in ``<directory>/<session_id>.json``, read from disk every time (another
    instance or process sees the same messages). ``session_id``: checked (``InvalidSessionIdError``,
    nothing created); ``directory``: default ``default_directory()``, created if missing
    (``NotADirectoryError`` if a file). A write waits ``LOCK_SECONDS`` for another writer's lock, then
    raises ``filelock.Timeout`` (a ``TimeoutError``)."""

    def __init__(self, session_id: str, directory: str | Path | None = None) -> None:
        self._session_id = validate_session_id(session_id)
        self._directory = Path(directory) if directory is not None else default_directory()
        if self._directory.exists() and not self._directory.is_dir():
            raise NotADirectoryError(f"history directory {str(self._directory)!r} is a file")
        self._directory.mkdir(parents=True, exist_ok=True)
        self._path = self._directory / f"{self._session_id}.json"
        self._lock = self._directory / f"{self._session_id}.json.lock"

    def __repr__(self) -> str:
        return f"FileHistory(session_id={self._session_id!r}, path={str(self._path)!r})"

    session_id = property(lambda self: self._session_id, doc="The session id (a validated file-name stem).")
    path = property(lambda self: self._path, doc="The JSON file of this session (missing: an empty history).")

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """All messages, oldest first, read from disk now (``HistoryFileError`` if damaged)."""
        with self._locked():
            return self._read()

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one locked read-modify-write (each call rewrites the file: add several at
        once), each once (``each_once``). A call whose every message is already stored (same id, role and
        text: a cell run again) writes nothing; any other call appends all of its messages, so a second
        replay whose ids restart at ``t1-user`` loses none. Nothing written on TypeError (a non-message),
        ValueError (not UTF-8), HistoryFileError."""
        new = each_once(_check_messages(messages))
        with self._locked():
            stored = self._read()
            seen = {message_key(m) for m in stored}
            if new and all(message_key(m) in seen for m in new):
                return  # the same messages added again
            self._write(stored + new)

    def replace(self, messages: Sequence[BaseMessage]) -> None:
        """Swap the history for ``messages`` (may be empty) in one atomic write; errors as ``add_messages``.
        ``h.replace(f(h.messages))`` locks twice (an append in between is lost); ``update(f)`` once."""
        new = _check_messages(messages)
        with self._locked():
            self._read()  # refuse to overwrite a damaged file
            self._write(new)

    def update(self, change: Callable[[list[BaseMessage]], Sequence[BaseMessage]]) -> list[BaseMessage]:
        """Read, change and write the history under one lock; return the new list as written. ``change``
        gets the messages (oldest first) and returns the complete new list; if it raises, nothing is
        written (a failed summary call leaves the history as it was). Errors as ``add_messages``."""
        with self._locked():
            new = _check_messages(change(self._read()))
            self._write(new)
            return new

    def clear(self) -> None:
        """Write a valid file holding no messages (``HistoryFileError`` if the file is damaged)."""
        self.replace([])

    def _locked(self) -> FileLock:
        return FileLock(self._lock, timeout=LOCK_SECONDS, poll_interval=0.002)

    def _read(self) -> list[BaseMessage]:
        try:
            kind = os.stat(self._path).st_mode
        except FileNotFoundError:
            return []
        if stat.S_ISDIR(kind):
            raise self._error("it is a folder, not a file")
        if not stat.S_ISREG(kind):  # a pipe would block the read (and hold the lock) forever
            raise self._error("it is not a regular file (a pipe, socket or device)")
        raw = self._path.read_bytes()
        if not raw.strip():
            raise self._error("the file is empty (a write was cut short?)")
        try:
            data = json.loads(raw.decode("utf-8-sig"))  # a BOM (Windows editors write one) is not text
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
        if not isinstance(items := data.get("messages"), list):
            raise self._error("'messages' is missing or is not a list")
        try:
            return [nfc_message(m) for m in messages_from_dict(items)]  # a file written by other tools too
        except Exception as exc:  # KeyError, ValueError (unknown type), pydantic errors
            raise self._error(f"a message cannot be loaded ({type(exc).__name__}: {exc})") from exc

    def _write(self, messages: list[BaseMessage]) -> None:
        data = utf8_encode(_dump(self._session_id, messages), "the history file's text")
        name = self._path.name
        for old in self._directory.glob(f".{name}.*.tmp"):  # left by a writer killed mid-write;
            if re.fullmatch(rf"\.{re.escape(name)}\.[0-9a-f]{{16}}\.tmp", old.name):  # we hold the lock
                old.unlink(missing_ok=True)
        mode = self._kept_mode()
        tmp = self._directory / f".{name}.{secrets.token_hex(8)}.tmp"
        try:
            with open(tmp, "xb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())  # on disk before it becomes the history
            if mode is not None:
                os.chmod(tmp, mode)  # the new file keeps the old one's permissions (a private 0600 stays so)
            os.replace(tmp, self._path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_directory(self._directory)

    def _kept_mode(self) -> int | None:
        """The history file's permission bits (None: no file yet); PermissionError if it is read-only to us:
        a rename would replace it anyway, so its mode is the only guard."""
        try:
            mode = stat.S_IMODE(os.stat(self._path).st_mode)
        except FileNotFoundError:
            return None
        if not os.access(self._path, os.W_OK):
            raise PermissionError(f"history file {str(self._path)!r} is read-only to this user: nothing was "
                                  "written (make it writable to add messages)")
        return mode

    def _error(self, reason: str) -> HistoryFileError:
        return HistoryFileError(f"history file {str(self._path)!r} is damaged: {reason}. It was left "
                                "untouched: repair it or move it away to start over.")


def _dump(session_id: str, messages: list[BaseMessage]) -> str:
    """The file's text: JSON with one message per line (readable, and faster than ``indent=``)."""
    items = ",\n".join(f"    {json.dumps(d, ensure_ascii=False)}" for d in messages_to_dict(messages))
    body = f"\n{items}\n  " if items else ""  # the session id is checked: nothing to escape in it
    return (f'{{\n  "format": "{FORMAT}",\n  "version": {VERSION},\n  "session_id": "{session_id}",\n'
            f'  "messages": [{body}]\n}}\n')


def _check_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` as written: each a ``BaseMessage`` (else TypeError), valid UTF-8 (else ValueError), its
    text NFC (``text.nfc_message``: Korean typed on macOS comes back as Windows types it)."""
    items = list(messages)
    for i, message in enumerate(items):
        if not isinstance(message, BaseMessage):
            raise TypeError(f"messages[{i}] is a {type(message).__name__}, not a BaseMessage")
        utf8_encode(message.text, f"the text of messages[{i}] ({message.type})")
    return [nfc_message(m) for m in items]


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX only; Windows cannot open folders this way)."""
    if os.name == "posix":
        with contextlib.suppress(OSError):
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


# -- after the file: one message once, and ids in order (the strategies that store messages use these) --

def message_key(m: BaseMessage, *where: object) -> tuple:
    """What makes two messages one: the same id, role and text (replay's ``t3-user``: a turn run again after a
    failed call), or without an id the same ``where`` (e.g. session and round), role and text, else object."""
    if m.id:
        return (m.id, m.type, m.text)
    if where:
        return (*where, m.type, m.text)
    return (id(m),)


def each_once(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` without repeats (``message_key``), first kept: "ok" said twice, two messages, stays."""
    seen, once = set(), []
    for m in messages:
        key = message_key(m)
        if key not in seen:
            seen.add(key)
            once.append(m)
    return once


class RowSources(dict[tuple[str, int], tuple[str, ...]]):
    """(session id, round) -> ids of the messages a row came from, the sources of retrieved text. ``has``: is
    a message written in this session (``history.message_key``; without an id: its round, role and text)?"""

    def add(self, session_id: str, round_number: int, *messages: BaseMessage) -> None:
        self[(session_id, round_number)] = tuple(m.id for m in messages if m.id)
        keys = vars(self).setdefault("seen", set())  # every message written, by session and message_key
        keys.update((session_id, *message_key(m, round_number)) for m in messages)

    def has(self, session_id: str, round_number: int, message: BaseMessage) -> bool:
        # in its session: a replay of day 2 whose ids restart at t1-user is not day 1 run again
        return (session_id, *message_key(message, round_number)) in vars(self).get("seen", ())

    def sources(self, hits: Sequence) -> tuple[str, ...]:  # the hits' message ids
        return tuple(i for h in hits for i in self.get((h.session_id, h.round), ()))


def in_order(name: str) -> tuple:
    """Sort key of ids: digits as numbers ("session-9" before "session-10"), ties ("s-01") by text."""
    return [int(p) if i % 2 else p for i, p in enumerate(re.split(r"(\d+)", name))], name
