"""Measuring memory (lesson 08): replay a long conversation through a strategy, score the probes.

A probe is a question whose answer is in earlier turns (its evidence). **Evidence recall** = probes
whose evidence reached the prompt (``evidence_reached``) / answerable probes: it measures memory, not
the model. ``answer_correct``: the reply holds the expected words. A probe with no evidence is
unanswerable: its right answer is "I don't know"."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from itertools import groupby
from pathlib import Path

from langchain_core.language_models.chat_models import BaseChatModel

from helpers.caching import DEFAULT_MODEL, caching_totals, load_prices
from helpers.config import project_root
from helpers.kinds import classify_turn
from helpers.memory import (
    RETRIEVED,
    SUMMARY,
    VERBATIM,
    MemoryStrategy,
    Prompt,
    Turn,
    TurnRecord,
    message_id,
    replay,
    totals,
)


def load_long_conversation(path: str | Path | None = None) -> dict:
    """The long evaluation conversation in the JSON file ``path`` (default
    ``data/evaluation/long_conversation.json``; format: ``data/README.md``). Raises FileNotFoundError or
    ValueError naming the file (not JSON; no turns, probes, system or user_id) or a turn (replay_steps)."""
    path = Path(path) if path else project_root() / "data" / "evaluation" / "long_conversation.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON (cut short?): {exc}") from None
    if key := next((k for k in ("turns", "probes", "system", "user_id") if k not in data), None):
        raise ValueError(f"{path} lacks {key!r}: not a long conversation file (data/README.md); a chat "
                         "export is read by load_exported_conversation, measured by context_fit (lesson 08)")
    # a bad turn is refused now, not halfway through a replay
    replay_steps(data["turns"], [p.get("turn_id") for p in data["probes"]])
    return data


def replay_steps(turns: Sequence[dict], probes: Collection[str] | None = None
                 ) -> list[tuple[list[dict], list[dict]]]:
    """The data turns grouped into the replay's steps, ``(user lines, assistant lines)``, nothing dropped,
    invented or moved to another session. Lines of one role in a row in a session are one message; user
    lines followed by assistant lines of their session have them as recorded reply; assistant lines with no
    user line before are a step alone. ``probes``: the turn ids of the probes: each is a step alone that the
    model answers; other user lines with no recorded reply are one message, stored unanswered. With
    ``probes=None``, or when no line is the assistant's (a script of the user's side,
    ``data/README.md``), every user line with no recorded reply is a step of its own that the model answers.
    ValueError naming the turn: no str ``id`` or ``text``; a ``speaker`` not ``user`` (the default) or
    ``assistant``, in any case (read as the user's, a narrator's or a system line would be misquoted)."""
    for i, t in enumerate(turns):
        at = f"turns[{i}]" + (f" (id {t['id']!r})" if isinstance(t, dict) and "id" in t else "")
        if bad := [k for k in ("id", "text") if not (isinstance(t, dict) and isinstance(t.get(k), str))]:
            raise ValueError(f"{at} has no str {' or '.join(map(repr, bad))}: every turn needs both")
        if str(speaker := t.get("speaker", "user")).lower() not in ("user", "assistant"):
            raise ValueError(f"{at} has speaker {speaker!r}; accepted, any case: 'user', 'assistant'")
    asked = _asked(turns, probes)
    steps: list[tuple[list[dict], list[dict]]] = []

    def key(t: dict) -> tuple:  # a probe is a group of its own
        return t.get("session_id"), _is_assistant(t), t["id"] if asked and t["id"] in asked else None

    for (session, assistant, _), group in groupby(turns, key):
        run, last = list(group), steps[-1][0] if steps and not steps[-1][1] else []
        if assistant and last and last[0].get("session_id") == session and key(last[0])[2] is None:
            steps[-1] = (last, run)  # the reply of the user lines before
        else:
            steps.append(([], run) if assistant else (run, []))
    return [step for users, replies in steps
            for step in ([([t], []) for t in users] if asked is None and not replies else [(users, replies)])]


def _is_assistant(turn: dict) -> bool:
    return str(turn.get("speaker")).lower() == "assistant"


def _asked(turns: Sequence[dict], probes: Collection[str] | None) -> set[str] | None:
    """The ids of the user lines the model answers; ``None``: every one without a recorded reply."""
    return None if probes is None or not any(map(_is_assistant, turns)) else set(probes)


def conversation_turns(turns: Sequence[dict], probes: Collection[str] | None = None) -> list[Turn]:
    """The ``Turn`` of each of ``replay_steps(turns, probes)``: a message's lines joined by ``"\\n"``, the
    first line's id, session and date; ``answer`` False for a user message stored unanswered (no reply
    recorded, not a probe)."""
    def text(lines: list[dict]) -> str | None:
        return "\n".join(t["text"] for t in lines) if lines else None

    asked = _asked(turns, probes)
    return [Turn(text(users), first.get("session_id"), first["id"], first.get("date", ""), text(replies),
                 answer=bool(replies) or asked is None or first["id"] in asked)
            for users, replies in replay_steps(turns, probes) for first in [(users or replies)[0]]]


def replay_message_ids(turns: Sequence[dict], probes: Collection[str] | None = None) -> dict[str, str]:
    """Data turn id -> the id of the message it is part of in the replay (``memory.message_id``):
    the lines of step ``n`` of ``replay_steps(turns, probes)`` are ``t<n>-user`` and ``t<n>-reply``."""
    return {t["id"]: message_id(n, role) for n, step in enumerate(replay_steps(turns, probes), start=1)
            for role, lines in zip(("user", "reply"), step, strict=True) for t in lines}


def evidence_reached(prompt: Prompt, probe: dict,
                     evidence_ids: dict[str, str] | None = None) -> tuple[bool, str | None]:
    """Did the turns that answer ``probe`` (``evidence``: data turn ids; ``expects``: the answer's words)
    reach the model in ``prompt``, and how? Each evidence turn must be a source of a verbatim, retrieved
    or summary part (by message id: ``evidence_ids``, from ``replay_message_ids``); one that came only
    through the summary needs the answer's words in those parts; words in other messages count for
    nothing. ``evidence_ids=None``: the word-only measure, for parts naming no sources (every expected
    word anywhere in the verbatim, summary or retrieved text). Returns ``(reached, how)``: ``how`` is
    ``"verbatim"``, ``"summary"``, ``"retrieved"``, ``"mixed"`` (several kinds) or ``None`` (not reached)."""
    words = [word.lower() for word in probe["expects"]]
    if evidence_ids is None:
        texts = {kind: "\n".join(p.text for p in prompt.of_kind(kind)).lower()
                 for kind in (VERBATIM, SUMMARY, RETRIEVED)}
        if not all(word in "\n".join(texts.values()) for word in words):
            return False, None
        return True, next((how for how in (VERBATIM, SUMMARY, RETRIEVED)
                           if all(word in texts[how] for word in words)), "mixed")
    needed = [evidence_ids.get(turn_id) for turn_id in probe["evidence"]]
    carriers = [p for kind in (VERBATIM, RETRIEVED, SUMMARY) for p in prompt.of_kind(kind)
                if any(m in p.sources for m in needed)]
    if not needed or not all(any(m in p.sources for p in carriers) for m in needed):
        return False, None
    if not all(any(m in p.sources and p.kind != SUMMARY for p in carriers) for m in needed):
        text = "\n".join(p.text for p in carriers).lower()  # via the summary only: its words too?
        if not all(word in text for word in words):
            return False, None
    kinds = {p.kind for p in carriers}
    return True, kinds.pop() if len(kinds) == 1 else "mixed"


@dataclass
class ScoredTurn(TurnRecord):
    """A ``TurnRecord`` with its probe's score (``evaluate_strategy``)."""

    probe: bool = False  # an answerable probe, counted in evidence recall
    evidence_reached: bool | None = None
    how: str | None = None  # verbatim / summary / retrieved / mixed / unanswerable / None
    answer_correct: bool | None = None


def evaluate_strategy(strategy: MemoryStrategy, conversation: dict, model: BaseChatModel,
                      max_turns: int | None = None, progress: bool = True) -> list[ScoredTurn]:
    """Replay ``conversation`` (from ``load_long_conversation``; ``max_turns``: its first data turns only;
    ``progress``: a tqdm bar) through ``strategy`` and score its probes: a ``ScoredTurn`` per step of
    ``replay_steps``; an unanswerable probe gets ``how="unanswerable"``, ``answer_correct`` = "I don't know"
    said."""
    from tqdm.auto import tqdm

    probes = {p["turn_id"]: p for p in conversation["probes"]}
    turns = conversation_turns(conversation["turns"][:max_turns], probes)
    evidence_ids = replay_message_ids(conversation["turns"][:max_turns], probes)

    def score(record: ScoredTurn, turn: Turn) -> None:
        probe = probes.get(turn.turn_id)
        if probe is not None and not probe["expects"]:
            record.how = "unanswerable"
            record.answer_correct = classify_turn(record.reply, "assistant") == "dont_know"
        elif probe is not None:
            record.probe = True
            record.evidence_reached, record.how = evidence_reached(record.prompt, probe, evidence_ids)
            record.answer_correct = all(w.lower() in record.reply.lower() for w in probe["expects"])

    return replay(strategy, tqdm(turns, desc=strategy.name, disable=not progress), model,
                  conversation["system"], on_turn=score, record=ScoredTurn)


def recall_totals(records: Sequence[TurnRecord]) -> dict:
    """``{"evidence recall", "answers correct"}``: shares of the answerable probes (3 places),
    ``None`` without probes. Records that are not ``ScoredTurn`` count as no probe."""
    probes = [r for r in records if getattr(r, "probe", False)]
    if not probes:
        return {"evidence recall": None, "answers correct": None}
    return {"evidence recall": round(sum(bool(r.evidence_reached) for r in probes) / len(probes), 3),
            "answers correct": round(sum(bool(r.answer_correct) for r in probes) / len(probes), 3)}


def summarize_runs(runs: dict[str, list[ScoredTurn]]) -> list[dict]:
    """One row per strategy: token, call and time totals and evidence recall; the ``%`` column is
    relative to the first strategy (full history); input dollars without and with prompt caching
    at ``caching.DEFAULT_MODEL``'s prices (``caching.caching_totals``)."""
    table, first, price = [], None, load_prices()[DEFAULT_MODEL]
    for name, records in runs.items():
        cached = caching_totals(records, price)
        total, recall = totals(records), recall_totals(records)
        prompt_total = total["prompt tokens (total)"]
        first = first or prompt_total
        unanswerable = [r for r in records if r.how == "unanswerable"]
        table.append({
            "strategy": name,
            "prompt tokens at last turn": total["prompt tokens (last turn)"],
            "prompt tokens (total)": prompt_total,
            "% of first strategy's tokens": round(100 * prompt_total / first, 1) if first else None,
            "extra calls": total["extra calls"],
            "extra call tokens": total["extra call tokens"],
            f"input $ ({DEFAULT_MODEL})": cached["input $ without caching"],
            f"input $ cached ({DEFAULT_MODEL})": cached["input $ with caching"],
            "all input tokens (total)": prompt_total + total["extra call tokens"],
            "extra embeddings": total["extra embeddings"],
            "overhead ms (p50)": total["overhead ms (p50)"],
            "overhead ms without embedding (p50)": total["overhead ms without embedding (p50)"],
            **recall,
            # answered from something else: the right answer to these is "I don't know"
            "unanswerable answered": f"{sum(r.answer_correct is False for r in unanswerable)}/"
                                     f"{len(unanswerable)}" if unanswerable else None,
        })
    return table


def runs_to_json(runs: dict[str, list[ScoredTurn]]) -> dict:
    """Per-turn numbers of every strategy, JSON-ready (no messages)."""
    skip = {"user", "reply", "prompt", "timeline", "marks", "cost_note"}
    names = [f.name for f in fields(ScoredTurn) if f.name not in skip]
    return {name: [{f: getattr(r, f) for f in names} for r in records]
            for name, records in runs.items()}


def per_category_recall(turns: dict[str, list[dict]], conversation: dict) -> dict[str, dict]:
    """Evidence recall per probe category, per strategy: ``{strategy: {category: recall}}``, 3 places.
    ``turns``: ``runs_to_json(runs)``; a probe without ``category`` counts as ``single-hop``
    (``updated-fact`` when ``changed``)."""
    category = {p["turn_id"]: p.get("category") or ("updated-fact" if p.get("changed") else "single-hop")
                for p in conversation["probes"]}
    out = {}
    for name, rows in turns.items():
        reached: dict[str, list[bool]] = {}
        for row in (row for row in rows if row["probe"]):
            reached.setdefault(category[row["turn_id"]], []).append(bool(row["evidence_reached"]))
        out[name] = {k: round(sum(v) / len(v), 3) for k, v in sorted(reached.items())}
    return out


def default_strategies(store, user_id: str, names: dict[str, str] | None = None) -> list[MemoryStrategy]:
    """The strategies lesson 08 compares, full history first (the reference). Retrieval and layered
    memory share ``store`` (a ``MemoryStore``) under different user ids, with ``names`` (``speakers``)."""
    from helpers.layered import LayeredMemory
    from helpers.retrieval import RetrievalMemory
    from helpers.summary import RunningSummary, TokenTrigger
    from helpers.window import CountWindow, FullHistory, TokenWindow

    return [
        FullHistory(),
        CountWindow(20),
        TokenWindow(800),
        RunningSummary(TokenTrigger(1200, 300), max_summary_tokens=600),
        RetrievalMemory(store, f"{user_id}-retrieval", "session-1", top_k=3, names=names),
        # a smaller window and summary cap than LayeredMemory's defaults: on lesson 08's conversation
        # the defaults send more than a tenth of full history's tokens (design notes: "Layered budgets")
        LayeredMemory(store, f"{user_id}-layered", "session-1", window_tokens=100, max_summary_tokens=150,
                      names=names),
    ]
