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


FRIENDS = {
    "id": "friends", "user_id": "cara", "system": "You are a friendly assistant.",
    "probes": [{"id": "p1", "turn_id": "t9", "question": "What did Mel paint last year?",
                "evidence": ["t2"], "expects": ["sunrise"]}],
    "turns": [
        {"id": "t1", "session_id": "s1", "date": "2025-05-08", "speaker": "user",
         "text": "I went to a support group yesterday. How was your weekend?"},
        {"id": "t2", "session_id": "s1", "date": "2025-05-08", "speaker": "assistant",
         "text": "Busy with the kids! I painted that lake sunrise last year, it hangs in our hall."},
        {"id": "t3", "session_id": "s1", "date": "2025-05-08", "speaker": "user",
         "text": "Wow, nice! How did you get into painting?"},
        {"id": "t4", "session_id": "s1", "date": "2025-05-08", "speaker": "assistant",
         "text": "Sounds great, Caroline."},
        {"id": "t9", "session_id": "s2", "date": "2025-06-01", "speaker": "user",
         "text": "What did Mel paint last year?"},
    ]}


def test_layered_recall_finds_the_other_speakers_facts_and_gates_statements(recall_store, model):
    """A conversation between two people: the second speaker's first-person statement is a fact
    and is recalled in a new session; a statement that ends with a question is a statement; a
    new message that states something gets no retrieved section (statement budget 0)."""
    from helpers.layered import LayeredMemory

    memory = LayeredMemory(recall_store, "cara", "s1", retrieval_tokens=120)
    rows = evaluate_strategy(memory, FRIENDS, model, progress=False)
    kinds = {m.content: m.kind for m in recall_store.turns("cara")}
    assert kinds[FRIENDS["turns"][0]["text"]] == "statement"  # states, then asks
    assert kinds[FRIENDS["turns"][1]["text"]] == "statement"  # the friend speaks of herself
    assert kinds["Wow, nice! How did you get into painting?"] == "question"
    assert kinds["Sounds great, Caroline."] == "reply"
    assert memory.log[0].retrieved_section_tokens == 0  # t1 states something: no search
    assert memory.retrieval_budget("What did Mel paint last year?") == 120
    assert memory.retrieval_budget("I like tea.") == 0
    last = rows[-1]
    assert (last.evidence_reached, last.how) == (True, "retrieved")
    (part,) = last.prompt.of_kind("retrieved")
    assert "Assistant: Busy with the kids! I painted that lake sunrise" in part.text


def test_retrieval_budget_grows_with_the_history_up_to_the_cap(recall_store):
    from helpers.layered import MAX_RETRIEVAL_TOKENS, LayeredMemory

    memory = LayeredMemory(recall_store, "gus", retrieval_tokens=500, retrieval_share=0.05)
    assert memory.retrieval_budget("Where do I live?") == 500
    memory.stored_tokens = 20_000  # 5% of 20,000 = 1,000 tokens
    assert memory.retrieval_budget("Where do I live?") == 1_000
    memory.stored_tokens = 1_000_000
    assert memory.retrieval_budget("Where do I live?") == MAX_RETRIEVAL_TOKENS == 4_000
    assert LayeredMemory(recall_store, "gus", retrieval_share=0).retrieval_budget("Why?") == 500
    with pytest.raises(ValueError, match="retrieval_share"):
        LayeredMemory(recall_store, "gus", retrieval_share=1.5)


def test_an_answer_that_repeats_its_memories_is_stored_as_an_echo(recall_store, model):
    """The self-quoting loop: the model's answer quotes a retrieved memory; stored as ``echo``
    it is never searched, so the next question finds the user's statement, not the quote."""
    from helpers.layered import LayeredMemory

    convo = {"id": "echo", "user_id": "ed", "system": "You are a friendly assistant.",
             "probes": [], "turns": [
                 {"id": "t1", "session_id": "s1", "speaker": "user",
                  "text": "My sister Eunji works as a nurse at the children's hospital."},
                 {"id": "t2", "session_id": "s1", "speaker": "assistant", "text": "Noted."},
                 {"id": "t3", "session_id": "s2", "speaker": "user",
                  "text": "Where does my sister work?"}]}
    memory = LayeredMemory(recall_store, "ed", "s1", retrieval_tokens=100)
    rows = evaluate_strategy(memory, convo, model, progress=False)
    assert "nurse" in rows[-1].reply
    (answer,) = [m for m in recall_store.turns("ed") if m.content == rows[-1].reply]
    assert answer.kind == "echo"
