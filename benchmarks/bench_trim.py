"""Benchmark: token-window trimming per turn, helper vs plain ``trim_messages``.

Run from the project root (the course package must be installed, as ``make`` setup does)::

    .venv/bin/python benchmarks/bench_trim.py            # 100, 1,000 and 10,000 messages
    .venv/bin/python benchmarks/bench_trim.py --quick    # 100 and 1,000 only

For each history size (seeded, realistic turns: English and Korean, some with tool calls):

* plain: LangChain's ``trim_messages(strategy="last", start_on="human", include_system=True)`` with
  a tiktoken counter that counts a list with ``helpers.tokens`` (per-message sum, the 3 priming
  tokens taken off the budget once, so its output is right). Median of several calls on the
  n-message history. It has no memory between calls, so a turn costs the same as any call.
* helper first call: ``helpers.window.token_window`` with an empty cache, on the n-message
  history (what a restarted program pays on its first turn).
* helper per turn: the way a chat loop calls it. The history is rebuilt up to n messages one turn
  at a time (the last ``TURNS`` turns), calling the helper before each new turn is sent, with one
  counter (cache) for the whole session; median of those calls.

Every helper output is checked equal (same message objects, same order) to plain
``trim_messages`` on the same history. The script prints a table; it is not a timed test.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from helpers.tokens import TokenCounter, count_tokens
from helpers.window import token_window
from lab.library_trim import library_token_window

SIZES = (100, 1_000, 10_000)
MAX_TOKENS = 3_000  # whole prompt, as count_tokens counts it
TURNS = 12  # per-turn calls measured at each size
PLAIN_RUNS = 5
SEED = 2026

ENGLISH_QUESTIONS = [
    "Hi! My name is Alice.",
    "I work as a data engineer at a shipping company.",
    "Can you remind me what we said about batching writes?",
    "What is a good way to learn Korean numbers before my trip to Seoul?",
    "Could you summarise the trade-offs between a count window and a token window?",
    "Why does the model forget what I told it an hour ago?",
]
ENGLISH_ANSWERS = [
    "Nice to meet you, Alice! How can I help today?",
    "Batching writes reduces the number of round trips, at the cost of a little latency.",
    "Start with the Sino-Korean numbers (il, i, sam) for prices, then the native ones for counting.",
    "A count window is simple but its size in tokens varies; a token window fits the budget exactly.",
    "The model only sees what is in the prompt; older turns were trimmed to fit the context window.",
    "Sure. In short: keep the system prompt, keep whole turns, and measure the tokens you send.",
]
KOREAN_QUESTIONS = [
    "안녕하세요! 제 이름은 김민수예요.",
    "저는 부산에 살고 있어요.",
    "직업은 간호사예요. 야간 근무가 많아요.",
    "요즘 주말마다 기타를 배우고 있어요. 코드 전환이 어려워요.",
    "제 이름이 뭐예요?",
    "제가 어디에 살아요?",
]
KOREAN_ANSWERS = [
    "반가워요, 민수 씨! 무엇을 도와드릴까요?",
    "부산은 바다가 아름다운 도시죠. 해운대에 자주 가세요?",
    "야간 근무가 많으면 수면 시간을 일정하게 지키는 것이 중요해요.",
    "코드 전환은 천천히, 메트로놈에 맞춰 연습하면 금방 익숙해질 거예요.",
    "민수 씨라고 하셨어요.",
    "부산에 사신다고 하셨어요.",
]


def make_turns(rng: random.Random, count: int) -> list[list[BaseMessage]]:
    """``count`` turns: question, (sometimes tool call + results), answer. Mixed languages."""
    turns = []
    for t in range(count):
        if rng.random() < 0.4:
            questions, answers = KOREAN_QUESTIONS, KOREAN_ANSWERS
        else:
            questions, answers = ENGLISH_QUESTIONS, ENGLISH_ANSWERS
        question = " ".join(rng.sample(questions, rng.randint(1, 2)))
        turn: list[BaseMessage] = [HumanMessage(f"({t}) {question}")]
        if rng.random() < 0.1:
            call = {"name": "search_notes", "args": {"query": question[:40]}, "id": f"call_{t}"}
            turn.append(AIMessage("", tool_calls=[{**call, "type": "tool_call"}]))
            turn.append(ToolMessage(rng.choice(answers), tool_call_id=call["id"]))
        turn.append(AIMessage(" ".join(rng.sample(answers, rng.randint(1, 3)))))
        turns.append(turn)
    return turns


SYSTEM = SystemMessage("You are a friendly assistant. Answer briefly. 짧게 답하세요.")


def build(system: SystemMessage, turns: list[list[BaseMessage]], n: int) -> list[BaseMessage]:
    """The first ``n`` messages of the conversation, cut so the newest one is a question."""
    messages: list[BaseMessage] = [system]
    for turn in turns:
        if len(messages) + len(turn) >= n:
            messages.append(turn[0])  # the question about to be sent
            break
        messages += turn
    return messages


def timed(call) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def same(a: list[BaseMessage], b: list[BaseMessage]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def bench(n: int) -> dict:
    rng = random.Random(SEED + n)
    system, turns = SYSTEM, make_turns(rng, n)  # more turns than needed: build() cuts them
    full = build(system, turns, n)

    plain_times = []
    for _ in range(PLAIN_RUNS):
        seconds, expected = timed(lambda: library_token_window(full, MAX_TOKENS))
        plain_times.append(seconds)

    first, window = timed(lambda: token_window(full, MAX_TOKENS, counter=TokenCounter()))
    assert same(window, expected), f"first call differs from trim_messages at {n} messages"
    assert count_tokens(window) <= MAX_TOKENS

    # Per turn: the session's history reaches n messages one turn at a time.
    counter = TokenCounter()
    lengths = sorted({len(build(system, turns, m)) for m in range(n - 4 * TURNS, n + 1)})[-(TURNS + 1):]
    token_window(build(system, turns, lengths[0]), MAX_TOKENS, counter=counter)  # the earlier turns
    per_turn, checks = [], 0
    for length in lengths[1:]:
        messages = build(system, turns, length)
        seconds, window = timed(lambda messages=messages: token_window(messages, MAX_TOKENS, counter=counter))
        per_turn.append(seconds)
        assert same(window, library_token_window(messages, MAX_TOKENS)), f"turn at {length} messages differs"
        checks += 1
    assert same(window, expected)  # the last turn is the n-message history
    return {
        "n": len(full),
        "kept": len(expected),
        "tokens": count_tokens(expected),
        "plain": statistics.median(plain_times),
        "first": first,
        "turn": statistics.median(per_turn),
        "turns": len(per_turn),
        "checks": checks,
    }


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.3f}" if seconds < 0.1 else f"{seconds * 1000:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 10,000-message history")
    args = parser.parse_args()
    sizes = SIZES[:2] if args.quick else SIZES
    count_tokens([HumanMessage("warm up the encoder")])  # load tiktoken outside the timings

    print(f"token window, max_tokens={MAX_TOKENS:,} (whole prompt incl. 3 priming tokens); times in ms")
    head = (f"{'messages':>9} | {'window (msgs/tokens)':>20} | {'plain trim_messages':>19} | "
            f"{'helper 1st call':>15} | {'helper per turn':>15} | {'ratio/turn':>10} | {'ratio 1st':>9}")
    print(head)
    print("-" * len(head))
    rows = []
    for n in sizes:
        r = bench(n)
        rows.append(r)
        print(
            f"{r['n']:>9,} | {r['kept']:>9} / {r['tokens']:>8,} | {ms(r['plain']):>19} | "
            f"{ms(r['first']):>15} | {ms(r['turn']):>15} | {r['plain'] / r['turn']:>9,.0f}x | "
            f"{r['plain'] / r['first']:>8,.0f}x"
        )
    print(
        f"plain: median of {PLAIN_RUNS} calls; helper per turn: median of {rows[0]['turns']} calls as "
        "the history grows by one turn each; every helper output checked identical to plain "
        f"trim_messages ({sum(r['checks'] for r in rows) + len(rows)} comparisons)."
    )
    big = rows[-1]
    growth = big["turn"] / rows[0]["turn"]
    print(f"helper per-turn time at {big['n']:,} vs {rows[0]['n']:,} messages: {growth:.2f}x")
    if big["n"] >= 10_000:
        ratio = big["plain"] / big["turn"]
        print(f"goal >= 10x at {big['n']:,} messages: {ratio:,.0f}x -> {'met' if ratio >= 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
