"""Every lesson executed on a real kernel, offline, with a per-cell timeout, and checked on what it
shows. A probe runs in the lesson's kernel after its last cell and prints the values checked."""

from __future__ import annotations

from itertools import pairwise

import pytest

from helpers.lessons import execute_lesson, lesson_paths

CELL_TIMEOUT = 180  # seconds

PROBES = {
    "00_setup": """
import json, sys
print(json.dumps({"chat": settings.chat_provider, "dims": len(vector),
                  "reply": reply.content}))
""",
    "01_stateless_model": """
import json, sys
print(json.dumps({"second": second.content, "with_history": with_history.content,
                  "torch": "torch" in sys.modules}))
""",
    "02_in_memory_history": """
import json, sys
print(json.dumps({"records": records, "old_way": old_way.content,
                  "new_way": new_way["messages"][-1].content,
                  "other_thread": other["messages"][-1].content,
                  "torch": "torch" in sys.modules}))
""",
    "03_file_history": """
import json, sys
print(json.dumps({"library_run": library_run, "helpers_run": helpers_run,
                  "answer": answer.content, "escaped": "\\\\uc548" in library_file.read_text(),
                  "damaged_unchanged": damaged.path.read_bytes() == before,
                  "torch": "torch" in sys.modules}))
""",
    "04_truncation": """
import json, sys
print(json.dumps({"slice_reply": model.invoke(window).content,
                  "slice_marks": window_marks(messages, window),
                  "safe_types": [m.type for m in safe], "plain": [m.type for m in plain],
                  "fits": count_tokens(fits),
                  "last_replies": {n: r[-1].reply for n, r in runs.items()},
                  "explorer_turns": len(explorer.records),
                  "torch": "torch" in sys.modules}))
""",
    "05_summarization": """
import json, sys
print(json.dumps({"split": [len(step.folded), len(step.kept), len(stored)],
                  "first": step.summary, "second": second.summary,
                  "unchanged": unchanged,
                  "after": [m.type for m in file_history.messages],
                  "korean": summarize_step(model, korean, CountTrigger(4, 2)).summary,
                  "library_calls": cost_summary(library)["extra calls"],
                  "torch": "torch" in sys.modules}))
""",
}


def test_every_lesson_has_a_probe():
    assert sorted(PROBES) == [p.stem for p in lesson_paths()]


def run(name):
    (path,) = lesson_paths([name])
    return execute_lesson(path, cell_timeout=CELL_TIMEOUT, probe=PROBES[name]).probe


@pytest.mark.notebook
def test_00_setup():
    shown = run("00_setup")
    assert shown["chat"] == "offline"
    assert shown["dims"] == 384
    assert "Sam" in shown["reply"]


@pytest.mark.notebook
def test_01_stateless_model_forgets_the_name():
    shown = run("01_stateless_model")
    assert "Alice" not in shown["second"]
    assert "know" in shown["second"].lower()
    assert "Alice" in shown["with_history"]
    assert shown["torch"] is False  # this lesson must not pay the torch import


@pytest.mark.notebook
def test_02_in_memory_history_remembers_and_grows():
    shown = run("02_in_memory_history")
    records = shown["records"]
    by_question = {r["user"]: r["reply"] for r in records}
    assert "Alice" in by_question["What is my name?"]
    assert "Lisbon" in by_question["Where do I live?"]
    assert "data engineer" in by_question["What do I do for work?"]
    sent = [r["tokens sent (count_tokens)"] for r in records]
    assert all(b > a for a, b in pairwise(sent)), sent
    assert [r["messages sent"] for r in records] == [2 + 2 * i for i in range(len(records))]
    assert all(r["tokens sent (count_tokens)"] == r["input tokens (reported)"] for r in records)
    assert "Alice" in shown["old_way"] and "Alice" in shown["new_way"]
    assert "Alice" not in shown["other_thread"]
    assert shown["torch"] is False


@pytest.mark.notebook
def test_03_file_history_survives_and_fixes_the_pitfalls():
    shown = run("03_file_history")
    library, ours = shown["library_run"], shown["helpers_run"]
    assert ours["expected"] == 400 and ours["stored"] == 400 and ours["valid_json"]
    assert library["expected"] == 400
    assert library["stored"] != 400 or not library["valid_json"], library
    assert shown["escaped"] is True
    assert "Alice" in shown["answer"]
    assert shown["damaged_unchanged"] is True
    assert shown["torch"] is False


@pytest.mark.notebook
def test_04_truncation_windows():
    shown = run("04_truncation")
    assert "know" in shown["slice_reply"].lower() and "Alice" not in shown["slice_reply"]
    assert shown["slice_marks"] == ["dropped", "dropped", "kept", "kept", "kept", "kept"]
    assert shown["safe_types"] == ["system", "human", "ai", "human"]
    assert shown["plain"] == ["system"]  # the library's trap: the question is gone
    assert shown["fits"] <= 60
    replies = shown["last_replies"]
    assert "Alice" in replies["full history"]
    assert all("Alice" not in reply for name, reply in replies.items() if name != "full history")
    assert shown["explorer_turns"] == 17
    assert shown["torch"] is False


@pytest.mark.notebook
def test_05_summarization():
    shown = run("05_summarization")
    assert shown["split"] == [8, 2, 10]
    for fact in shown["first"].splitlines()[1:]:
        assert fact in shown["second"]
    assert "My name is Alice." in shown["second"]
    assert shown["unchanged"] is True
    assert shown["after"] == ["system", "human", "ai"]
    assert shown["korean"].startswith("사용자가 말한 사실:") and "김민수" in shown["korean"]
    assert shown["library_calls"] > 0
    assert shown["torch"] is False
