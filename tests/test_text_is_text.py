"""Text is text: strings that mean something to a tokenizer or to C (special-token strings pasted from
tokenizer docs, model cards and logs; a NUL from a binary paste) pass through every place the course
meets text as ordinary characters: counters, the stand-in, every strategy of lesson 08, the summary, the
store, file history, the caching bill, written memory and the rendered prompt."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from helpers.tokens import TokenCounter, count_message_tokens, count_text_tokens, count_tokens, encode_text

# cl100k_base's special tokens, but <|im_start|> (ChatML's, special to other encodings): pasted, each is
# text. tiktoken's plain encode() raises ValueError ("disallowed special token") on the three it knows.
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|fim_prefix|>", "<|endofprompt|>"]
SAID = {"en": "The model card says the stop string is {} and my dog is called Bori.",
        "ko": "모델 카드에 멈춤 문자열이 {} 라고 나와 있어요. 제 강아지 이름은 보리예요."}
ASK = {"en": "What is my dog called?", "ko": "제 강아지 이름이 뭐예요?"}


def test_tiktoken_itself_refuses_these_strings_the_course_counts_them_as_text():
    from helpers.tokens import get_encoding

    assert set(SPECIAL) - get_encoding().special_tokens_set == {"<|im_start|>"}
    for special in SPECIAL[:1] + SPECIAL[2:]:
        with pytest.raises(ValueError, match="special token"):
            get_encoding().encode(f"see {special}")  # the library's default: why encode_text exists
    for special in SPECIAL:
        ids = encode_text(special)
        assert len(ids) > 1 and get_encoding().decode(ids) == special  # several ordinary tokens
        message = HumanMessage(f"see {special}", name=f"a{special}")
        assert count_message_tokens(message) == 3 + 1 + len(encode_text(f"see {special}")) + 1 + len(
            encode_text(f"a{special}"))
        assert TokenCounter()([message]) == count_message_tokens(message)
        assert count_tokens([message]) == count_message_tokens(message) + 3
        assert count_text_tokens(special) == len(ids)


@pytest.mark.parametrize("special", SPECIAL)
def test_the_stand_in_reads_answers_and_bills_a_pasted_special_token(model, special):
    for language in ("en", "ko"):
        said = SAID[language].format(special)
        reply = model.invoke([SystemMessage("Be brief."), HumanMessage(said), AIMessage("OK."),
                              HumanMessage(ASK[language])])
        assert ("Bori" if language == "en" else "보리") in reply.text
        assert reply.usage_metadata["input_tokens"] > count_text_tokens(said)
        summary = model.invoke([HumanMessage(said), HumanMessage("Summarize our conversation.")])
        assert special in summary.text  # a fact keeps its characters, all of them


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_strategy_of_lesson_08_stores_and_sends_a_pasted_special_token(tmp_path, model, language):
    from helpers.course.milvus import open_store
    from helpers.evaluate import default_strategies
    from helpers.memory import replay
    from helpers.summary import RunningSummary, TokenTrigger

    said = [SAID[language].format(special) for special in SPECIAL]
    with open_store("text_is_text", uri=str(tmp_path / "t.db"), drop_existing=True) as store:
        strategies = [*default_strategies(store, "ann"), RunningSummary(TokenTrigger(60, 20))]
        for strategy in strategies:
            records = replay(strategy, [*said, ASK[language]], model, "Be brief.")
            sent = "\n".join(m.text for r in records for m in r.prompt)
            assert all(s in sent for s in said), strategy.name  # each reached a prompt, whole
            assert records[-1].prompt_tokens == count_tokens(records[-1].prompt)
        assert sum(r.memory_calls for r in records) >= 1  # the last one folded a summary over them
        stored = "\n".join(row.content for row in store.rows("ann-retrieval"))
        assert all(s in stored for s in said)  # the store keeps every character
        hits = store.search("ann-retrieval", ASK[language], top_k=1)
        assert hits and "Bori" in hits[0].content or "보리" in hits[0].content


def test_file_history_the_caching_bill_written_memory_and_the_rendered_prompt_take_them(tmp_path):
    from helpers.caching import bill_prompts, load_prices
    from helpers.course import written_rules
    from helpers.course.display import render_messages
    from helpers.course.embeddings import get_embeddings
    from helpers.history import FileHistory
    from helpers.written import FactStore

    messages = [HumanMessage(SAID["en"].format(s)) for s in SPECIAL] + [
        HumanMessage(SAID["ko"].format(s)) for s in SPECIAL]
    history = FileHistory("pasted", tmp_path)
    history.add_messages(messages)
    assert [m.text for m in FileHistory("pasted", tmp_path).messages] == [m.text for m in messages]
    price = next(iter(load_prices().values()))
    bills = bill_prompts([messages[:4], messages], price)
    assert [b.prompt_tokens for b in bills] == [count_tokens(messages[:4]), count_tokens(messages)]
    facts = FactStore(get_embeddings())
    for i, m in enumerate(messages):
        facts.write(m.text, f"m{i}", written_rules.extract, written_rules.decide)
    kept = [fact.text for fact in facts.facts.values()]  # near-repeats merge: the newest value stays
    assert any(SPECIAL[-1] in text for text in kept) and len(facts.log) >= len(messages)
    rows = render_messages(messages).rows
    assert [row["tokens"] for row in rows] == [count_message_tokens(m) for m in messages]


def test_a_nul_in_a_message_does_not_end_what_the_embedder_reads():
    """The engine reads C strings: unguarded, "a\\0..." was embedded as "a" (a cosine of 1.0)."""
    from helpers.course.embeddings import vector_cache

    cut, whole, spaced = vector_cache.vectors(["a", "a\0b my cat is Nabi", "a b my cat is Nabi"])
    assert float(whole @ spaced) > 0.9999 and float(whole @ cut) < 0.95
