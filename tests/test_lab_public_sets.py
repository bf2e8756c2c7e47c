"""The public-set converter (lab.public_sets) on small synthetic files in the raw shapes
of LoCoMo and BEAM (built here: nothing of either set is in this repository)."""

import json
import zipfile

import pytest

from helpers.evaluate import evaluate_strategy, load_long_conversation, replay_message_ids
from helpers.tokens import count_text_tokens
from helpers.window import FullHistory
from lab import public_sets


def locomo_conversation(a="Ann", b="Bo"):
    return {
        "speaker_a": a,
        "speaker_b": b,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": b, "dia_id": "D1:1", "text": "Hi Ann! How was the weekend?"},
            {"speaker": a, "dia_id": "D1:2", "text": "Great, I adopted a cat called Miso."},
            {
                "speaker": b,
                "dia_id": "D1:3",
                "text": "Look at my new bike!",
                "blip_caption": "a photo of a red bicycle",
                "img_url": ["x"],
            },
        ],
        "session_2_date_time": "10:00 am on 2 June, 2023",
        "session_2": [
            {"speaker": a, "dia_id": "D2:1", "text": "I moved to Lyon last week."},
            {"speaker": a, "dia_id": "D2:2", "text": "Still unpacking."},
            {"speaker": b, "dia_id": "D2:3", "text": "Congrats! I started a pottery class."},
        ],
    }


QA = [
    {"question": "What is Ann's cat called?", "answer": "Miso", "evidence": ["D1:2"], "category": 4},
    {"question": "Where does Ann live?", "answer": "Lyon", "evidence": ["D2:01"], "category": 4},
    {
        "question": "What did Bo start and ride?",
        "answer": "pottery, a red bike",
        "evidence": ["D2:3; D1:3"],
        "category": 1,
    },
    {
        "question": "What is Bo's dog called?",
        "adversarial_answer": "Rex",
        "evidence": ["D1:1"],
        "category": 5,
    },
    {"question": "When did Ann go to Rome?", "answer": "2022", "evidence": ["D9:9"], "category": 2},
    {"question": "Who knows?", "answer": 7, "evidence": [], "category": 3},
]


def test_locomo_json_lines_dates_evidence_and_skips(tmp_path):
    path = tmp_path / "locomo10.json"
    samples = [
        {"sample_id": "conv-26", "conversation": locomo_conversation("Never", "Read"), "qa": QA},
        {"sample_id": "conv-41", "conversation": locomo_conversation(), "qa": QA},
    ]
    path.write_text(json.dumps(samples), encoding="utf-8")
    [(number, sample)] = list(public_sets.read_locomo(path, [41]))
    assert number == 41 and sample["conversation"]["speaker_a"] == "Ann"
    conv = public_sets.convert_locomo(sample, number)
    dialog = [t for t in conv["turns"] if t.get("kind") != "probe"]
    assert [t["id"] for t in dialog] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert [t["speaker"] for t in dialog] == ["assistant", "user", "assistant", "user", "user", "assistant"]
    assert dialog[0]["date"] == "2023-05-08" and dialog[3]["date"] == "2023-06-02"
    assert dialog[2]["text"] == "Look at my new bike! [shares a photo: a photo of a red bicycle]"
    assert conv["speakers"] == {"user": "Ann", "assistant": "Bo"}
    probes = {p["question"]: p for p in conv["probes"]}
    assert probes["Where does Ann live?"]["evidence"] == ["D2:1"]  # "D2:01" read as D2:1
    assert probes["What did Bo start and ride?"]["evidence"] == ["D2:3", "D1:3"]  # "D2:3; D1:3"
    assert probes["What did Bo start and ride?"]["category"] == "multi-hop"
    dog = probes["What is Bo's dog called?"]
    assert (dog["category"], dog["evidence"], dog["expects"], dog["tempting"]) == (
        "unanswerable",
        [],
        [],
        ["Rex"],
    )
    assert [(s["category"], s["reason"].split(" (")[0]) for s in conv["skipped"]] == [
        ("temporal", "no evidence line found"),
        ("open-domain", "no evidence line found"),
    ]
    session_3 = [t for t in conv["turns"] if t["session_id"] == "session-3"]
    assert len(session_3) == 4 and {t["date"] for t in session_3} == {"2023-06-03"}


def test_locomo_zip_only_asked_members_and_replays(tmp_path):
    path = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for n in (26, 41, 42):
            archive.writestr(
                f"data/multimodal_dialog/locomo10_v2/{n}.json",
                json.dumps({**locomo_conversation(), "qa": QA}),
            )
    assert [n for n, _ in public_sets.read_locomo(path, [41, 42])] == [41, 42]
    out = tmp_path / "out"
    assert public_sets.main(["--out", str(out), "--locomo", str(path), "--conversations", "42"]) == 0
    [written] = out.glob("*.json")
    conv = load_long_conversation(written)
    assert conv["id"] == "locomo_conv_42" and "CC BY-NC 4.0" in conv["source"]["licence"]
    ids = replay_message_ids(conv["turns"])
    assert all(e in ids for p in conv["probes"] for e in p["evidence"])
    from helpers.course.offline_model import OfflineChatModel

    records = evaluate_strategy(FullHistory(), conv, OfflineChatModel(), progress=False)
    answerable = [r for r in records if r.probe]
    assert len(answerable) == 3 and all(r.evidence_reached for r in answerable)


def beam_chat():
    def msg(i, role, text, **kw):
        return {"role": role, "id": str(i), "content": text, **kw}

    return [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    msg(
                        0,
                        "user",
                        "I use tabs, never spaces. ->-> 1,1",
                        time_anchor="January-05-2024",
                        index="1,1",
                        question_type="main_question",
                    ),
                    msg(1, "assistant", "Noted: tabs. " + "Here is a long answer. " * 40),
                ],
                [msg(2, "user", "My deadline is March 1, 2024. ->-> 1,2"), msg(3, "assistant", "Got it.")],
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": None,
            "turns": [
                [msg(4, "user", "The deadline moved to March 8, 2024 ->-> 2,1"), msg(5, "assistant", "")],
                [msg(6, "user", "Thanks"), msg(7, "assistant", "You're welcome.")],
            ],
        },
    ]


BEAM_QUESTIONS = {
    "abstention": [{"question": "What did my manager say?", "ideal_response": "No information."}],
    "information_extraction": [
        {"question": "What deadline did I set?", "answer": "March 1, 2024", "source_chat_ids": "[2]"}
    ],
    "knowledge_update": [
        {
            "question": "What is my deadline now?",
            "answer": "March 8, 2024",
            "source_chat_ids": "{'original_info': [2], 'updated_info': [4]}",
        },
        {"question": "Which editor now?", "answer": "vim"},
    ],
    "instruction_following": [
        {"question": "Indent this loop.", "source_chat_ids": [0], "expected_compliance": "uses tabs"}
    ],
    "temporal_reasoning": [
        {
            "question": "How many days later?",
            "answer": "7 days",
            "source_chat_ids": {"first_event": [2], "second_event": [4]},
        }
    ],
}


def test_beam_markers_dates_evidence_shapes_and_skips():
    conv = public_sets.convert_beam(beam_chat(), BEAM_QUESTIONS, "500K-9")
    dialog = [t for t in conv["turns"] if t.get("kind") != "probe"]
    assert dialog[0]["text"] == "I use tabs, never spaces."
    assert dialog[4]["text"] == "The deadline moved to March 8, 2024"
    assert not any("->->" in t["text"] for t in conv["turns"])
    assert {t["date"] for t in dialog} == {"2024-01-05"}  # batch 2 has no anchor: the one before
    assert [t["session_id"] for t in dialog] == ["session-1"] * 4 + ["session-2"] * 3  # m5 empty: skipped
    probes = {p["question"]: p for p in conv["probes"]}
    assert probes["What is my deadline now?"]["evidence"] == ["m2", "m4"]
    assert probes["What is my deadline now?"]["changed"] is True
    assert probes["How many days later?"]["evidence"] == ["m2", "m4"]
    assert probes["Indent this loop."]["expects"] == ["uses tabs"]
    assert probes["What did my manager say?"]["category"] == "unanswerable"
    assert sorted(s["reason"] for s in conv["skipped"]) == ["empty message", "no source_chat_ids"]
    assert "no licence file" in conv["source"]["licence"]


def test_beam_cut_keeps_whole_exchanges_and_the_probes_whose_evidence_is_kept():
    first_two = sum(count_text_tokens(m["content"]) for ex in beam_chat()[0]["turns"] for m in ex)
    conv = public_sets.convert_beam(beam_chat(), BEAM_QUESTIONS, "500K-9", max_tokens=first_two)
    assert [t["id"] for t in conv["turns"] if t.get("kind") != "probe"] == ["m0", "m1", "m2", "m3"]
    kept = sorted(p["question"] for p in conv["probes"])
    assert kept == ["Indent this loop.", "What deadline did I set?", "What did my manager say?"]
    cut = [s for s in conv["skipped"] if s["reason"].startswith("evidence after")]
    assert len(cut) == 2


@pytest.mark.parametrize(
    ("raw", "ids"),
    [
        ("[30]", ["30"]),
        ([1, 2], ["1", "2"]),
        ("{'a': [1], 'b': [2, 3]}", ["1", "2", "3"]),
        ({"a": [5]}, ["5"]),
        ("chat 7 and 8", ["7", "8"]),
    ],
)
def test_beam_source_ids(raw, ids):
    assert public_sets.beam_source_ids(raw) == ids


def test_dates():
    assert public_sets.locomo_date("1:56 pm on 8 May, 2023") == "2023-05-08"
    assert public_sets.locomo_date("May 4, 2023") == "2023-05-04"
    assert public_sets.locomo_date("sometime") == ""
    assert public_sets.beam_date("January-05-2024") == "2024-01-05" and public_sets.beam_date(None) == ""
