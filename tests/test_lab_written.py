"""Written memory as a strategy (``lab.written_memory``): facts written after each turn, the closest
current ones sent as a memory block; a turn run again writes each fact once; a user message with no
reply is read too; a setting refused when made; an image sent with the question reaches the prompt."""

from __future__ import annotations

import pytest
from hash_embeddings import HashEmbeddings
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from helpers.course import written_rules as rules
from helpers.memory import replay
from lab.written_memory import WrittenMemory

DIM = 16
IMAGE = {"type": "image", "url": "https://example.com/receipt.png"}


class RateLimited(Exception):
    """What a rate-limited provider raises."""


def test_written_memory_as_a_strategy_sends_the_current_fact_as_a_memory_block(e5, model):
    from helpers.course.data import load_conversation
    from helpers.memory import RETRIEVED, RETRIEVED_ID

    month = load_conversation("minsu_month_ko")
    memory = WrittenMemory(e5, rules.extract, rules.decide, top_k=3)
    records = replay(memory, month.turns, model, month.system)
    where = records[12]  # "제가 어디에 살아요?"
    block = next(m for m in where.prompt if m.id == RETRIEVED_ID)
    assert block.type == "human" and block.text.startswith('<memory source="facts">')
    assert block.text.endswith("</memory>") and "대전으로 이사했어요" in block.text
    assert "t10-user" in where.prompt.sources(RETRIEVED)  # the move's message, by id
    assert "부산에서 고양이" not in block.text  # the old fact was replaced
    assert records[1].prompt.of_kind(RETRIEVED) == []  # a statement: no search
    assert memory.embedding_calls > 0 and memory.name == "written facts (top-3)"


def test_a_written_turn_run_again_after_a_refused_decision_writes_each_fact_once(e5):
    calls = []

    def flaky_decide(fact, similar):
        calls.append(fact)
        if len(calls) == 2:
            raise RateLimited("429 Too Many Requests")  # the second fact's decision is refused
        return rules.decide(fact, similar)

    memory = WrittenMemory(e5, rules.extract, flaky_decide)
    stored = [HumanMessage("I live in Jeonju. My dog is called Bori.", id="t1-user"), AIMessage("Noted.")]
    with pytest.raises(RateLimited):
        memory.after_turn(None, stored)
    assert [f.text for f in memory.store.facts.values()] == ["I live in Jeonju."]
    memory.after_turn(None, stored)  # run again: the first fact is not decided again
    assert calls == ["I live in Jeonju.", "My dog is called Bori.", "My dog is called Bori."]
    assert sorted(f.text for f in memory.store.facts.values()) == ["I live in Jeonju.",
                                                                   "My dog is called Bori."]


def test_written_memory_reads_a_user_message_that_got_no_reply(e5):
    memory = WrittenMemory(e5, rules.extract, rules.decide)
    stored = memory.after_turn(None, [HumanMessage("I live in Jeonju.", id="t1-user")])  # no reply
    stored = memory.after_turn(None, [*stored, HumanMessage("My dog is called Bori.", id="t2-user")])
    assert [f.text for f in memory.store.facts.values()] == ["I live in Jeonju.", "My dog is called Bori."]
    assert [f.source for f in memory.store.facts.values()] == ["t1-user", "t2-user"]


def test_a_setting_that_would_fail_mid_chat_is_refused_when_made():
    with pytest.raises(ValueError, match="keep_recent"):
        WrittenMemory(HashEmbeddings(DIM), len, len, keep_recent=-1)
    with pytest.raises(ValueError, match="top_k"):
        WrittenMemory(HashEmbeddings(DIM), len, len, top_k=0)


def test_an_image_sent_with_the_question_reaches_the_prompt(model):
    memory = WrittenMemory(HashEmbeddings(DIM), rules.extract, rules.decide)
    stored = [HumanMessage("What did I buy at the market on Sunday?", id="t1-user"),
              AIMessage("Coffee beans and a receipt.", id="t1-reply")]
    kept = memory.after_turn(model, stored)
    asked = {"type": "text", "text": "What did I buy on this receipt?"}
    question = HumanMessage([asked, IMAGE], id="t2-user")
    sent = memory.prompt(SystemMessage("Answer briefly."), kept, question)[-1]
    assert IMAGE in sent.content
    assert sent.text.endswith("What did I buy on this receipt?")
