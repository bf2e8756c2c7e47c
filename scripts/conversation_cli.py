"""What the seeded conversation generators share (``make_hard_conversation.py``,
``make_friends_conversation.py``, ``make_heldout_conversations.py``): relative dates, template
filling, the probes, rendering, and the ``--seed`` / ``--out`` / ``--check`` command line."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from collections.abc import Callable
from pathlib import Path

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def resolve_when(spec: str, session_date: dt.date, rng: random.Random) -> tuple[str, dt.date]:
    """A relative date phrase and the absolute date it means, seen from ``session_date``.

    ``last_weekday``: "last Thursday", 2-6 days before (so it is this past week, not yesterday);
    ``this_weekday``: "this Friday", 2-6 days ahead; ``yesterday``; ``day_before_yesterday``;
    ``today``: "this morning".

    Raises:
        ValueError: an unknown ``spec``.
    """
    if spec == "yesterday":
        return "yesterday", session_date - dt.timedelta(days=1)
    if spec == "day_before_yesterday":
        return "the day before yesterday", session_date - dt.timedelta(days=2)
    if spec == "today":
        return "this morning", session_date
    days = rng.randint(2, 6)
    if spec == "last_weekday":
        day = session_date - dt.timedelta(days=days)
        return f"last {WEEKDAYS[day.weekday()]}", day
    if spec == "this_weekday":
        day = session_date + dt.timedelta(days=days)
        return f"this {WEEKDAYS[day.weekday()]}", day
    raise ValueError(f"unknown relative date {spec!r}")


def fill(template: str, values: dict[str, str], events: dict | None = None) -> str:
    """Fill {slot} from values and {when:label} / {date:label} / {weekday:label} / {month:label}
    from the resolved events.

    Raises:
        ValueError: a placeholder is left unfilled.
    """
    out = template
    for key, value in sorted(values.items(), key=lambda kv: -len(kv[0])):
        out = out.replace("{" + key + "}", value)
    for label, (phrase, day) in (events or {}).items():
        out = (out.replace("{when:" + label + "}", phrase)
               .replace("{date:" + label + "}", day.isoformat())
               .replace("{weekday:" + label + "}", WEEKDAYS[day.weekday()])
               .replace("{month:" + label + "}", day.strftime("%B %Y")))
    if "{" in out:
        raise ValueError(f"unfilled placeholder in {out!r}")
    return out


def build_probes(rng: random.Random, table: list, values: dict[str, str], events: dict,
                 labels: dict[str, str], speaker_of: dict[str, str], ask: Callable[[str], str],
                 person_of: Callable[[str], str]) -> list[dict]:
    """Every probe of ``table`` (``(category, question, evidence labels, expects, answer, extra)``)
    once, in a seeded order. ``ask(question)`` adds the question as a turn and returns its id;
    ``person_of(question)`` says how it names the people. Returns the probe dicts (fields:
    ``data/evaluation/README.md``)."""
    probes = []
    for index, (category, question, evidence, expects, answer, extra) in enumerate(
            rng.sample(table, len(table)), start=1):
        q = fill(question, values, events)
        turn_id = ask(q)
        ids = [labels[label] for label in evidence]
        whose = sorted({speaker_of[i] for i in ids})
        probe = {
            "id": f"p{index:03d}", "turn_id": turn_id, "question": q, "category": category,
            "person": person_of(q),
            "about": extra.get("about") or (whose[0] if len(whose) == 1 else "both"),
            "evidence": ids,
            "expects": [fill(e, values, events) for e in expects],
            "answer": fill(answer, values, events) if answer else None,
            "changed": category == "updated-fact",
        }
        if "date" in extra:
            probe["date"] = events[extra["date"]][1].isoformat()
        if "outdated" in extra:
            probe["outdated"] = [fill(e, values, events) for e in extra["outdated"]]
            probe["superseded_evidence"] = [labels[label] for label in extra["superseded"]]
        if "tempting" in extra:
            probe["tempting"] = [fill(e, values, events) for e in extra["tempting"]]
        probes.append(probe)
    return probes


def render(data: dict) -> str:
    """The file's bytes: indented JSON, Korean and other text as is, a final newline."""
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def run_cli(argv: list[str] | None, generate: Callable[[int], dict], default_out: Path,
            script: str, description: str) -> int:
    """``--seed N`` (default 7), ``--out FILE`` (default ``default_out``), ``--check``
    (regenerate in memory; exit 1 if ``--out`` differs). Returns the exit code."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory; exit 1 if --out differs")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    text = render(data)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
        if current != text:
            print(f"{args.out} differs from what seed {args.seed} generates; "
                  f"run: python scripts/{script} --seed {args.seed}")
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {data['description']}")
    return 0
