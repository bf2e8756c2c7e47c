"""Tests for helpers.memory.replay (the one loop, its records, marks from typed prompt parts,
totals) run with the strategies of helpers.window and helpers.summary, for the cost tables of
helpers.course.display, and for helpers.course.library_way.LibrarySummary."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec

import pytest
from langchain_core.messages import AIMessage, SystemMessage

from helpers.course.display import article_cost_table, cost_summary, cost_table
from helpers.memory import (
    QUESTION,
    SUMMARY,
    SYSTEM,
    VERBATIM,
    MemoryStrategy,
    Turn,
    TurnRecord,
    replay,
    totals,
)
from helpers.summary import (
    CountTrigger,
    RunningSummary,
    TokenTrigger,
    is_summary,
    split_stored,
    summary_covers,
)
from helpers.tokens import count_message_tokens, count_tokens
from helpers.window import CountWindow, FullHistory, LastN, TokenWindow


def _defines(module: str, name: str) -> bool:
    return find_spec(module) is not None and hasattr(import_module(module), name)


# Tests that need a name of the new layout another task writes: skipped until it exists.
needs_library_way = pytest.mark.skipif(not _defines("helpers.course.library_way", "LibrarySummary"),
                                       reason="helpers.course.library_way is written at the switch")

UNKNOWN = "I don't know: I can only answer from the messages I was sent, and they don't say that."
MADRID = 'You told me: "Big news: last week I moved from Lisbon to Madrid."'
LISBON = 'You told me: "I live in Lisbon with my cat, Miso."'


def run(strategy, conversation, model, extra_turns=()):
    return replay(strategy, [*conversation.turns, *extra_turns], model, conversation.system)


# --- replay --------------------------------------------------------------------------------


def test_full_history_grows_every_turn(intro, model):
    records = run(FullHistory(), intro, model)
    assert [r.turn for r in records] == list(range(1, 9))
    assert [len(r.prompt) for r in records] == [2, 4, 6, 8, 10, 12, 14, 16]
    tokens = [r.prompt_tokens for r in records]
    assert all(a < b for a, b in zip(tokens, tokens[1:], strict=False))
    for r in records:
        assert r.prompt_tokens == count_tokens(r.prompt)
        assert r.prompt[0] == SystemMessage(intro.system)
        assert r.prompt[-1].text == r.user
        assert set(r.marks) == {"kept"} and len(r.marks) == len(r.timeline) == len(r.prompt)
        assert (r.memory_calls, r.memory_call_tokens) == (0, 0)
    # each prompt is the previous one plus the previous reply and the new question
    for before, after in zip(records, records[1:], strict=False):
        assert [m.text for m in after.prompt[:-2]] == [m.text for m in before.prompt]
        assert after.prompt[-2].text == before.reply
    assert records[-1].reply == 'You told me: "I work as a data engineer at a shipping company."'


def test_last_n_drops_the_system_prompt_and_the_name(intro, model):
    extra = ["What is my name?"]
    records = run(LastN(4), intro, model, extra)
    full = run(FullHistory(), intro, model, extra)
    assert [len(r.prompt) for r in records] == [2, 4, 4, 4, 4, 4, 4, 4, 4]
    assert records[1].marks[0] == "kept"  # turn 2: exactly 4 messages, the system prompt fits
    for r in records[2:]:
        assert r.marks[0] == "dropped"
        assert r.prompt[0].type != "system"
    last = records[-1]
    assert last.marks.count("kept") == 4 and last.marks[-4:] == ["kept"] * 4
    assert last.prompt[0].type == "ai"  # the slice starts on a reply whose question is gone
    assert last.reply == UNKNOWN
    # full history sent the name (what its reply makes of it is the stand-in's reading: issue 38)
    assert any("My name is Alice." in m.text for m in full[-1].prompt)


@pytest.mark.parametrize("strategy", [CountWindow(4), CountWindow(7), TokenWindow(120), TokenWindow(250)],
                         ids=lambda s: s.name)
def test_windows_start_with_the_system_prompt_then_a_question(strategy, month, model):
    records = run(strategy, month, model)
    assert len(records) == len(month.turns)
    for r in records:
        assert r.prompt[0] == SystemMessage(month.system)
        assert r.prompt[1].type == "human"
        assert r.prompt[-1].text == r.user
        assert r.marks[0] == "kept"
        if isinstance(strategy, CountWindow):
            assert len(r.prompt) - 1 <= strategy.max_messages
        else:
            assert r.prompt_tokens <= strategy.max_tokens
    assert "dropped" in records[-1].marks  # the window is binding on this conversation


def test_token_window_takes_as_much_as_fits(month, model):
    budget = 120
    for r in run(TokenWindow(budget), month, model):
        assert r.prompt_tokens <= budget
        kept = [m for m, mark in zip(r.timeline, r.marks, strict=True) if mark == "kept"]
        assert [m.text for m in kept] == [m.text for m in r.prompt]
        dropped = [i for i, mark in enumerate(r.marks) if mark == "dropped"]
        if dropped:  # adding the turn just before the window would go over the budget
            start = max(i for i in dropped if r.timeline[i].type == "human")
            assert count_tokens([r.timeline[0], *r.timeline[start:]]) > budget


def test_running_summary_costs_only_on_summary_turns(month, model):
    records = run(RunningSummary(CountTrigger()), month, model)
    summary_turns = [r.turn for r in records if r.memory_calls]
    assert summary_turns == [4, 7, 10, 13, 16]
    for r in records:
        if r.turn in summary_turns:
            assert r.memory_calls == 1
            assert r.memory_call_input_tokens > 0 and r.memory_call_output_tokens > 0
        else:
            assert (r.memory_calls, r.memory_call_tokens) == (0, 0)
    # from the turn after the first summary on, the prompt is [system, summary, *recent, new]
    for r in records[4:]:
        assert is_summary(r.prompt[1]) and r.marks[1] == "summary"
    for r in records[:4]:
        assert "summary" not in r.marks and "summarized" not in r.marks
    # the marks come from the summary part: every message it covers is marked summarized
    last = records[-1]
    (summary,) = last.prompt.of_kind(SUMMARY)
    assert summary.sources == tuple(summary_covers(last.prompt[1]))
    assert last.marks.count("summarized") == len(summary.sources) == 30
    assert [m.id for m, mark in zip(last.timeline, last.marks, strict=True)
            if mark == "summarized"] == list(summary.sources)
    assert [m.text for m, mark in zip(last.timeline, last.marks, strict=True)
            if mark in ("kept", "summary")] == [m.text for m in last.prompt]


def test_running_summary_with_token_trigger(month, model):
    records = run(RunningSummary(TokenTrigger()), month, model)
    summary_turns = [r.turn for r in records if r.memory_calls]
    assert len(summary_turns) >= 3
    for r in records:
        # what was stored after the turn: [summary?, *recent, question, reply]; the trigger counts
        # what the next request sends: that plus the system prompt
        stored = [*r.prompt[1:], AIMessage(r.reply)]
        over = count_tokens(stored) + count_message_tokens(r.prompt[0]) > 200
        _, messages = split_stored(stored)
        # over the trigger, it summarizes unless everything stored fits the part it keeps
        assert (r.turn in summary_turns) == (over and TokenTrigger().keep_from(messages) > 0)
        assert (r.memory_calls > 0) == (r.memory_call_tokens > 0) == (r.turn in summary_turns)
    assert "My name is Alice." in records[-1].reply  # read in the summary


def test_cost_summary_totals_are_sums_of_the_turns(month, model):
    for strategy in (FullHistory(), CountWindow(4), RunningSummary(CountTrigger()),
                     RunningSummary(TokenTrigger())):
        records = run(strategy, month, model)
        totals = cost_summary(records)
        assert totals == {
            "turns": 17,
            "prompt tokens (total)": sum(r.prompt_tokens for r in records),
            "prompt tokens (last turn)": records[-1].prompt_tokens,
            "extra calls": sum(r.memory_calls for r in records),
            "summary tokens": sum(r.memory_call_tokens for r in records),
            "all tokens": sum(r.as_row()["total tokens"] for r in records),
        }
        assert totals["all tokens"] == (totals["prompt tokens (total)"] + totals["summary tokens"]
                                        + sum(r.reply_tokens for r in records))
        assert all(r.reply_tokens > 0 for r in records)
    assert cost_summary(run(FullHistory(), month, model))["extra calls"] == 0
    assert cost_summary(run(RunningSummary(CountTrigger()), month, model))["extra calls"] == 5


def test_cost_table_rows_are_the_turns(month, model):
    for strategy in (FullHistory(), RunningSummary(CountTrigger())):
        records = run(strategy, month, model)
        totals = cost_summary(records)
        table = cost_table(records)
        assert list(table.index) == list(range(1, 18))
        assert table["prompt tokens"].sum() == totals["prompt tokens (total)"]
        assert table["extra calls"].sum() == totals["extra calls"]
        assert list(table["user"]) == list(month.turns) and table["reply"].str.len().max() <= 60


def test_replay_of_zero_turns(model):
    assert replay(FullHistory(), [], model, "system") == []
    assert replay(RunningSummary(CountTrigger()), [], model) == []
    assert cost_summary([]) == {"turns": 0, "prompt tokens (total)": 0, "prompt tokens (last turn)": 0,
                                "extra calls": 0, "summary tokens": 0, "all tokens": 0}


def test_every_strategy_implements_the_protocol():
    for strategy in (FullHistory(), LastN(4), CountWindow(4), TokenWindow(200),
                     RunningSummary(CountTrigger())):
        assert isinstance(strategy, MemoryStrategy), strategy
        assert (strategy.embedding_calls, strategy.embedding_seconds) == (0, 0.0)
        when, sends = strategy.cost_note
        assert when and sends


@needs_library_way
def test_library_summary_implements_the_protocol(model):
    from helpers.course.library_way import LibrarySummary

    strategy = LibrarySummary(model)
    assert isinstance(strategy, MemoryStrategy)
    assert (strategy.embedding_calls, strategy.embedding_seconds) == (0, 0.0)


def test_prompt_parts_say_what_each_message_is(month, model):
    records = run(RunningSummary(CountTrigger()), month, model)
    last = records[-1]
    kinds = [[p.kind for p in parts] for parts in last.prompt.parts]
    assert kinds[0] == [SYSTEM] and kinds[1] == [SUMMARY] and kinds[-1] == [QUESTION]
    assert all(k == [VERBATIM] for k in kinds[2:-1])
    assert last.prompt.of_kind(QUESTION)[0].sources == ("t17-user",)
    assert last.prompt.marks()[:2] == ["kept", "summary"]


@dataclass
class Probed(TurnRecord):
    """What evaluate.ScoredTurn adds to a record (its probe score), for these tests."""

    probe: bool = False
    evidence_reached: bool | None = None
    how: str | None = None
    answer_correct: bool | None = None


def test_replay_builds_the_record_class_it_is_given(month, model):
    seen = []
    records = replay(FullHistory(), month.turns[:3], model, month.system, record=Probed,
                     on_turn=lambda record, turn: seen.append((record, turn)))
    assert all(type(r) is Probed and not r.probe for r in records)
    assert [r for r, _ in seen] == records  # on_turn is still called with each record
    assert [t for _, t in seen] == [Turn(text) for text in month.turns[:3]]
    plain = run(FullHistory(), month, model)
    assert [r.prompt_tokens for r in records] == [r.prompt_tokens for r in plain[:3]]
    assert all(type(r) is TurnRecord for r in plain)


def test_totals_have_no_recall_and_the_cost_table_reads_probe_records(month, model):
    records = replay(FullHistory(), month.turns, model, month.system, record=Probed)
    assert "evidence recall" not in totals(records) and "answers correct" not in totals(records)
    records[0].probe, records[0].evidence_reached = True, True
    records[1].probe, records[1].evidence_reached = True, False
    (row,) = article_cost_table({"full history": records})
    assert row["evidence recall"] == 0.5
    assert row["trigger"] == "never" and row["what is kept"] == "everything"
    assert row["kept at the last turn"] == "32 of 32 earlier messages"
    assert article_cost_table({"no probes": records[2:]})[0]["evidence recall"] is None
    plain = run(FullHistory(), month, model)  # plain TurnRecords count as no probe
    assert article_cost_table({"full history": plain})[0]["evidence recall"] is None


def test_strategy_names_are_distinct():
    strategies = (FullHistory(), LastN(4), CountWindow(4), TokenWindow(200),
                  RunningSummary(CountTrigger()), RunningSummary(CountTrigger(), summary_last=True),
                  RunningSummary(TokenTrigger()))
    names = [s.name for s in strategies]
    assert len(set(names)) == len(names)
    assert names[4] == "summary (> 6 messages, keep last 2)"
    assert names[6] == "summary (> 200 tokens, keep ~80 tokens)"


# --- the library way -----------------------------------------------------------------------


@needs_library_way
def test_library_summary_summarizes_after_the_trigger(intro, model):
    from helpers.course.library_way import LibrarySummary

    records = replay(LibrarySummary(model), intro.turns, model, intro.system)
    assert len(records) == len(intro.turns)
    calls = [r.memory_calls for r in records]
    assert sum(calls) > 0
    first = calls.index(1) + 1
    assert first == 4  # 3 turns + the new question = 7 messages > 6
    for r in records:
        assert r.prompt[0] == SystemMessage(intro.system)
        assert r.prompt_tokens == count_tokens(r.prompt)
        assert (r.memory_calls > 0) == (r.memory_call_tokens > 0)
        summaries = [m for m in r.prompt if m.type == "human" and m.text.startswith("Here is a summary")]
        marks = r.prompt.marks()
        if r.turn < first:
            assert summaries == [] and "summary" not in marks and "summary" not in r.marks
        else:  # the wrapper knows which message the middleware wrote: no text matching needed
            assert len(summaries) == 1 and marks.count("summary") == 1
            assert marks[r.prompt.index(summaries[0])] == "summary"
            assert r.marks.count("summarized") == len(r.prompt.sources(SUMMARY)) > 0
    assert "data engineer" in records[-1].reply  # the fact came through the summary
    assert cost_summary(records)["extra calls"] == sum(calls)


# --- steps that are a recorded reply alone ----------------------------------------------------------


def test_a_recorded_reply_alone_is_stored_with_no_prompt_and_no_call(model):
    calls = []
    counted = model.with_listeners(on_start=calls.append)
    turns = [Turn(None, "s1", "a1", reply="Hi! I'm back from Oslo."),
             Turn("I moved to Rome.", "s1", "u1", reply="Rome, wow."),
             Turn(None, "s2", "a2", reply="How is Rome?"), Turn("Where was my friend?", "s2", "u2")]
    records = replay(FullHistory(), turns, counted, "Be brief.")
    assert len(calls) == 1  # only the last step has no recorded reply
    first, alone = records[0], records[2]
    for r in (first, alone):
        assert (r.user, len(r.prompt), r.prompt_tokens, r.reply_tokens, r.memory_calls) == ("", 0, 0, 0, 0)
    assert [r.reply for r in records[:3]] == ["Hi! I'm back from Oslo.", "Rome, wow.", "How is Rome?"]
    last = records[-1]  # every recorded line was stored, none invented, in order
    assert [(m.id, m.text) for m in last.prompt[1:]] == [
        ("t1-reply", "Hi! I'm back from Oslo."), ("t2-user", "I moved to Rome."), ("t2-reply", "Rome, wow."),
        ("t3-reply", "How is Rome?"), ("t4-user", "Where was my friend?")]
    assert [m.id for m in last.timeline[1:]] == [m.id for m in last.prompt[1:]]
    assert totals(records)["prompt tokens (last turn)"] == last.prompt_tokens > 0
    assert totals(records[:3])["prompt tokens (last turn)"] == records[1].prompt_tokens > 0  # not 0
    calls.clear()
    summarized = replay(RunningSummary(CountTrigger(0, 0)), turns, counted, "Be brief.")  # every step
    assert [r.memory_calls for r in summarized] == [1, 1, 1, 1] and len(calls) == 1 + 4
    assert summarized[2].prompt_tokens == 0 and summarized[2].memory_call_input_tokens > 0


# --- a recorded conversation is replayed as recorded ----------------------------------------------


def test_a_user_message_with_no_recorded_reply_is_stored_not_answered(model):
    calls = []
    turns = [Turn("I moved to Rome.", "s1", "u1", reply="Rome, wow."),
             Turn("Anyway, talk tomorrow!", "s1", "u2", answer=False),  # the session ends on it
             Turn(None, "s2", "a1", reply="Morning!"), Turn("Where do I live?", "s2", "p1")]
    records = replay(FullHistory(), turns, model.with_listeners(on_start=calls.append), "Be brief.")
    assert len(calls) == 1  # only the probe
    alone = records[1]
    assert (alone.user, alone.reply, len(alone.prompt), alone.prompt_tokens, alone.reply_tokens) == (
        "Anyway, talk tomorrow!", "", 0, 0, 0)
    assert [(m.id, m.text) for m in records[-1].prompt[1:]] == [
        ("t1-user", "I moved to Rome."), ("t1-reply", "Rome, wow."), ("t2-user", "Anyway, talk tomorrow!"),
        ("t3-reply", "Morning!"), ("t4-user", "Where do I live?")]  # no t2-reply: nothing invented


def test_only_probes_are_answered_when_a_session_ends_on_user_lines():
    from helpers.evaluate import conversation_turns, replay_message_ids

    turns = [{"id": "u1", "session_id": "s1", "speaker": "user", "text": "I keep bees."},
             {"id": "a1", "session_id": "s1", "speaker": "assistant", "text": "Bees!"},
             {"id": "u2", "session_id": "s1", "speaker": "user", "text": "Gotta go."},
             {"id": "u3", "session_id": "s1", "speaker": "user", "text": "Bye!"},
             {"id": "a2", "session_id": "s2", "speaker": "assistant", "text": "Hi again."},
             {"id": "p1", "session_id": "s2", "speaker": "user", "text": "What do I keep?"},
             {"id": "u4", "session_id": "s2", "speaker": "user", "text": "Also, hi."},
             {"id": "a3", "session_id": "s2", "speaker": "assistant", "text": "Hi."}]
    steps = conversation_turns(turns, {"p1"})
    assert [(t.turn_id, t.text, t.reply, t.answer) for t in steps] == [
        ("u1", "I keep bees.", "Bees!", True), ("u2", "Gotta go.\nBye!", None, False),
        ("a2", None, "Hi again.", True), ("p1", "What do I keep?", None, True),
        ("u4", "Also, hi.", "Hi.", True)]  # a probe is answered alone, never given a recorded reply
    assert replay_message_ids(turns, {"p1"}) == {
        "u1": "t1-user", "a1": "t1-reply", "u2": "t2-user", "u3": "t2-user", "a2": "t3-reply",
        "p1": "t4-user", "u4": "t5-user", "a3": "t5-reply"}
    # without probe ids (or in a script of the user's side only) every unanswered line is answered
    assert [(t.turn_id, t.answer) for t in conversation_turns(turns)][1:3] == [("u2", True), ("u3", True)]
    user_side = [t for t in turns if t["speaker"] == "user"]
    assert all(t.answer and t.reply is None for t in conversation_turns(user_side, {"p1"}))


def _evaluation_files() -> list[str]:  # every file of data/ with turns and probes
    from helpers.course.data import data_dir

    read = {p.name: json.loads(p.read_text("utf-8")) for p in (data_dir()).rglob("*.json")}
    return sorted(name for name, data in read.items() if isinstance(data, dict) and
                  {"turns", "probes"} <= set(data))


@pytest.mark.parametrize("name", _evaluation_files())
def test_every_conversation_file_is_replayed_as_recorded(name, full_history_replay):
    """Nothing dropped: each data line is in the message its id maps to. Nothing invented: the only
    messages that are not data lines are the model's answers, one per probe (every line of a script
    of the user's side only, data/README.md)."""
    from helpers.course.data import data_dir
    from helpers.evaluate import replay_message_ids

    conversation, rows, calls = full_history_replay(next(data_dir().rglob(name)))
    probes = {p["turn_id"] for p in conversation["probes"]}
    recorded = any(str(t.get("speaker")).lower() == "assistant" for t in conversation["turns"])
    ids = replay_message_ids(conversation["turns"], probes)
    lines: dict[str, list[str]] = {}
    for t in conversation["turns"]:
        lines.setdefault(ids[t["id"]], []).append(t["text"])
    sent = [*rows[-1].timeline[1:], AIMessage(rows[-1].reply, id=f"t{rows[-1].turn}-reply")]
    messages = {m.id: m.text for m in sent if m.id.endswith("-user") or m.text}
    assert all(messages.get(i) == "\n".join(texts) for i, texts in lines.items())  # nothing dropped
    answered = {m_id for m_id in messages if m_id not in lines}  # messages that are no data line
    asked = [r for r in rows if r.turn_id in probes] if recorded else rows
    assert answered == {f"t{r.turn}-reply" for r in asked}  # the model's answers, nothing else
    assert calls == len(asked) == (len(probes) if recorded else len(conversation["turns"]))


@pytest.mark.parametrize("name", ["alice_intro_en", "alice_month_en", "minsu_intro_ko", "minsu_month_ko"])
def test_every_sample_conversation_is_replayed_line_by_line(name, model):
    """The sample conversations record the user's side only: each line is sent once, in order, and
    answered (data/README.md); none dropped."""
    from helpers.course.data import list_conversations, load_conversation

    assert name in list_conversations()
    conversation = load_conversation(name)
    rows = replay(FullHistory(), conversation.turns, model, conversation.system)
    sent = [m for m in rows[-1].prompt[1:]]
    assert [m.text for m in sent if m.type == "human"] == list(conversation.turns)
    assert [m.type for m in sent] == ["human", "ai"] * (len(conversation.turns) - 1) + ["human"]


@needs_library_way
def test_the_library_summary_takes_a_pasted_file(model):
    """SummarizationMiddleware as a strategy: the paste is sent whole, then summarized away (the
    library's summary call reads it whole: its way, not ours)."""
    from long_messages import pasted_file

    from helpers.course.library_way import LibrarySummary

    turns = ["My name is Alice.", pasted_file("ko"), "What is my name?", "Thanks!"]
    records = replay(LibrarySummary(model, ("tokens", 1200), ("tokens", 300)), turns, model, "Be brief.")
    assert records[1].prompt[-1].text == turns[1] and records[1].prompt_tokens > 20_000
    assert records[2].prompt_tokens < 3_000 and records[2].memory_calls == 1  # folded into a summary


def test_an_unpaired_surrogate_is_refused_where_it_enters_not_as_a_failed_summary_call(model):
    """Before: ``SummarizationError: The summary call failed (UnicodeEncodeError ...)`` from the embedder, the
    text's fault blamed on the call, every retry the same. Now the turn's text is refused as it enters."""
    from helpers.summary import CountTrigger, RunningSummary

    with pytest.raises(ValueError, match=r"surrogate '\\ud800' at character 11 \(after 'My pin is x'\)"):
        replay(RunningSummary(CountTrigger(2, 0)), ["My pin is x\ud800y.", "I like tea."], model)
