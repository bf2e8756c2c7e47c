"""Layered memory, the evaluation harness and the long conversation: small inputs with values
checked by hand, plus the data generator's determinism."""

from __future__ import annotations

import importlib.util
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from helpers import count_tokens
from helpers.config import project_root
from helpers.evaluation import (
    context_fit,
    cost_table_rows,
    evaluate_strategy,
    evidence_reached,
    load_exported_conversation,
    load_long_conversation,
    results_markdown,
    summarize_runs,
)
from helpers.offline_model import OfflineChatModel
from helpers.strategies import CountWindow, FullHistory
from helpers.summarization import summary_message

SMALL = {
    "id": "small",
    "user_id": "tess",
    "system": "Answer briefly.",
    "description": "5 turns, 2 sessions",
    "turns": [
        {"id": "t1", "session_id": "s1", "text": "I keep three beehives.", "kind": "fact"},
        {"id": "t2", "session_id": "s1", "text": "Tell me a joke.", "kind": "filler"},
        {"id": "t3", "session_id": "s1", "text": "How many beehives do I keep?", "kind": "probe"},
        {"id": "t4", "session_id": "s2", "text": "Thanks, that helps.", "kind": "filler"},
        {"id": "t5", "session_id": "s2", "text": "How many beehives do I keep?", "kind": "probe"},
    ],
    "probes": [
        {"turn_id": "t3", "question": "How many beehives do I keep?", "evidence": ["t1"],
         "expects": ["three"], "fact": "bees", "changed": False},
        {"turn_id": "t5", "question": "How many beehives do I keep?", "evidence": ["t1"],
         "expects": ["three"], "fact": "bees", "changed": False},
    ],
}


@pytest.fixture(scope="module")
def model():
    return OfflineChatModel()


# -- evidence -------------------------------------------------------------------------------------

PROBE = {"question": "Where do I live?", "expects": ["Oslo"]}


def test_evidence_verbatim_summary_retrieved_and_missed():
    system = SystemMessage("Answer briefly.")
    question = HumanMessage("Where do I live?")
    verbatim = [system, HumanMessage("I live in Oslo."), AIMessage("Got it."), question]
    assert evidence_reached(verbatim, PROBE) == (True, "verbatim")
    summarized = [system, summary_message("- I live in Oslo."), question]
    assert evidence_reached(summarized, PROBE) == (True, "summary")
    retrieved = [system, SystemMessage("Relevant memories:\n- I live in Oslo.",
                                       id="retrieved-memories"), question]
    assert evidence_reached(retrieved, PROBE) == (True, "retrieved")
    augmented = [system, HumanMessage("Relevant history:\n- User: I live in Oslo.\n\n"
                                      "Question: Where do I live?")]
    assert evidence_reached(augmented, PROBE) == (True, "retrieved")
    assert evidence_reached([system, question], PROBE) == (False, None)
    # the answer word inside the question itself does not count
    assert evidence_reached([system, HumanMessage("Do I live in Oslo? Where do I live?")],
                            {"question": "Where do I live?", "expects": ["Oslo"]})[0] is True
    assert evidence_reached([system, HumanMessage("Where do I live?")],
                            {"question": "Where do I live?", "expects": ["live"]}) == (False, None)


# -- the harness on a small conversation ------------------------------------------------------------


def test_full_history_tokens_and_recall_by_hand(model):
    rows = evaluate_strategy(FullHistory(), SMALL, model, progress=False)
    assert [r.turn_id for r in rows] == ["t1", "t2", "t3", "t4", "t5"]
    # rebuild by hand what full history sends at each turn
    system, history, expected = SystemMessage(SMALL["system"]), [], []
    for turn in SMALL["turns"]:
        prompt = [system, *history, HumanMessage(turn["text"])]
        expected.append(count_tokens(prompt))
        history += [HumanMessage(turn["text"]), model.invoke(prompt)]
    assert [r.prompt_tokens for r in rows] == expected
    probes = [r for r in rows if r.probe]
    assert [(r.turn_id, r.evidence_reached, r.how) for r in probes] == [
        ("t3", True, "verbatim"), ("t5", True, "verbatim")]
    assert all(r.answer_correct for r in probes)
    assert all(r.extra_calls == 0 and r.extra_embeddings == 0 for r in rows)
    assert all(r.overhead_ms >= 0 for r in rows)


def test_count_window_forgets_and_the_summary_table_says_so(model):
    runs = {
        "full history": evaluate_strategy(FullHistory(), SMALL, model, progress=False),
        "count window (2 messages)": evaluate_strategy(CountWindow(2), SMALL, model, progress=False),
    }
    window = runs["count window (2 messages)"]
    assert [(r.turn_id, r.evidence_reached) for r in window if r.probe] == [
        ("t3", False), ("t5", False)]
    table = summarize_runs(runs)
    assert [row["evidence recall"] for row in table] == [1.0, 0.0]
    assert table[0]["prompt tokens (total)"] == sum(r.prompt_tokens for r in runs["full history"])
    assert table[0]["% of first strategy's tokens"] == 100.0
    ratio = 100 * table[1]["prompt tokens (total)"] / table[0]["prompt tokens (total)"]
    assert table[1]["% of first strategy's tokens"] == round(ratio, 1)
    costs = cost_table_rows(runs)
    assert costs[0]["what is kept"] == "everything" and costs[1]["evidence recall"] == 0.0
    markdown = results_markdown(table, SMALL)
    assert "| full history | " in markdown and markdown.count("\n|") == 4


def test_max_turns_stops_early(model):
    assert len(evaluate_strategy(FullHistory(), SMALL, model, max_turns=2, progress=False)) == 2


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
    from helpers.milvus_store import Memory

    def memory(text, score):
        return Memory(content=f"User: {text}\nAI: ok", round=1, timestamp="", session_id="s",
                      score=score, ids=[])

    found = [memory("What is my name?", 0.9), memory("what is my  name?", 0.8),
             memory("My name is Aiko.", 0.5), memory("My sister is Mei.", 0.6)]
    ranked = rank_memories(found)
    assert [m.content.splitlines()[0] for m in ranked] == [
        "User: My name is Aiko.", "User: My sister is Mei.", "User: What is my name?"]


def test_layered_budgets_sessions_and_archive(store, model):
    from helpers.layered import LayeredMemory, prompt_marks

    memory = LayeredMemory(store, "tess", "s1", window_tokens=60, summary_tokens=80,
                           retrieval_tokens=70, top_k=2, summary_every=3)
    rows = evaluate_strategy(memory, SMALL, model, progress=False)
    for turn in memory.log:
        assert turn.window_tokens <= 60
        assert turn.summary_tokens <= 80 + 10  # the cap is on the text; + header and framing
        assert turn.retrieved_tokens <= 70 + 10
    # the second session starts empty: the fact comes back from Milvus
    last = rows[-1]
    assert (last.session_id, last.evidence_reached, last.how) == ("s2", True, "retrieved")
    assert last.extra_embeddings == 2  # the question and the stored turn
    # every 3 turns a summary of them is archived in Milvus
    archived = [m.content for m in store.turns("tess") if m.content.startswith("Summary of")]
    assert archived and archived[0].startswith("Summary of rounds 1-3:")
    assert "I keep three beehives." in archived[0]
    # the prompt of a new question shows the marked sections
    stored = memory.start_session("s3")
    prompt = memory.prompt(SystemMessage("Answer briefly."), stored,
                           HumanMessage("How many beehives do I keep?"))
    assert prompt_marks(prompt) == ["kept", "retrieved", "kept"]
    assert "three beehives" in prompt[1].text


# -- the closing exercise ------------------------------------------------------------------------------


def test_exported_conversation_and_context_fit(tmp_path):
    messages = load_exported_conversation(
        project_root() / "data" / "evaluation" / "example_export.json")
    assert [m.type for m in messages[:3]] == ["system", "human", "ai"]
    rows = context_fit(messages, reply_tokens=1000)
    total = count_tokens(messages) + 1000
    assert {r["conversation + reply"] for r in rows} == {total}
    gpt4 = next(r for r in rows if r["model"] == "gpt-4")
    assert gpt4["context window"] == 8192 and gpt4["fits"] is True
    assert all(r["source"].startswith("https://") for r in rows)
    huge = [HumanMessage("word " * 9000)]
    assert next(r for r in context_fit(huge) if r["model"] == "gpt-4")["fits"] is False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"role": "user"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="item 0"):
        load_exported_conversation(bad)


# -- the long conversation ------------------------------------------------------------------------------


def test_long_conversation_is_the_generators_output_and_well_formed():
    path = project_root() / "scripts" / "make_long_conversation.py"
    spec = importlib.util.spec_from_file_location("make_long_conversation", path)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    data = load_long_conversation()
    assert generator.generate(seed=data["seed"]) == data
    turns = {t["id"]: (i, t) for i, t in enumerate(data["turns"])}
    assert len(turns) >= 300 and len({t["session_id"] for t in data["turns"]}) >= 3
    assert sum(t["kind"] == "fact" for t in data["turns"]) >= 30
    assert sum(t["kind"] == "change" for t in data["turns"]) >= 3
    for probe in data["probes"]:
        at, turn = turns[probe["turn_id"]]
        assert turn["kind"] == "probe" and turn["text"] == probe["question"]
        for evidence in probe["evidence"]:
            before, stated = turns[evidence]
            assert before < at
            assert all(word in stated["text"] for word in probe["expects"])
    assert any(p["changed"] for p in data["probes"])


def test_layered_refuses_bad_budgets_and_too_long_questions(store, model):
    from helpers.layered import LayeredMemory, WindowBudgetError

    with pytest.raises(ValueError, match="must be >= 1"):
        LayeredMemory(store, "tess", window_tokens=0)
    memory = LayeredMemory(store, "tess-2", "s1", window_tokens=30)
    with pytest.raises(WindowBudgetError, match="window_tokens=30"):
        memory.prompt(SystemMessage("Answer briefly."), [], HumanMessage("word " * 100))
    assert store.count("tess-2") == 0  # nothing was stored


def test_summary_calls_tokens_are_counted(model):
    from helpers.strategies import RunningSummary
    from helpers.summarization import CountTrigger

    rows = evaluate_strategy(RunningSummary(CountTrigger(2, 0)), SMALL, model, progress=False)
    summarized = [r for r in rows if r.extra_calls]
    assert summarized and all(r.extra_call_tokens > 0 for r in summarized)
    assert all(r.extra_call_tokens == 0 for r in rows if not r.extra_calls)
    table = summarize_runs({"s": rows})[0]
    assert table["all input tokens (total)"] == table["prompt tokens (total)"] + sum(
        r.extra_call_tokens for r in rows)


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
