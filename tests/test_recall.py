"""Tests of ``helpers.budget`` (filling a token budget with hits), of the ``helpers.kinds``
classifier it relies on, and of the store's parts it uses (the kind filter, neighbours), on Milvus
Lite and on the 2.3.5 server.

Run the server tests under the machine's Milvus lock (one server per machine)::

    flock /tmp/course-milvus.lock .venv/bin/python -m pytest tests/test_recall.py
"""

from __future__ import annotations

import dataclasses
import math
import uuid

import pytest
from hash_embeddings import HashEmbeddings

from helpers import budget, kinds
from helpers.course.milvus import open_store
from helpers.retrieval import HEADER, format_hits
from helpers.store import MemoryStore, Row
from helpers.tokens import count_text_tokens

DIM = 16


def _m(turn_id, cost, session="s1", round=1, speaker="user", date="", kind="statement") -> Row:
    return Row(content=f"{turn_id} " * cost, user_id="u", session_id=session, round=round, kind=kind,
               speaker=speaker, name="", date=date, timestamp="", turn_id=turn_id, ids=(turn_id,))


def _cost(row: Row) -> int:
    return len(row.content.split())


# --- pure functions ------------------------------------------------------------------------------


def test_select_hits_skips_an_oversize_hit_and_takes_the_next():
    items = [_m("first", 40), _m("huge", 500), _m("third", 30), _m("fourth", 50)]
    chosen = budget.select_hits(items, 100, _cost)
    assert [m.turn_id for m in chosen] == ["first", "third"]  # 70 tokens; fourth would be 120
    assert budget.select_hits(items, 0, _cost) == []
    with pytest.raises(ValueError):
        budget.select_hits(items, -1, _cost)


def test_select_hits_brings_neighbours_within_the_budget():
    hit1, hit2, hit3 = _m("h1", 30, round=5), _m("h2", 30, round=9), _m("h3", 20, round=20)
    before, after_big = _m("n4", 20, round=4), _m("n6", 100, round=6)
    neighbours = {"h1": [before, after_big], "h2": [hit1]}
    chosen = budget.select_hits([hit1, hit2, hit3], 95, _cost, neighbours=neighbours)
    # h1 (30) + its neighbour n4 (20); n6 (100) does not fit and is skipped; h2 (30) fits;
    # its neighbour h1 is already taken; h3 (20) does not fit (80 + 20 > 95)
    assert [m.turn_id for m in chosen] == ["h1", "n4", "h2"]
    # a hit with no neighbours listed brings none: h3 fits then (100 of 100)
    chosen = budget.select_hits([hit1, hit2, hit3], 100, _cost, neighbours={"h1": [before]})
    assert [m.turn_id for m in chosen] == ["h1", "n4", "h2", "h3"]
    # a session header costs once per session
    chosen = budget.select_hits([hit1, hit2, hit3], 80, _cost, group_cost=lambda m: (m.session_id, 10))
    assert [m.turn_id for m in chosen] == ["h1", "h2"]  # 10 + 30 + 30 = 70; h3 would be 90


def test_nearest_same_speaker_skips_the_other_speakers_line():
    hit = _m("t069", 1, round=5)
    around = [_m("t068", 1, round=4, speaker="assistant"), _m("t070", 1, round=6, speaker="assistant"),
              _m("t067", 1, round=3), _m("t071", 1, round=7), _m("t065", 1, round=1)]
    assert [m.turn_id for m in budget.nearest_same_speaker(hit, around, 100)] == ["t067", "t071"]
    assert budget.nearest_same_speaker(hit, [], 100) == []


def test_a_long_neighbour_comes_as_its_chunk_nearest_the_hit():
    hit = _m("t5", 1, round=5)
    before = _m("t3", 1, round=3)
    before = dataclasses.replace(before, content="a" * 10 + "b" * 10 + "c" * 5, ids=("t3-0", "t3-1", "t3-2"))
    after = dataclasses.replace(_m("t7", 1, round=7), content="x" * 10 + "y" * 4, ids=("t7-0", "t7-1"))
    whole = budget.nearest_same_speaker(hit, [before, after], chunk_bytes=100)
    assert [r.content for r in whole] == [before.content, after.content]  # one part each: whole rows
    near = budget.nearest_same_speaker(hit, [before, after], chunk_bytes=10)
    assert [(r.content, r.chunk_of, r.ids) for r in near] == [("c" * 5, (3, 3), ("t3-2",)),  # its end
                                                          ("x" * 10, (1, 2), ("t7-0",))]  # its start
    short = _m("t9", 2, round=9)
    assert budget.nearest_same_speaker(hit, [short], chunk_bytes=10) == [short]  # one part: as it is


def test_classify_turn():
    c = kinds.classify_turn
    assert c("What are popular dog names in Korea?") == "question"
    assert c("Explain what an API is.") == "request"
    assert c("주말 등산 준비물 목록 좀 만들어 주세요.") == "request"
    assert c("A she! We named her Luna.") == "statement"
    assert c("제 이름은 수아예요.") == "statement"
    assert c("I don't know, you haven't told me.", "assistant") == "dont_know"
    assert c("Luna is a lovely name.", "assistant") == "reply"
    assert kinds.normalized("  Luna   is\nMY dog ") == "luna is my dog"
    assert kinds.SEARCHED_KINDS == ("statement",)
    assert set(kinds.NEVER_NEIGHBOURS) <= set(kinds.KINDS)


def test_classify_turn_in_conversations_between_people():
    """Real two-person conversations state something and then ask back; the other speaker's
    first-person turns are facts about them; an assistant's helper talk is not."""
    c = kinds.classify_turn
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
    assert c("I'd be happy to help. I’ll keep it short.", "assistant") == "reply"  # any apostrophe
    assert c("I remember you said the tent is blue.", "assistant") == "reply"
    assert c('You told me: "My name is Alice." Earlier you said: "I live in Lisbon."',
             "assistant") == "reply"  # quoting the user is not speaking of oneself
    assert kinds.split_sentences('She said "hi!" Then left. Why?') == [
        'She said "hi!"', "Then left.", "Why?"]
    # a mark inside a word ends nothing: a question naming socket.io is still one question
    assert kinds.split_sentences("I use Node.js v18.2.1 now. Have you tried socket.io-client?") == [
        "I use Node.js v18.2.1 now.", "Have you tried socket.io-client?"]
    assert c("Have I ever written integration tests with Jest and socket.io-client?") == "question"
    # nor after a title: "Dr." alone would leave "Farah." a sentence that answers any question about her
    assert kinds.split_sentences("I met Dr. Farah and Ms. Harper, e.g. at school. Why?") == [
        "I met Dr. Farah and Ms. Harper, e.g. at school.", "Why?"]
    assert kinds.content_words("Wow, I adopted a dog!") == ["adopted", "dog"]


@pytest.mark.parametrize("text, asks", [
    ("I prefer step-by-step answers with examples. Can you show me the sum of 3, 7, 11, ...?", True),
    ("저는 부산에 살아요. 근처에 좋은 카페가 있을까요？", True),  # a full-width question mark
    ('She asked "why?" and then left the room.', False),  # the question is quoted, earlier
    ("Why? Because the index was missing.", False),  # asked, then answered: ends telling
    ("Okay, catch-up time. How are you?", False),  # small talk asks about nothing to remember
    ("I'm looking to improve my tests. What steps would you suggest?", True),
    ("", False),
    ("Here is my failing build log:\n" + "x = 1\n" * 2_000 + "Why does the build fail?", True),  # its end
    ("I moved to Busan. Which cafe is best?" + " " * 2_000, True),  # trailing spaces do not hide it
])
def test_a_message_asks_when_its_last_sentence_asks_about_something(text, asks):
    assert kinds.asks(text) is asks


def test_named_speaker_is_the_one_person_a_question_names():
    names = {"user": "Hannah", "assistant": "Marta"}
    assert kinds.named_speaker("What did Marta paint last year?", names) == "Marta"
    assert kinds.named_speaker("where is marta's studio?", names) == "Marta"
    assert kinds.named_speaker("Did Hannah tell Marta?", names) is None  # both: no preference
    assert kinds.named_speaker("What did Martin say?", names) is None
    assert kinds.named_speaker("Where does Annabel live?", {"user": "Ann"}) is None
    assert kinds.named_speaker("민수는 어디 살아?", {"user": "민수", "assistant": "지은"}) == "민수"
    assert kinds.named_speaker("What is my job?", None) is None


def test_is_echo_counts_the_share_of_the_reply_words_memory_supplied():
    supplied = "Relevant memories:\nUser: My sister Eunji is a nurse on the children's ward."
    assert kinds.is_echo('You told me: "My sister Eunji is a nurse."', supplied)
    assert not kinds.is_echo("Eunji starts a new job as a paramedic in Busan.", supplied)
    assert not kinds.is_echo("Eunji is a nurse.", "")  # nothing supplied: nothing to repeat
    assert not kinds.is_echo("Yes.", supplied)  # under 3 content words: not judged


def test_other_speaker_tells_a_friend_from_an_assistant():
    """Counted on the course's two-speaker files: the hard conversation's assistant never speaks
    of itself, the friends conversation's Marta does in 69 of 208 turns."""
    import json

    from helpers.course.data import data_dir

    seen = {}
    for name in ("hard_conversation", "friends_conversation"):
        data = json.loads((data_dir() / "evaluation" / f"{name}.json").read_text(encoding="utf-8"))
        other = kinds.OtherSpeaker()
        for turn in data["turns"]:
            if turn["speaker"] == "assistant":
                other.add(turn["text"])
        seen[name] = (other.turns, other.self_talk, other.is_person)
    assert seen == {"hard_conversation": (270, 0, False), "friends_conversation": (208, 69, True)}
    few = kinds.OtherSpeaker()
    for _ in range(9):
        few.add("I painted all weekend.")
    assert not few.is_person  # under min_turns: not decided yet
    few.add("Fine.")
    assert few.is_person and few.self_talk == 9
    text = "Teddy. The kids chose it, and he answers to it."
    assert kinds.classify_turn(text, "assistant") == "reply"
    assert kinds.classify_turn(text, "assistant", person=True) == "statement"


# --- the store: Lite and server --------------------------------------------------------------------


def _unit(i: int, tilt: float = 0.0) -> list[float]:
    v = [0.0] * DIM
    v[i] = 1.0
    if tilt:
        v[(i + 1) % DIM] = tilt
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


class QueryAlong(HashEmbeddings):
    """Every query embeds as ``_unit(0)`` ("What's my dog called?"); passages are hashed."""

    def embed_query(self, text):
        self.texts += 1
        return _unit(0)


def _store(uri: str) -> MemoryStore:
    return open_store(uri=uri, collection=f"r_{uuid.uuid4().hex[:10]}", dim=DIM,
                      embeddings=QueryAlong(DIM), drop_existing=True)


def test_kind_filter_keeps_questions_out_of_the_top_k(uri):
    store = _store(uri)
    try:
        for i in range(5):  # five past questions, all closer to the query than the fact
            store.add("mina", "s1", i + 1, f"What is my dog's name {i}?", kind="question",
                      speaker="user", vector=_unit(0, tilt=0.1 * (i + 1)))
        store.add("mina", "s1", 6, "We named her Luna.", kind="statement", speaker="user",
                  date="2025-02-22", vector=_unit(0, tilt=1.0))
        store.add("mina", "s1", 7, "I don't know.", kind="dont_know", speaker="assistant",
                  vector=_unit(0, tilt=0.05))
        plain = store.search("mina", "q", top_k=3)
        assert [m.kind for m in plain] == ["dont_know", "question", "question"]
        kept = store.search("mina", "q", top_k=3, kinds=["statement"])
        assert [(m.content, m.kind, m.speaker, m.date) for m in kept] == [
            ("We named her Luna.", "statement", "user", "2025-02-22")]
        assert [m.content for m in store.search("mina", "q", kinds=["statement", "dont_know"])] == [
            "I don't know.", "We named her Luna."]
        assert store.search("mina", "q", kinds=[]) == []
        # neighbours: the rounds next to the statement, nearest first, the hit itself left out
        around = store.neighbours("mina", kept, before=1, after=1)
        assert [m.round for m in around[kept[0].turn_id]] == [5, 7]
        wide = store.neighbours("mina", kept, before=3, after=2)[kept[0].turn_id]
        assert [m.round for m in wide] == [5, 7, 4, 3]  # no round 8
        assert store.neighbours("mina", kept, before=0, after=0) == {kept[0].turn_id: []}
        assert store.neighbours("mina", []) == {}
        assert store.neighbours("bob", kept) == {kept[0].turn_id: []}  # another user's rows: none
        with pytest.raises(ValueError):
            store.neighbours("mina", kept, before=-1)
    finally:
        store.drop()


def test_fill_budget(uri):
    store = _store(uri)
    try:
        turns = [("user", "I finally did it: I adopted a dog from the shelter last Tuesday!"),
                 ("assistant", "Congratulations, that's huge! Is it a he or a she?"),
                 ("user", "A she! We named her Luna."),
                 ("assistant", "Luna is a lovely name."),
                 ("user", "What are popular dog names in Korea?"),
                 ("user", "i finally did it: I adopted a dog from  the shelter last Tuesday!")]
        vectors = [_unit(0, tilt=1.0), _unit(0, tilt=0.2), _unit(4), _unit(0, tilt=0.3), _unit(0),
                   _unit(0, tilt=1.1)]
        for i, ((speaker, text), vector) in enumerate(zip(turns, vectors, strict=True), start=1):
            store.add("mina", "session-3", i, text, speaker=speaker, date="2025-02-22",
                      kind=kinds.classify_turn(text, speaker), vector=vector)
        calls = store.embedding_calls
        chosen, text = budget.fill_budget(store, "mina", "What's my dog called?", 300)
        assert store.embedding_calls == calls + 1  # the question, once
        # the top statement (round 1) brings the user's next turn (round 3), not the reply
        # between; the question (round 5) and the replies are never hits; round 6 says round 1's
        # words again (another case, more spaces) and is left out
        assert [m.round for m in chosen] == [1, 3]
        assert text.splitlines() == [
            '<memory source="retrieved">',
            HEADER,
            "[2025-02-22 Sat, session-3]",
            "User: I finally did it: I adopted a dog from the shelter last Tuesday!",
            "User: A she! We named her Luna.",
            "</memory>",
        ]
        assert text == format_hits(chosen) and count_text_tokens(text) <= 300
        # a budget that holds the headers and the top hit only (each line + 1 for its line
        # break): the neighbour is left out; one token less and the top hit does not fit, so the
        # next hit (the shorter round 3) is taken instead
        lines = text.splitlines()
        exact = budget._FRAME_TOKENS + sum(count_text_tokens(line) + 1 for line in lines[2:4])  # tags, note
        chosen, text = budget.fill_budget(store, "mina", "q", exact)
        assert [m.round for m in chosen] == [1] and count_text_tokens(text) <= exact
        chosen, _ = budget.fill_budget(store, "mina", "q", exact - 1)
        assert [m.round for m in chosen] == [3]
        assert budget.fill_budget(store, "mina", "q", 5) == ([], "")
        # skip (e.g. what the window already sends), no neighbours
        chosen, _ = budget.fill_budget(store, "mina", "q", 300, neighbours_of=0,
                                       skip=lambda hit: hit.round == 1)
        assert [m.round for m in chosen] == [6, 3]
        chosen, _ = budget.fill_budget(store, "mina", "q", 300, neighbours_of=0,
                                       prefer=lambda hit: hit.round == 3)
        assert [m.round for m in chosen] == [3, 1]  # preferred first, then the others, best first
        chosen, _ = budget.fill_budget(store, "mina", "q", 300, neighbours_of=0)
        assert [m.round for m in chosen] == [1, 3]  # only statements: never the question (round 5)
        assert budget.fill_budget(store, "nobody", "q", 300) == ([], "")
    finally:
        store.drop()


def test_a_named_person_s_lines_are_searched_apart_and_come_first(uri):
    """lab.named (not adopted): the named speaker's rows are searched with a filter (before the cut), so a
    line of theirs ranked below everyone's top-k still comes first; then everyone's; one embedding."""
    from lab.named import NamedSearch

    store = _store(uri)
    try:
        for i in range(1, 6):  # five lines of Jun's, each closer to the question than Mina's one line
            store.add("pair", "s1", i, f"Jun went hiking on trail number {i}.", kind="statement",
                      speaker="assistant", name="Jun", vector=_unit(0, tilt=0.1 * i))
        store.add("pair", "s1", 6, "I started kickboxing last spring.", kind="statement", speaker="user",
                  name="Mina", vector=_unit(0, tilt=3.0))
        named = NamedSearch(store, {"user": "Mina", "assistant": "Jun"})
        assert [h.round for h in store.search("pair", "q", 3)] == [1, 2, 3]
        assert [h.name for h in named._search_of("Mina", "pair", "q", 3)] == ["Mina"]
        assert named._search_of("Ann", "pair", "q", 3) == []
        assert [h.round for h in store.search("pair", "q", 3)] == [1, 2, 3]  # the filter was for one call
        calls = store.embedding_calls
        chosen, _ = budget.fill_budget(named, "pair", "What sport did Mina take up?", 300, candidates=3,
                                       neighbours_of=0)
        assert store.embedding_calls == calls + 1  # one embedding, two searches
        assert [m.round for m in chosen] == [6, 1, 2, 3]  # hers first, then everyone's top 3
        # scores are the fused ones: 1 / (60 + rank) in her list, 0.5 / (60 + rank) in everyone's
        assert [round(h.score * 122, 3) for h in chosen] == [2.0, 1.0, round(122 * 0.5 / 62, 3),
                                                             round(122 * 0.5 / 63, 3)]
        chosen, _ = budget.fill_budget(store, "pair", "What sport did Mina take up?", 300, candidates=3,
                                       neighbours_of=0)
        assert [m.round for m in chosen] == [1, 2, 3]  # without the lab, her line is below the cut
    finally:
        store.drop()


def test_no_repeated_text_in_a_retrieved_section_neighbours_included():
    def said(text: str, round_: int) -> Row:
        return Row(content=text, user_id="mina", session_id="s1", round=round_, kind="statement",
                   speaker="user", name="", date="", timestamp="", turn_id=f"t{round_}",
                   ids=(f"t{round_}-0",))

    jia = "My sister Jia lives in Busan."
    fact, copy, again, other = (said(jia, 1), said(jia, 3), said("my sister  jia lives in busan.", 5),
                                said("She is a nurse.", 7))
    chosen = budget.select_hits([fact, again], 1000, lambda row: 1, neighbours={"t1": [copy, other]})
    assert [row.round for row in chosen] == [1, 7]  # the copies, hit or neighbour, are not sent again
    assert sum("Jia" in line for line in format_hits(chosen).splitlines()) == 1
