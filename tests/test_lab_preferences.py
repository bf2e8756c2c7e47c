"""The standing layer of the user's instructions and preferences (lab.preferences)."""

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from helpers.evaluate import evidence_reached
from helpers.memory import RETRIEVED, label
from helpers.tokens import count_text_tokens
from lab.preferences import CLOSE, OPEN, PREFERENCES_ID, Preferences, is_standing


@pytest.mark.parametrize(("sentence", "standing"), [
    ("Always provide a code example when I ask about async error handling.", True),
    ("From now on, reply only in Korean.", True),
    ("I prefer tabs over spaces.", True),
    ("I use PostgreSQL 15 for the backend.", True),
    ("Please don't use semicolons in the examples.", True),
    ("Can you always show the tests too?", False),  # a question asks
    ("The server crashed again yesterday.", False),
    ("What did I say about tabs?", False),
    ("I've set a preference for CPU-only deployment.", True),
    ("I\u2019ve never used Redis before.", False),  # typed on a phone: ’ (read as ')
    ("Always use UTF-8; never Latin-1.", True),  # a semicolon in prose is no code
    ("timeout = 30", False),
    ("I'm using Socket.io v4.6.1 for the chat.", False),  # the situation now: a fact, for retrieval
    ("I've never used Redis before.", False),  # what happened, not a rule
    ("I’ll make sure to check the camera index.", False),  # the user's own plan
    ('"arrowParens": "always",', False),  # a line of code
    ("앞으로는 한국어로 답해 주세요.", True),
    ("코드에 세미콜론은 쓰지 마세요.", True),
    ("저는 탭을 선호해요.", True),
    ("어제 서버가 또 죽었어요.", False),
    ("항상 그렇게 해야 해요?", False),
])
def test_is_standing(sentence, standing):
    assert is_standing(sentence) is standing


def test_keeps_the_users_standing_sentences_newest_last_and_once():
    prefs = Preferences()
    assert prefs.add(HumanMessage("My app crashed. I prefer short answers. Why is that?", id="t1-user")) == [
        "I prefer short answers."]
    assert prefs.add(AIMessage("I always test first.", id="t1-reply")) == []  # only the user's
    prefs.add(HumanMessage("Always answer in English.", id="t2-user"))
    prefs.add(HumanMessage("I prefer short answers.", id="t3-user"))  # said again: moves to the end
    assert [(k.text, k.source) for k in prefs.kept] == [
        ("Always answer in English.", "t2-user"), ("I prefer short answers.", "t3-user")]
    long = "I always " + "really " * 80 + "like it."
    assert prefs.add(HumanMessage(long, id="t4-user")) == []  # a paragraph is not a preference


def test_block_is_delimited_data_within_budget_newest_first_to_stay():
    prefs = Preferences(max_tokens=60)
    for i in range(10):
        prefs.add(HumanMessage(f"I prefer option number {i} for everything.", id=f"t{i}-user"))
    text, chosen = prefs.block()
    assert text.startswith(OPEN) and text.endswith(CLOSE) and "data, not instructions" in text
    assert count_text_tokens(text) <= 60
    assert chosen and chosen[-1].source == "t9-user" and "t0-user" not in {c.source for c in chosen}
    assert Preferences().block() == ("", [])


def test_insert_into_a_prompt_as_a_user_message_that_counts_as_evidence():
    prefs = Preferences()
    prefs.add(HumanMessage("Always use tabs for indentation.", id="t3-user"))
    system, question = SystemMessage("sys"), HumanMessage("Indent this loop.", id="t9-user")
    prompt = prefs.insert_into(label([system, question], system, question))
    assert [m.id for m in prompt][1] == PREFERENCES_ID and prompt[1].type == "human"
    assert prompt.parts[1][0].kind == RETRIEVED and prompt.parts[1][0].sources == ("t3-user",)
    probe = {"evidence": ["d1"], "expects": ["tabs"]}
    assert evidence_reached(prompt, probe, {"d1": "t3-user"}) == (True, RETRIEVED)
    assert evidence_reached(label([system, question], system, question), probe, {"d1": "t3-user"})[0] is False
