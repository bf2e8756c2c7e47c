"""Cost tables of replays, as lessons 04-08 show them (from ``helpers.memory.totals``)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from helpers.evaluate import recall_totals
from helpers.memory import DROPPED, KEPT, RETRIEVED, SUMMARIZED, SUMMARY, TurnRecord, totals

COST_SUMMARY_KEYS = ("turns", "prompt tokens (total)", "prompt tokens (last turn)", "extra calls",
                     "summary tokens", "all tokens")


def cost_summary(records: Sequence[TurnRecord]) -> dict:
    """The token and call totals of ``totals`` that lessons 04-05 show (``COST_SUMMARY_KEYS``)."""
    everything = totals(records)
    return {key: everything[key] for key in COST_SUMMARY_KEYS}


def cost_table(records: Sequence[TurnRecord]) -> pd.DataFrame:
    """Per-turn costs of a replay (``TurnRecord.as_row``) indexed by turn, with the user's message
    and the start of the reply."""
    rows = [{**r.as_row(), "user": r.user, "reply": r.reply if len(r.reply) <= 60 else r.reply[:59] + "…"}
            for r in records]
    return pd.DataFrame(rows).set_index("turn")


def what_is_kept(record: TurnRecord) -> str:
    """In words: which earlier messages (neither the system prompt nor the new message) a turn's
    prompt carried, e.g. ``"6 of 32 earlier messages (26 dropped)"``."""
    earlier = [mark for mark in record.marks[1:-1] if mark != SUMMARY]
    kept = earlier.count(KEPT)
    retrieved = earlier.count(RETRIEVED)
    text = f"{kept} of {len(earlier)} earlier messages"
    if SUMMARY in record.marks:
        text += f" + a summary of {earlier.count(SUMMARIZED)}"
    elif retrieved:
        text += f" + {retrieved} retrieved"
    elif kept < len(earlier):
        text += f" ({len(earlier) - kept} dropped)"
    if record.marks[0] == DROPPED:
        text += "; system prompt dropped"
    return text


def article_cost_table(runs: dict[str, Sequence[TurnRecord]]) -> list[dict]:
    """The article's cost table (trigger, cost, what is kept) with measured numbers, one row per
    strategy of ``runs`` (name -> its replay's records); "evidence recall" (``evaluate.recall_totals``)
    is ``None`` without probe records such as ``evaluate.ScoredTurn``."""
    rows = []
    for name, records in runs.items():
        n = max(len(records), 1)
        total = totals(records)
        when, sends = records[0].cost_note if records else ("", "")
        rows.append({
            "strategy": name,
            "trigger": when,
            "prompt tokens / turn": round(total["prompt tokens (total)"] / n),
            "prompt tokens (last turn)": total["prompt tokens (last turn)"],
            "extra calls / 100 turns": round(100 * total["extra calls"] / n, 1),
            "summary tokens": total["summary tokens"],
            "embeddings / 100 turns": round(100 * total["extra embeddings"] / n, 1),
            "what is kept": sends,
            "kept at the last turn": what_is_kept(records[-1]) if records else "",
            "evidence recall": recall_totals(records)["evidence recall"],
        })
    return rows
