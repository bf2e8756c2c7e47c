"""data/evaluation/friends_conversation.json: two friends chatting, facts from both speakers.

Generated from a seed by scripts/make_friends_conversation.py; these tests check that the committed
file is exactly what the script makes, and that it says what data/evaluation/README.md says it does
(counts, both speakers' facts, evidence that really carries the answer, the harness replays it).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
from collections import Counter

import pytest

from helpers.config import project_root
from helpers.evaluate import conversation_turns, load_long_conversation, replay_message_ids

PATH = project_root() / "data" / "evaluation" / "friends_conversation.json"
CATEGORIES = ("single-hop", "multi-hop", "temporal", "updated-fact", "unanswerable")


@pytest.fixture(scope="module")
def script():
    path = project_root() / "scripts" / "make_friends_conversation.py"
    spec = importlib.util.spec_from_file_location("make_friends_conversation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def friends():
    return load_long_conversation(PATH)


def _history(data):
    return [t for t in data["turns"] if t["kind"] != "probe"]


# -- generated, deterministic -------------------------------------------------------------------


def test_file_is_exactly_what_its_seed_generates(script, friends):
    committed = PATH.read_text(encoding="utf-8")
    assert friends["seed"] == 7
    assert script.render(script.generate(7)) == committed
    assert script.render(script.generate(7)) == committed  # twice: no hidden state
    assert script.main(["--check"]) == 0


def test_check_flag_fails_on_a_changed_file(script, tmp_path):
    copy = tmp_path / "friends.json"
    copy.write_text(script.render(script.generate(7)), encoding="utf-8")
    assert script.main(["--check", "--out", str(copy)]) == 0
    copy.write_text(copy.read_text(encoding="utf-8").replace("pottery", "knitting"),
                    encoding="utf-8")
    assert script.main(["--check", "--out", str(copy)]) == 1


@pytest.mark.parametrize("seed", [1, 2, 3, 8])
def test_other_seeds_make_other_conversations_of_the_same_shape(script, friends, seed):
    other = script.generate(seed)  # runs the script's own self-check too
    assert other["values"] != friends["values"]
    assert len(other["turns"]) == len(friends["turns"])
    assert Counter(p["category"] for p in other["probes"]) == Counter(
        p["category"] for p in friends["probes"])


# -- size, sessions, speakers -------------------------------------------------------------------


def test_enough_dialog_turns_sessions_and_probes(friends):
    history = _history(friends)
    assert len(history) >= 400
    sessions = friends["sessions"]
    assert len(sessions) - 1 >= 15  # the last session holds only the probes
    dates = [dt.date.fromisoformat(s["date"]) for s in sessions]
    assert all(a < b for a, b in zip(dates, dates[1:], strict=False))
    assert all(s["weekday"] == d.strftime("%A") for s, d in zip(sessions, dates, strict=True))
    ids = [t["id"] for t in friends["turns"]]
    assert ids == [f"t{i:03d}" for i in range(1, len(ids) + 1)]
    by_id = {s["id"]: s["date"] for s in sessions}
    assert all(t["date"] == by_id[t["session_id"]] for t in friends["turns"])
    probes = friends["probes"]
    assert len(probes) >= 100
    counts = Counter(p["category"] for p in probes)
    assert set(counts) == set(CATEGORIES)
    assert all(counts[c] >= 10 for c in CATEGORIES)


def test_two_named_friends_take_turns_and_the_probes_get_no_reply(friends):
    speakers = friends["speakers"]
    assert set(speakers) == {"user", "assistant"}
    assert speakers["user"] != speakers["assistant"]
    assert "assistant" not in speakers["assistant"].lower()
    history = _history(friends)
    assert [t["speaker"] for t in history] == ["user", "assistant"] * (len(history) // 2)
    last = friends["sessions"][-1]["id"]
    probe_turns = [t for t in friends["turns"] if t["kind"] == "probe"]
    assert {t["session_id"] for t in probe_turns} == {last}
    assert all(t["speaker"] == "user" for t in probe_turns)
    assert all(t["session_id"] != last for t in history)
    # the harness: every dialog user turn gets its friend's line as the reply, probes none
    turns = conversation_turns(friends["turns"])
    assert sum(t.reply is not None for t in turns) == len(history) // 2
    assert [t.turn_id for t in turns if t.reply is None] == [p["turn_id"] for p in
                                                             friends["probes"]]


def test_both_friends_state_facts_about_themselves(friends):
    history = _history(friends)
    facts = Counter(t["speaker"] for t in history if t["kind"] in ("fact", "change"))
    assert min(facts.values()) >= 0.35 * sum(facts.values())
    # in the first person, both of them ("I painted ...", "my kids", "we went camping"); the
    # rest continue a fact by pronoun or name ("His name is Ravi. He's a chef ...")
    first_person = re.compile(r"\b(?:I|I'm|I've|me|my|we|we're|us|our)\b", re.IGNORECASE)
    for who in ("user", "assistant"):
        own = [t for t in history if t["speaker"] == who and t["kind"] in ("fact", "change")]
        assert len(own) >= 20
        assert sum(bool(first_person.search(t["text"])) for t in own) >= 0.8 * len(own)
    assert sum(t["kind"] == "change" for t in history if t["speaker"] == "user") >= 3
    assert sum(t["kind"] == "change" for t in history if t["speaker"] == "assistant") >= 3
    texts = [t["text"] for t in history]
    # relative dates, and turns that say something and ask back
    assert sum(bool(re.search(r"\b(?:yesterday|last \w+day|this morning|this \w+day)\b", t))
               for t in texts) >= 10
    assert sum(bool(re.search(r"[.!] [^.!?]*\?$", t)) for t in texts) >= 20


def test_probes_ask_about_both_friends_mostly_by_name(friends):
    probes = friends["probes"]
    answerable = [p for p in probes if p["expects"]]
    speaker = {t["id"]: t["speaker"] for t in friends["turns"]}
    in_friend = sum(any(speaker[i] == "assistant" for i in p["evidence"]) for p in answerable)
    in_user = sum(any(speaker[i] == "user" for i in p["evidence"]) for p in answerable)
    assert in_friend >= 0.35 * len(answerable)
    assert in_user >= 0.35 * len(answerable)
    person = Counter(p["person"] for p in probes)
    assert person["third"] > len(probes) / 2
    assert person["first"] >= 5
    about = Counter(p["about"] for p in probes)
    assert about["user"] >= 0.35 * len(probes) and about["assistant"] >= 0.35 * len(probes)


# -- evidence -----------------------------------------------------------------------------------


def test_every_expected_word_is_in_its_evidence_turns(friends):
    turns = {t["id"]: t for t in friends["turns"]}
    for p in friends["probes"]:
        assert turns[p["turn_id"]]["text"] == p["question"]
        if p["category"] == "unanswerable":
            assert p["evidence"] == [] and p["expects"] == [] and p["answer"] is None
            assert isinstance(p["tempting"], list)
            continue
        assert p["evidence"] and p["expects"] and p["answer"]
        assert all(turns[i]["kind"] != "probe" for i in p["evidence"])
        text = " ".join(turns[i]["text"] for i in p["evidence"]).lower()
        for word in p["expects"]:
            assert word.lower() in text, (p["question"], word)


def test_evidence_turns_map_to_replayed_messages(friends):
    ids = replay_message_ids(friends["turns"])
    for p in friends["probes"]:
        assert all(i in ids for i in p["evidence"]), p["question"]


def test_temporal_and_updated_probes_are_resolved(friends):
    turns = {t["id"]: t for t in friends["turns"]}
    for p in friends["probes"]:
        if p["category"] == "temporal":
            said = dt.date.fromisoformat(turns[p["evidence"][0]]["date"])
            assert abs((dt.date.fromisoformat(p["date"]) - said).days) <= 6
        if p["category"] == "updated-fact":
            assert p["changed"] and p["outdated"] and p["superseded_evidence"]
            newest = max(p["evidence"])
            assert all(old < newest for old in p["superseded_evidence"])
