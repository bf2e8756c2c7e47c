"""Public multi-session chats in the course's long-conversation format (``data/README.md``), so a
learner who has a local copy can measure the course's memories on conversations nobody here wrote.

Two sets, each read from a local copy (nothing is downloaded, nothing of them is in this repository):

- **LoCoMo** (``snap-research/locomo``, licence CC BY-NC 4.0: non-commercial use, credit the authors):
  two people talking over up to 35 dated sessions. Read from ``data/locomo10.json`` (a list of
  ``{"sample_id": "conv-41", "conversation": {...}, "qa": [...]}``) or ``data/locomo10.zip`` (one
  ``<n>.json`` per conversation). ``speaker_a`` becomes ``user``, ``speaker_b`` ``assistant``; a shared
  photo's caption is kept in its line ("[shares a photo: ...]"). Question categories are numbers in the
  file; read as ``LOCOMO_CATEGORIES`` (the reading most users of the set use); category 5 (adversarial:
  the answer was never said) becomes ``unanswerable``.
- **BEAM** (``mohammadtavakoli78/BEAM``; its repository has no licence file and its README names none:
  check the dataset card before you share anything made from it): a user and an assistant over
  batches of exchanges, ``chats/<size>/<n>/chat.json`` with ``probing_questions/probing_questions.json``
  (ten categories). A batch is a session; user messages lose the generator's ``->-> 1,2`` marker.

Nothing real is refused: a probe whose evidence cannot be found is skipped and listed with the reason
in the file's ``skipped`` (malformed ids are read where they can be: ``D30:05`` is ``D30:5``,
``"D8:6; D9:17"`` is two ids). The probes are asked by ``user`` in one new session at the end."""

from __future__ import annotations

import ast
import datetime
import json
import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from helpers.tokens import count_text_tokens

LOCOMO_LICENCE = "CC BY-NC 4.0 (snap-research/locomo): non-commercial use, credit the authors"
BEAM_LICENCE = (
    "no licence file in mohammadtavakoli78/BEAM and none named in its README: "
    "check the Hugging Face dataset card (Mohammadta/BEAM) before sharing anything made from it"
)
#: LoCoMo's numeric question categories, read as its users commonly read them (the file has numbers only).
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "unanswerable"}
SYSTEM_TWO_PERSON = (
    "The chat below is between two friends: the user's messages are {user}'s, the "
    "assistant's are {assistant}'s. Answer questions about either of them briefly, from "
    "the chat; if it was never said, say you don't know."
)
SYSTEM_ASSISTANT = (
    "You are a helpful assistant. Answer from the conversation; if it was never said, say you don't know."
)
_MARKER = re.compile(r"\s*->->\s*[\d,\s]*$")  # BEAM's generator marker at the end of a user message
_DIA_ID = re.compile(r"D(\d+)\s*:\s*(\d+)")
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("january february march april may june july august september october november december").split(),
        start=1,
    )
}


def locomo_date(text: str) -> str:
    """``"1:56 pm on 8 May, 2023"`` or ``"May 8, 2023"`` -> ``"2023-05-08"``; ``""`` when no date is found."""
    low = text.lower()
    for pattern, order in (
        (r"(\d{1,2})\s+([a-z]+),?\s+(\d{4})", "dmy"),
        (r"([a-z]+)\s+(\d{1,2}),?\s+(\d{4})", "mdy"),
    ):
        for match in re.finditer(pattern, low):
            day, month, year = (
                (match.group(1), match.group(2), match.group(3))
                if order == "dmy"
                else (match.group(2), match.group(1), match.group(3))
            )
            if month in _MONTHS:
                return datetime.date(int(year), _MONTHS[month], int(day)).isoformat()
    return ""


def beam_date(text: str | None) -> str:
    """BEAM's ``"January-05-2024"`` -> ``"2024-01-05"``; ``""`` for anything else."""
    try:
        return datetime.datetime.strptime(str(text), "%B-%d-%Y").date().isoformat()
    except ValueError:
        return ""


def _next_day(iso: str) -> str:
    return (datetime.date.fromisoformat(iso) + datetime.timedelta(days=1)).isoformat() if iso else ""


def evidence_ids(raw) -> list[str]:
    """Every LoCoMo dialog id in ``raw`` (a str, or a list of them): ``"D8:6; D9:17"`` -> ``["D8:6",
    "D9:17"]``, ``"D30:05"`` -> ``["D30:5"]`` (leading zeros dropped); anything else is ignored."""
    texts = [raw] if isinstance(raw, str) else list(raw or [])
    return [f"D{int(s)}:{int(n)}" for text in texts for s, n in _DIA_ID.findall(str(text))]


def beam_source_ids(raw) -> list[str]:
    """BEAM's ``source_chat_ids`` as message ids: a list, a dict of lists, or either written as a
    Python literal string (``"[30]"``, ``"{'first_event': [62], 'second_event': [230]}"``)."""
    if isinstance(raw, str):
        try:
            raw = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            return re.findall(r"\d+", raw)
    values = (
        [v for vs in raw.values() for v in (vs if isinstance(vs, list) else [vs])]
        if isinstance(raw, dict)
        else list(raw if isinstance(raw, list) else [raw])
    )
    return [str(v) for v in values if str(v).strip()]


def _conversation(
    turns: list[dict],
    probes: list[dict],
    *,
    set_name: str,
    source_id: str,
    licence: str,
    system: str,
    speakers: dict | None,
    skipped: list[dict],
    note: str,
) -> dict:
    """The course's file from dialog ``turns`` (``session_id``, ``date``, ``speaker``, ``text``, ``id``) and
    ``probes`` (``question``, ``category``, ``evidence``, ``answer``...), asked in a new session."""
    known = {t["id"] for t in turns}
    last_session = int(turns[-1]["session_id"].split("-")[1]) if turns else 0
    probe_session, probe_date = f"session-{last_session + 1}", _next_day(turns[-1]["date"] if turns else "")
    out_turns, out_probes = list(turns), []
    for probe in probes:
        missing = [e for e in probe["evidence"] if e not in known]
        evidence = [e for e in probe["evidence"] if e in known]
        if probe["category"] != "unanswerable" and not evidence:
            skipped.append(
                {
                    "question": probe["question"][:80],
                    "category": probe["category"],
                    "reason": f"no evidence line found (ids {probe.get('raw_evidence')!r})",
                }
            )
            continue
        turn_id = f"q{len(out_probes) + 1:03d}"
        out_turns.append(
            {
                "id": turn_id,
                "session_id": probe_session,
                "date": probe_date,
                "speaker": "user",
                "text": probe["question"],
                "kind": "probe",
            }
        )
        answerable = probe["category"] != "unanswerable"
        out_probes.append(
            {
                "id": f"p{len(out_probes) + 1:03d}",
                "turn_id": turn_id,
                "question": probe["question"],
                "category": probe["category"],
                "evidence": evidence if answerable else [],
                "expects": [str(probe["answer"])] if answerable else [],
                "answer": probe["answer"] if answerable else None,
                "changed": probe["category"] == "knowledge-update",
                **({"evidence_not_found": missing} if missing and answerable else {}),
                **({"tempting": [str(probe["tempting"])]} if probe.get("tempting") else {}),
            }
        )
    sessions = sorted(
        {(t["session_id"], t["date"]) for t in out_turns}, key=lambda s: int(s[0].split("-")[1])
    )
    counts: dict[str, int] = {}
    for p in out_probes:
        counts[p["category"]] = counts.get(p["category"], 0) + 1
    description = (
        f"{set_name} {source_id}, converted by lab.public_sets ({note}): {len(turns)} "
        f"lines in {len(sessions) - 1} sessions, then {len(out_probes)} probes in a new session ("
        + ", ".join(f"{n} {c}" for c, n in sorted(counts.items()))
        + f"); {len(skipped)} skipped."
    )
    return {
        "id": f"{set_name.lower()}_{source_id}".replace("-", "_").replace("/", "_"),
        "held_out": False,
        "language": "en",
        "user_id": re.sub(r"[^a-z0-9]+", "-", f"{set_name}-{source_id}".lower()),
        "description": description,
        "system": system,
        **({"speakers": speakers} if speakers else {}),
        "source": {"set": set_name, "conversation": source_id, "licence": licence},
        "sessions": [{"id": s, "date": d} for s, d in sessions],
        "turns": out_turns,
        "probes": out_probes,
        "skipped": skipped,
    }


# ---- LoCoMo -----------------------------------------------------------------------------------


def _locomo_number(name: str) -> int | None:
    match = re.search(r"(\d+)(?:\.json)?$", name)
    return int(match.group(1)) if match else None


def read_locomo(path: str | Path, numbers: Iterable[int]) -> Iterator[tuple[int, dict]]:
    """``(number, sample)`` for each LoCoMo conversation of ``numbers`` in ``path`` (``locomo10.json`` or
    ``locomo10.zip``), chosen by id BEFORE anything else is read: a conversation not asked for is never
    converted. A sample is ``{"conversation": {...}, "qa": [...]}``. ValueError: not a LoCoMo file."""
    wanted, path = set(numbers), Path(path)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            for member in sorted(archive.namelist()):
                if member.endswith(".json") and _locomo_number(member.rsplit("/", 1)[-1]) in wanted:
                    flat = json.loads(archive.read(member))
                    yield (
                        _locomo_number(member.rsplit("/", 1)[-1]),
                        {"conversation": flat, "qa": flat.get("qa", [])},
                    )
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of LoCoMo samples with 'sample_id'")
    for sample in data:
        if isinstance(sample, dict) and _locomo_number(str(sample.get("sample_id", ""))) in wanted:
            yield _locomo_number(str(sample["sample_id"])), sample


def convert_locomo(sample: dict, number: int) -> dict:
    """One LoCoMo sample (``read_locomo``) in the course's format; every line of every session kept."""
    conv, skipped = sample["conversation"], []
    a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
    turns = []
    sessions = sorted((int(m.group(1)), k) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    for n, key in sessions:
        date = locomo_date(str(conv.get(f"{key}_date_time", "")))
        for i, line in enumerate(conv[key] or []):
            text = str(line.get("text", "")).strip()
            if line.get("blip_caption"):
                text = f"{text} [shares a photo: {line['blip_caption']}]".strip()
            if not text:
                skipped.append({"line": line.get("dia_id", f"{key}[{i}]"), "reason": "empty line"})
                continue
            speaker = (
                "user" if line.get("speaker") == a else "assistant" if line.get("speaker") == b else None
            )
            if speaker is None:
                skipped.append(
                    {"line": line.get("dia_id"), "reason": f"speaker {line.get('speaker')!r} is neither"}
                )
                continue
            turn_id = (
                "D{}:{}".format(*map(int, _DIA_ID.search(line["dia_id"]).groups()))
                if _DIA_ID.search(str(line.get("dia_id", "")))
                else f"D{n}:x{i}"
            )
            turns.append(
                {"id": turn_id, "session_id": f"session-{n}", "date": date, "speaker": speaker, "text": text}
            )
    probes = []
    for qa in sample.get("qa", []):
        category = LOCOMO_CATEGORIES.get(qa.get("category"), f"category-{qa.get('category')}")
        probes.append(
            {
                "question": str(qa.get("question", "")).strip(),
                "category": category,
                "evidence": evidence_ids(qa.get("evidence")),
                "raw_evidence": qa.get("evidence"),
                "answer": qa.get("answer"),
                "tempting": qa.get("adversarial_answer"),
            }
        )
    unanswered = [p for p in probes if p["category"] != "unanswerable" and p["answer"] in (None, "")]
    for p in unanswered:
        skipped.append(
            {"question": p["question"][:80], "category": p["category"], "reason": "no answer given"}
        )
    probes = [p for p in probes if p not in unanswered and p["question"]]
    return _conversation(
        turns,
        probes,
        set_name="LoCoMo",
        source_id=f"conv-{number}",
        licence=LOCOMO_LICENCE,
        system=SYSTEM_TWO_PERSON.format(user=a, assistant=b),
        speakers={"user": a, "assistant": b},
        skipped=skipped,
        note="snap-research/locomo",
    )


# ---- BEAM -------------------------------------------------------------------------------------

BEAM_ANSWER_KEYS = ("answer", "ideal_answer", "ideal_summary", "ideal_response", "expected_compliance")


def _batch_dates(chat: Sequence[dict]) -> list[str]:
    """Each batch's date: its own ``time_anchor`` or its first message's, else the batch before's."""
    dates, current = [], ""
    for batch in chat:
        anchors = [batch.get("time_anchor")] + [
            m.get("time_anchor")
            for ex in batch.get("turns", [])
            for m in (ex if isinstance(ex, list) else [ex])
        ]
        current = next((d for d in map(beam_date, anchors) if d), current)
        dates.append(current)
    return dates


def convert_beam(chat: Sequence[dict], questions: dict, name: str, max_tokens: int | None = None) -> dict:
    """One BEAM chat (``chat.json``: batches of exchanges) and its ``probing_questions.json`` in the
    course's format. ``max_tokens``: keep the exchanges up to this many tokens (whole exchanges, in
    order) and only the probes whose evidence lies there (the others are listed as skipped)."""
    turns, skipped, used, cut = [], [], 0, False
    for n, (batch, date) in enumerate(zip(chat, _batch_dates(chat), strict=True), start=1):
        for exchange in batch.get("turns", []):
            messages = exchange if isinstance(exchange, list) else [exchange]
            size = sum(count_text_tokens(str(m.get("content", ""))) for m in messages)
            if max_tokens is not None and used + size > max_tokens:
                cut = True
                break
            used += size
            for m in messages:
                role, text = str(m.get("role", "")).lower(), str(m.get("content", ""))
                text = _MARKER.sub("", text).strip() if role == "user" else text.strip()
                if role not in ("user", "assistant") or not text:
                    skipped.append(
                        {"line": m.get("id"), "reason": f"role {role!r}" if text else "empty message"}
                    )
                    continue
                turns.append(
                    {
                        "id": f"m{m.get('id')}",
                        "session_id": f"session-{n}",
                        "date": date,
                        "speaker": role,
                        "text": text,
                    }
                )
        if cut:
            break
    known = {t["id"] for t in turns}
    probes = []
    for category, items in questions.items():
        for q in items:
            label = category.replace("_", "-")
            if category == "abstention":
                probes.append(
                    {"question": q["question"], "category": "unanswerable", "evidence": [], "answer": None}
                )
                continue
            if "source_chat_ids" not in q:
                skipped.append(
                    {"question": q["question"][:80], "category": label, "reason": "no source_chat_ids"}
                )
                continue
            evidence = [f"m{i}" for i in beam_source_ids(q["source_chat_ids"])]
            if max_tokens is not None and any(e not in known for e in evidence):
                skipped.append(
                    {
                        "question": q["question"][:80],
                        "category": label,
                        "reason": f"evidence after the first {max_tokens} tokens",
                    }
                )
                continue
            answer = next((q[k] for k in BEAM_ANSWER_KEYS if q.get(k)), None)
            probes.append(
                {
                    "question": q["question"],
                    "category": label,
                    "evidence": evidence,
                    "raw_evidence": q["source_chat_ids"],
                    "answer": answer or q["question"],
                }
            )
    note = "mohammadtavakoli78/BEAM" + (f", first {used} tokens" if cut else "")
    return _conversation(
        turns,
        probes,
        set_name="BEAM",
        source_id=name,
        licence=BEAM_LICENCE,
        system=SYSTEM_ASSISTANT,
        speakers=None,
        skipped=skipped,
        note=note,
    )


def read_beam(chat_dir: str | Path, max_tokens: int | None = None) -> dict:
    """``convert_beam`` of the chat in ``chat_dir`` (``chat.json`` and
    ``probing_questions/probing_questions.json``);
    its name is ``<size>-<n>`` from the folder names (``chats/500K/3`` -> ``500K-3``)."""
    chat_dir = Path(chat_dir)
    chat = json.loads((chat_dir / "chat.json").read_text(encoding="utf-8"))
    questions = json.loads(
        (chat_dir / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8")
    )
    return convert_beam(chat, questions, f"{chat_dir.parent.name}-{chat_dir.name}", max_tokens)


def main(argv: list[str] | None = None) -> int:
    """Convert local copies of LoCoMo conversations or BEAM chats into the course's format."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument(
        "--out", type=Path, required=True, help="folder for the converted files (keep it out of git)"
    )
    parser.add_argument("--locomo", type=Path, help="locomo10.json or locomo10.zip")
    parser.add_argument(
        "--conversations",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[],
        help="LoCoMo conversation numbers, e.g. 41,42,43 (required with --locomo)",
    )
    parser.add_argument(
        "--beam", type=Path, nargs="*", default=[], help="BEAM chat folders (chats/500K/3 ...)"
    )
    parser.add_argument("--max-tokens", type=int, default=None, help="BEAM: keep the first this many tokens")
    args = parser.parse_args(argv)
    if args.locomo and not args.conversations:
        parser.error("--locomo needs --conversations (which conversations to convert)")
    args.out.mkdir(parents=True, exist_ok=True)
    converted = (
        [convert_locomo(s, n) for n, s in read_locomo(args.locomo, args.conversations)] if args.locomo else []
    )
    converted += [read_beam(d, args.max_tokens) for d in args.beam]
    for conv in converted:
        (args.out / f"{conv['id']}.json").write_text(
            json.dumps(conv, indent=1, ensure_ascii=False), encoding="utf-8"
        )
        reasons: dict[str, int] = {}
        for s in conv["skipped"]:
            reasons[s["reason"].split(" (")[0]] = reasons.get(s["reason"].split(" (")[0], 0) + 1
        print(
            f"{conv['id']}: {len(conv['turns']) - len(conv['probes'])} lines, {len(conv['probes'])} probes; "
            f"skipped: {reasons or 'nothing'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
