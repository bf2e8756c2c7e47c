"""Tests for helpers.evaluate (the measurement harness): evidence from typed prompt parts,
the harness on a small conversation checked by hand, the results tables, the closing exercise and
the long conversation's generator."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from measure import results_markdown, saved_result  # scripts/measure.py: make evaluate

from helpers import count_tokens
from helpers.config import project_root
from helpers.course.display import article_cost_table
from helpers.course.measure import context_fit, load_exported_conversation
from helpers.course.offline_model import OfflineChatModel
from helpers.evaluate import evaluate_strategy, evidence_reached, load_long_conversation, summarize_runs
from helpers.memory import QUESTION, RETRIEVED, RETRIEVED_ID, SYSTEM, Prompt, PromptPart, label, part
from helpers.summary import summary_message
from helpers.window import CountWindow, FullHistory

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
    question = HumanMessage("Where do I live?", id="t2-user")
    fact, reply = HumanMessage("I live in Oslo.", id="t1-user"), AIMessage("Got it.", id="t1-reply")
    verbatim = label([system, fact, reply, question], system, question)
    assert evidence_reached(verbatim, PROBE) == (True, "verbatim")
    summary = summary_message("- I live in Oslo.", covers=["t1-user", "t1-reply"])
    assert evidence_reached(label([system, summary, question], system, question), PROBE) == (
        True, "summary")
    section = SystemMessage("Relevant memories:\n- I live in Oslo.", id=RETRIEVED_ID)
    assert evidence_reached(label([system, section, question], system, question), PROBE) == (
        True, "retrieved")
    augmented = Prompt([system, HumanMessage("Relevant history:\n- User: I live in Oslo.\n\n"
                                             "Question: Where do I live?")],
                       [part(SYSTEM, system),
                        (PromptPart(RETRIEVED, "Relevant history:\n- User: I live in Oslo."),
                         PromptPart(QUESTION, "Where do I live?"))])
    assert evidence_reached(augmented, PROBE) == (True, "retrieved")
    assert evidence_reached(label([system, question], system, question), PROBE) == (False, None)
    # the question itself and the system prompt are not evidence
    asked = HumanMessage("Do I live in Oslo? Where do I live?")
    assert evidence_reached(label([system, asked], system, asked), PROBE) == (False, None)
    told = SystemMessage("The user lives in Oslo.")
    assert evidence_reached(label([told, question], told, question), PROBE) == (False, None)


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
    assert all(r.memory_calls == 0 and r.embedding_calls == 0 for r in rows)
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
    costs = article_cost_table(runs)
    assert costs[0]["what is kept"] == "everything" and costs[1]["evidence recall"] == 0.0
    markdown = results_markdown(table, SMALL)
    assert "| full history | " in markdown and markdown.count("\n|") == 4


def test_max_turns_stops_early(model):
    assert len(evaluate_strategy(FullHistory(), SMALL, model, max_turns=2, progress=False)) == 2


def test_summary_calls_tokens_are_counted(model):
    from helpers.summary import CountTrigger, RunningSummary

    rows = evaluate_strategy(RunningSummary(CountTrigger(2, 0)), SMALL, model, progress=False)
    summarized = [r for r in rows if r.memory_calls]
    assert summarized and all(r.memory_call_input_tokens > 0 for r in summarized)
    assert all(r.memory_call_input_tokens == 0 for r in rows if not r.memory_calls)
    table = summarize_runs({"s": rows})[0]
    assert table["all input tokens (total)"] == table["prompt tokens (total)"] + sum(
        r.memory_call_input_tokens for r in rows)
    # every prompt here is under the cache's minimum: the same bill with caching, summary calls included
    from helpers.caching import DEFAULT_MODEL, load_prices

    dollars = round(table["all input tokens (total)"] * load_prices()[DEFAULT_MODEL].input / 1e6, 4)
    assert table[f"input $ ({DEFAULT_MODEL})"] == dollars == table[f"input $ cached ({DEFAULT_MODEL})"]



# -- the closing exercise ------------------------------------------------------------------------------


def test_exported_conversation_and_context_fit(tmp_path):
    messages = load_exported_conversation(
        project_root() / "data" / "evaluation" / "example_export.json")
    assert [m.type for m in messages[:3]] == ["system", "human", "ai"]
    rows = context_fit(messages, reply_tokens=1000)
    total = count_tokens(messages) + 1000
    assert {r["conversation + reply"] for r in rows} == {total}
    mini = next(r for r in rows if r["model"] == "gpt-4o-mini")
    assert mini["context window"] == 128000 and mini["fits"] is True
    assert all(r["source"].startswith("https://") and re.fullmatch(r"\d{4}-\d\d-\d\d", r["checked"])
               for r in rows)  # every window names its source and the day it was checked
    huge = [HumanMessage("word " * 130_000)]
    assert next(r for r in context_fit(huge) if r["model"] == "gpt-4o-mini")["fits"] is False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"role": "user"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="item 0"):
        load_exported_conversation(bad)


EXPORT_ROLES = "system, developer, user, human, assistant, ai, model"


def test_exported_roles_any_case_gemini_model_and_a_bom(tmp_path):
    path = tmp_path / "export.json"
    roles = ("System", "developer", "User", "ASSISTANT", "model", "Human")
    items = [{"role": r, "content": r} for r in roles]
    path.write_text("\ufeff" + json.dumps(items), encoding="utf-8")  # a BOM, as some Windows tools write
    messages = load_exported_conversation(path)
    assert [(m.type, m.text) for m in messages] == [(m.type, m.text) for m in [
        SystemMessage("System"), SystemMessage("developer"), HumanMessage("User"), AIMessage("ASSISTANT"),
        AIMessage("model"), HumanMessage("Human")]]


def test_an_export_from_powershell_in_utf16_reads_and_other_encodings_are_named(tmp_path):
    """Windows PowerShell's ``>`` writes UTF-16 with a BOM: read. Latin-1, JSON nested 100,000 deep, an empty
    list and an escaped unpaired surrogate: refused naming the file (before: bare UnicodeDecodeError,
    RecursionError, an empty conversation that "fits")."""
    path = tmp_path / "export.json"
    items = [{"role": "user", "content": "안녕하세요"}, {"role": "assistant", "content": "반가워요"}]
    path.write_bytes(json.dumps(items, ensure_ascii=False).encode("utf-16"))  # BOM + UTF-16LE
    assert [m.text for m in load_exported_conversation(path)] == ["안녕하세요", "반가워요"]
    latin = '[{"role": "user", "content": "café"}]'.encode("latin-1")
    for raw, reason in [(latin, r"not UTF-8 text \(byte 0xe9"), (b"[" * 100_000, "nested too deeply"),
                        (b"[]", "at least one"),
                        (b'[{"role": "user", "content": "x\\ud800"}]', "item 0: .*unpaired surrogate")]:
        path.write_bytes(raw)
        with pytest.raises(ValueError, match=reason) as info:
            load_exported_conversation(path)
        assert str(path) in str(info.value)


@pytest.mark.parametrize("role", ["tool", "function", "narrator"])
def test_an_exported_tool_result_or_unknown_role_is_refused_naming_the_item(tmp_path, role):
    path = tmp_path / "export.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": role, "content": "{}"}]),
                    encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_exported_conversation(path)
    assert str(info.value) == (
        f"{path}: item 1 has role {role!r}; accepted, any case: {EXPORT_ROLES} (a tool or function "
        "result: make it 'user' or remove it)")


def test_a_broken_export_names_the_file_line_and_column(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text('[\n {"role": "user", "content": "hi"},\n {"role": "assistant", "cont', encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_exported_conversation(path)
    assert str(info.value).startswith(f"{path} is not valid JSON (cut short?): ")
    assert "line 3 column 24" in str(info.value)
    with pytest.raises(ValueError, match="cut.json is not valid JSON .* line 3 column 24"):
        load_long_conversation(path)


def test_make_evaluate_on_a_chat_export_says_so_without_a_traceback(tmp_path, capsys):
    """One sentence on stderr and exit status 1 (``SystemExit`` with a message), as the command runs it."""
    import subprocess
    import sys

    export = project_root() / "data" / "evaluation" / "example_export.json"
    broken = tmp_path / "broken.json"
    broken.write_text('{"turns": [', encoding="utf-8")
    said = {}
    for path in (export, broken):
        run = subprocess.run([sys.executable, "scripts/measure.py", "--conversation", str(path),
                              "--out", str(tmp_path / "out")], capture_output=True, text=True,
                             cwd=project_root())
        assert run.returncode == 1 and run.stdout == "" and "Traceback" not in run.stderr, run.stderr
        said[path] = run.stderr
    assert said[export] == (f"{export} lacks 'turns': not a long conversation file (data/README.md); a chat "
                            "export is read by load_exported_conversation, measured by context_fit "
                            "(lesson 08)\n")
    assert said[broken].startswith(f"{broken} is not valid JSON (cut short?): Expecting value: line 1")
    assert list(tmp_path.iterdir()) == [broken]  # nothing measured, nothing written


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


def test_two_speaker_files_replay_recorded_lines_without_model_calls(model):
    from helpers.evaluate import conversation_turns

    two = {**SMALL, "turns": [
        {"id": "t1", "session_id": "s1", "date": "2025-02-22", "speaker": "user",
         "text": "I keep three beehives.", "kind": "fact"},
        {"id": "t2", "session_id": "s1", "date": "2025-02-22", "speaker": "assistant",
         "text": "Three! That is a lot of honey.", "kind": "reply"},
        {"id": "t3", "session_id": "s2", "date": "2025-03-04", "speaker": "user",
         "text": "How many beehives do I keep?", "kind": "probe"},
        {"id": "t4", "session_id": "s2", "date": "2025-03-04", "speaker": "user",
         "text": "What is my cat's name?", "kind": "probe"},
    ], "probes": [SMALL["probes"][0] | {"turn_id": "t3"},
                  {"turn_id": "t4", "question": "What is my cat's name?", "evidence": [],
                   "expects": []}]}
    turns = conversation_turns(two["turns"])
    assert [(t.turn_id, t.reply, t.date) for t in turns] == [
        ("t1", "Three! That is a lot of honey.", "2025-02-22"), ("t3", None, "2025-03-04"),
        ("t4", None, "2025-03-04")]
    calls = []
    rows = evaluate_strategy(FullHistory(), two, model.with_listeners(on_start=calls.append),
                             progress=False)
    assert rows[0].reply == "Three! That is a lot of honey." and rows[0].memory_calls == 0
    assert all(r.memory_call_input_tokens == 0 for r in rows)  # no call, nothing subtracted
    assert len(calls) == 2  # only the two probes called the model
    assert [(r.probe, r.evidence_reached, r.how) for r in rows[1:]] == [
        (True, True, "verbatim"), (False, None, "unanswerable")]
    # the unanswerable probe is scored on the reply: "I don't know" is right
    assert rows[2].reply.startswith("I don't know") and rows[2].answer_correct is True
    (row,) = summarize_runs({"full history": rows})
    assert row["unanswerable answered"] == "0/1" and row["evidence recall"] == 1.0
    rows[2].answer_correct = False  # as if the model had answered from some other memory
    assert summarize_runs({"full history": rows})[0]["unanswerable answered"] == "1/1"


def test_evidence_is_reached_by_its_turn_ids_not_by_words_elsewhere():
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from helpers.evaluate import evidence_reached, replay_message_ids
    from helpers.memory import COVERS_KEY, SUMMARY_ID, label

    turns = [{"id": "t001", "speaker": "user", "text": "I grew up in Jeonju."},
             {"id": "t002", "speaker": "assistant", "text": "Nice city."},
             {"id": "t003", "speaker": "user", "text": "Did I say I grew up in Jeonju?"},
             {"id": "t004", "speaker": "assistant", "text": "Yes."},
             {"id": "t005", "speaker": "user", "text": "Where did I grow up?"}]
    ids = replay_message_ids(turns)
    assert ids == {"t001": "t1-user", "t002": "t1-reply", "t003": "t2-user", "t004": "t2-reply",
                   "t005": "t3-user"}
    probe = {"evidence": ["t001"], "expects": ["Jeonju"]}
    system, question = SystemMessage("Be brief."), HumanMessage("Where did I grow up?", id="t3-user")
    evidence = HumanMessage(turns[0]["text"], id="t1-user")
    leak = HumanMessage(turns[2]["text"], id="t2-user")  # the answer's word, in a later question
    window = label([system, leak, AIMessage("Yes.", id="t2-reply"), question], system, question)
    assert evidence_reached(window, probe) == (True, "verbatim")  # the word-only measure: a leak
    assert evidence_reached(window, probe, ids) == (False, None)  # the honest one
    sent = label([system, evidence, question], system, question)
    assert evidence_reached(sent, probe, ids) == (True, "verbatim")
    kept = SystemMessage("Summary: the user grew up in Jeonju.", id=SUMMARY_ID,
                         additional_kwargs={COVERS_KEY: ["t1-user", "t1-reply"]})
    assert evidence_reached(label([system, kept, question], system, question), probe, ids) == (
        True, "summary")
    lost = SystemMessage("Summary: the user talked about cities.", id=SUMMARY_ID,
                         additional_kwargs={COVERS_KEY: ["t1-user", "t1-reply"]})
    assert evidence_reached(label([system, lost, question], system, question), probe, ids) == (
        False, None)  # folded in, but the fact did not survive
    two = {"evidence": ["t001", "t003"], "expects": ["Jeonju"]}  # every evidence turn is needed
    assert evidence_reached(sent, two, ids) == (False, None)
    both = label([system, kept, leak, question], system, question)
    assert evidence_reached(both, two, ids) == (True, "mixed")


def test_per_category_recall_and_the_saved_result(model):
    from helpers.evaluate import per_category_recall, runs_to_json

    convo = {**SMALL, "probes": [p | {"category": "temporal"} for p in SMALL["probes"]]}
    runs = {"full history": evaluate_strategy(FullHistory(), convo, model, progress=False),
            "count window (1 message)": evaluate_strategy(CountWindow(1), convo, model,
                                                          progress=False)}
    table = per_category_recall(runs_to_json(runs), convo)
    assert table == {"full history": {"temporal": 1.0}, "count window (1 message)": {"temporal": 0.0}}
    saved = saved_result({"summary": summarize_runs(runs), "turns": runs_to_json(runs)}, convo,
                         "by hand")
    assert (saved["measured"], saved["conversation"], saved["per_category"]) == (
        "by hand", convo["id"], table)
    assert [row["strategy"] for row in saved["summary"]] == list(runs)


# -- any order of speakers -----------------------------------------------------------------------------

# Sessions that open with the other speaker, two lines of one role in a row (both roles), probes.
OPENERS = {**SMALL, "speakers": {"user": "Tess", "assistant": "Mel"}, "turns": [
    {"id": "a1", "session_id": "s1", "date": "2025-02-22", "speaker": "assistant",
     "text": "Hi Tess! I adopted a parrot, his name is Kiwi."},
    {"id": "a2", "session_id": "s1", "date": "2025-02-22", "speaker": "assistant",
     "text": "He whistles all day."},
    {"id": "u1", "session_id": "s1", "date": "2025-02-22", "speaker": "user",
     "text": "I keep three beehives."},
    {"id": "u2", "session_id": "s1", "date": "2025-02-22", "speaker": "user",
     "text": "The bees are Italian."},
    {"id": "a3", "session_id": "s1", "date": "2025-02-22", "speaker": "assistant",
     "text": "Three! That is a lot of honey."},
    {"id": "a4", "session_id": "s2", "date": "2025-03-04", "speaker": "assistant",
     "text": "I taught Kiwi a new song yesterday."},
    {"id": "p1", "session_id": "s2", "date": "2025-03-04", "speaker": "user",
     "text": "What is the name of Mel's parrot?"},
    {"id": "p2", "session_id": "s2", "date": "2025-03-04", "speaker": "user",
     "text": "How many beehives do I keep?"},
], "probes": [{"turn_id": "p1", "question": "What is the name of Mel's parrot?", "evidence": ["a1"],
               "expects": ["Kiwi"]},
              SMALL["probes"][0] | {"turn_id": "p2", "evidence": ["u1"]}]}


def test_sessions_may_open_with_either_speaker_and_lines_of_one_role_are_one_message():
    from helpers.evaluate import conversation_turns, replay_message_ids
    from helpers.memory import Turn

    text = {t["id"]: t["text"] for t in OPENERS["turns"]}
    assert conversation_turns(OPENERS["turns"]) == [
        Turn(None, "s1", "a1", "2025-02-22", f"{text['a1']}\n{text['a2']}"),
        Turn(f"{text['u1']}\n{text['u2']}", "s1", "u1", "2025-02-22", text["a3"]),
        Turn(None, "s2", "a4", "2025-03-04", text["a4"]),  # not moved into session s1
        Turn(text["p1"], "s2", "p1", "2025-03-04"), Turn(text["p2"], "s2", "p2", "2025-03-04")]
    assert replay_message_ids(OPENERS["turns"]) == {
        "a1": "t1-reply", "a2": "t1-reply", "u1": "t2-user", "u2": "t2-user", "a3": "t2-reply",
        "a4": "t3-reply", "p1": "t4-user", "p2": "t5-user"}


def every_line_reached_the_replay(conversation: dict, rows) -> bool:
    """Each data line is in the message its id maps to, in the last step's timeline (the whole
    conversation so far), and each recorded message is its lines joined: nothing dropped or added."""
    from helpers.evaluate import replay_message_ids

    ids = replay_message_ids(conversation["turns"])
    messages = {m.id: m.text for m in rows[-1].timeline[1:]}
    lines: dict[str, list[str]] = {}
    for t in conversation["turns"]:
        lines.setdefault(ids[t["id"]], []).append(t["text"])
    return all(messages.get(i) == "\n".join(texts) for i, texts in lines.items())


def test_every_recorded_line_reaches_the_replay_and_only_probes_call_the_model(model):
    calls = []
    rows = evaluate_strategy(FullHistory(), OPENERS, model.with_listeners(on_start=calls.append),
                             progress=False)
    assert len(calls) == 2  # the two probes; no call for a recorded line
    assert every_line_reached_the_replay(OPENERS, rows)
    assert [(r.user, r.prompt_tokens, r.reply_tokens) for r in (rows[0], rows[2])] == [("", 0, 0)] * 2
    assert [(r.turn_id, r.evidence_reached, r.how) for r in rows if r.probe] == [
        ("p1", True, "verbatim"), ("p2", True, "verbatim")]
    window = evaluate_strategy(CountWindow(7), OPENERS, model, progress=False)
    assert [r.evidence_reached for r in window if r.probe] == [False, True]  # a window starts on a
    table = summarize_runs({"full history": rows, "count window": window})  # user message: not a1
    assert [row["evidence recall"] for row in table] == [1.0, 0.5]
    assert table[0]["prompt tokens at last turn"] == rows[-1].prompt_tokens
    assert table[0]["prompt tokens (total)"] == sum(r.prompt_tokens for r in rows[3:]) + rows[1].prompt_tokens


@pytest.mark.parametrize("name", ["hard_conversation", "friends_conversation", "long_conversation",
                                  "long_conversation_ko"])
def test_full_history_reaches_every_line_and_every_evidence_of_our_conversations(name, full_history_replay):
    conversation, rows, _ = full_history_replay(project_root() / "data" / "evaluation" / f"{name}.json")
    assert every_line_reached_the_replay(conversation, rows)
    probes = [r for r in rows if r.probe]
    assert [r.turn_id for r in probes] == [p["turn_id"] for p in conversation["probes"] if p["expects"]]
    assert all(r.evidence_reached for r in probes)


def test_speakers_are_read_in_any_case_and_any_other_speaker_is_refused():
    from helpers.evaluate import conversation_turns

    turns = [{"id": "u1", "session_id": "s1", "text": "I keep bees.", "speaker": "User"},
             {"id": "a1", "session_id": "s1", "text": "Bees!", "speaker": "Assistant"}]
    assert [(t.text, t.reply) for t in conversation_turns(turns)] == [("I keep bees.", "Bees!")]
    for speaker in ("narrator", "system", None, ""):
        bad = [*turns, {"id": "n1", "session_id": "s1", "text": "Later...", "speaker": speaker}]
        with pytest.raises(ValueError) as info:
            conversation_turns(bad)
        assert str(info.value) == (f"turns[2] (id 'n1') has speaker {speaker!r}; accepted, any case: "
                                   "'user', 'assistant'")


@pytest.mark.parametrize(("turn", "message"), [
    ({"id": "t2", "session_id": "s1"}, "turns[1] (id 't2') has no str 'text'"),
    ({"id": "t2", "text": None}, "turns[1] (id 't2') has no str 'text'"),
    ({"session_id": "s1", "text": "hi"}, "turns[1] has no str 'id'"),
    ({"id": None, "text": None}, "turns[1] (id None) has no str 'id' or 'text'"),
    ("just a line", "turns[1] has no str 'id' or 'text'"),
])
def test_a_turn_without_id_or_text_is_refused_naming_it(tmp_path, turn, message):
    from helpers.evaluate import conversation_turns, replay_message_ids

    turns = [SMALL["turns"][0], turn]
    for read in (conversation_turns, replay_message_ids):
        with pytest.raises(ValueError) as info:
            read(turns)
        assert str(info.value) == f"{message}: every turn needs both"
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps({**SMALL, "turns": turns}), encoding="utf-8")
    with pytest.raises(ValueError, match="every turn needs both"):  # refused on loading, not mid-replay
        load_long_conversation(path)


def test_a_chat_export_typed_on_macos_is_loaded_as_nfc(tmp_path):
    import unicodedata

    export = tmp_path / "export.json"
    text = unicodedata.normalize("NFD", "제 고향은 전주예요.")
    export.write_text(json.dumps([{"role": "user", "content": text}], ensure_ascii=False), encoding="utf-8")
    (message,) = load_exported_conversation(export)
    assert message.text == "제 고향은 전주예요." and message.text != text
