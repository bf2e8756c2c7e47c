"""helpers.history.FileHistory: readable UTF-8, atomic writes, locking, bad files, bad ids."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

import helpers.history as history_module
from helpers.course.demos import run_concurrent_appends
from helpers.history import (
    FileHistory,
    HistoryFileError,
    InvalidSessionIdError,
    validate_session_id,
)

ROOT = Path(__file__).resolve().parent.parent
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
}
KOREAN = "안녕하세요, 저는 서울에 사는 민수예요."


def conversation() -> list:
    return [
        SystemMessage("You are a helpful assistant. 한국어로 답하세요."),
        HumanMessage(KOREAN),
        AIMessage("반가워요, 민수 씨! 무엇을 도와드릴까요?"),
        HumanMessage('Quotes " and \\ backslashes\nand a new line'),
    ]


def summary(messages) -> list[tuple[str, str]]:
    return [(m.type, m.content) for m in messages]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- round trip ----------------------------------------------------------------------------


def test_round_trip_korean_readable_utf8(tmp_path):
    history = FileHistory("minsu", tmp_path)
    assert history.messages == []
    assert not history.path.exists()  # a missing file is an empty history
    history.add_messages(conversation())

    raw = history.path.read_bytes()
    assert KOREAN.encode("utf-8") in raw  # Hangul stored as-is ...
    assert b"\\uc548" not in raw  # ... not as \uXXXX escapes
    document = json.loads(raw.decode("utf-8"))
    assert document["format"] == "llm-memory-course/history"
    assert document["version"] == 1
    assert document["session_id"] == "minsu"
    assert [m["type"] for m in document["messages"]] == ["system", "human", "ai", "human"]
    assert raw.count(b"\n") > 5  # indented, not one long line

    assert summary(history.messages) == summary(conversation())
    again = FileHistory("minsu", tmp_path)
    assert summary(again.messages) == summary(conversation())
    assert history.path == tmp_path / "minsu.json"
    assert history.session_id == "minsu"


def test_new_process_reads_back(tmp_path):
    FileHistory("proc", tmp_path).add_messages(conversation())
    code = (
        "import json, sys\n"
        "from helpers.history import FileHistory\n"
        "h = FileHistory('proc', sys.argv[1])\n"
        "sys.stdout.buffer.write(json.dumps([[m.type, m.content] for m in h.messages],"
        " ensure_ascii=False).encode('utf-8'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], env=ENV, capture_output=True, check=True
    ).stdout
    assert [tuple(x) for x in json.loads(out.decode("utf-8"))] == summary(conversation())


def test_default_directory_is_runtime_history(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_RUNTIME_DIR", str(tmp_path / "rt"))
    history = FileHistory("alice")
    assert history.path == tmp_path / "rt" / "history" / "alice.json"
    history.add_message(HumanMessage("hi"))
    assert history.path.is_file()


def test_add_message_appends_in_order_and_rejects_non_messages(tmp_path):
    history = FileHistory("s", tmp_path)
    history.add_message(HumanMessage("one"))
    history.add_messages([AIMessage("two"), HumanMessage("three")])
    assert [m.content for m in history.messages] == ["one", "two", "three"]
    before = history.path.read_bytes()
    with pytest.raises(TypeError, match=r"messages\[1\] is a str"):
        history.add_messages([HumanMessage("four"), "five"])
    assert history.path.read_bytes() == before


# -- replace and clear ---------------------------------------------------------------------


def test_replace_and_clear(tmp_path):
    history = FileHistory("s", tmp_path)
    history.add_messages(conversation())
    new = [SystemMessage("요약: 민수는 서울에 산다."), conversation()[-1]]
    history.replace(new)
    assert summary(history.messages) == summary(new)
    assert summary(FileHistory("s", tmp_path).messages) == summary(new)
    history.clear()
    assert history.messages == []
    assert json.loads(history.path.read_text(encoding="utf-8"))["messages"] == []
    history.replace([])
    assert history.messages == []
    assert leftovers(tmp_path) == []


def test_update_is_one_locked_step_and_writes_nothing_on_failure(tmp_path):
    history = FileHistory("s", tmp_path)
    history.add_messages(conversation())
    before = history.path.read_bytes()

    def failing(messages):
        raise RuntimeError("summary call failed")

    with pytest.raises(RuntimeError, match="summary call failed"):
        history.update(failing)
    assert history.path.read_bytes() == before
    kept = history.update(lambda messages: [SystemMessage("요약"), *messages[-2:]])
    assert summary(history.messages) == summary(kept)
    assert len(kept) == 3 and kept[0].content == "요약"
    with pytest.raises(TypeError):
        history.update(lambda messages: ["not a message"])
    assert summary(history.messages) == summary(kept)


def test_replace_is_atomic_for_readers(tmp_path):
    """A reader never sees a mix of the two states a writer keeps swapping."""
    state_a = [HumanMessage(f"a{i} 가나다" * 20) for i in range(60)]
    state_b = [AIMessage(f"b{i}") for i in range(3)]
    writer_history = FileHistory("swap", tmp_path)
    writer_history.replace(state_a)
    stop, seen, problems = threading.Event(), set(), []

    def reader():
        h = FileHistory("swap", tmp_path)
        while not stop.is_set():
            try:
                got = summary(h.messages)
            except Exception as exc:  # noqa: BLE001 - any error is a failure here
                problems.append(repr(exc))
                return
            if got == summary(state_a):
                seen.add("a")
            elif got == summary(state_b):
                seen.add("b")
            else:
                problems.append(f"mixed state with {len(got)} messages")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(60):
            writer_history.replace(state_b if i % 2 == 0 else state_a)
    finally:
        stop.set()
        thread.join()
    assert problems == []
    assert seen  # the reader did read


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    """A write that dies before the swap (here: fsync fails) leaves the previous file."""
    history = FileHistory("s", tmp_path)
    history.add_messages(conversation())
    before = history.path.read_bytes()

    def broken_fsync(fd):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(history_module.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="simulated"):
        history.add_message(HumanMessage("lost"))
    with pytest.raises(OSError, match="simulated"):
        history.replace([])
    assert history.path.read_bytes() == before
    assert leftovers(tmp_path) == []


# -- concurrency ---------------------------------------------------------------------------


def test_two_processes_append_concurrently_nothing_lost(tmp_path):
    result = run_concurrent_appends("helpers", tmp_path, writers=2, appends=200)
    assert result["error"] is None, result
    assert result["writer_errors"] == 0, result
    assert (result["expected"], result["stored"], result["lost"]) == (400, 400, 0)
    assert result["valid_json"] is True
    # Check the file ourselves, not only the demo's own counting.
    document = json.loads(Path(result["path"]).read_text(encoding="utf-8"))
    ids = [m["data"]["id"] for m in document["messages"]]
    assert len(ids) == len(set(ids)) == 400
    for writer in (0, 1):
        mine = [i for i in ids if i.startswith(f"w{writer}-")]
        assert mine == [f"w{writer}-{n}" for n in range(200)]  # all there, in order
    assert "번째 메시지" in document["messages"][0]["data"]["content"]


def test_threads_append_concurrently_nothing_lost(tmp_path):
    def append(t):
        h = FileHistory("threads", tmp_path)
        for n in range(25):
            h.add_message(HumanMessage(f"t{t}-{n}"))

    threads = [threading.Thread(target=append, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    contents = [m.content for m in FileHistory("threads", tmp_path).messages]
    assert sorted(contents) == sorted(f"t{t}-{n}" for t in range(4) for n in range(25))
    for t in range(4):
        assert [c for c in contents if c.startswith(f"t{t}-")] == [f"t{t}-{n}" for n in range(25)]


def test_library_demo_reports_instead_of_raising(tmp_path):
    """The langchain demo may lose messages or corrupt its file; it must report, not raise."""
    result = run_concurrent_appends("langchain", tmp_path, writers=2, appends=200)
    assert result["expected"] == 400
    assert isinstance(result["valid_json"], bool)
    if result["valid_json"]:
        assert result["error"] is None
        assert result["lost"] == 400 - len(
            {m["data"]["id"] for m in json.loads(Path(result["path"]).read_text("utf-8"))}
        )
    else:
        assert result["stored"] is None and "Error" in result["error"]
        assert result["lost"] == 400
    examples = result["writer_error_examples"]  # up to 3, there exactly when an append raised
    assert len(examples) <= 3 and bool(examples) == (result["writer_errors"] > 0)


KILL_CHILD = """
import sys
from langchain_core.messages import AIMessage, HumanMessage
from helpers.history import FileHistory

h = FileHistory("big", sys.argv[1])
content = "긴 대화 내용입니다. " * int(sys.argv[3])
full = [(HumanMessage if k % 2 == 0 else AIMessage)(f"{k}: {content}", id=f"m{k}")
        for k in range(int(sys.argv[2]))]
n = len(h.messages)
print("ready", flush=True)
while True:  # rewrite the whole (multi-megabyte) file again and again, growing by one message
    n = n + 1 if n < len(full) else 1
    h.replace(full[:n])
"""


def test_writer_killed_mid_write_leaves_a_complete_state(tmp_path):
    """SIGKILL a process that keeps rewriting a big history: at random moments, and right after
    its temp file appears (that is, certainly while it is writing). The file must always be a
    complete state: the first n messages, for some n."""
    start, most, repeat = 30, 60, 2000  # ~55 KB per message, files of 1.6-3.3 MB
    content = "긴 대화 내용입니다. " * repeat
    full = [
        (HumanMessage if k % 2 == 0 else AIMessage)(f"{k}: {content}", id=f"m{k}")
        for k in range(most)
    ]
    path = tmp_path / "big.json"
    FileHistory("big", tmp_path).replace(full[:start])
    rng = random.Random()
    log, mid_write = [], 0
    for attempt in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILL_CHILD, str(tmp_path), str(most), str(repeat)],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        if attempt % 2 == 0:  # a random moment
            delay = rng.uniform(0.02, 0.3)
            threading.Event().wait(delay)
            log.append(f"after {delay:.3f}s")
        else:  # as soon as a temp file shows up
            deadline = time.monotonic() + 5
            while not leftovers(tmp_path) and time.monotonic() < deadline:
                pass
            log.append("on temp file")
        proc.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        mid_write += bool(leftovers(tmp_path))

        json.loads(path.read_bytes().decode("utf-8"))  # valid, complete JSON
        messages = FileHistory("big", tmp_path).messages
        n = len(messages)
        assert 1 <= n <= most, log
        assert [m.id for m in messages] == [f"m{k}" for k in range(n)], log
        assert [m.content for m in messages] == [m.content for m in full[:n]], log
    print(f"kills: {log}; {mid_write} of 6 landed during a write")
    assert mid_write >= 1, f"no kill landed during a write: {log}"
    # The next write removes the temp file a killed writer left behind.
    FileHistory("big", tmp_path).add_message(HumanMessage("after the kills"))
    assert leftovers(tmp_path) == []


# -- damaged files -------------------------------------------------------------------------


def _truncated_good_file(tmp_path: Path) -> bytes:
    FileHistory("good", tmp_path).add_messages(conversation())
    raw = (tmp_path / "good.json").read_bytes()
    return raw[: len(raw) // 2]


BAD_FILES = {
    "invalid JSON": lambda tmp: b"{this is not json",
    "truncated JSON": _truncated_good_file,
    "empty file": lambda tmp: b"",
    "only whitespace": lambda tmp: b"  \n",
    "not UTF-8": lambda tmp: '{"format": "안녕"}'.encode("cp949"),
    "a JSON list (the library's format)": lambda tmp: (
        b'[{"type": "human", "data": {"content": "x"}}]'
    ),
    "wrong format tag": lambda tmp: b'{"format": "something else", "version": 1, "messages": []}',
    "newer version": lambda tmp: (
        b'{"format": "llm-memory-course/history", "version": 2, "messages": []}'
    ),
    "messages not a list": lambda tmp: (
        b'{"format": "llm-memory-course/history", "version": 1, "messages": {}}'
    ),
    "unknown message type": lambda tmp: (
        b'{"format": "llm-memory-course/history", "version": 1, '
        b'"messages": [{"type": "martian", "data": {"content": "x"}}]}'
    ),
    "message without data": lambda tmp: (
        b'{"format": "llm-memory-course/history", "version": 1, "messages": [{"type": "human"}]}'
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_damaged_file_raises_and_is_left_untouched(tmp_path, case):
    folder = tmp_path / "h"
    folder.mkdir()
    raw = BAD_FILES[case](tmp_path)
    path = folder / "s.json"
    path.write_bytes(raw)
    history = FileHistory("s", folder)

    with pytest.raises(HistoryFileError) as info:
        history.messages  # noqa: B018 - reading is the action under test
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError)
    assert path.read_bytes() == raw

    with pytest.raises(HistoryFileError, match="damaged"):
        history.add_messages([HumanMessage("더하기")])
    with pytest.raises(HistoryFileError):
        history.add_message(HumanMessage("하나 더"))
    with pytest.raises(HistoryFileError):
        history.replace([HumanMessage("요약")])
    with pytest.raises(HistoryFileError):
        history.clear()
    with pytest.raises(HistoryFileError):
        history.update(lambda messages: [])
    assert path.read_bytes() == raw
    assert leftovers(folder) == []


def test_damaged_file_reasons(tmp_path):
    path = tmp_path / "s.json"
    history = FileHistory("s", tmp_path)
    reasons = {
        b"": "empty",
        b"{oops": "not valid JSON",
        b"\xff\xfe{}": "not UTF-8",
        b"[]": "not a history file",
    }
    for raw, reason in reasons.items():
        path.write_bytes(raw)
        with pytest.raises(HistoryFileError, match=reason):
            history.messages  # noqa: B018


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_pipe_in_place_of_the_file_is_refused_at_once_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "s.json")  # reading it would block until someone writes: forever
    with pytest.raises(HistoryFileError, match="not a regular file"):
        FileHistory("s", tmp_path).messages  # noqa: B018


def test_a_file_with_a_bom_reads_and_keeps_its_permissions_when_written(tmp_path):
    """A BOM (a Windows editor's) is not text; a write keeps the file's mode (0600 stays private)."""
    history = FileHistory("s", tmp_path)
    history.add_messages([HumanMessage("안녕하세요", id="a")])
    history.path.write_bytes(b"\xef\xbb\xbf" + history.path.read_bytes())
    assert [m.text for m in history.messages] == ["안녕하세요"]
    os.chmod(history.path, 0o600)
    history.add_messages([AIMessage("반가워요", id="b")])
    assert (history.path.stat().st_mode & 0o777) == 0o600 and len(history.messages) == 2


def test_a_read_only_file_is_not_replaced(tmp_path, monkeypatch):
    history = FileHistory("s", tmp_path)
    history.add_messages([HumanMessage("one", id="a")])
    os.chmod(history.path, 0o444)
    if hasattr(os, "getuid") and os.getuid() == 0:  # root may write any file: ask as a user would be answered
        monkeypatch.setattr(history_module.os, "access", lambda path, mode: False)
    with pytest.raises(PermissionError, match="read-only"):
        history.add_messages([HumanMessage("two", id="b")])
    assert [m.text for m in history.messages] == ["one"]


# -- session ids ---------------------------------------------------------------------------

BAD_IDS = [
    "../x",
    "a/b",
    "..",
    ".",
    "",
    "/etc/passwd",
    "x\x00y",
    "a\\b",
    "a" * 200,
    " alice",
    "alice ",
    ".hidden",
    "a..b",
    "trailing.",
    "con",
    "NUL.txt",
    "com1",
    "세션",
    "a:b",
    "C:x",
]
GOOD_IDS = ["alice", "user_42", "a.b-c", "A" * 128, "0", "session-2024.11.30", "console"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_session_ids_refused(tmp_path, bad):
    folder = tmp_path / "history"
    with pytest.raises(InvalidSessionIdError) as info:
        FileHistory(bad, folder)
    assert isinstance(info.value, ValueError)
    assert repr(bad[:40]) in str(info.value)
    assert "allowed" in str(info.value)
    with pytest.raises(InvalidSessionIdError):
        validate_session_id(bad)
    assert list(tmp_path.iterdir()) == []  # nothing created, not even the folder


@pytest.mark.parametrize("good", GOOD_IDS)
def test_good_session_ids_accepted(tmp_path, good):
    assert validate_session_id(good) == good
    history = FileHistory(good, tmp_path)
    history.add_message(HumanMessage("hi"))
    assert history.path == tmp_path / f"{good}.json"
    assert history.path.parent == tmp_path


def test_a_long_session_id_is_shown_by_its_start_and_length():
    with pytest.raises(InvalidSessionIdError) as info:
        validate_session_id("x" * 9_990 + "/etc/passwd")
    assert str(info.value).startswith(f"invalid session id {'x' * 40!r}... (10001 characters); allowed:")
    assert len(str(info.value)) < 300


def test_non_string_session_id_refused():
    with pytest.raises(InvalidSessionIdError, match="must be a str"):
        validate_session_id(42)  # type: ignore[arg-type]


# -- the library way, for the lesson's claims ----------------------------------------------


def test_library_file_history_escapes_korean_by_default(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import FileChatMessageHistory

        default = FileChatMessageHistory(str(tmp_path / "default.json"))
        default.add_message(HumanMessage(KOREAN))
        utf8 = FileChatMessageHistory(
            str(tmp_path / "utf8.json"), encoding="utf-8", ensure_ascii=False
        )
        utf8.add_message(HumanMessage(KOREAN))
    raw_default = (tmp_path / "default.json").read_bytes()
    assert b"\\uc548\\ub155" in raw_default  # "안녕" escaped
    assert KOREAN.encode("utf-8") not in raw_default
    assert KOREAN.encode("utf-8") in (tmp_path / "utf8.json").read_bytes()


def test_odd_paths_give_clear_errors(tmp_path):
    nested = tmp_path / "nested"
    nested.mkdir()
    (nested / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(HistoryFileError, match="nested too deeply"):
        FileHistory("deep", nested).messages  # noqa: B018
    (nested / "folder.json").mkdir()
    with pytest.raises(HistoryFileError, match="folder"):
        FileHistory("folder", nested).messages  # noqa: B018
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match="is a file"):
        FileHistory("s", a_file)


def test_an_unpaired_surrogate_is_refused_naming_the_message_and_nothing_is_written(tmp_path):
    """Half an emoji ("\\ud83d", as some JSON exports hold) cannot be written as UTF-8: a clear
    ValueError before anything is written, whichever way the history is changed."""
    history = FileHistory("s", tmp_path)
    history.add_messages(conversation())
    raw = history.path.read_bytes()
    broken = [HumanMessage("fine"), AIMessage("I love it \ud83d so much")]
    expected = ("the text of messages[1] (ai) holds an unpaired surrogate '\\ud83d' at character 10 "
                "(after 'I love it '): half of a UTF-16 pair, not valid UTF-8. Nothing was written.")
    for change in (history.add_messages, history.replace, lambda new: history.update(lambda old: new)):
        with pytest.raises(ValueError) as info:
            change(broken)
        assert str(info.value).startswith(expected), str(info.value)
    with pytest.raises(ValueError, match=r"messages\[0\] \(human\) holds an unpaired surrogate '\\udc00'"):
        history.add_message(HumanMessage([{"type": "text", "text": "x\udc00"}]))
    assert history.path.read_bytes() == raw and leftovers(tmp_path) == []
    assert summary(history.messages) == summary(conversation())


def test_korean_typed_on_macos_is_written_and_read_back_as_nfc(tmp_path):
    import unicodedata

    decomposed = unicodedata.normalize("NFD", KOREAN)
    assert decomposed != KOREAN
    history = FileHistory("nfd", tmp_path)
    history.add_messages([HumanMessage(decomposed, id="m1"),
                          AIMessage([{"type": "text", "text": decomposed}])])
    assert history.messages[0].text == KOREAN and history.messages[0].id == "m1"
    assert history.messages[1].content == [{"type": "text", "text": KOREAN}]
    written = history.path.read_text(encoding="utf-8")
    assert KOREAN in written and decomposed not in written
    data = json.loads(history.path.read_text(encoding="utf-8"))  # a file another tool wrote decomposed
    data["messages"][0]["data"]["content"] = decomposed
    history.path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert history.messages[0].text == KOREAN
