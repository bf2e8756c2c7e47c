"""The ablation rows of benchmarks/bench_public_sets.py (lab.public_rows) on Milvus Lite,
on a small synthetic user-assistant chat in the converter's output format."""

import pytest
from hash_embeddings import HashEmbeddings
from langchain_core.messages import HumanMessage, SystemMessage

from helpers.course.offline_model import OfflineChatModel
from helpers.evaluate import evaluate_strategy
from helpers.fulltext import HybridStore
from helpers.kinds import SEARCHED_KINDS
from helpers.layered import MAX_RETRIEVAL_TOKENS
from lab.preferences import PREFERENCES_ID
from lab.public_rows import LayeredVariant, rows
from lab.public_sets import convert_beam


def chat():
    def exchange(i, user, reply):
        return [
            {"role": "user", "id": str(2 * i), "content": user},
            {"role": "assistant", "id": str(2 * i + 1), "content": reply},
        ]

    fillers = [
        exchange(i, f"Question {i} about the weather in town?", f"Answer {i}: it is mild today.")
        for i in range(2, 12)
    ]
    return [
        {
            "turns": [
                exchange(0, "Always use tabs for indentation in my code. ->-> 1,1", "Tabs it is."),
                exchange(
                    1,
                    "My Redis instance uses 150MB now. ->-> 1,2",
                    "I suggest the allkeys-lru eviction policy for Redis.",
                ),
                *fillers,
            ]
        }
    ]


QUESTIONS = {
    "instruction_following": [
        {"question": "Indent this loop for me.", "source_chat_ids": "[0]", "expected_compliance": "tabs"}
    ],
    "information_extraction": [
        {
            "question": "Which eviction policy did you suggest?",
            "answer": "allkeys-lru",
            "source_chat_ids": "[3]",
        }
    ],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from helpers.course.milvus import open_store, quiet_milvus_logs

    quiet_milvus_logs()
    uri = str(tmp_path_factory.mktemp("rows") / "rows.db")
    with open_store(
        "rows_test",
        uri=uri,
        dim=16,
        embeddings=HashEmbeddings(16),
        drop_existing=True,
        store_class=HybridStore,
    ) as store:
        yield store


def test_layered_sends_a_long_message_whole(store):
    conversation = {"user_id": "long-one", "speakers": None}
    memory = rows(store, conversation)["layered"]()
    long = HumanMessage("word " * 400, id="t1-user")
    prompt = memory.prompt(SystemMessage("sys"), [], long)
    assert prompt[-1] is long and memory.window_tokens == 150  # the budget is back after the turn


def test_preferences_and_replies_reach_the_prompt_only_in_their_rows(store):
    conversation = convert_beam(chat(), QUESTIONS, "toy")
    reached = {}
    for name in ("layered", "+bm25+kinds+prefs"):
        factory = rows(store, {**conversation, "user_id": f"toy-{len(reached)}"})[name]
        records = evaluate_strategy(factory(), conversation, OfflineChatModel(), progress=False)
        probes = {r.user: r for r in records if r.probe}
        reached[name] = {q: bool(r.evidence_reached) for q, r in probes.items()}
        if name == "+bm25+kinds+prefs":
            indent = probes["Indent this loop for me."]
            assert PREFERENCES_ID in [m.id for m in indent.prompt]
            assert "Always use tabs for indentation in my code." in indent.prompt[1].text
    assert reached["layered"] == {
        "Indent this loop for me.": False,
        "Which eviction policy did you suggest?": False,
    }
    assert reached["+bm25+kinds+prefs"] == {
        "Indent this loop for me.": True,
        "Which eviction policy did you suggest?": True,
    }


def test_the_default_decision_rows_are_lesson_08s_layered_memory_with_one_change_each(store):
    made = {
        name: rows(store, {"user_id": "decision"})[name]()
        for name in (
            "default", "default+bm25", "default+bm25+kinds", "default+bm25+share15",
            "default+bm25+share15+kinds+prefs",
        )
    }
    for memory in made.values():  # default_strategies' budgets, not LayeredMemory's class defaults
        assert (memory.window_tokens, memory.max_summary_tokens, memory.retrieval_tokens) == (100, 150, 500)

    def switches(m):
        prefs = getattr(m, "preferences", None) is not None
        cap = getattr(m, "max_retrieval_tokens", MAX_RETRIEVAL_TOKENS)  # the lab's switches, else the default
        return m.retrieval_share, cap, getattr(m, "searched_kinds", SEARCHED_KINDS), prefs

    assert {name: switches(m) for name, m in made.items()} == {
        "default": (0.1, 4000, ("statement",), False),
        "default+bm25": (0.1, 4000, ("statement",), False),
        "default+bm25+kinds": (0.1, 4000, ("statement", "reply", "question", "request"), False),
        "default+bm25+share15": (0.15, 8000, ("statement",), False),
        "default+bm25+share15+kinds+prefs": (0.15, 8000, ("statement", "reply", "question", "request"), True),
    }


def test_a_rows_cap_raises_the_grown_retrieval_budget_and_never_lowers_it(store):
    made = rows(store, {"user_id": "cap"})
    default, capped = made["default"](), made["default+cap8000"]()
    for memory in (default, capped):
        memory.stored_tokens = 100_000  # a long history: 10% of it is 10,000 tokens
    question, statement = "Where do I live?", "I live in Lisbon."
    assert default.retrieval_budget(question) == MAX_RETRIEVAL_TOKENS
    assert capped.retrieval_budget(question) == 8000
    assert capped.retrieval_budget(statement) == default.retrieval_budget(statement) == 0
    with pytest.raises(ValueError, match="at least"):
        LayeredVariant(store, "cap", "session-1", max_retrieval_tokens=MAX_RETRIEVAL_TOKENS - 1)


def test_a_fact_in_an_assistant_reply_reaches_the_prompt_with_replies_searchable(store):
    conversation = convert_beam(chat(), QUESTIONS, "toy-default")
    reached, sent = {}, {}
    for i, name in enumerate(("default", "default+bm25+kinds")):
        factory = rows(store, {**conversation, "user_id": f"toy-decision-{i}"})[name]
        records = evaluate_strategy(factory(), conversation, OfflineChatModel(), progress=False)
        probes = {r.user: r for r in records if r.probe}
        reached[name] = {q: bool(r.evidence_reached) for q, r in probes.items()}
        sent[name] = [m.id for m in probes["Which eviction policy did you suggest?"].prompt]
    assert reached == {
        "default": {"Indent this loop for me.": False, "Which eviction policy did you suggest?": False},
        # no preferences layer: the instruction (a user's statement) is searched in both rows and
        # still not reached; the reply is reached only when replies are searched
        "default+bm25+kinds": {
            "Indent this loop for me.": False,
            "Which eviction policy did you suggest?": True,
        },
    }
    assert PREFERENCES_ID not in sent["default+bm25+kinds"]


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_standing_layer_comes_long_after_the_window_and_not_to_a_friend(store, language):
    """Row default+prefs150a: an instruction said once is sent with a prompt long after the window
    dropped it (English and Korean); once the reply side is a person, the layer is not sent."""
    from helpers.memory import Turn, replay

    rule = {"en": "Always answer in Korean.", "ko": "앞으로는 항상 표로 정리해 주세요."}[language]
    friend = "I went hiking with my sister last weekend and I loved it."  # speaks of herself: a person

    def last_prompt(who, replies):
        memory = rows(store, {"user_id": f"pat-{language}-{who}"})["default+prefs150a"]()
        notes = [Turn(f"Note {n}: build step {n} passed on staging.", reply=replies) for n in range(10)]
        turns = [Turn(rule, reply="OK."), *notes, Turn("How do I read a file in Python?")]
        return memory, replay(memory, turns, OfflineChatModel(), "Be brief.")[-1].prompt

    memory, prompt = last_prompt("assistant", "Noted.")
    assert rule not in [m.text for m in prompt[2:]]  # the window moved on
    assert prompt[1].id == PREFERENCES_ID and rule in prompt[1].text and prompt[1].type == "human"
    assert prompt.parts[1][0].sources == ("t1-user",) and not memory.other_speaker.is_person
    memory, to_a_friend = last_prompt("friend", friend)
    assert memory.other_speaker.is_person and PREFERENCES_ID not in [m.id for m in to_a_friend]
