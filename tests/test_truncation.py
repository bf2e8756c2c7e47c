"""Tests for helpers.window: the article's slice, the pair-safe count window, the token window."""

from __future__ import annotations

import random

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, trim_messages

from helpers.course.display import window_marks
from helpers.tokens import TokenCounter, count_message_tokens, count_tokens
from helpers.window import (
    MessageBudgetError,
    TokenBudgetError,
    count_window,
    last_n_messages,
    newest_fitting,
    token_window,
)
from lab.library_trim import library_token_window

SYSTEM = SystemMessage("You are a friendly assistant. Answer briefly.")


def ten_messages():
    """system, then h1 a1 h2 a2 h3 a3 h4 a4 h5 (10 messages)."""
    messages = [SYSTEM]
    for i in range(1, 5):
        messages += [HumanMessage(f"question {i}"), AIMessage(f"answer {i}")]
    return messages + [HumanMessage("question 5")]


def alice():
    return [
        SYSTEM,
        HumanMessage("Hi! My name is Alice."),
        AIMessage("Nice to meet you, Alice!"),
        HumanMessage("I live in Lisbon with my cat, Miso."),
        AIMessage("Lisbon is lovely, and Miso is a great name for a cat."),
        HumanMessage("What is my name?"),
    ]


def tool_history():
    """One turn with two tool calls, then a plain turn.

    0 system, 1 human, 2 AI(2 tool calls), 3 tool, 4 tool, 5 AI, 6 human, 7 AI
    """
    calls = [
        {"name": "weather", "args": {"city": "Seoul"}, "id": "call_seoul", "type": "tool_call"},
        {"name": "weather", "args": {"city": "Busan"}, "id": "call_busan", "type": "tool_call"},
    ]
    return [
        SYSTEM,
        HumanMessage("What's the weather in Seoul and Busan?"),
        AIMessage("", tool_calls=calls),
        ToolMessage("Seoul: 3°C, clear", tool_call_id="call_seoul"),
        ToolMessage("Busan: 8°C, windy", tool_call_id="call_busan"),
        AIMessage("Seoul is 3°C and clear; Busan is 8°C and windy."),
        HumanMessage("Thanks! 고마워요."),
        AIMessage("You're welcome! 천만에요."),
    ]


def unpaired(window):
    """Tool-call ids kept without their partner: calls with no result, results with no call."""
    called = {c["id"] for m in window if isinstance(m, AIMessage) for c in m.tool_calls}
    answered = {m.tool_call_id for m in window if isinstance(m, ToolMessage)}
    return called ^ answered


def is_tail(messages, window):
    """The window is the system message (if any) + a contiguous tail of the history."""
    head = [messages[0]] if messages and isinstance(messages[0], SystemMessage) else []
    rest = window[len(head) :]
    return window[: len(head)] == head and (not rest or messages[len(messages) - len(rest) :] == rest)


# -- last_n_messages: the article's slice(-4) -------------------------------------------------


def test_last_n_messages_is_the_articles_slice():
    messages = ten_messages()
    assert last_n_messages(messages, 3) == messages[7:]
    assert [m.content for m in last_n_messages(messages, 3)] == ["question 4", "answer 4", "question 5"]
    assert last_n_messages(messages, 0) == []  # not messages[-0:] == everything
    assert last_n_messages(messages, 25) == messages
    assert last_n_messages([], 4) == []
    with pytest.raises(ValueError, match="n must be >= 0"):
        last_n_messages(messages, -1)
    with pytest.raises(TypeError):
        last_n_messages(messages, 2.0)


def test_last_n_messages_cuts_the_name_introduction():
    messages = alice()
    window = last_n_messages(messages, 4)
    assert [m.content for m in window] == [
        "Nice to meet you, Alice!",
        "I live in Lisbon with my cat, Miso.",
        "Lisbon is lovely, and Miso is a great name for a cat.",
        "What is my name?",
    ]
    # The introduction and the system prompt are gone; the window starts on the reply greeting Alice.
    assert not any("My name is Alice" in m.content for m in window)
    assert window[0].type == "ai"
    assert SYSTEM not in window
    assert window_marks(messages, window) == ["dropped", "dropped", "kept", "kept", "kept", "kept"]
    # The pair-safe window with the same N keeps the system prompt and starts on a question.
    safe = count_window(messages, 4)
    assert safe == [SYSTEM, *messages[3:]]
    assert window_marks(messages, safe) == ["kept", "dropped", "dropped", "kept", "kept", "kept"]


def test_last_n_messages_can_keep_an_orphan_tool_result():
    messages = tool_history()
    window = last_n_messages(messages, 4)
    assert window == messages[4:]
    assert unpaired(window) == {"call_busan"}  # a result whose call was cut off


# -- count_window -----------------------------------------------------------------------------


def test_count_window_ten_messages_keep_three():
    messages = ten_messages()
    window = count_window(messages, 3)
    assert window == [messages[0], messages[7], messages[8], messages[9]]
    assert [m.content for m in window[1:]] == ["question 4", "answer 4", "question 5"]
    assert is_tail(messages, window)  # nothing lost in between
    assert window_marks(messages, window) == ["kept"] + ["dropped"] * 6 + ["kept"] * 3


def test_count_window_never_starts_on_an_ai_message():
    messages = ten_messages()[:-1]  # ends on "answer 4": the last 3 are a3 h4 a4
    assert [m.content for m in messages[-3:]] == ["answer 3", "question 4", "answer 4"]
    window = count_window(messages, 3)
    assert window == [SYSTEM, messages[7], messages[8]]  # moved forward to "question 4"
    assert window[1].type == "human"
    assert len(window) - 1 <= 3


def test_count_window_system_first_and_not_counted():
    messages = ten_messages()
    assert count_window(messages, 1) == [SYSTEM, messages[-1]]
    for n in range(1, 12):
        window = count_window(messages, n)
        assert window[0] is SYSTEM
        assert len(window) - 1 <= n
        assert window[1].type == "human"
        assert is_tail(messages, window)
    assert count_window(messages, 9) == messages
    # Without a system message nothing is added.
    assert count_window(messages[1:], 2) == [messages[-1]]


def test_count_window_orphan_tool_result_is_never_kept():
    messages = tool_history()
    # The last 5 non-system messages start on the Busan result, whose call is just outside.
    assert count_window(messages, 5) == [SYSTEM, messages[6], messages[7]]
    assert count_window(messages, 6) == [SYSTEM, *messages[6:]]
    assert count_window(messages, 7) == messages


def test_count_window_tool_calls_stay_with_their_results():
    messages = tool_history()
    for n in range(2, 10):
        window = count_window(messages, n)
        assert unpaired(window) == set(), n
        assert is_tail(messages, window)
        kept_call = messages[2] in window
        assert kept_call == (messages[3] in window) == (messages[4] in window), n


def test_count_window_newest_turn_longer_than_window_raises():
    messages = tool_history()[:6]  # the tool turn is the newest: 5 messages
    with pytest.raises(MessageBudgetError, match="max_messages=3 is too small") as info:
        count_window(messages, 3)
    assert (info.value.max_messages, info.value.turn_messages) == (3, 5)
    assert isinstance(info.value, ValueError)
    assert count_window(messages, 5) == messages


def test_count_window_edge_cases():
    assert count_window([], 3) == []
    assert count_window([SYSTEM], 3) == [SYSTEM]
    assert count_window([SYSTEM, AIMessage("Hello!")], 3) == [SYSTEM]  # no question at all
    with pytest.raises(ValueError, match="max_messages must be >= 1"):
        count_window(ten_messages(), 0)
    with pytest.raises(TypeError):
        count_window(ten_messages(), "3")


# -- token_window -----------------------------------------------------------------------------


def test_token_window_small_values():
    messages = alice()
    sizes = [count_message_tokens(m) for m in messages]
    assert sizes == [13, 11, 11, 15, 21, 9]
    # Everything: 80 + 3 priming.
    assert count_tokens(messages) == 83
    assert token_window(messages, 83) == messages
    # One token less: the oldest turn goes (a turn is dropped whole, not just the human message).
    assert token_window(messages, 82) == [SYSTEM, *messages[3:]]
    assert count_tokens([SYSTEM, *messages[3:]]) == 61
    assert token_window(messages, 61) == [SYSTEM, *messages[3:]]
    # 60: "I live in Lisbon" no longer fits, and the tail may not start on the AI reply.
    assert token_window(messages, 60) == [SYSTEM, messages[5]]
    assert token_window(messages, 25) == [SYSTEM, messages[5]]
    assert count_tokens([SYSTEM, messages[5]]) == 25


def test_token_window_over_budget_raises_with_sizes():
    messages = alice()
    with pytest.raises(TokenBudgetError) as info:
        token_window(messages, 24)
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.max_tokens, error.system_tokens, error.newest_tokens, error.after_tokens) == (24, 13, 9, 0)
    assert (error.priming_tokens, error.required_tokens) == (3, 25)
    text = str(error)
    for part in ("max_tokens=24", "system message (13 tokens)", "newest human message (9 tokens)", "25"):
        assert part in text
    # What the library does in the same case: the question silently disappears.
    assert library_token_window(messages, 24) == [SYSTEM]
    assert trim_messages(
        messages, max_tokens=21, token_counter=lambda b: sum(map(count_message_tokens, b)),
        strategy="last", start_on="human", include_system=True, allow_partial=True,
    ) == [SYSTEM]


def test_token_window_counts_the_messages_after_the_newest_question():
    messages = tool_history()[:6]  # the newest turn: question, tool calls, results, answer
    turn = messages[1:]
    needed = count_tokens(messages)
    assert token_window(messages, needed) == messages
    with pytest.raises(TokenBudgetError) as info:
        token_window(messages, needed - 1)
    error = info.value
    assert error.newest_tokens == count_message_tokens(turn[0])
    assert error.after_tokens == sum(count_message_tokens(m) for m in turn[1:])
    assert error.required_tokens == needed
    assert "messages after it" in str(error)


def test_token_window_system_prompt_stays_first():
    messages = ten_messages()
    full = count_tokens(messages)
    for budget in range(count_tokens([SYSTEM, messages[-1]]), full + 5):
        window = token_window(messages, budget)
        assert window[0] is SYSTEM
        assert window[1].type == "human"
        assert window[-1] is messages[-1]


def test_token_window_empty_and_degenerate_histories():
    assert token_window([], 100) == []
    assert token_window([], 0) == []
    assert token_window([SYSTEM], 100) == [SYSTEM]
    assert token_window([SYSTEM, AIMessage("Hello!")], 100) == [SYSTEM]  # as trim_messages
    assert library_token_window([SYSTEM, AIMessage("Hello!")], 100) == [SYSTEM]
    with pytest.raises(TokenBudgetError) as info:  # even the system prompt does not fit
        token_window([SYSTEM], 10)
    assert (info.value.system_tokens, info.value.newest_tokens, info.value.required_tokens) == (13, 0, 16)
    no_system = alice()[1:]
    assert token_window(no_system, count_tokens(no_system)) == no_system
    assert token_window(no_system, 12) == [no_system[-1]]
    with pytest.raises(TokenBudgetError) as info:
        token_window(no_system, 11)
    assert info.value.system_tokens == 0
    with pytest.raises(TypeError):
        token_window(no_system, 100.0)


def test_token_window_is_the_longest_tail_within_budget():
    messages = tool_history() + alice()[1:]
    minimum = count_tokens([SYSTEM, messages[-1]])
    for budget in range(minimum, count_tokens(messages) + 3):
        window = token_window(messages, budget)
        assert count_tokens(window) <= budget
        assert is_tail(messages, window)
        assert unpaired(window) == set()
        # Longest: the earliest human message whose tail still fits is where the window starts.
        fitting = [
            i for i in range(1, len(messages))
            if messages[i].type == "human" and count_tokens([SYSTEM, *messages[i:]]) <= budget
        ]
        assert window == [SYSTEM, *messages[fitting[0] :]], budget
        assert window_marks(messages, window).count("kept") == len(window)


def test_newest_fitting_is_the_longest_tail_within_the_budget():
    messages = tool_history() + alice()[1:]
    sizes = [count_message_tokens(m) for m in messages]
    for budget in range(-1, sum(sizes) + 2):
        k = newest_fitting(messages, budget)
        assert sum(sizes[k:]) <= budget or k == len(messages)
        assert k == 0 or sum(sizes[k - 1 :]) > budget  # one more message would not fit
        assert newest_fitting(messages, budget, start=3) == max(k, 3)
    counted = []  # older messages than the first that does not fit are never counted
    assert newest_fitting(messages, 3, count=lambda m: counted.append(m) or 1) == len(messages) - 3
    assert counted == messages[-4:][::-1]
    assert newest_fitting([], 10) == 0


def test_plain_trim_messages_with_count_tokens_counts_priming_twice():
    """Why the wrapper exists: count_tokens (+3 per call) as the library's counter over-counts."""
    messages = alice()
    budget = count_tokens(messages)  # 83: everything fits
    assert token_window(messages, budget) == messages
    naive = trim_messages(
        messages, max_tokens=budget, token_counter=count_tokens,
        strategy="last", start_on="human", include_system=True,
    )
    assert naive == [SYSTEM, *messages[3:]]  # one turn lost: 3 priming tokens counted twice
    assert count_tokens(naive) == 61


SENTENCES = [
    "Hi! My name is Alice.",
    "I work as a data engineer at a shipping company.",
    "Could you explain how a context window works, step by step?",
    "Sure: the model only sees the tokens you send it, up to a fixed limit.",
    "안녕하세요! 제 이름은 김민수예요.",
    "저는 부산에 살고 있어요. 바다가 가까워서 좋아요.",
    "요즘 주말마다 기타를 배우고 있어요.",
    "제 이름이 뭐예요?",
    "Seoul is 3°C and clear today.",
    "좋아요, 고마워요!",
    "OK",
]


def random_history(rng: random.Random) -> list:
    messages = [SystemMessage(rng.choice(["Be brief.", "당신은 친절한 도우미입니다. 짧게 답하세요."]))]
    if rng.random() < 0.15:
        messages = []
    for turn in range(rng.randint(0, 12)):
        def text():
            return " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(1, 4)))

        messages.append(HumanMessage(text(), name="minsu" if rng.random() < 0.1 else None))
        if rng.random() < 0.25:
            calls = [
                {"name": "search", "args": {"q": rng.choice(SENTENCES)}, "id": f"c{turn}_{k}",
                 "type": "tool_call"}
                for k in range(rng.randint(1, 2))
            ]
            messages.append(AIMessage("", tool_calls=calls))
            messages += [ToolMessage(text(), tool_call_id=c["id"]) for c in calls]
        messages.append(AIMessage(text()))
    if messages and rng.random() < 0.7:
        messages.append(HumanMessage(rng.choice(SENTENCES)))  # the question about to be sent
    return messages


def test_token_window_equals_plain_trim_messages_on_random_histories():
    rng = random.Random(20260)
    counter = TokenCounter()  # shared across histories, as in a long session
    compared = raised = 0
    for _ in range(300):
        messages = random_history(rng)
        full = count_tokens(messages)
        for budget in {rng.randint(0, full + 10), rng.randint(full // 2, full + 10), full, full - 1}:
            expected = library_token_window(messages, budget)
            try:
                window = token_window(messages, budget, counter=counter)
            except TokenBudgetError as error:
                raised += 1
                # Only where the library would have lost the question.
                assert not any(m.type == "human" for m in expected)
                assert any(m.type == "human" for m in messages) or error.system_tokens + 3 > budget
                assert error.required_tokens > budget
                continue
            compared += 1
            assert window == expected
            assert all(a is b for a, b in zip(window, expected, strict=True))
            if window:
                assert count_tokens(window) <= budget
            assert unpaired(window) == set()
    assert compared > 600 and raised > 50, (compared, raised)


# -- cache ------------------------------------------------------------------------------------


def test_token_counter_matches_count_tokens_and_keys_on_what_is_counted():
    counter = TokenCounter()
    call = [{"name": "weather", "args": {"city": "Seoul"}, "id": "x", "type": "tool_call"}]
    variants = [
        HumanMessage("Seoul"), AIMessage("Seoul"), SystemMessage("Seoul"),
        ToolMessage("Seoul", tool_call_id="x"), HumanMessage("Seoul", name="minsu"),
        AIMessage("Seoul", tool_calls=call), HumanMessage([{"type": "text", "text": "Seoul"}]),
        HumanMessage("서울"),
    ]
    for message in variants * 2:
        assert counter.message_tokens(message) == count_message_tokens(message)
    assert (counter.misses, counter.hits) == (7, 9)  # plain text and one text block count alike
    assert counter(variants) == sum(map(count_message_tokens, variants))
    assert counter.prompt_tokens(variants) == count_tokens(variants)
    assert counter.prompt_tokens([]) == count_tokens([]) == 0
    small = TokenCounter(maxsize=2)
    for message in variants:
        small.message_tokens(message)
    assert len(small) == 2


def test_token_window_per_turn_work_does_not_grow_with_history():
    rng = random.Random(7)
    counter = TokenCounter()
    messages = [SYSTEM]
    for i in range(1000):
        messages += [
            HumanMessage(f"{i}: {rng.choice(SENTENCES)}"),
            AIMessage(f"{i}: {rng.choice(SENTENCES)}"),
        ]
    messages.append(HumanMessage("What is my name?"))
    window = token_window(messages, 500, counter=counter)
    assert window == library_token_window(messages, 500)
    # First call: only the messages the budget reaches are encoded: the window, the AI reply its
    # start may have moved past, the first message that does not fit. Not the 2,001 others.
    assert len(window) + 1 <= counter.misses <= len(window) + 2
    for turn in range(20):
        before = counter.misses
        messages += [AIMessage(f"answer {turn}"), HumanMessage(f"question {turn} {rng.choice(SENTENCES)}")]
        window = token_window(messages, 500, counter=counter)
        assert counter.misses - before <= 2  # only the new turn is tokenized
    assert window == library_token_window(messages, 500)


# -- window_marks -----------------------------------------------------------------------------


def test_window_marks_matches_the_newest_equal_message():
    messages = [SYSTEM, HumanMessage("Thanks!"), AIMessage("Welcome."), HumanMessage("Thanks!")]
    assert window_marks(messages, [SYSTEM, messages[3]]) == ["kept", "dropped", "dropped", "kept"]
    copy = [m.model_copy() for m in (SYSTEM, messages[3])]  # equal, not identical
    assert window_marks(messages, copy) == ["kept", "dropped", "dropped", "kept"]
    assert window_marks(messages, []) == ["dropped"] * 4
    assert window_marks([], []) == []
    with pytest.raises(ValueError, match="not in messages"):
        window_marks(messages, [HumanMessage("never said")])
    with pytest.raises(ValueError, match="not in messages"):
        window_marks(messages, [messages[2], messages[1]])  # wrong order


# --- a message longer than the budget (a pasted file) ----------------------------------------------


@pytest.mark.parametrize("language", ["en", "ko"])
def test_window_strategies_send_a_long_message_whole_with_nothing_older(language, model):
    from long_messages import pasted_file

    from helpers.memory import QUESTION, replay
    from helpers.memory import SYSTEM as SYSTEM_PART
    from helpers.window import CountWindow, FullHistory, LastN, TokenWindow

    paste = HumanMessage(pasted_file(language), id="t3-user")
    history = alice()[1:5]
    for strategy in (TokenWindow(800), CountWindow(4), LastN(4), FullHistory()):
        prompt = strategy.prompt(SYSTEM, history, paste)
        assert prompt[-1] is paste and paste.text == pasted_file(language)  # whole, never cut
    window = TokenWindow(800).prompt(SYSTEM, history, paste)
    assert list(window) == [SYSTEM, paste]  # the budget left nothing older to go with it
    assert [p[0].kind for p in window.parts] == [SYSTEM_PART, QUESTION]
    assert count_tokens(window) > 20_000
    with pytest.raises(TokenBudgetError) as info:  # the strict form, as lesson 04 teaches it
        TokenWindow(800, strict=True).prompt(SYSTEM, history, paste)
    assert info.value.newest_tokens == count_message_tokens(paste) > 20_000
    # the next turn, a short question: the window is full again, the paste is dropped
    records = replay(TokenWindow(200), [pasted_file(language), "What is my name?"], model, SYSTEM)
    assert [len(r.prompt) for r in records] == [2, 2]  # system + the paste; system + the question
    assert count_tokens(records[1].prompt) <= 200


def test_token_window_not_strict_returns_the_newest_turn_whole_instead_of_raising():
    messages = tool_history()[:6]  # the newest turn: question, tool calls, results, answer
    needed = count_tokens(messages)
    assert token_window(messages, needed - 1, strict=False) == messages  # the turn whole, no error
    assert token_window(alice(), 24, strict=False) == [SYSTEM, alice()[-1]]
    assert token_window([SYSTEM], 10, strict=False) == [SYSTEM]
    assert token_window(alice()[1:], 11, strict=False) == [alice()[-1]]
    for budget in range(20, count_tokens(alice()) + 2):  # where it fits, strict or not: the same
        try:
            assert token_window(alice(), budget, strict=False) == token_window(alice(), budget)
        except TokenBudgetError:
            assert token_window(alice(), budget, strict=False) == [SYSTEM, alice()[-1]]
