"""Tests of ``helpers.recall`` (pure functions) and of the store options it relies on (kind
filter, BM25 hybrid search, neighbours), on Milvus Lite and on the 2.3.5 server (which has no BM25:
dense fallback with a note).

Run the server tests under the machine's Milvus lock (one server per machine)::

    flock /tmp/course-milvus.lock .venv/bin/python -m pytest tests/test_recall.py
"""

from __future__ import annotations

import math
import uuid
from types import SimpleNamespace

import pytest
from hash_embeddings import HashEmbeddings

from helpers import recall
from helpers.milvus_common import MilvusStoreError
from helpers.milvus_store import MemoryStore

DIM = 16


# --- pure functions ------------------------------------------------------------------------------


def test_rrf_fuse_hand_made_example():
    fused = recall.rrf_fuse([["a", "b", "c"], ["c", "a", "d"]])
    assert [key for key, _ in fused] == ["a", "c", "b", "d"]
    scores = dict(fused)
    assert math.isclose(scores["a"], 1 / 61 + 1 / 62)
    assert math.isclose(scores["c"], 1 / 63 + 1 / 61)
    assert math.isclose(scores["b"], 1 / 62)
    assert math.isclose(scores["d"], 1 / 63)
    # a weight of 0.5 on the second list: c (1/63 + 0.5/61 = 0.0241) still beats b (0.0161)
    weighted = recall.rrf_fuse([["a", "b", "c"], ["c", "a", "d"]], weights=[1.0, 0.5])
    assert [key for key, _ in weighted] == ["a", "c", "b", "d"]
    assert math.isclose(dict(weighted)["c"], 1 / 63 + 0.5 / 61)
    # a key repeated in one list counts once, at its best rank; k=0 is plain 1/rank
    assert recall.rrf_fuse([["x", "x", "y"]], k=0) == [("x", 1.0), ("y", 1 / 3)]
    with pytest.raises(ValueError):
        recall.rrf_fuse([["a"]], k=-1)


def test_weighted_fuse_scales_each_list():
    fused = recall.weighted_fuse([{"a": 0.90, "b": 0.80, "c": 0.85}, {"b": 12.0, "d": 3.0}],
                                 [0.5, 0.5])
    scores = dict(fused)
    assert [key for key, _ in fused] == ["a", "b", "c", "d"]  # a tie keeps first appearance
    assert math.isclose(scores["a"], 0.5)  # top dense, absent from BM25
    assert math.isclose(scores["b"], 0.5)  # bottom dense (0) + top BM25 (0.5)
    assert math.isclose(scores["c"], 0.25)
    assert math.isclose(scores["d"], 0.0)


def test_fill_budget_skips_an_oversize_memory_and_takes_the_next():
    items = [("first", 40), ("huge", 500), ("third", 30), ("fourth", 50)]
    selected, skipped = recall.fill_budget(items, 100, cost=lambda item: item[1])
    assert [name for name, _ in selected] == ["first", "third"]  # 70 tokens; fourth would be 120
    assert [name for name, _ in skipped] == ["huge", "fourth"]
    assert recall.fill_budget(items, 0, cost=lambda item: item[1])[0] == []
    with pytest.raises(ValueError):
        recall.fill_budget(items, -1, cost=lambda item: item[1])


def _m(turn_id, cost, session="s1", round=1, speaker="user", date=""):
    return SimpleNamespace(turn_id=turn_id, content=f"{turn_id} " * cost, session_id=session,
                           round=round, speaker=speaker, date=date, cost=cost)


def test_select_memories_brings_neighbours_within_the_budget():
    hit1, hit2, hit3 = _m("h1", 30, round=5), _m("h2", 30, round=9), _m("h3", 20, round=20)
    before, after_big = _m("n4", 20, round=4), _m("n6", 100, round=6)
    neighbours = {"h1": [before, after_big], "h2": [hit1]}
    chosen = recall.select_memories([hit1, hit2, hit3], 95, cost=lambda m: m.cost,
                                    neighbours=neighbours)
    # h1 (30) + its neighbour n4 (20); n6 (100) does not fit and is skipped; h2 (30) fits;
    # its neighbour h1 is already taken; h3 (20) does not fit (80 + 20 > 95)
    assert [m.turn_id for m in chosen] == ["h1", "n4", "h2"]
    # only the top hit brings neighbours: h2's n8 is not taken, h3 fits then (100 of 100)
    chosen = recall.select_memories([hit1, hit2, hit3], 100, cost=lambda m: m.cost,
                                    neighbours={"h1": [before], "h2": [_m("n8", 30, round=8)]},
                                    neighbour_hits=1)
    assert [m.turn_id for m in chosen] == ["h1", "n4", "h2", "h3"]
    # a session header costs once per session
    chosen = recall.select_memories([hit1, hit2, hit3], 80, cost=lambda m: m.cost,
                                    group_cost=lambda m: (m.session_id, 10))
    assert [m.turn_id for m in chosen] == ["h1", "h2"]  # 10 + 30 + 30 = 70; h3 would be 90


def test_nearest_same_speaker_skips_the_other_speakers_line():
    hit = _m("t069", 1, round=5)
    around = [_m("t068", 1, round=4, speaker="assistant"), _m("t070", 1, round=6, speaker="assistant"),
              _m("t067", 1, round=3), _m("t071", 1, round=7), _m("t065", 1, round=1)]
    assert [m.turn_id for m in recall.nearest_same_speaker(hit, around)] == ["t067", "t071"]
    assert [m.turn_id for m in recall.nearest_same_speaker(hit, around, 2)] == ["t067", "t071", "t065"]


def test_format_memories_dates_and_speakers_on_their_own_lines():
    memories = [
        _m("t069", 1, session="session-3", round=3),
        _m("t067", 1, session="session-3", round=1),
        _m("t068", 1, session="session-3", round=2, speaker="assistant"),
        _m("t001", 1, session="session-1", round=1),
    ]
    texts = {"t067": "I adopted a dog last Tuesday!", "t068": "Congratulations! Is it a he or a she?",
             "t069": "A she! We named her Luna.", "t001": "Long day at school."}
    dates = {"session-1": "2025-02-04", "session-3": "2025-02-22"}
    for memory in memories:
        memory.content, memory.date = texts[memory.turn_id], dates[memory.session_id]
    text = recall.format_memories(memories)
    assert text.splitlines() == [
        "Relevant memories (oldest first):",
        "[2025-02-04 Tue, session-1]",
        "User: Long day at school.",
        "[2025-02-22 Sat, session-3]",
        "User: I adopted a dog last Tuesday!",
        "Assistant: Congratulations! Is it a he or a she?",
        "User: A she! We named her Luna.",
    ]
    assert "[session-1]" in recall.format_memories(memories, show_dates=False)
    assert recall.format_memories([]) == ""
    assert recall.memory_cost(memories[0]) == recall.memory_cost(memories[0], count=None)


def test_classify_turn_and_lexical_text():
    assert recall.classify_turn("What are popular dog names in Korea?") == "question"
    assert recall.classify_turn("Explain what an API is.") == "request"
    assert recall.classify_turn("주말 등산 준비물 목록 좀 만들어 주세요.") == "request"
    assert recall.classify_turn("A she! We named her Luna.") == "statement"
    assert recall.classify_turn("제 이름은 수아예요.") == "statement"
    assert recall.classify_turn("I don't know, you haven't told me.", "assistant") == "dont_know"
    assert recall.classify_turn("Luna is a lovely name.", "assistant") == "reply"
    assert recall.lexical_text("제 이름은 수아예요 Luna!") == "제 이름 름은 수아 아예 예요 Luna"
    assert recall.lexical_text("이름이 뭐예요?").split()[0] == "이름"  # shares a token with 이름은


# --- the store: Lite and server --------------------------------------------------------------------


def _store(uri: str, **kwargs) -> MemoryStore:
    return MemoryStore(uri=uri, collection=f"r_{uuid.uuid4().hex[:10]}", dim=DIM,
                       embeddings=HashEmbeddings(DIM), drop_existing=True, **kwargs)


def _unit(i: int, tilt: float = 0.0) -> list[float]:
    v = [0.0] * DIM
    v[i] = 1.0
    if tilt:
        v[(i + 1) % DIM] = tilt
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def test_kind_filter_keeps_questions_out_of_the_top_k(uri):
    store = _store(uri, memory_fields=True)
    try:
        query = _unit(0)
        for i in range(5):  # five past questions, all closer to the query than the fact
            store.add_memory("mina", "s1", i + 1, f"What is my dog's name {i}?", kind="question",
                             vector=_unit(0, tilt=0.1 * (i + 1)))
        store.add_memory("mina", "s1", 6, "We named her Luna.", kind="statement", date="2025-02-22",
                         vector=_unit(0, tilt=1.0))
        store.add_memory("mina", "s1", 7, "I don't know.", kind="dont_know", speaker="assistant",
                         vector=_unit(0, tilt=0.05))
        if store.kind == "lite":
            store.flush()
        plain = store.search("mina", None, top_k=3, query_vector=query)
        assert [m.kind for m in plain] == ["dont_know", "question", "question"]
        kept = store.search("mina", None, top_k=3, query_vector=query, kinds=["statement"])
        assert [(m.content, m.kind, m.speaker, m.date) for m in kept] == [
            ("We named her Luna.", "statement", "user", "2025-02-22")]
        excluded = store.search("mina", None, top_k=3, query_vector=query,
                                exclude_kinds=["question", "dont_know"])
        assert [m.content for m in excluded] == ["We named her Luna."]
        # neighbours: the rounds next to the statement, nearest first
        around = store.neighbours("mina", kept, before=1, after=1)
        assert [m.round for m in around[kept[0].turn_id]] == [5, 7]
    finally:
        store.drop()


def test_old_stores_are_unchanged_and_refuse_the_new_options(uri):
    store = _store(uri)
    try:
        assert not store.has_memory_fields and not store.full_text
        store.add_turn("ann", "s1", 1, "My name is Ann.", "Nice to meet you.")
        found = store.search("ann", "name", top_k=1)
        assert found[0].content == "User: My name is Ann.\nAI: Nice to meet you."
        assert (found[0].kind, found[0].speaker, found[0].date) == ("", "", "")
        with pytest.raises(MilvusStoreError, match="memory_fields=True"):
            store.search("ann", "name", kinds=["statement"])
        with pytest.raises(MilvusStoreError, match="memory_fields=True"):
            store.add_memory("ann", "s1", 2, "hi")
        hybrid = store.search("ann", "name", top_k=1, hybrid=True)
        assert hybrid[0].turn_id == found[0].turn_id
        assert "dense" in store.last_search_note
    finally:
        store.drop()


def _rare_word_setup(store: MemoryStore) -> str:
    query = _unit(0)
    for i in range(6):  # close to the query by meaning, none says the name
        store.add_memory("mina", "s1", i + 1, f"My friend has a pet and talks about it a lot {i}.",
                         vector=_unit(0, tilt=0.1 * (i + 1)))
    ids = store.add_memory("mina", "s2", 1, "Soojin adopted a grey rescue called Tofu.",
                           vector=_unit(3))
    if store.kind == "lite":
        store.flush()
    return ids[0].rsplit("-", 1)[0], query


def test_hybrid_on_lite_finds_a_rare_name_dense_ranks_low(lite_uri):
    store = _store(lite_uri, full_text=True)
    try:
        assert store.full_text and store.full_text_note == ""
        target, query = _rare_word_setup(store)
        dense = store.search("mina", "Who is Tofu?", top_k=3, query_vector=query)
        assert target not in [m.turn_id for m in dense]
        hybrid = store.search("mina", "Who is Tofu?", top_k=3, query_vector=query, hybrid=True)
        # BM25 rank 1 + dense rank 7 of 7 (1/61 + 1/67) beats dense rank 1 alone (1/61)
        assert [m.turn_id for m in hybrid].index(target) == 0
        hit = hybrid[0]
        assert math.isclose(hit.score, 1 / 61 + 1 / 67, rel_tol=1e-6)
        assert abs(hit.dense_score) < 1e-6  # orthogonal to the query
        assert hit.lexical_score > 0  # Lite returns BM25 as a negative distance; stored positive
        assert store.last_search_note == ""
        # Korean: the bigram text matches a different particle ("이름이" vs "이름은")
        store.add_memory("mina", "s3", 1, "제 이름은 수아예요.", vector=_unit(5))
        store.flush()
        korean = store.search("mina", "제 이름이 뭐예요?", top_k=1, query_vector=_unit(0),
                              hybrid=True, kinds=["statement"], lexical_weight=2.0)
        assert korean[0].content == "제 이름은 수아예요."
    finally:
        store.drop()


def test_server_without_bm25_falls_back_to_dense_with_a_note(milvus_server):
    store = _store(milvus_server.uri, full_text=True)
    try:
        assert store.has_memory_fields and not store.full_text
        assert "2.3" in store.full_text_note and "falls back to dense" in store.full_text_note
        target, query = _rare_word_setup(store)
        dense = store.search("mina", "Who is Tofu?", top_k=3, query_vector=query)
        hybrid = store.search("mina", "Who is Tofu?", top_k=3, query_vector=query, hybrid=True)
        assert [m.turn_id for m in hybrid] == [m.turn_id for m in dense]
        assert target not in [m.turn_id for m in hybrid]
        assert store.last_search_note == store.full_text_note
        assert store.search("mina", None, top_k=1, query_vector=query)  # the note is per search
        assert store.last_search_note == ""
    finally:
        store.drop()


def test_recall_within_budget_on_lite(lite_uri):
    from helpers.tokens import count_text_tokens

    store = _store(lite_uri, memory_fields=True)
    try:
        turns = [("user", "I finally did it: I adopted a dog from the shelter last Tuesday!"),
                 ("assistant", "Congratulations, that's huge! Is it a he or a she?"),
                 ("user", "A she! We named her Luna."),
                 ("assistant", "Luna is a lovely name."),
                 ("user", "What are popular dog names in Korea?")]
        vectors = [_unit(0, tilt=1.0), _unit(0, tilt=0.2), _unit(4), _unit(0, tilt=0.3), _unit(0)]
        for i, ((speaker, text), vector) in enumerate(zip(turns, vectors, strict=True), start=1):
            store.add_memory("mina", "session-3", i, text, speaker=speaker, date="2025-02-22",
                             kind=recall.classify_turn(text, speaker), vector=vector)
        store.flush()
        store._embed_query = lambda text: _unit(0)  # the question "What's my dog called?"
        chosen, text = recall.recall_within_budget(store, "mina", "What's my dog called?", 300)
        # the top statement (round 1) brings the user's next turn (round 3), not the reply
        # between; the question (round 5) and the replies are never hits
        assert [m.round for m in chosen] == [1, 3]
        assert text.splitlines() == [
            "Relevant memories (oldest first):",
            "[2025-02-22 Sat, session-3]",
            "User: I finally did it: I adopted a dog from the shelter last Tuesday!",
            "User: A she! We named her Luna.",
        ]
        assert count_text_tokens(text) <= 300
        # a budget that holds the headers and the top hit only (each line + 1 for its line
        # break): the neighbour is left out; one token less and the top hit does not fit, so the
        # next hit (the shorter round 3) is taken instead
        lines = text.splitlines()
        exact = sum(count_text_tokens(line) + 1 for line in lines[:3])
        chosen, text = recall.recall_within_budget(store, "mina", "q", exact)
        assert [m.round for m in chosen] == [1] and count_text_tokens(text) <= exact
        chosen, _ = recall.recall_within_budget(store, "mina", "q", exact - 1)
        assert [m.round for m in chosen] == [3]
        assert recall.recall_within_budget(store, "mina", "q", 5) == ([], "")
    finally:
        store.drop()


def test_classify_turn_in_conversations_between_people():
    """Real two-person conversations state something and then ask back; the other speaker's
    first-person turns are facts about them; an assistant's helper talk is not."""
    c = recall.classify_turn
    assert c("I went to a pottery class yesterday. What about you?") == "statement"
    assert c("I love painting. Do you?") == "statement"
    assert c("저는 어제 도자기 수업에 갔어요. 너는?") == "statement"
    assert c("Wow, nice! How did it go?") == "question"
    assert c("Hey Mel! Good to see you! How have you been?") == "question"
    assert c("Thanks, that is helpful.") == c("Okay, makes sense.") == "chat"
    assert c("네, 이해했어요.") == c("고마워요, 도움이 됐어요.") == "chat"
    assert c("I'm vegetarian.") == c("저는 채식주의자예요.") == "statement"  # one word is a fact
    assert c("Yeah, I painted that lake sunrise last year!", "assistant") == "statement"
    assert c("I'm swamped with the kids & work. What's up with you?", "assistant") == "statement"
    assert c("Powder has its own acid; soda needs one in the recipe.", "assistant") == "reply"
    assert c("I can help with that. Want the polite or the casual form?", "assistant") == "question"
    assert c("Night shifts are brutal. I hope she gets some rest.", "assistant") == "reply"
    assert c('You told me: "My name is Alice." Earlier you said: "I live in Lisbon."',
             "assistant") == "reply"  # quoting the user is not speaking of oneself
    assert recall.split_sentences('She said "hi!" Then left. Why?') == [
        'She said "hi!"', "Then left.", "Why?"]
    assert recall.content_words("Wow, I adopted a dog!") == ["adopted", "dog"]


def test_is_echo_counts_the_share_of_the_reply_words_memory_supplied():
    supplied = "Relevant memories:\nUser: My sister Eunji is a nurse on the children's ward."
    assert recall.is_echo('You told me: "My sister Eunji is a nurse."', supplied)
    assert not recall.is_echo("Eunji starts a new job as a paramedic in Busan.", supplied)
    assert not recall.is_echo("Eunji is a nurse.", "")  # nothing supplied: nothing to repeat
    assert not recall.is_echo("Yes.", supplied)  # under 3 content words: not judged


def test_other_speaker_tells_a_friend_from_an_assistant():
    """Counted on the course's two-speaker files: the hard conversation's assistant never speaks
    of itself, the friends conversation's Marta does in 75 of 208 turns."""
    import json

    from helpers.data import data_dir

    seen = {}
    for name in ("hard_conversation", "friends_conversation"):
        data = json.loads((data_dir() / "evaluation" / f"{name}.json").read_text(encoding="utf-8"))
        other = recall.OtherSpeaker()
        for turn in data["turns"]:
            if turn["speaker"] == "assistant":
                other.add(turn["text"])
        seen[name] = (other.turns, other.self_talk, other.is_person)
    assert seen == {"hard_conversation": (270, 0, False), "friends_conversation": (208, 75, True)}
    few = recall.OtherSpeaker()
    for _ in range(9):
        few.add("I painted all weekend.")
    assert not few.is_person  # under min_turns: not decided yet
    few.add("Fine.")
    assert few.is_person and few.self_talk == 9
    text = "Teddy. The kids chose it, and he answers to it."
    assert recall.classify_turn(text, "assistant") == "reply"
    assert recall.classify_turn(text, "assistant", person=True) == "statement"
