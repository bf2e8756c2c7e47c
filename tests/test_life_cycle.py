"""The whole life of a memory (issue 40): what waits in the queue is forgotten with its user and written
when the store closes; a turn run again after a failed model call stores each message once; every message
shape is counted as what it is and reaches the prompt intact; sessions in number order; settings refused
when made; invisible text is blank (written memory as a strategy: ``tests/test_lab_written.py``).

Milvus tests run on Milvus Lite and on the 2.3 server (``uri``); ``HashEmbeddings`` gives the same vector
to the same text, so a part is found by its own words."""

from __future__ import annotations

import uuid

import pytest
from hash_embeddings import HashEmbeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from helpers.course.milvus import open_store
from helpers.store import MilvusStoreError, split_utf8

DIM = 16
SYSTEM = SystemMessage("Answer briefly.")
IMAGE = {"type": "image", "url": "https://example.com/receipt.png"}


def new_store(uri: str, embeddings=None, **kwargs):
    return open_store(uri=uri, collection=f"t_{uuid.uuid4().hex[:10]}", dim=DIM, drop_existing=True,
                      embeddings=embeddings or HashEmbeddings(DIM), max_chunk_bytes=40, **kwargs)


def long_text(who: str) -> str:
    return " ".join(f"{who} step {n} of the plan." for n in range(1, 13))  # 7+ chunks of 40 bytes


class RateLimited(Exception):
    """What a provider's client raises when it refuses a call (openai.RateLimitError, HTTP 429)."""


class FailingModel(GenericFakeChatModel):
    """A chat model whose every call raises ``RateLimited``, as a rate-limited provider does."""

    def _generate(self, *args, **kwargs):
        raise RateLimited("429 Too Many Requests")


# --- queued chunks: forgotten with their user, written at close, kept when a write fails ------------


def test_delete_user_also_forgets_queued_chunks(uri):
    store = new_store(uri)
    try:
        ann = long_text("ann")
        store.add("ann", "s1", 1, ann, speaker="user", embed_chunks=1)
        assert len(store.waiting) == len(split_utf8(ann, 40)) - 1 > 0  # chunks waiting for later turns
        # every chunk went: the first, and the ones written as WAITING; the queue is empty too
        assert store.delete_user("ann") == len(split_utf8(ann, 40)) and store.waiting == []
        store.add("bob", "s1", 1, "bob says hello to everyone here", embed_chunks=8)  # a turn that catches up
        store.catch_up()
        assert store.count("ann") == 0 and store.rows("ann") == []
        assert store.search("ann", split_utf8(ann, 40)[-1], top_k=5, chunks=True) == []
        assert store.count("bob") == 1
    finally:
        store.drop()


def test_closing_writes_the_queued_chunks_and_a_reopened_store_holds_the_whole_message(uri):
    store = new_store(uri)
    text = long_text("cleo")
    store.add("cleo", "s1", 1, text, speaker="user", embed_chunks=1)
    assert store.waiting
    store.close()
    reopened = open_store(uri=uri, collection=store.collection, dim=DIM, embeddings=HashEmbeddings(DIM),
                          max_chunk_bytes=40)
    try:
        (row,) = reopened.rows("cleo")
        assert row.content == text and row.chunk_of is None  # every part, not the first third
        last = split_utf8(text, 40)[-1]
        assert [h.content for h in reopened.search("cleo", last, top_k=1, chunks=True)] == [last]  # embedded
    finally:
        reopened.drop()


def test_a_process_that_ends_without_close_loses_no_queued_chunk(tmp_path):
    """A kernel restart or a crash before ``close()``: the chunks waiting for their embedding were written
    as ``WAITING``; the next open embeds them, and the message is whole and found by its last chunk."""
    import subprocess
    import sys
    from pathlib import Path

    uri, tests = str(tmp_path / "exit.db"), Path(__file__).resolve().parent
    script = f"""
import os, sys; sys.path[:0] = [{str(tests.parent)!r}, {str(tests)!r}]
from hash_embeddings import HashEmbeddings
from helpers.course.milvus import open_store
store = open_store(uri={uri!r}, collection="t_exit", dim={DIM}, drop_existing=True,
                   embeddings=HashEmbeddings({DIM}), max_chunk_bytes=40)
store.add("cleo", "s1", 1, {long_text("cleo")!r}, speaker="user", embed_chunks=1)
assert store.waiting and store.rows("cleo")[0].chunk_of == (1, 8)  # read: the first chunk only
store.client.flush(store.collection)
os._exit(0)  # as a killed kernel: no close, no exit handler
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300)
    reopened = open_store(uri=uri, collection="t_exit", dim=DIM, embeddings=HashEmbeddings(DIM),
                          max_chunk_bytes=40)
    try:
        assert not reopened.waiting
        (row,) = reopened.rows("cleo")
        assert row.content == long_text("cleo") and row.chunk_of is None  # every chunk, not the first
        last = split_utf8(long_text("cleo"), 40)[-1]
        assert [h.content for h in reopened.search("cleo", last, top_k=1, chunks=True)] == [last]
        assert reopened.count("cleo") == len(split_utf8(long_text("cleo"), 40))  # each chunk once
    finally:
        reopened.drop()


def test_loading_waits_out_an_index_file_a_killed_process_is_still_writing(lite_uri):
    """Reopened right after a kill, Lite can find an index file half-written (EAGAIN): loading waits
    and tries again; any other error is raised at once."""
    from pymilvus.exceptions import MilvusException

    store = new_store(lite_uri)
    real, calls = store.client.load_collection, []

    def busy_once(*args, **kwargs):  # the first load meets the file still being written
        calls.append(1)
        if len(calls) == 1:
            raise MilvusException(1, "read error in ...idx: 0 != 1 (Resource temporarily unavailable)")
        return real(*args, **kwargs)

    try:
        store.client.load_collection = busy_once
        store._load()
        assert len(calls) == 2
        store.client.load_collection = lambda *a, **k: (_ for _ in ()).throw(MilvusException(1, "schema"))
        with pytest.raises(MilvusException, match="schema"):
            store._load()
    finally:
        store.client.load_collection = real
        store.drop()


class BreakingEmbeddings(HashEmbeddings):
    """Embeds until ``broken`` is set, then raises as an embedding endpoint that is down."""

    broken = False

    def embed_documents(self, texts):
        if self.broken:
            raise ConnectionError("embedding endpoint unreachable")
        return super().embed_documents(texts)


def test_closing_says_which_queued_chunks_it_could_not_write_and_loses_none(lite_uri):
    embedder = BreakingEmbeddings(DIM)
    store = new_store(lite_uri, embeddings=embedder)
    try:
        text = long_text("dan")
        ids = store.add("dan", "s1", 1, text, speaker="user", embed_chunks=1)
        embedder.broken = True
        with pytest.raises(MilvusStoreError, match="not written") as raised:
            store.close()
        assert all(part in str(raised.value) for part in ids[1:])  # each part named
        assert [row["id"] for row in store.waiting] == ids[1:] and store.count("dan") == 1  # still open
        embedder.broken = False
        store.close()
        reopened = open_store(uri=lite_uri, collection=store.collection, dim=DIM, embeddings=embedder,
                              max_chunk_bytes=40)
        assert [r.content for r in reopened.rows("dan")] == [text]
    finally:
        reopened.drop()


def test_a_failed_add_puts_the_queued_chunks_it_took_back_and_queues_none_of_its_own(lite_uri):
    embedder = BreakingEmbeddings(DIM)
    store = new_store(lite_uri, embeddings=embedder)
    try:
        first = store.add("eve", "s1", 1, long_text("eve"), speaker="user", embed_chunks=1)
        waiting = [row["id"] for row in store.waiting]
        embedder.broken = True
        with pytest.raises(ConnectionError):
            store.add("eve", "s1", 2, long_text("second"), speaker="user", embed_chunks=3)
        assert [row["id"] for row in store.waiting] == waiting == first[1:] and store.count("eve") == 1
    finally:
        store.drop()


# --- a turn run again after a failed model call: each message stored once -------------------------


def run_turn(memory, stored, text, model, turn_id, ids=True):
    """One turn as a learner's cell runs it: prompt, the answer, after_turn with ``model`` (summaries)."""
    question = HumanMessage(text, id=f"{turn_id}-user" if ids else None)
    memory.prompt(SYSTEM, stored, question)
    reply = AIMessage(f"Noted: {text}", id=f"{turn_id}-reply" if ids else None)
    return question, reply, lambda m=model: memory.after_turn(m, [*stored, question, reply])


@pytest.mark.parametrize("ids", [True, False], ids=["with ids", "without ids"])
def test_a_layered_turn_run_again_after_a_rate_limited_summary_stores_each_message_once(lite_uri, model, ids):
    from helpers.layered import LayeredMemory
    from helpers.summary import SummarizationError

    store = new_store(lite_uri)
    try:
        memory = LayeredMemory(store, "fay", "s1", window_tokens=30, summarize_over=60)
        stored = memory.after_turn(model, [HumanMessage("I live in Jeonju.", id="t1-user"),
                                           AIMessage("Jeonju, noted.", id="t1-reply")])
        question, reply, after = run_turn(memory, stored, "My sister Mina is a nurse in Busan and she has "
                                          "two cats named Coco and Bori.", FailingModel(messages=iter([])),
                                          "t2", ids)
        with pytest.raises(SummarizationError, match="RateLimited"):
            after()  # the rows are written, then the summary call is refused
        assert len(store.rows("fay")) == 4
        memory.prompt(SYSTEM, stored, question)  # the learner runs the cell again
        stored = memory.after_turn(model, [*stored, question, reply])
        assert len(store.rows("fay")) == 4 and memory.round == 5 and memory.stored_tokens > 0
        assert [r.round for r in store.rows("fay")] == [1, 2, 3, 4]
    finally:
        store.drop()


def test_a_layered_turn_run_again_with_another_reply_replaces_the_first_reply(uri, model):
    from helpers.layered import LayeredMemory
    from helpers.summary import SummarizationError

    store = new_store(uri)
    try:
        memory = LayeredMemory(store, "gus", "s1", window_tokens=30, summarize_over=60)
        stored = memory.after_turn(model, [HumanMessage("I live in Jeonju.", id="t1-user"),
                                           AIMessage("Jeonju, noted.", id="t1-reply")])
        sister = "My sister Mina is a nurse in Busan and she has two cats named Coco and Bori."
        question, first, after = run_turn(memory, stored, sister, FailingModel(messages=iter([])), "t2")
        with pytest.raises(SummarizationError):
            after()  # the first try's rows are written, then the summary call is refused
        memory.prompt(SYSTEM, stored, question)  # run again: a real model answers in other words
        second = AIMessage("Mina, a nurse in Busan, with Coco and Bori.", id="t2-reply")
        memory.after_turn(model, [*stored, question, second])
        rows = {r.round: r.content for r in store.rows("gus")}
        assert sorted(rows) == [1, 2, 3, 4] and len(store.rows("gus")) == 4
        assert rows[4] == second.text  # the reply the history holds, not both
    finally:
        store.drop()


def test_a_retrieval_turn_run_again_stores_its_row_once(lite_uri, model):
    from helpers.retrieval import RetrievalMemory

    store = new_store(lite_uri)
    try:
        memory = RetrievalMemory(store, "gil", "s1")
        question, reply, after = run_turn(memory, [], "My bike is a red Brompton.", model, "t1")
        after()
        after()  # the same cell run again
        assert len(store.rows("gil")) == 1 and memory.round == 2
    finally:
        store.drop()


@pytest.mark.parametrize("ids", [True, False], ids=["with ids", "without ids"])
def test_a_summary_or_window_turn_run_again_keeps_each_message_once(model, ids):
    from helpers.summary import CountTrigger, RunningSummary, SummarizationError
    from helpers.window import CountWindow, FullHistory

    summary = RunningSummary(CountTrigger(max_messages=2, keep_messages=2))
    question, reply, after = run_turn(summary, [], "I moved to Daegu.", FailingModel(messages=iter([])),
                                      "t1", ids)
    earlier = [HumanMessage("Hi.", id="t0-user" if ids else None), AIMessage("Hello!")]
    stored = [*earlier, question, reply]
    with pytest.raises(SummarizationError):
        summary.after_turn(FailingModel(messages=iter([])), stored)
    stored = summary.after_turn(model, [*stored, question, reply])  # the step appended again
    assert [m.text for m in stored][1:] == ["I moved to Daegu.", "Noted: I moved to Daegu."]
    for window in (FullHistory(), CountWindow(4)):
        assert window.after_turn(model, [*earlier, question, reply, question, reply]) == [
            *earlier, question, reply]
    again = [HumanMessage("ok", id="a" if ids else None), HumanMessage("ok", id="b" if ids else None)]
    assert len(FullHistory().after_turn(model, again)) == 2  # the same words said twice: two messages


def test_a_second_replay_whose_ids_restart_loses_no_message(tmp_path, lite_uri, model):
    """``replay`` numbers ids from ``t1-user`` on every call: day 2 starting "Hi." -> "Got it." like day 1 is
    not day 1 run again. In a file history and in Milvus (its own session), every message is kept."""
    from helpers.course.data import history_of
    from helpers.history import FileHistory
    from helpers.layered import LayeredMemory
    from helpers.memory import Turn, replay
    from helpers.retrieval import RetrievalMemory

    history = FileHistory("ann", tmp_path)
    day_one = history_of(["Hi.", "I live in Busan."], model)
    day_two = history_of(["Hi.", "I moved to Seoul."], model)
    assert day_one[1].id == day_two[1].id == "t1-user"
    history.add_messages(day_one[1:])
    history.add_messages(day_two[1:])
    assert [m.text for m in history.messages] == [m.text for m in day_one[1:] + day_two[1:]]
    store = new_store(lite_uri)
    try:
        memories = (LayeredMemory(store, "ann-0", "day-1"), RetrievalMemory(store, "ann-1", "day-1"))
        for n, memory in enumerate(memories):
            replay(memory, ["Hi.", "I live in Busan."], model)
            replay(memory, [Turn(text, session_id="day-2") for text in ("Hi.", "I moved to Seoul.")], model)
            rows = store.rows(f"ann-{n}")
            assert [(r.session_id, r.round) for r in rows] == [(d, r) for d in ("day-1", "day-2") for r in (
                (1, 2, 3, 4) if n == 0 else (1, 2))], rows  # layered: a row a message; retrieval: a turn
            assert "I moved to Seoul." in " ".join(r.content for r in rows)
    finally:
        store.drop()


def test_a_file_history_turn_added_again_holds_each_message_once(tmp_path, model):
    from helpers.history import FileHistory
    from helpers.summary import CountTrigger, SummarizationError, summarize_history

    history = FileHistory("s1", tmp_path)
    turn = [HumanMessage("I live in Jeonju.", id="t1-user"), AIMessage("Noted.", id="t1-reply")]
    history.add_messages(turn)
    with pytest.raises(SummarizationError):
        summarize_history(FailingModel(messages=iter([])), history, CountTrigger(1, 0))
    history.add_messages(turn)  # the cell run again
    assert [m.id for m in history.messages] == ["t1-user", "t1-reply"]
    history.add_messages([HumanMessage("I live in Jeonju."), HumanMessage("I live in Jeonju.")])
    assert len(history.messages) == 4  # without ids, messages that look alike are all kept


# --- message shapes: counted as what they are, passed through intact ------------------------------


CALL = {"name": "get_weather", "args": {"city": "Seoul"}, "id": "call_1"}


def test_tool_calls_and_results_cost_the_same_in_openai_langchain_and_anthropic_forms():
    from helpers.tokens import NON_TEXT_BLOCK_TOKENS, count_message_tokens

    openai = count_message_tokens(AIMessage("", tool_calls=[CALL]))
    langchain_v1 = count_message_tokens(AIMessage([{"type": "tool_call", **CALL}]))
    anthropic = count_message_tokens(AIMessage([{"type": "tool_use", "id": "call_1", "name": "get_weather",
                                                 "input": {"city": "Seoul"}}]))
    both = count_message_tokens(AIMessage([{"type": "tool_use", "id": "call_1", "name": "get_weather",
                                            "input": {"city": "Seoul"}}], tool_calls=[CALL]))  # ChatAnthropic
    assert openai == langchain_v1 == anthropic == both == 23  # not 765 a block, not twice
    result = count_message_tokens(ToolMessage("Sunny, 21 C", tool_call_id="call_1"))
    as_block = count_message_tokens(HumanMessage([{"type": "tool_result", "tool_use_id": "call_1",
                                                   "content": "Sunny, 21 C"}]))
    nested = count_message_tokens(HumanMessage([{"type": "tool_result", "tool_use_id": "call_1",
                                                 "content": [{"type": "text", "text": "Sunny, 21 C"}]}]))
    assert result == as_block == nested == 10 < NON_TEXT_BLOCK_TOKENS
    with_image = HumanMessage([{"type": "tool_result", "tool_use_id": "c", "content": [IMAGE]}])
    assert count_message_tokens(with_image) == 3 + 1 + NON_TEXT_BLOCK_TOKENS  # an image inside still counts


def test_the_caching_bill_equals_count_tokens_with_images_and_a_changed_image_is_not_cached():
    from helpers.caching import bill_prompts, load_prices
    from helpers.tokens import count_text_tokens, count_tokens

    system = SystemMessage("Answer from the receipts. " * 300)  # over the 1,024-token minimum
    photo = lambda url: HumanMessage([{"type": "text", "text": "What did I buy?"},  # noqa: E731
                                      {"type": "image", "url": url}], name="ann")
    first = [system, photo("a.png")]
    second = [*first, AIMessage("Coffee."), photo("b.png")]
    changed = [system, photo("c.png"), AIMessage("Coffee."), photo("b.png")]
    price = load_prices()["Claude Sonnet 4.5"]
    bills = bill_prompts([first, second, changed], price)
    assert [b.prompt_tokens for b in bills] == [count_tokens(p) for p in (first, second, changed)]
    assert bills[1].cached_tokens == count_tokens(first) - 3  # all of the first prompt, its image too
    framed = 3 + 1 + count_text_tokens("What did I buy?")  # framing, "user", its text: then the image
    assert bills[2].cached_tokens == count_tokens([system]) - 3 + framed  # up to the changed image


def strategies(store):
    from helpers.caching import SteppedTokenWindow
    from helpers.layered import LayeredMemory
    from helpers.retrieval import RetrievalMemory
    from helpers.summary import CountTrigger, RunningSummary
    from helpers.window import CountWindow, FullHistory, LastN, TokenWindow

    return [FullHistory(), LastN(4), CountWindow(4), TokenWindow(2000), SteppedTokenWindow(),
            RunningSummary(CountTrigger()), RetrievalMemory(store, "hal", "s1"),
            LayeredMemory(store, "hal", "s1")]


def test_an_image_sent_with_the_question_reaches_every_strategys_prompt(lite_uri, model):
    store = new_store(lite_uri)
    try:
        stored = [HumanMessage("What did I buy at the market on Sunday?", id="t1-user"),
                  AIMessage("Coffee beans and a receipt.", id="t1-reply")]
        for memory in strategies(store):
            kept = memory.after_turn(model, stored)
            question = HumanMessage([{"type": "text", "text": "What did I buy on this receipt?"}, IMAGE],
                                    id="t2-user")
            sent = memory.prompt(SYSTEM, kept, question)[-1]
            assert IMAGE in sent.content, memory.name
            assert sent.text.endswith("What did I buy on this receipt?"), memory.name
    finally:
        store.drop()


# --- order, settings, blank text, unanswered messages -----------------------------------------------


def test_sessions_of_one_day_are_in_number_order_not_text_order(tmp_path, lite_uri):
    from helpers.retrieval import format_hits

    store = new_store(lite_uri)
    try:
        for session in ("session-10", "session-9"):
            store.add("ivy", session, 1, f"said in {session}", date="2024-05-01",
                      timestamp="2024-05-01T10:00:00+00:00")
        assert [r.session_id for r in store.rows("ivy")] == ["session-9", "session-10"]
        text = format_hits(store.search("ivy", "said in", top_k=2))
        assert text.index("session-9]") < text.index("session-10]")
    finally:
        store.drop()


def test_settings_that_would_fail_mid_chat_are_refused_when_made_naming_the_setting(lite_uri):
    from helpers.layered import LayeredMemory
    from helpers.retrieval import RetrievalMemory
    from helpers.summary import RunningSummary, TokenTrigger
    from helpers.window import CountWindow, LastN, TokenWindow

    store = new_store(lite_uri)
    try:
        refused = {"retrieval_tokens": lambda: LayeredMemory(store, "jo", retrieval_tokens=100_000),
                   "statement_retrieval_tokens": lambda: LayeredMemory(store, "jo",
                                                                       statement_retrieval_tokens=90_000),
                   "window_tokens": lambda: LayeredMemory(store, "jo", window_tokens=1.5),
                   "names": lambda: LayeredMemory(store, "jo", names={"user": "가" * 30}),
                   "Invalid isoformat": lambda: LayeredMemory(store, "jo", session_date="last Tuesday"),
                   "top_k": lambda: RetrievalMemory(store, "jo", top_k=5000),
                   "first_round": lambda: RetrievalMemory(store, "jo", first_round=-1),
                   "nprobe": lambda: new_store(lite_uri, nprobe=0),
                   "max_summary_tokens": lambda: RunningSummary(TokenTrigger(), max_summary_tokens=0),
                   "keep_tokens": lambda: TokenTrigger(200, -1),
                   "n must": lambda: LastN(-1), "max_messages": lambda: CountWindow(0),
                   "max_tokens": lambda: TokenWindow(0)}
        for setting, make in refused.items():
            with pytest.raises(ValueError, match=setting):
                make()
        memory = LayeredMemory(store, "jo", retrieval_tokens=81_939)  # the largest a search can serve
        memory.prompt(SYSTEM, [], HumanMessage("Where do I live?"))  # no Milvus error at the first question
    finally:
        store.drop()


INVISIBLE = ["\u3164", "\u2800\u2800", "\u200d\u200c\u200b", "\u115f\u1160", "\ufeff \u00ad", "\u0301",
             " \n\t\u3000", "\u2060\u180e\ufe0f"]


def test_invisible_text_is_blank_never_stored_nor_searched(lite_uri, model):
    from helpers.layered import LayeredMemory
    from helpers.text import is_blank

    assert all(map(is_blank, INVISIBLE)) and not any(map(is_blank, ["ㅤa", "가", ".", "😀", "\ue000"]))
    store = new_store(lite_uri)
    try:
        store.add("kim", "s1", 1, "I live in Jeonju.")
        for text in INVISIBLE:
            with pytest.raises(ValueError, match="blank"):
                store.add("kim", "s1", 2, text)
            assert store.search("kim", text, top_k=3) == []  # nothing to search by
        memory = LayeredMemory(store, "kim", "s2", statement_retrieval_tokens=500)
        memory.prompt(SYSTEM, [], HumanMessage("\u3164"))
        memory.after_turn(model, [HumanMessage("\u3164", id="t1-user"), AIMessage("\u2800", id="t1-reply")])
        assert store.count("kim") == 1 and memory.last_retrieved == []
    finally:
        store.drop()
