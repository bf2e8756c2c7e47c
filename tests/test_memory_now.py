"""Lesson 09's helpers: prompt caching counted (``helpers.caching``), memory that is written
(``helpers.written`` with the stand-in's rules), provider-side state (``helpers.course.provider_state``
against the localhost OpenAI-compatible server)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from openai_compatible_server import MODEL, VALID_KEY

from helpers import load_settings
from helpers.caching import (
    Price,
    SteppedTokenWindow,
    bill_prompts,
    load_prices,
    prompt_token_ids,
    shared_prefix,
)
from helpers.course import written_rules as rules
from helpers.course.provider_state import chained_model, replay_chained, responses_request
from helpers.memory import replay
from helpers.tokens import count_tokens
from helpers.window import TokenWindow
from helpers.written import ADD, DELETE, NOOP, UPDATE, Decision, FactStore

PRICE = Price("test", "test", input=1.0, cached_input=0.1, cache_write=1.25, min_prefix=100,
              ttl_minutes=5, source="https://example.org", caching_source="https://example.org")
SYSTEM = SystemMessage("You are a helpful assistant. " * 30)  # about 180 tokens, over the minimum


def test_shared_prefix_counts_equal_tokens_from_the_start():
    assert shared_prefix([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert shared_prefix([], [1]) == 0 and shared_prefix([1, 2], [1, 2, 3]) == 2


def test_a_prompt_as_tokens_has_count_tokens_without_reply_priming():
    messages = [SYSTEM, HumanMessage("제 이름은 김민수예요."), AIMessage("반가워요!")]
    assert len(prompt_token_ids(messages)) + 3 == count_tokens(messages)


def test_appending_is_cached_and_billed_as_the_provider_states():
    first = [SYSTEM, HumanMessage("제 이름은 김민수예요.")]
    second = [*first, AIMessage("반가워요!"), HumanMessage("제 이름이 뭐예요?")]
    one, two = bill_prompts([first, second], PRICE)
    assert one.cached_tokens == 0 and one.written_tokens == one.prompt_tokens - 3  # a cold cache
    assert two.shared_tokens == len(prompt_token_ids(first)) == two.cached_tokens
    assert two.written_tokens == len(prompt_token_ids(second)) - two.cached_tokens
    expected = (two.cached_tokens * 0.1 + two.written_tokens * 1.25 + 3 * 1.0) / 1e6
    assert two.dollars == pytest.approx(expected) and two.dollars < two.dollars_uncached


def test_below_the_minimum_nothing_is_cached_and_a_new_session_starts_cold():
    short = [SystemMessage("Be brief."), HumanMessage("안녕하세요")]
    longer = [*short, AIMessage("안녕하세요!"), HumanMessage("날씨 어때요?")]
    assert [b.cached_tokens for b in bill_prompts([short, longer], PRICE)] == [0, 0]
    assert bill_prompts([short, longer], PRICE)[1].dollars == pytest.approx(count_tokens(longer) / 1e6)
    first = [SYSTEM, HumanMessage("hello")]
    again = [*first, AIMessage("hi"), HumanMessage("and again")]
    same = bill_prompts([first, again], PRICE, ["s1", "s1"])
    new = bill_prompts([first, again], PRICE, ["s1", "s2"])
    assert same[1].cached_tokens > 0 and new[1].cached_tokens == 0


def test_prices_file_loads_with_sources():
    prices = load_prices()
    assert prices["Claude Sonnet 4.5"].cache_write == 3.75 and prices["gpt-4o-mini"].min_prefix == 1024


def test_a_stepped_window_keeps_its_prefix_between_cuts(model):
    turns = [f"Note {n}: I planted {n} tulips in the garden today, and the soil was wet." for n in range(40)]
    stepped = replay(SteppedTokenWindow(600, 300), turns, model, SYSTEM)
    sliding = replay(TokenWindow(600), turns, model, SYSTEM)
    assert max(r.prompt_tokens for r in stepped) <= 600 + 30  # the new message is whole
    bills = {name: bill_prompts([r.prompt for r in rows], PRICE)
             for name, rows in (("stepped", stepped), ("sliding", sliding))}
    cuts = sum(b.cached_tokens == 0 for b in bills["stepped"][1:])
    assert cuts < len(turns) / 4  # a cut every few turns, not every turn
    assert sum(b.cached_tokens for b in bills["stepped"]) > sum(b.cached_tokens for b in bills["sliding"])
    with pytest.raises(ValueError):
        SteppedTokenWindow(300, 300)


def test_the_stand_ins_rules_update_a_move_and_keep_the_rest(e5):
    store = FactStore(e5)
    stated = ["저는 부산에 살아요.", "제 여동생 이름은 지은이에요.", "저는 땅콩 알레르기가 있어요."]
    for n, text in enumerate(stated, 1):
        assert [d.event for d in store.write(text, f"t{n}", rules.extract, rules.decide)] == [ADD]
    moved = store.write("지난주에 부산에서 대전으로 이사했어요.", "t4", rules.extract, rules.decide)
    assert [(d.event, d.target) for d in moved] == [(UPDATE, "f1")]
    assert store.facts["f1"].text == "지난주에 부산에서 대전으로 이사했어요."
    assert store.facts["f1"].source == "t4"
    assert store.write("저는 땅콩 알레르기가 있어요.", "t5", rules.extract, rules.decide)[0].event == NOOP
    taken_back = store.write("이제 더 이상 땅콩 알레르기가 없어요.", "t6", rules.extract, rules.decide)
    assert [(d.event, d.target) for d in taken_back] == [(DELETE, "f3")] and "f3" not in store.facts
    assert rules.extract("What is my name? I live in Lyon. Can you help me?") == ["I live in Lyon."]
    assert store.search("제가 어디에 살아요?", 1)[0][0].id == "f1"


def test_another_persons_fact_is_not_updated():
    assert rules.same_thing("I work as a baker now.", "I work as a civil engineer.")
    assert not rules.same_thing("I work as a baker now.", "My brother works as a firefighter.")
    assert not rules.same_thing("My favourite food is ramen.", "My favourite band is Radiohead.")


def test_an_update_of_a_missing_fact_raises(e5):
    with pytest.raises(KeyError):
        FactStore(e5).apply(Decision(UPDATE, "I live in Lyon.", "f9"), "t1")


def test_the_request_shown_is_the_one_langchain_sends(openai_server):
    settings = load_settings({"COURSE_DOTENV": "none", "OPENAI_API_KEY": VALID_KEY,
                              "OPENAI_BASE_URL": openai_server.base_url, "CHAT_MODEL": MODEL})
    model = chained_model(settings)
    rows = replay_chained(model, SystemMessage("Answer briefly."),
                          ["제 이름은 김민수예요.", "저는 대전에 살아요.", "제 이름이 뭐예요?"])
    sent = [r["body"] for r in openai_server.requests]
    assert [b.get("previous_response_id") for b in sent] == [None, "resp_0001", "resp_0002"]
    assert [len(b["input"]) for b in sent] == [2, 1, 1]  # only the new message once chained
    history = [SystemMessage("Answer briefly."), HumanMessage("제 이름은 김민수예요."),
               AIMessage(rows[0]["reply"], response_metadata={"id": "resp_0001"}),
               HumanMessage("저는 대전에 살아요.")]
    shown = responses_request(MODEL, history)
    assert shown["input"] == sent[1]["input"]
    assert shown["previous_response_id"] == sent[1]["previous_response_id"]
    # the provider bills the whole chain: what a client-side history would have sent
    assert [r["input tokens billed"] for r in rows] == [r["client-side history would send"] for r in rows]
    assert rows[2]["tokens sent"] < rows[2]["input tokens billed"]
    assert "김민수" in rows[2]["reply"]


def test_an_unknown_previous_response_is_refused(openai_server):
    import openai

    client = openai.OpenAI(api_key=VALID_KEY, base_url=openai_server.base_url)
    with pytest.raises(openai.BadRequestError, match="not found"):
        client.responses.create(model=MODEL, input="hi", previous_response_id="resp_missing")


class _ScriptedStructuredModel:
    """Answers ``with_structured_output(schema).invoke(prompt)`` from a script, per schema name, and
    records the prompts: what ``model_writer`` asks of a real model, without one."""

    def __init__(self, script: dict[str, list[dict]]) -> None:
        self.script, self.prompts = script, []

    def with_structured_output(self, schema):
        outer = self

        class Bound:
            def invoke(self, prompt):
                outer.prompts.append(prompt)
                return schema(**outer.script[schema.__name__].pop(0))

        return Bound()


def test_model_writer_asks_for_facts_then_one_decision_each(e5):
    from helpers.written import model_writer

    model = _ScriptedStructuredModel({
        "Facts": [{"facts": ["저는 부산에 살아요."]}, {"facts": ["저는 대전으로 이사했어요."]}],
        "Choice": [{"event": "ADD"}, {"event": "UPDATE", "target": "f1"}]})
    extract, decide = model_writer(model)
    store = FactStore(e5)
    store.write("안녕하세요! 저는 부산에 살아요.", "t1", extract, decide)
    moved = store.write("지난주에 대전으로 이사했어요.", "t2", extract, decide)
    assert [(d.event, d.target) for d in moved] == [(UPDATE, "f1")]
    assert [f.text for f in store.facts.values()] == ["저는 대전으로 이사했어요."]
    assert "f1: 저는 부산에 살아요." in model.prompts[-1]  # the similar stored facts, by id
    # a target the model invents is not applied: the fact is added instead
    model.script = {"Facts": [{"facts": ["제 여동생은 지은이에요."]}],
                    "Choice": [{"event": "UPDATE", "target": "f9"}]}
    assert [d.event for d in store.write("제 여동생은 지은이에요.", "t3", extract, decide)] == [ADD]
