"""data/evaluation/heldout_*.json: the held-out test set (issue 17, item 4).

Generated from a seed by scripts/make_heldout_conversations.py with new people, templates and
facts; no memory rule was chosen on them. These tests check that the committed files are exactly
what the script makes and that they say what data/evaluation/README.md says they do: two friends
who both state facts, sessions opened by either, two messages in a row, "both" questions, relative
dates, changed facts, near-misses for the unanswerable ones; and an assistant whose long replies
echo the user's facts without any of their own. They check the data, not the replay.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
import statistics
from collections import Counter

import pytest

from helpers.config import project_root
from helpers.evaluate import load_long_conversation

EVALUATION = project_root() / "data" / "evaluation"
NAMES = ("heldout_two_person", "heldout_assistant")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "updated-fact", "unanswerable")
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


# the value slots of the tuned files (make_hard_conversation.py, make_friends_conversation.py)
# that name a person, a pet or a place
PEOPLE_AND_PLACES = {"sister", "partner", "friend", "cat", "dog", "nephew", "city1", "city2",
                     "hometown", "U", "F", "u_partner", "u_cat", "u_brother", "f_husband",
                     "f_kid1", "f_kid2", "f_dog", "u_city1", "u_city2", "f_mum_town"}


@pytest.fixture(scope="module")
def script():
    path = project_root() / "scripts" / "make_heldout_conversations.py"
    spec = importlib.util.spec_from_file_location("make_heldout_conversations", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def data():
    return {name: load_long_conversation(EVALUATION / f"{name}.json") for name in NAMES}


@pytest.fixture(scope="module")
def two(data):
    return data["heldout_two_person"]


@pytest.fixture(scope="module")
def helper(data):
    return data["heldout_assistant"]


def _history(conversation):
    return [t for t in conversation["turns"] if t["kind"] != "probe"]


def _session_openers(conversation):
    first: dict[str, str] = {}
    for t in _history(conversation):
        first.setdefault(t["session_id"], t["speaker"])
    return first


# -- generated, deterministic, marked held out --------------------------------------------------


def test_files_are_exactly_what_the_seed_generates(script, data):
    made = script.generate_all(7)
    again = script.generate_all(7)  # twice: no hidden state
    for name in NAMES:
        committed = (EVALUATION / f"{name}.json").read_text(encoding="utf-8")
        assert data[name]["seed"] == 7
        assert script.render(made[name]) == committed
        assert script.render(again[name]) == committed
    assert script.main(["--check"]) == 0


def test_check_flag_fails_on_a_changed_file(script, tmp_path, capsys):
    for name, conversation in script.generate_all(7).items():
        (tmp_path / f"{name}.json").write_text(script.render(conversation), encoding="utf-8")
    assert script.main(["--check", "--out", str(tmp_path)]) == 0
    path = tmp_path / "heldout_assistant.json"
    path.write_text(path.read_text(encoding="utf-8").replace("tortoise", "turtle"),
                    encoding="utf-8")
    assert script.main(["--check", "--out", str(tmp_path)]) == 1
    assert "differs" in capsys.readouterr().out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_seeds_make_other_conversations_of_the_same_shape(script, data, seed):
    other = script.generate_all(seed)  # runs the script's self-check too
    for name in NAMES:
        assert other[name]["values"] != data[name]["values"]
        assert Counter(p["category"] for p in other[name]["probes"]) == Counter(
            p["category"] for p in data[name]["probes"])


def test_marked_held_out_in_the_data_and_the_readme(data):
    for name, conversation in data.items():
        assert conversation["held_out"] is True
        assert conversation["id"] == name
        assert "no rule or number" in conversation["description"]
        for key in ("turns", "probes", "system", "user_id", "speakers", "sessions", "facts"):
            assert key in conversation
    readme = (EVALUATION / "README.md").read_text(encoding="utf-8")
    assert "## The held-out conversations" in readme
    for name in NAMES:
        assert f"{name}.json" in readme


def test_no_names_from_the_tuned_conversations(data):
    """New people and places: no name the tuned files' seed picked (speakers, relatives,
    partners, pets, cities) appears in a held-out file."""
    tuned = ("hard_conversation", "friends_conversation")
    names = set()
    for name in tuned:
        tuned_data = load_long_conversation(EVALUATION / f"{name}.json")
        names |= {n for n in tuned_data["speakers"].values() if n != "the assistant"}
        names |= {v for k, v in tuned_data["values"].items() if k in PEOPLE_AND_PLACES}
    for conversation in data.values():
        text = " ".join(t["text"] for t in conversation["turns"])
        assert not [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)]


# -- the shape both files share -----------------------------------------------------------------


@pytest.mark.parametrize("name, lines, sessions, probes",
                         [("heldout_two_person", 600, 20, (80, 120)),
                          ("heldout_assistant", 400, 15, (50, 120))])
def test_sizes_sessions_and_dates(data, name, lines, sessions, probes):
    conversation = data[name]
    assert len(_history(conversation)) >= lines
    assert len(conversation["sessions"]) - 1 >= sessions
    dates = [dt.date.fromisoformat(s["date"]) for s in conversation["sessions"]]
    assert all(a < b for a, b in zip(dates, dates[1:], strict=False))
    assert all(s["weekday"] == WEEKDAYS[d.weekday()]
               for s, d in zip(conversation["sessions"], dates, strict=True))
    ids = [t["id"] for t in conversation["turns"]]
    assert ids == [f"t{i:03d}" for i in range(1, len(ids) + 1)]
    by_id = {s["id"]: s["date"] for s in conversation["sessions"]}
    assert all(t["date"] == by_id[t["session_id"]] for t in conversation["turns"])
    assert all(t["speaker"] in ("user", "assistant") for t in conversation["turns"])
    assert probes[0] <= len(conversation["probes"]) <= probes[1]
    counts = Counter(p["category"] for p in conversation["probes"])
    assert set(counts) == set(CATEGORIES) and min(counts.values()) >= 9


@pytest.mark.parametrize("name", NAMES)
def test_probes_are_asked_in_a_final_new_session(data, name):
    conversation = data[name]
    last = conversation["sessions"][-1]["id"]
    probe_turns = [t for t in conversation["turns"] if t["kind"] == "probe"]
    assert [t["id"] for t in probe_turns] == [p["turn_id"] for p in conversation["probes"]]
    assert all(t["session_id"] == last and t["speaker"] == "user" for t in probe_turns)
    assert all(t["session_id"] != last for t in _history(conversation))


@pytest.mark.parametrize("name", NAMES)
def test_evidence_exists_precedes_the_probe_and_carries_the_expected_words(data, name):
    conversation = data[name]
    turns = {t["id"]: t for t in conversation["turns"]}
    position = {t["id"]: i for i, t in enumerate(conversation["turns"])}
    for p in conversation["probes"]:
        assert turns[p["turn_id"]]["text"] == p["question"]
        assert p["changed"] == (p["category"] == "updated-fact")
        if p["category"] == "unanswerable":
            assert p["evidence"] == [] and p["expects"] == [] and p["answer"] is None
            continue
        assert p["evidence"] and p["expects"] and p["answer"]
        for i in p["evidence"]:
            assert i in turns and position[i] < position[p["turn_id"]], (p["question"], i)
            assert turns[i]["kind"] in ("fact", "change") and turns[i]["facts"]
        text = " ".join(turns[i]["text"] for i in p["evidence"]).lower()
        for word in p["expects"]:
            assert word.lower() in text, (p["question"], word)
    keys = {k for t in _history(conversation) for k in t["facts"]}
    assert keys <= set(conversation["facts"])


def _resolve(phrase: str, said: dt.date) -> dt.date:
    """The date a relative phrase means, said on ``said`` (data/evaluation/README.md's rules)."""
    fixed = {"yesterday": -1, "the day before yesterday": -2, "this morning": 0}
    if phrase in fixed:
        return said + dt.timedelta(days=fixed[phrase])
    which, weekday = phrase.split()
    step = -1 if which == "last" else 1
    days = [said + dt.timedelta(days=step * n) for n in range(2, 7)]
    (day,) = [d for d in days if WEEKDAYS[d.weekday()] == weekday]
    return day


@pytest.mark.parametrize("name", NAMES)
def test_temporal_probes_resolve_against_the_session_date(data, name):
    conversation = data[name]
    turns = {t["id"]: t for t in conversation["turns"]}
    temporal = [p for p in conversation["probes"] if p["category"] == "temporal"]
    assert len(temporal) >= 9
    for p in temporal:
        phrase = p["expects"][-1]
        assert re.fullmatch(r"yesterday|the day before yesterday|this morning|"
                            r"(?:last|this) \w+day", phrase), p
        said = dt.date.fromisoformat(turns[p["evidence"][0]]["date"])
        assert _resolve(phrase, said).isoformat() == p["date"] == p["answer"], p["question"]


@pytest.mark.parametrize("name", NAMES)
def test_updated_facts_name_the_old_value_said_before(data, name):
    conversation = data[name]
    turns = {t["id"]: t for t in conversation["turns"]}
    for p in conversation["probes"]:
        if p["category"] != "updated-fact":
            continue
        assert p["outdated"] and p["superseded_evidence"]
        assert max(p["superseded_evidence"]) < max(p["evidence"])
        old = " ".join(turns[i]["text"] for i in p["superseded_evidence"]).lower()
        assert all(word.lower() in old for word in p["outdated"]), p["question"]
        assert any(turns[i]["kind"] == "change" for i in p["evidence"]), p["question"]


@pytest.mark.parametrize("name", NAMES)
def test_unanswerable_probes_have_near_misses_in_the_chat(data, name):
    conversation = data[name]
    text = " ".join(t["text"] for t in _history(conversation)).lower()
    unanswerable = [p for p in conversation["probes"] if p["category"] == "unanswerable"]
    assert len(unanswerable) >= 9
    for p in unanswerable:
        assert p["tempting"], p["question"]
        assert all(word.lower() in text for word in p["tempting"]), p["question"]


# -- two people ---------------------------------------------------------------------------------


def test_two_people_both_state_facts_about_themselves(two):
    history = _history(two)
    assert set(two["speakers"]) == {"user", "assistant"}
    assert "assistant" not in two["speakers"]["assistant"].lower()
    facts = Counter(t["speaker"] for t in history if t["kind"] in ("fact", "change"))
    assert min(facts.values()) >= 0.35 * sum(facts.values())
    first_person = re.compile(r"\b(?:I|I'm|I've|me|my|we|we're|our)\b", re.IGNORECASE)
    for who in ("user", "assistant"):
        own = [t for t in history if t["speaker"] == who and t["kind"] in ("fact", "change")]
        assert len(own) >= 20
        assert sum(bool(first_person.search(t["text"])) for t in own) >= 0.7 * len(own)
        assert sum(t["kind"] == "change" for t in own) >= 3
    speaker = {t["id"]: t["speaker"] for t in two["turns"]}
    answerable = [p for p in two["probes"] if p["expects"]]
    for who in ("user", "assistant"):
        assert sum(any(speaker[i] == who for i in p["evidence"]) for p in answerable) >= (
            0.35 * len(answerable))


def test_sessions_open_with_either_speaker(two):
    openers = Counter(_session_openers(two).values())
    assert openers["assistant"] >= len(two["sessions"][:-1]) / 3
    assert openers["user"] >= len(two["sessions"][:-1]) / 3


def test_two_messages_in_a_row_and_facts_split_over_them(two):
    history = _history(two)
    pairs = [(a, b) for a, b in zip(history, history[1:], strict=False)
             if a["speaker"] == b["speaker"] and a["session_id"] == b["session_id"]]
    assert len(pairs) >= 30
    assert {a["speaker"] for a, _ in pairs} == {"user", "assistant"}
    # a fact split over two messages: its second half right after the same speaker's line
    split = [b for a, b in pairs if b["kind"] in ("fact", "change")]
    assert len(split) >= 5 and {b["speaker"] for b in split} == {"user", "assistant"}
    turns = {t["id"]: t for t in two["turns"]}
    two_lines = [p for p in two["probes"] if p["category"] == "single-hop"
                 and len(p["evidence"]) == 2
                 and len({turns[i]["speaker"] for i in p["evidence"]}) == 1]
    assert two_lines


def test_probes_mostly_by_name_with_both_questions(two):
    probes = two["probes"]
    names = list(two["speakers"].values())
    person = Counter(p["person"] for p in probes)
    assert person["third"] > 0.6 * len(probes)
    assert person["first"] >= 3 and person["second"] >= 3
    assert sum(bool(re.match(r"(?:When|Where|What|How|Who|Why|Which)\b", p["question"]))
               for p in probes) >= 0.8 * len(probes)
    speaker = {t["id"]: t["speaker"] for t in two["turns"]}
    both = [p for p in probes if " both " in p["question"]]
    assert len(both) >= 4
    for p in both:
        assert all(n in p["question"] for n in names)
        assert sorted(speaker[i] for i in p["evidence"]) == ["assistant", "user"]
        assert p["about"] == "both" and p["category"] == "multi-hop"


def test_relative_dates_are_said_by_both(two):
    turns = {t["id"]: t for t in two["turns"]}
    temporal = [p for p in two["probes"] if p["category"] == "temporal"]
    assert len(temporal) >= 15
    assert {turns[p["evidence"][0]]["speaker"] for p in temporal} == {"user", "assistant"}


# -- a user and a real-sounding assistant -------------------------------------------------------


def test_assistant_lines_alternate_and_only_the_user_has_facts(helper):
    history = _history(helper)
    assert [t["speaker"] for t in history] == ["user", "assistant"] * (len(history) // 2)
    replies = [t for t in history if t["speaker"] == "assistant"]
    assert all(t["kind"] == "reply" and t["facts"] == [] for t in replies)
    turns = {t["id"]: t for t in helper["turns"]}
    for p in helper["probes"]:
        assert p["about"] == "user"
        assert all(turns[i]["speaker"] == "user" for i in p["evidence"])
    assert sum(t["kind"] == "change" for t in history) >= 6


def test_assistant_replies_read_like_a_real_model(helper):
    replies = [t["text"] for t in _history(helper) if t["speaker"] == "assistant"]
    assert statistics.median(len(r) for r in replies) >= 200
    sentences = [len(re.findall(r"[.!?](?:\s|$)", r)) for r in replies]
    assert sum(n >= 3 for n in sentences) >= 0.6 * len(replies)
    joined = "\n".join(replies)
    for phrase in ("I'd be happy to", "I think", "I remember you said", "I'd suggest"):
        assert phrase in joined, phrase
    assert sum("\n- " in r or "\n1. " in r for r in replies) >= 0.4 * len(replies)
    # never a personal fact of its own
    own = re.compile(r"\b(?:I live|I work|I grew up|I was born|I have a|my (?:wife|husband|"
                     r"partner|son|daughter|dog|cat|job|sister|brother|mum|dad))\b", re.I)
    assert not [r for r in replies if own.search(r)]


def test_assistant_echoes_the_users_facts(helper):
    """The trap: a reply restates the fact just told, so the expected words are often in an
    assistant line too, which is never evidence."""
    history = _history(helper)
    echoed = [b for a, b in zip(history, history[1:], strict=False)
              if a["kind"] in ("fact", "change")
              and set(re.findall(r"[A-Z][a-z]{3,}", a["text"][1:]))
              & set(re.findall(r"[A-Z][a-z]{3,}", b["text"]))]
    assert len(echoed) >= 15
    assert sum("I remember you" in t["text"] for t in history) >= 5
    replies = " ".join(t["text"] for t in history if t["speaker"] == "assistant").lower()
    answerable = [p for p in helper["probes"] if p["expects"]]
    in_a_reply = [p for p in answerable if all(w.lower() in replies for w in p["expects"])]
    assert len(in_a_reply) >= 0.3 * len(answerable)
