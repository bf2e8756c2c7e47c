"""The evaluation conversations in data/evaluation/: the hard one and the Korean twin of the easy one.

Both are generated from a seed by scripts in scripts/; these tests check that the committed files
are exactly what the scripts make, and that the data says what data/evaluation/README.md says it
does (counts, dates, evidence that really carries the answer).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
from collections import Counter

import pytest

from helpers.config import project_root
from helpers.evaluate import load_long_conversation

EVALUATION = project_root() / "data" / "evaluation"
CATEGORIES = ("single-hop", "multi-hop", "temporal", "updated-fact", "unanswerable")


def _script(name: str):
    path = project_root() / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hard_script():
    return _script("make_hard_conversation")


@pytest.fixture(scope="module")
def easy_script():
    return _script("make_long_conversation")


@pytest.fixture(scope="module")
def hard():
    return load_long_conversation(EVALUATION / "hard_conversation.json")


@pytest.fixture(scope="module")
def korean():
    return load_long_conversation(EVALUATION / "long_conversation_ko.json")


# -- generated, deterministic -------------------------------------------------------------------


def test_hard_file_is_exactly_what_its_seed_generates(hard_script, hard):
    committed = (EVALUATION / "hard_conversation.json").read_text(encoding="utf-8")
    assert hard["seed"] == 7
    assert hard_script.render(hard_script.generate(7)) == committed
    assert hard_script.render(hard_script.generate(7)) == committed  # twice: no hidden state
    assert hard_script.main(["--check"]) == 0


def test_hard_check_flag_fails_on_a_changed_file(hard_script, tmp_path, capsys):
    copy = tmp_path / "hard.json"
    copy.write_text(hard_script.render(hard_script.generate(7)), encoding="utf-8")
    assert hard_script.main(["--check", "--out", str(copy)]) == 0
    copy.write_text(copy.read_text(encoding="utf-8").replace("Mina", "Mona", 1), encoding="utf-8")
    assert hard_script.main(["--check", "--out", str(copy)]) == 1
    assert "differs" in capsys.readouterr().out


def test_another_seed_makes_another_conversation_of_the_same_shape(hard_script, hard):
    other = hard_script.generate(8)
    assert other != hard
    assert len(other["turns"]) == len(hard["turns"])
    assert Counter(p["category"] for p in other["probes"]) == Counter(
        p["category"] for p in hard["probes"])


def test_korean_twin_and_english_file_are_what_the_script_generates(easy_script):
    for lang, name in (("en", "long_conversation.json"), ("ko", "long_conversation_ko.json")):
        committed = (EVALUATION / name).read_text(encoding="utf-8")
        assert easy_script.render(easy_script.generate(7, lang=lang)) == committed
        assert easy_script.main(["--check", "--lang", lang]) == 0


# -- the hard conversation: size, sessions, dates ------------------------------------------------


def test_hard_has_enough_turns_over_enough_dated_sessions(hard):
    history = [t for t in hard["turns"] if t["kind"] != "probe"]
    assert len(history) == 540
    assert len(hard["turns"]) == 540 + len(hard["probes"])
    sessions = hard["sessions"]
    assert len(sessions) == 19  # 18 of conversation, 1 of probes
    dates = [dt.date.fromisoformat(s["date"]) for s in sessions]
    assert all(a < b for a, b in zip(dates, dates[1:], strict=False))
    assert all(s["weekday"] == d.strftime("%A") for s, d in zip(sessions, dates, strict=True))
    by_id = {s["id"]: s["date"] for s in sessions}
    ids = [t["id"] for t in hard["turns"]]
    assert ids == [f"t{i:03d}" for i in range(1, len(ids) + 1)]
    for turn in hard["turns"]:
        assert turn["date"] == by_id[turn["session_id"]]
    # sessions are contiguous and every probe is in the last, new session
    order = [t["session_id"] for t in hard["turns"]]
    assert order == sorted(order, key=lambda s: int(s.split("-")[1]))
    assert {t["session_id"] for t in hard["turns"] if t["kind"] == "probe"} == {"session-19"}
    assert all(t["kind"] == "probe" for t in hard["turns"] if t["session_id"] == "session-19")


def test_hard_has_two_speakers_taking_turns(hard):
    history = [t for t in hard["turns"] if t["kind"] != "probe"]
    assert [t["speaker"] for t in history] == ["user", "assistant"] * (len(history) // 2)
    assert all(t["kind"] == "reply" for t in history if t["speaker"] == "assistant")
    assert all(t["speaker"] == "user" for t in hard["turns"] if t["kind"] == "probe")
    # the assistant never speaks about itself as if it were the user
    for turn in history:
        if turn["speaker"] == "assistant":
            assert not re.search(r"\b(?:I'm Mina|my (?:dog|sister|job|flat))\b", turn["text"])


def test_hard_states_facts_indirectly_split_by_pronoun_and_with_relative_dates(hard):
    user = [t for t in hard["turns"] if t["speaker"] == "user" and t["kind"] != "probe"]
    texts = [t["text"] for t in user]
    # no crisp "My job is ..." statements: the job is told in passing
    assert not any(re.match(r"My (?:job|name) is", t) for t in texts)
    assert any("teaching" in t and "six years" in t for t in texts)
    # a fact split over two of the user's turns: the dog, then her name by pronoun
    adopt = next(i for i, t in enumerate(user) if "adopted a dog" in t["text"])
    assert user[adopt + 1]["text"].startswith("A she! We named her ")
    assert re.search(r"\blast (?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b", user[adopt]["text"])
    assert sum("yesterday" in t or "last " in t or "this morning" in t for t in texts) >= 6
    # facts that change, and questions that look like probes but carry no answer
    assert sum(t["kind"] == "change" for t in user) >= 6
    assert sum(t["kind"] == "question" for t in user) >= 15
    assert sum(t["kind"] == "filler" for t in user) >= 150


def test_hard_keeps_the_easy_files_top_level_keys_and_lists_every_fact(hard):
    easy = load_long_conversation()
    assert set(easy) <= set(hard)
    used = {key for turn in hard["turns"] for key in turn["facts"]}
    assert used == set(hard["facts"])
    changed = {k for k, v in hard["facts"].items() if v["changed_to"]}
    assert changed == {"job", "city", "commute", "running_club", "phone", "diet", "trip"}
    assert hard["facts"]["city"] == {"value": hard["values"]["city1"],
                                     "changed_to": hard["values"]["city2"]}
    for key in changed:  # stated once, then changed in a later session
        carrying = [t for t in hard["turns"] if key in t["facts"]]
        assert len(carrying) >= 2 and carrying[0]["session_id"] != carrying[-1]["session_id"]


# -- the hard conversation: probes ---------------------------------------------------------------


def test_hard_probe_counts_per_category(hard):
    counts = Counter(p["category"] for p in hard["probes"])
    assert counts == {"single-hop": 42, "multi-hop": 24, "temporal": 18, "updated-fact": 18,
                      "unanswerable": 18}
    assert sum(counts.values()) >= 100
    people = Counter(p["person"] for p in hard["probes"])
    assert people["first"] >= 40 and people["third"] >= 30
    # similar questions are asked more than once (the same evidence, another wording)
    asked = Counter(tuple(p["evidence"]) for p in hard["probes"] if p["evidence"])
    assert sum(n > 1 for n in asked.values()) >= 20


def test_every_probe_points_at_its_own_turn_and_at_earlier_evidence(hard):
    turns = {t["id"]: (i, t) for i, t in enumerate(hard["turns"])}
    assert len({p["id"] for p in hard["probes"]}) == len(hard["probes"])
    for probe in hard["probes"]:
        assert probe["category"] in CATEGORIES
        at, turn = turns[probe["turn_id"]]
        assert turn["kind"] == "probe" and turn["text"] == probe["question"]
        for evidence in probe["evidence"]:
            before, stated = turns[evidence]
            assert before < at
            assert stated["speaker"] == "user" and stated["kind"] in ("fact", "change")


def test_evidence_turns_contain_the_expected_words(hard):
    turns = {t["id"]: t for t in hard["turns"]}
    for probe in hard["probes"]:
        if probe["category"] == "unanswerable":
            continue
        assert probe["expects"], probe["id"]
        text = " ".join(turns[e]["text"] for e in probe["evidence"]).lower()
        missing = [w for w in probe["expects"] if w.lower() not in text]
        assert not missing, (probe["id"], probe["question"], missing)
        assert probe["answer"]


def test_every_evidence_turn_is_there_for_a_reason(hard):
    """Each evidence turn holds an expected word, or a name or word the question is about, or
    opens a fact the next evidence turn finishes by pronoun ("I adopted a dog" ... "We named
    her Luna"), or is the bridge of a multi-hop question (it shares a name with another evidence
    turn: "Junho proposed" links "my fiancé" to "Junho ... He's ... architects")."""
    user_turns = [t["id"] for t in hard["turns"] if t["speaker"] == "user"]
    turns = {t["id"]: t for t in hard["turns"]}
    names = set(hard["values"].values())
    for probe in hard["probes"]:
        about = f"{probe['question']} {probe['answer']}".lower()
        words = {w for w in re.findall(r"[a-zé]{5,}", about)} | {
            n.lower() for n in names if n.lower() in about}
        for evidence in probe["evidence"]:
            text = turns[evidence]["text"].lower()
            nxt = user_turns[user_turns.index(evidence) + 1]
            others = " ".join(turns[e]["text"] for e in probe["evidence"] if e != evidence)
            bridge = any(n in turns[evidence]["text"] and n in others for n in names)
            assert (any(w.lower() in text for w in probe["expects"])
                    or any(w[:5] in text for w in words)
                    or nxt in probe["evidence"] or bridge), (probe["id"], probe["question"],
                                                              evidence)


def test_a_known_probe_of_each_kind_has_the_right_values(hard):
    values = hard["values"]
    by_question = {p["question"]: p for p in hard["probes"]}
    turns = {t["id"]: t for t in hard["turns"]}
    dog = by_question["What is the name of Mina's dog?"]
    assert dog["category"] == "single-hop" and dog["expects"] == [values["dog"]]
    assert len(dog["evidence"]) == 2
    assert "adopted a dog" in turns[dog["evidence"][0]]["text"]
    assert f"We named her {values['dog']}" in turns[dog["evidence"][1]]["text"]
    moved = by_question["Which city does Mina live in now?"]
    assert moved["expects"] == [values["city2"]] and moved["outdated"] == [values["city1"]]
    assert values["city1"] in turns[moved["superseded_evidence"][0]]["text"]
    fiance = by_question["What does my fiancé do for a living?"]
    assert fiance["category"] == "multi-hop" and len(fiance["evidence"]) == 3
    cat = by_question["What's my cat's name?"]
    assert cat["evidence"] == [] and cat["expects"] == [] and cat["tempting"] == [values["cat"]]


def test_unanswerable_probes_have_no_evidence_and_the_others_do(hard):
    for probe in hard["probes"]:
        if probe["category"] == "unanswerable":
            assert probe["evidence"] == [] and probe["expects"] == [] and probe["answer"] is None
        else:
            assert probe["evidence"] and probe["expects"]
    multi = [p for p in hard["probes"] if p["category"] == "multi-hop"]
    assert all(len(p["evidence"]) >= 2 for p in multi)


def test_temporal_probes_resolve_the_relative_date_against_the_session_date(hard):
    turns = {t["id"]: t for t in hard["turns"]}
    offsets = {"yesterday": 1, "the day before yesterday": 2, "this morning": 0}
    temporal = [p for p in hard["probes"] if p["category"] == "temporal"]
    assert len(temporal) == 18
    for probe in temporal:
        day = dt.date.fromisoformat(probe["date"])
        stated = turns[probe["evidence"][0]]
        session_day = dt.date.fromisoformat(stated["date"])
        phrase = probe["expects"][1]
        assert phrase in stated["text"]
        if phrase in offsets:
            assert day == session_day - dt.timedelta(days=offsets[phrase])
        else:  # "last Tuesday": 2-6 days before; "this Saturday": 2-6 days after
            direction, weekday = phrase.split()
            assert day.strftime("%A") == weekday
            gap = (session_day - day).days if direction == "last" else (day - session_day).days
            assert 2 <= gap <= 6
        if re.fullmatch(r"\d{4}-\d\d-\d\d", probe["answer"]):
            assert probe["answer"] == probe["date"]


def test_updated_fact_probes_expect_the_newest_value(hard):
    turns = {t["id"]: (i, t) for i, t in enumerate(hard["turns"])}
    updated = [p for p in hard["probes"] if p["category"] == "updated-fact"]
    assert len(updated) == 18
    for probe in updated:
        assert probe["outdated"] and probe["superseded_evidence"]
        newest = max(turns[e][0] for e in probe["evidence"])
        for old in probe["superseded_evidence"]:
            at, turn = turns[old]
            assert at < newest
            assert any(w.lower() in turn["text"].lower() for w in probe["outdated"])
        assert not set(map(str.lower, probe["outdated"])) & set(map(str.lower, probe["expects"]))


# -- the Korean twin -----------------------------------------------------------------------------


def test_korean_twin_loads_and_mirrors_the_english_conversation(korean):
    english = load_long_conversation()
    assert korean["language"] == "ko" and english["language"] == "en"
    assert korean["user_id"] != english["user_id"]
    assert len(korean["probes"]) == len(english["probes"]) == 40
    assert len(korean["turns"]) == len(english["turns"]) == 300
    # the same turn is a fact, a change, a probe or a filler in both
    assert [(t["id"], t["session_id"], t["kind"]) for t in korean["turns"]] == [
        (t["id"], t["session_id"], t["kind"]) for t in english["turns"]]
    assert [(p["turn_id"], p["fact"], p["evidence"], p["changed"]) for p in korean["probes"]] == [
        (p["turn_id"], p["fact"], p["evidence"], p["changed"]) for p in english["probes"]]


def test_korean_twin_is_korean_and_its_evidence_holds_the_expected_words(korean):
    turns = {t["id"]: t for t in korean["turns"]}
    hangul = re.compile(r"[가-힣]")
    assert all(hangul.search(t["text"]) for t in korean["turns"] if t["kind"] != "filler")
    assert all(hangul.search(p["question"]) for p in korean["probes"])
    assert turns["t001"]["text"] == f"제 이름은 {korean['facts']['name']['value']}예요."
    for probe in korean["probes"]:
        assert probe["expects"] and all(hangul.search(w) or w.isdigit() for w in probe["expects"])
        for evidence in probe["evidence"]:
            assert all(w in turns[evidence]["text"] for w in probe["expects"])
        assert turns[probe["turn_id"]]["text"] == probe["question"]


def test_korean_particles_follow_the_final_consonant(easy_script):
    josa = easy_script._josa
    assert josa("제 이름은 {v}{이에요}.", "민수") == "제 이름은 민수예요."
    assert josa("제 이름은 {v}{이에요}.", "서준") == "제 이름은 서준이에요."
    assert josa("저는 {v}{으로} 일해요.", "간호사") == "저는 간호사로 일해요."
    assert josa("얼마 전에 {v}{으로} 이사했어요.", "서울") == "얼마 전에 서울로 이사했어요."
    assert josa("얼마 전에 {v}{으로} 이사했어요.", "리스본") == "얼마 전에 리스본으로 이사했어요."
    assert josa("저는 {v}{을} 타요.", "볼보 왜건") == "저는 볼보 왜건을 타요."
    assert josa("제 신발 사이즈는 {v}{이에요}.", "275") == "제 신발 사이즈는 275예요."
    assert josa("제 신발 사이즈는 {v}{이에요}.", "240") == "제 신발 사이즈는 240이에요."


def test_the_offline_model_answers_the_korean_phrasings(korean):
    """The stand-in (helpers/course/offline_model.py) finds each Korean fact when it is in the prompt."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from helpers.course.offline_model import OfflineChatModel

    model = OfflineChatModel()
    # by meaning, e5-small ranks "얼마 전에 산티아고로 이사했어요" (I moved) below the threshold for
    # "제가 어디에 살아요?" (where do I live): the stand-in says it does not know (its card: no reasoning)
    known_miss = {"제가 어디에 살아요?"}
    turns = {t["id"]: t for t in korean["turns"]}
    for probe in korean["probes"]:
        messages = [SystemMessage(korean["system"])]
        for evidence in probe["evidence"]:
            messages += [HumanMessage(turns[evidence]["text"]), AIMessage("알겠어요.")]
        messages += [HumanMessage("하늘은 왜 파란색이에요?"), AIMessage("빛이 산란돼서요."),
                     HumanMessage(probe["question"])]
        reply = model.invoke(messages).text
        if probe["question"] in known_miss:
            assert reply.startswith("모르겠어요"), reply
            continue
        assert all(w in reply for w in probe["expects"]), (probe["question"], reply)


@pytest.mark.parametrize("seed", [1, 2, 3, 42])
def test_other_seeds_keep_every_property(hard_script, seed):
    """Another seed picks other names, dates and places: the same checks hold."""
    data = hard_script.generate(seed)
    for check in (test_hard_has_enough_turns_over_enough_dated_sessions,
                  test_hard_has_two_speakers_taking_turns,
                  test_hard_states_facts_indirectly_split_by_pronoun_and_with_relative_dates,
                  test_hard_keeps_the_easy_files_top_level_keys_and_lists_every_fact,
                  test_hard_probe_counts_per_category,
                  test_every_probe_points_at_its_own_turn_and_at_earlier_evidence,
                  test_evidence_turns_contain_the_expected_words,
                  test_every_evidence_turn_is_there_for_a_reason,
                  test_a_known_probe_of_each_kind_has_the_right_values,
                  test_unanswerable_probes_have_no_evidence_and_the_others_do,
                  test_temporal_probes_resolve_the_relative_date_against_the_session_date,
                  test_updated_fact_probes_expect_the_newest_value):
        check(data)
