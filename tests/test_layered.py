"""Tests for helpers.layered (window + running summary + Milvus recall) on Milvus Lite."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from test_evaluation import SMALL

from helpers.course.offline_model import OfflineChatModel
from helpers.evaluation import evaluate_strategy


@pytest.fixture(scope="module")
def model():
    return OfflineChatModel()


# -- layered memory on Milvus Lite -------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from helpers.milvus_store import MemoryStore, quiet_milvus_logs

    quiet_milvus_logs()
    uri = str(tmp_path_factory.mktemp("layered") / "layered.db")
    with MemoryStore(uri=uri, collection="layered_test", drop_existing=True) as store:
        yield store


def test_rank_memories_drops_repeats_and_puts_statements_first():
    from helpers.layered import rank_memories
    from helpers.milvus_common import Memory

    def memory(text, score):
        return Memory(content=f"User: {text}\nAI: ok", round=1, timestamp="", session_id="s",
                      score=score, ids=[])

    found = [memory("What is my name?", 0.9), memory("what is my  name?", 0.8),
             memory("My name is Aiko.", 0.5), memory("My sister is Mei.", 0.6)]
    ranked = rank_memories(found)
    assert [m.content.splitlines()[0] for m in ranked] == [
        "User: My name is Aiko.", "User: My sister is Mei.", "User: What is my name?"]


def test_layered_budgets_sessions_and_archive(store, model):
    from helpers.layered import LayeredMemory

    memory = LayeredMemory(store, "tess", "s1", window_tokens=60, max_summary_tokens=80,
                           retrieval_tokens=70, top_k=2, summary_every=3)
    rows = evaluate_strategy(memory, SMALL, model, progress=False)
    for turn in memory.log:
        assert turn.window_section_tokens <= 60
        assert turn.summary_section_tokens <= 80 + 10  # the cap is on the text; + header, framing
        assert turn.retrieved_section_tokens <= 70 + 10
    # the second session starts empty: only Milvus carries anything over. Top-k over whole turns
    # (a store without memory columns) brings back the earlier question and its answer (t3), not
    # the turn that stated the fact (t1): the answer quotes "three", but evidence is counted by
    # turn id, so it is not reached (test_layered_recall_* shows the recall path finding t1)
    last = rows[-1]
    assert (last.session_id, last.evidence_reached, last.how) == ("s2", False, None)
    assert last.prompt.sources("retrieved") == {"t3-user", "t3-reply"}
    assert last.embedding_calls == 2  # the question and the stored turn
    # every 3 turns a summary of them is archived in Milvus
    archived = [m.content for m in store.turns("tess") if m.content.startswith("Summary of")]
    assert archived and archived[0].startswith("Summary of rounds 1-3:")
    assert "I keep three beehives." in archived[0]
    # the prompt of a new question shows the marked sections
    stored = memory.start_session("s3")
    prompt = memory.prompt(SystemMessage("Answer briefly."), stored,
                           HumanMessage("How many beehives do I keep?"))
    assert prompt.marks() == ["kept", "retrieved", "kept"]
    assert "three beehives" in prompt[1].text
    # the retrieved section names the conversation messages it came from (written by this memory)
    (retrieved,) = prompt.of_kind("retrieved")
    assert retrieved.sources and all(s.startswith("t") for s in retrieved.sources)


def test_layered_refuses_bad_budgets_and_too_long_questions(store, model):
    from helpers.layered import LayeredMemory, WindowBudgetError

    with pytest.raises(ValueError, match="must be >= 1"):
        LayeredMemory(store, "tess", window_tokens=0)
    memory = LayeredMemory(store, "tess-2", "s1", window_tokens=30)
    with pytest.raises(WindowBudgetError, match="window_tokens=30"):
        memory.prompt(SystemMessage("Answer briefly."), [], HumanMessage("word " * 100))
    assert store.count("tess-2") == 0  # nothing was stored


def test_a_lite_path_in_milvus_uri_does_not_break_importing_pymilvus(tmp_path):
    import subprocess
    import sys

    code = ("from helpers.milvus_store import MemoryStore;"
            "s = MemoryStore(collection='x', dim=8); print(s.kind); s.close()")
    env = {"PATH": "/usr/bin:/bin", "COURSE_DOTENV": "none", "HOME": str(tmp_path),
           "MILVUS_URI": str(tmp_path / "lite.db"), "COURSE_RUNTIME_DIR": str(tmp_path / "rt")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=180, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "lite"


# -- recall: one row per message, kinds, dates (issue 10) ------------------------------------------

DATED = {**SMALL, "turns": [
    {**t, "date": "2025-02-22" if t["session_id"] == "s1" else "2025-03-04"} for t in SMALL["turns"]]}


@pytest.fixture(scope="module")
def recall_store(tmp_path_factory):
    from helpers.milvus_store import MemoryStore, quiet_milvus_logs

    quiet_milvus_logs()
    uri = str(tmp_path_factory.mktemp("recall") / "recall.db")
    with MemoryStore(uri=uri, collection="layered_recall", drop_existing=True,
                     memory_fields=True) as store:
        yield store


def test_layered_recall_stores_messages_with_kinds_and_dates(recall_store, model):
    from helpers.layered import LayeredMemory

    memory = LayeredMemory(recall_store, "rita", "s1", window_tokens=60, max_summary_tokens=80,
                           retrieval_tokens=70)
    assert memory.recall and "recall 70 tokens" in memory.name
    rows = evaluate_strategy(memory, DATED, model, progress=False)
    stored = recall_store.turns("rita")
    assert len(stored) == 2 * len(DATED["turns"])  # one row per message, no archive summaries
    by_text = {m.content: m for m in stored}
    fact = by_text["I keep three beehives."]
    assert (fact.kind, fact.speaker, fact.date, fact.round) == ("statement", "user", "2025-02-22", 1)
    assert by_text["How many beehives do I keep?"].kind == "question"
    assert {m.speaker for m in stored} == {"user", "assistant"}
    for turn in memory.log:
        assert turn.retrieved_section_tokens <= 70 + 10
    # a new session: the fact comes back from Milvus, dated, marked as the user's, with its id
    last = rows[-1]
    assert (last.session_id, last.evidence_reached, last.how) == ("s2", True, "retrieved")
    (part,) = last.prompt.of_kind("retrieved")
    assert "[2025-02-22 Sat, s1]" in part.text and "User: I keep three beehives." in part.text
    assert "t1-user" in part.sources
    assert "How many beehives" not in part.text  # past questions are never retrieved
    assert last.embedding_calls == 3  # the question, then both messages in one call


def test_layered_recall_needs_memory_fields(store):
    from helpers.layered import LayeredMemory

    with pytest.raises(ValueError, match="memory_fields=True"):
        LayeredMemory(store, "tess", recall=True)
    assert not LayeredMemory(store, "tess").recall  # an older collection: top-k as before
