"""Tests for helpers.strategies (replay, cost accounting, the middleware replay) and helpers.widgets
(the lesson 04/05 explorers and the strategy comparison table)."""

from __future__ import annotations

import html
import re

import pytest
from langchain_core.messages import AIMessage, SystemMessage

from helpers.data import load_conversation
from helpers.offline_model import OfflineChatModel
from helpers.strategies import (
    CountWindow,
    FullHistory,
    LastN,
    RunningSummary,
    TokenWindow,
    cost_summary,
    replay,
    replay_middleware,
)
from helpers.summarization import CountTrigger, TokenTrigger, is_summary
from helpers.tokens import count_message_tokens, count_tokens
from helpers.widgets import SummaryExplorer, TruncationExplorer, compare_strategies, cost_table

UNKNOWN = "I don't know: nothing in the messages I was sent says that."
MADRID = 'You told me: "Big news: last week I moved from Lisbon to Madrid."'
LISBON = 'You told me: "I live in Lisbon with my cat, Miso."'


@pytest.fixture(scope="module")
def model():
    return OfflineChatModel()


@pytest.fixture(scope="module")
def intro():
    return load_conversation("alice_intro_en")


@pytest.fixture(scope="module")
def month():
    return load_conversation("alice_month_en")


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
        assert (r.extra_calls, r.summary_tokens, r.summary_step) == (0, 0, None)
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
    assert full[-1].reply == 'You told me: "My name is Alice."'


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
    summary_turns = [r.turn for r in records if r.summary_step is not None]
    assert summary_turns == [4, 7, 10, 13, 16]
    for r in records:
        step = r.summary_step
        if r.turn in summary_turns:
            assert r.extra_calls == 1
            assert r.summary_tokens == step.call_input_tokens + step.call_output_tokens > 0
            assert step.call_input_tokens == count_tokens(step.prompt)
        else:
            assert (r.extra_calls, r.summary_tokens) == (0, 0)
    # from the turn after the first summary on, the prompt is [system, summary, *recent, new]
    for r in records[4:]:
        assert is_summary(r.prompt[1]) and r.marks[1] == "summary"
    for r in records[:4]:
        assert "summary" not in r.marks and "summarized" not in r.marks
    # the marks agree with the steps: everything folded so far is marked summarized
    last = records[-1]
    folded = sum(len(r.summary_step.folded) for r in records if r.summary_step)
    assert last.marks.count("summarized") == folded == 30
    assert [m.text for m, mark in zip(last.timeline, last.marks, strict=True)
            if mark in ("kept", "summary")] == [m.text for m in last.prompt]


def test_running_summary_with_token_trigger(month, model):
    records = run(RunningSummary(TokenTrigger()), month, model)
    summary_turns = [r.turn for r in records if r.summary_step is not None]
    assert len(summary_turns) >= 3
    for r in records:
        # what was stored after the turn: [summary?, *recent, question, reply]
        stored = [*r.prompt[1:], AIMessage(r.reply)]
        over = count_tokens(stored) > 200
        assert (r.turn in summary_turns) == over
        assert (r.extra_calls > 0) == (r.summary_tokens > 0) == over
        if over:
            step = r.summary_step
            assert r.summary_tokens == step.call_input_tokens + step.call_output_tokens
            assert [m.text for m in step.folded + step.kept] == [m.text for m in stored
                                                                  if not is_summary(m)]
    assert records[-1].reply == 'You told me: "My name is Alice."'


def test_cost_summary_totals_are_sums_of_the_turns(month, model):
    for strategy in (FullHistory(), CountWindow(4), RunningSummary(CountTrigger()),
                     RunningSummary(TokenTrigger())):
        records = run(strategy, month, model)
        totals = cost_summary(records)
        assert totals == {
            "turns": 17,
            "prompt tokens (total)": sum(r.prompt_tokens for r in records),
            "prompt tokens (last turn)": records[-1].prompt_tokens,
            "extra calls": sum(r.extra_calls for r in records),
            "summary tokens": sum(r.summary_tokens for r in records),
            "all tokens": sum(r.as_row()["total tokens"] for r in records),
        }
        assert totals["all tokens"] == (totals["prompt tokens (total)"] + totals["summary tokens"]
                                        + sum(r.reply_tokens for r in records))
        assert all(r.reply_tokens > 0 for r in records)
        table = cost_table(records)
        assert list(table.index) == list(range(1, 18))
        assert table["prompt tokens"].sum() == totals["prompt tokens (total)"]
        assert table["extra calls"].sum() == totals["extra calls"]
    assert cost_summary(run(FullHistory(), month, model))["extra calls"] == 0
    assert cost_summary(run(RunningSummary(CountTrigger()), month, model))["extra calls"] == 5


def test_replay_of_zero_turns(model):
    assert replay(FullHistory(), [], model, "system") == []
    assert replay(RunningSummary(CountTrigger()), [], model) == []
    assert cost_summary([]) == {"turns": 0, "prompt tokens (total)": 0, "prompt tokens (last turn)": 0,
                                "extra calls": 0, "summary tokens": 0, "all tokens": 0}


def test_strategy_names_are_distinct():
    strategies = (FullHistory(), LastN(4), CountWindow(4), TokenWindow(200),
                  RunningSummary(CountTrigger()), RunningSummary(CountTrigger(), summary_last=True),
                  RunningSummary(TokenTrigger()))
    names = [s.name for s in strategies]
    assert len(set(names)) == len(names)
    assert names[4] == "summary (> 6 messages, keep last 2)"
    assert names[6] == "summary (> 200 tokens, keep ~80 tokens)"


# --- the library way -----------------------------------------------------------------------


def test_replay_middleware_summarizes_after_the_trigger(intro, model):
    records = replay_middleware(intro.turns, model, intro.system)
    assert len(records) == len(intro.turns)
    calls = [r.extra_calls for r in records]
    assert sum(calls) > 0
    first = calls.index(1) + 1
    assert first == 4  # 3 turns + the new question = 7 messages > 6
    for r in records:
        assert r.prompt[0] == SystemMessage(intro.system)
        assert r.prompt_tokens == count_tokens(r.prompt)
        assert (r.extra_calls > 0) == (r.summary_tokens > 0)
        summaries = [m for m in r.prompt if m.type == "human" and m.text.startswith("Here is a summary")]
        if r.turn < first:
            assert summaries == [] and "summary" not in r.marks
        else:
            assert len(summaries) == 1 and r.marks.count("summary") == 1
            assert r.marks[r.prompt.index(summaries[0])] == "summary"
    assert "data engineer" in records[-1].reply  # the fact came through the summary
    assert cost_summary(records)["extra calls"] == sum(calls)


# --- widgets -------------------------------------------------------------------------------


def rows(view: str) -> list[tuple[str, str]]:
    """(role, mark) of every message row of an explorer's HTML table."""
    return re.findall(r"<td>\d+</td><td>(\w+)</td><td[^>]*>\d+</td><td>(\w+)</td>", view)


def check_view(explorer, turn):
    record = explorer.records[turn - 1]
    view = explorer.view.value
    assert f"turn {turn}, what the model is sent ({record.prompt_tokens} prompt tokens)" in view
    assert f"<b>{record.prompt_tokens}</b>" in view  # the table's total agrees with the marks
    assert [mark for _, mark in rows(view)] == record.marks
    assert html.escape(record.reply) in view


def test_truncation_explorer(month):
    explorer = TruncationExplorer()
    assert isinstance(explorer.model, OfflineChatModel)
    assert explorer.error is None
    assert len(explorer.records) == 17 and explorer.turn.value == 17
    expected = run(CountWindow(4), month, explorer.model)
    assert [r.prompt_tokens for r in explorer.records] == [r.prompt_tokens for r in expected]
    check_view(explorer, 17)
    view = explorer.view.value
    assert "count window (4 messages): turn 17" in view
    assert rows(view)[0] == ("system", "kept")
    assert rows(view).count(("user", "dropped")) == 15  # 16 earlier questions, h16 kept
    assert rows(view).count(("assistant", "dropped")) == 15
    totals = cost_summary(explorer.records)
    assert ", ".join(f"{k}: {v}" for k, v in totals.items()) in explorer.costs.value
    assert "turns: 17, prompt tokens (total): " in explorer.costs.value

    # the turn slider shows another record of the same replay
    records = explorer.records
    explorer.turn.value = 1
    assert explorer.records is records
    check_view(explorer, 1)
    assert "dropped" not in explorer.view.value
    explorer.turn.value = 8
    check_view(explorer, 8)
    assert "What is my name?" in explorer.view.value

    # the article's slice drops the system prompt
    explorer.kind.value = "last N (slice)"
    check_view(explorer, 8)
    assert rows(explorer.view.value)[0] == ("system", "dropped")
    assert "last 4 messages (slice)" in explorer.view.value
    explorer.turn.value = 17
    assert explorer.records[-1].reply == UNKNOWN

    # a bigger count window keeps more
    explorer.kind.value = "count window"
    explorer.max_messages.value = 12
    assert len(explorer.records[-1].prompt) == 12
    check_view(explorer, 17)


def test_truncation_explorer_token_budget(month):
    explorer = TruncationExplorer()
    explorer.kind.value = "token window"
    assert explorer.error is None
    assert all(r.prompt_tokens <= 200 for r in explorer.records)
    check_view(explorer, 17)
    assert "token window (200 tokens)" in explorer.view.value

    explorer.max_tokens.value = 20  # the system prompt and the first question need more
    system = count_message_tokens(SystemMessage(month.system))
    question = count_message_tokens(load_conversation("alice_month_en").turns[0])
    assert (system, question) == (13, 11)
    assert explorer.records == []
    assert explorer.error.startswith("token budget too small: max_tokens=20")
    assert f"system message ({system} tokens)" in explorer.error
    assert f"newest human message ({question} tokens)" in explorer.error
    assert f"need {system + question + 3} tokens" in explorer.error
    assert "No prompt fits" in explorer.view.value and "max_tokens=20" in explorer.view.value
    assert explorer.costs.value == ""

    explorer.max_tokens.value = 100
    assert explorer.error is None and len(explorer.records) == 17
    assert all(r.prompt_tokens <= 100 for r in explorer.records)
    assert max(r.prompt_tokens for r in explorer.records) > 80  # the budget is used
    check_view(explorer, 17)


def test_summary_explorer(month):
    explorer = SummaryExplorer()
    assert explorer.error is None
    expected = run(RunningSummary(CountTrigger()), month, explorer.model)
    assert [r.prompt_tokens for r in explorer.records] == [r.prompt_tokens for r in expected]
    assert [r.extra_calls for r in explorer.records] == [r.extra_calls for r in expected]
    check_view(explorer, 17)
    marks = [mark for _, mark in rows(explorer.view.value)]
    assert marks.count("summary") == 1 and marks.count("summarized") == 30
    assert marks[:2] == ["kept", "summary"]
    assert "extra calls: 5" in explorer.costs.value
    assert f"summary tokens: {cost_summary(expected)['summary tokens']}" in explorer.costs.value

    explorer.turn.value = 13
    check_view(explorer, 13)
    assert explorer.records[12].reply.startswith(MADRID)
    explorer.summary_last.value = True
    check_view(explorer, 13)
    assert explorer.records[12].reply.startswith(LISBON)
    assert "keep last 2, after recent): turn 13" in explorer.view.value

    explorer.summary_last.value = False
    explorer.trigger_kind.value = "tokens"
    tokens = run(RunningSummary(TokenTrigger()), month, explorer.model)
    assert [r.extra_calls for r in explorer.records] == [r.extra_calls for r in tokens]
    assert f"extra calls: {cost_summary(tokens)['extra calls']}" in explorer.costs.value
    check_view(explorer, 13)

    explorer.max_tokens.value = 1000  # never over 1000 tokens: no summary at all
    assert sum(r.extra_calls for r in explorer.records) == 0
    assert "summar" not in " ".join(mark for _, mark in rows(explorer.view.value))

    explorer.trigger_kind.value = "messages"
    explorer.keep_messages.value = 0  # fold everything each time
    last = explorer.records[-1]
    assert [m.type for m in last.prompt[:2]] == ["system", "system"] and is_summary(last.prompt[1])
    check_view(explorer, 13)


def test_compare_strategies(intro, model):
    strategies = [FullHistory(), LastN(4), CountWindow(4), TokenWindow(150),
                  RunningSummary(CountTrigger()), RunningSummary(CountTrigger(), summary_last=True)]
    table = compare_strategies(strategies, "alice_intro_en", model)
    assert list(table.index) == [s.name for s in strategies]
    for strategy in strategies:
        totals = cost_summary(run(strategy, intro, model))
        row = table.loc[strategy.name]
        for column, value in totals.items():
            if column != "turns":
                assert row[column] == value, (strategy.name, column)
    assert list(table["kept at the last turn"]) == [
        "14 of 14 earlier messages",
        "3 of 14 earlier messages (11 dropped); system prompt dropped",
        "2 of 14 earlier messages (12 dropped)",
        "10 of 14 earlier messages (4 dropped)",
        "2 of 14 earlier messages + a summary of 12",
        "2 of 14 earlier messages + a summary of 12",
    ]
    assert table.loc["full history", "extra calls"] == 0
    assert table.loc["summary (> 6 messages, keep last 2)", "extra calls"] == 2
    # the default model is the configured one (offline here) and a Conversation works too
    again = compare_strategies([CountWindow(4)], intro)
    assert again.loc["count window (4 messages)"].equals(table.loc["count window (4 messages)"])
