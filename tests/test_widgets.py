"""Tests for helpers.course.widgets: the lesson 04/05 explorers and the strategy comparison table.
The fixtures ``model``, ``intro`` and ``month`` come from conftest.py."""

from __future__ import annotations

import html
import re

from langchain_core.messages import SystemMessage
from test_replay import LISBON, UNKNOWN, run  # shared replies and replay helper

from helpers.course.data import load_conversation
from helpers.course.display import cost_summary
from helpers.course.offline_model import OfflineChatModel
from helpers.course.widgets import SummaryExplorer, TruncationExplorer, compare_strategies
from helpers.summary import CountTrigger, RunningSummary, TokenTrigger, is_summary
from helpers.tokens import count_message_tokens
from helpers.window import CountWindow, FullHistory, LastN, TokenWindow

# --- widgets -------------------------------------------------------------------------------


ROW = re.compile(r"<td>\d+</td><td>(\w+(?: \(stand-in\))?)</td><td>\d+</td><td>(\w+)</td>"
                 r"|<td>\d+</td><td>\w+</td><td>… (\d+) earlier messages? (\w+)</td>")


def rows(view: str) -> list[tuple[str, str]]:
    """(role, mark) of every message row of an explorer's HTML table; a collapsed line
    ("… 23 earlier messages dropped") stands for that many rows with role "…"."""
    plain = re.sub(r"<(\w+)[^>]*>", r"<\1>", view)  # drop attributes (styles, colspans)
    found = []
    for match in ROW.finditer(plain):
        role, mark, count, collapsed = match.groups()
        found += [(role, mark)] if role else [("…", collapsed)] * int(count)
    return found


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
    # 15 earlier questions and replies dropped, collapsed into one line after the system prompt
    assert "… 30 earlier messages dropped" in view
    assert rows(view)[1:] == [("…", "dropped")] * 30 + [("user", "kept"),
                                                        ("assistant (stand-in)", "kept"), ("user", "kept")]
    assert view.count("<tr") <= 10  # the window is on the first screen
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
    # a strategy never stops the chat: the new message goes whole, with nothing older than it
    assert explorer.error is None and len(explorer.records) == 17
    assert all([m.type for m in r.prompt] == ["system", "human"] for r in explorer.records)
    assert explorer.records[0].prompt_tokens == system + question + 3 > 20
    check_view(explorer, 17)

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
    assert [r.memory_calls for r in explorer.records] == [r.memory_calls for r in expected]
    check_view(explorer, 17)
    marks = [mark for _, mark in rows(explorer.view.value)]
    assert marks.count("summary") == 1 and marks.count("summarized") == 30
    assert marks[:2] == ["kept", "summary"]
    assert "extra calls: 5" in explorer.costs.value
    assert f"summary tokens: {cost_summary(expected)['summary tokens']}" in explorer.costs.value

    explorer.turn.value = 13
    check_view(explorer, 13)
    moved, lived = "I moved from Lisbon to Madrid.", LISBON.split('"')[1]  # answer alike: the later wins
    reply = explorer.records[12].reply
    assert moved in reply and lived not in reply
    explorer.summary_last.value = True
    check_view(explorer, 13)
    reply = explorer.records[12].reply
    assert lived in reply and moved not in reply
    assert "keep last 2, after recent): turn 13" in explorer.view.value

    explorer.summary_last.value = False
    explorer.trigger_kind.value = "tokens"
    tokens = run(RunningSummary(TokenTrigger()), month, explorer.model)
    assert [r.memory_calls for r in explorer.records] == [r.memory_calls for r in tokens]
    assert f"extra calls: {cost_summary(tokens)['extra calls']}" in explorer.costs.value
    check_view(explorer, 13)

    explorer.max_tokens.value = 1000  # never over 1000 tokens: no summary at all
    assert sum(r.memory_calls for r in explorer.records) == 0
    assert "summar" not in " ".join(mark for _, mark in rows(explorer.view.value))

    explorer.trigger_kind.value = "messages"
    explorer.keep_messages.value = 0  # fold everything each time
    last = explorer.records[-1]
    assert [m.type for m in last.prompt[:2]] == ["system", "human"] and is_summary(last.prompt[1])  # data
    check_view(explorer, 13)


def test_compare_strategies(intro, model):
    strategies = [FullHistory(), LastN(4), CountWindow(4), TokenWindow(150),
                  RunningSummary(CountTrigger()), RunningSummary(CountTrigger(), summary_last=True)]
    table = compare_strategies(strategies, "alice_intro_en", model)
    assert list(table.index) == [s.name for s in strategies]
    for strategy in strategies:
        totals = cost_summary(run(strategy, intro, model))
        row = table.loc[strategy.name]
        for column in ("prompt tokens (last turn)", "summary tokens"):
            assert row[column] == totals[column], (strategy.name, column)
        assert row["prompt tokens / turn"] == round(totals["prompt tokens (total)"] / 8)
        assert row["extra calls / 100 turns"] == round(100 * totals["extra calls"] / 8, 1)
    assert list(table["kept at the last turn"]) == [
        "14 of 14 earlier messages",
        "3 of 14 earlier messages (11 dropped); system prompt dropped",
        "2 of 14 earlier messages (12 dropped)",
        "10 of 14 earlier messages (4 dropped)",
        "2 of 14 earlier messages + a summary of 12",
        "2 of 14 earlier messages + a summary of 12",
    ]
    assert table.loc["full history", "extra calls / 100 turns"] == 0
    assert table.loc["summary (> 6 messages, keep last 2)", "extra calls / 100 turns"] == 25.0
    assert table.loc["full history", "trigger"] == "never"
    # the default model is the configured one (offline here) and a Conversation works too
    again = compare_strategies([CountWindow(4)], intro)
    assert again.loc["count window (4 messages)"].equals(table.loc["count window (4 messages)"])


class FlakyModel(OfflineChatModel):
    """The stand-in, failing every summary call while ``failing`` is set (a flaky provider)."""

    failing: bool = False

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if self.failing and "running summary" in messages[0].text:
            raise ConnectionError("provider unreachable")
        return super()._generate(messages, stop, run_manager, **kwargs)


def test_an_explorer_shows_a_failed_call_and_marks_its_view_not_updated():
    model = FlakyModel()
    explorer = SummaryExplorer(model=model)
    good = explorer.view.value
    assert explorer.error is None and "Not updated" not in good
    model.failing = True
    explorer.max_messages.value += 2  # a new setting: its summary calls fail; nothing raised out of here
    assert "SummarizationError" in explorer.error and "provider unreachable" in explorer.error
    assert explorer.view.value.startswith("<p style='color:") and "Not updated:" in explorer.view.value
    assert explorer.view.value.endswith(good) and "not updated" in explorer.status.value
    explorer.max_messages.value += 2  # fails again: one notice, not two
    assert explorer.view.value.count("Not updated:") == 1 and explorer.view.value.endswith(good)
    model.failing = False
    explorer.max_messages.value += 2  # works again: the notice goes
    assert explorer.error is None and "Not updated" not in explorer.view.value
    assert "not updated" not in explorer.status.value
