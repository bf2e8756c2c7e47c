"""Lesson 08's numbers outside a replay: how far a live run may land from a saved one
(``saved_differences``), the capstone's replay (``probe_task``, ``run_budgets``), and the closing
exercise (your own chat export against context windows: ``load_exported_conversation``,
``context_fit``). ``make evaluate`` is ``scripts/measure.py``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from helpers.config import project_root
from helpers.course.data import Conversation
from helpers.course.display import reply_column
from helpers.evaluate import evaluate_strategy
from helpers.layered import LayeredMemory
from helpers.store import MemoryStore
from helpers.text import memory_body, nfc
from helpers.tokens import count_tokens

# How far a live replay may land from a saved one: an early reply that differs on another machine is
# re-sent by every later prompt; a change to what the memory sends is not within it (docs/design-notes.md,
# "Saved numbers on another machine").
TOKEN_TOLERANCE = 0.02  #: relative, every count column (tokens, calls, embeddings, dollars); a count: >= 1
PROBE_TOLERANCE = 2  #: probes, in every share column and in "unanswerable answered"
_SHARES = ("evidence recall", "answers correct")
_LAYER = {"verbatim": "window"}  # a layered prompt sends messages verbatim in its window only


def saved_differences(live: Sequence[dict], saved: Sequence[dict], probes: int) -> list[str]:
    """Each number of the results table ``live`` (``evaluate.summarize_runs``) that is further from the
    saved table ``saved`` than the tolerance, as a sentence (``[]``: they agree). ``probes``: the
    answerable probes a share is out of. Timings (``ms`` columns) are the machine's own and not compared;
    the ``%`` column follows the tokens. A strategy missing from either table is a difference."""
    found, saved_rows = [], {row["strategy"]: row for row in saved}
    if [row["strategy"] for row in live] != list(saved_rows):
        return [f"strategies {[row['strategy'] for row in live]} against {list(saved_rows)}"]
    for row in live:
        for column, value in row.items():
            want = saved_rows[row["strategy"]].get(column)
            if column == "strategy" or " ms " in column or column.startswith("%") or value == want:
                continue
            if column == "unanswerable answered" and value and want:
                off = abs(int(value.split("/")[0]) - int(want.split("/")[0]))
                close = off <= PROBE_TOLERANCE and value.split("/")[1] == want.split("/")[1]
            elif column in _SHARES and value is not None and want is not None:
                close = abs(value - want) * probes <= PROBE_TOLERANCE + 1e-9
            elif isinstance(value, int | float) and isinstance(want, int | float):
                close = abs(value - want) <= max(isinstance(want, int), TOKEN_TOLERANCE * abs(want))
            else:
                close = False
            if not close:
                found.append(f"{row['strategy']}: {column} {value} against {want} saved")
    return found


def load_exported_conversation(path: str | Path) -> list[BaseMessage]:
    """Read a chat export: a JSON list of ``{"role": ..., "content": ...}`` objects, as most chat tools export
    (UTF-8, a BOM allowed, or UTF-16 with its BOM as Windows PowerShell writes; roles in any case; ``model``:
    Gemini's assistant; a tool or function result is refused, not skipped: its tokens count; text made NFC:
    one form whatever keyboard typed it; other fields, such as ``name``, are not read). ValueError naming
    the file and line (not JSON), the byte (not UTF-8) or the item; an empty list is refused too."""
    from langchain_core.messages import convert_to_messages

    roles = ("system", "developer", "user", "human", "assistant", "ai", "model")
    data = Path(path).read_bytes()
    utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    try:
        raw = json.loads(data.decode("utf-16" if utf16 else "utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {data[exc.start]:#04x} at {exc.start}): save it "
                         "as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON (cut short?): {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply to be a chat export") from None
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{path}: expected a JSON list of {{'role', 'content'}} objects, at least one")
    pairs = []
    for i, item in enumerate(raw):
        if not (isinstance(item, dict) and isinstance(item.get("role"), str)
                and isinstance(item.get("content"), str)):
            raise ValueError(f"{path}: item {i} is not a {{'role': str, 'content': str}} object")
        if item["role"].lower() not in roles:
            raise ValueError(f"{path}: item {i} has role {item['role']!r}; accepted, any case: "
                             f"{', '.join(roles)} (a tool or function result: make it 'user' or remove it)")
        try:
            pairs.append(("ai" if (role := item["role"].lower()) == "model" else role, nfc(item["content"])))
        except ValueError as exc:  # an unpaired surrogate, escaped in the JSON
            raise ValueError(f"{path}: item {i}: {exc}") from None
    return convert_to_messages(pairs)


def context_fit(messages: Sequence[BaseMessage], reply_tokens: int = 1000) -> list[dict]:
    """How ``messages`` plus ``reply_tokens`` (room for the reply) fit the context windows of
    ``data/context_windows.json``: one row per model, its window, the conversation + reply, the share
    of the window, whether it fits, the source and the day it was checked. Tokens, cl100k_base estimates."""
    path = project_root() / "data" / "context_windows.json"
    windows = json.loads(path.read_text(encoding="utf-8"))
    total = count_tokens(messages) + reply_tokens
    return [{"model": m["model"], "provider": m["provider"], "context window": m["context_tokens"],
             "conversation + reply": total, "% of window": round(100 * total / m["context_tokens"], 1),
             "fits": total <= m["context_tokens"], "source": m["source"], "checked": m["checked"]}
            for m in windows["models"]]


def probe_task(conversation: Conversation, questions: dict[int, tuple[int, str]]) -> dict:
    """A short conversation as ``evaluate_strategy`` reads a long one: one session, and a probe for each
    question, ``{question's turn: (the turn stating the answer, the answer's word)}`` (turns from 1)."""
    return {"system": conversation.system,
            "turns": [{"id": f"t{n}", "session_id": "session-1", "text": text}
                      for n, text in enumerate(conversation.turns, 1)],
            "probes": [{"turn_id": f"t{q}", "evidence": [f"t{e}"], "expects": [word]}
                       for q, (e, word) in questions.items()]}


def run_budgets(store: MemoryStore, conversation: Conversation, questions: dict[int, tuple[int, str]],
                model: BaseChatModel, token_limit: int, **budgets: int):
    """The capstone: replay ``conversation`` through ``LayeredMemory(store, ..., **budgets)`` (budgets in
    tokens; the user's rows are deleted first, so each run starts empty), print whether every question
    reached its evidence with no prompt over ``token_limit`` tokens and the summary sent with the first
    question, and return a ``DataFrame`` of the question turns: prompt tokens, each layer's tokens, the
    layer that carried the evidence, the reply."""
    import pandas as pd

    store.delete_user(conversation.user_id)
    memory = LayeredMemory(store, conversation.user_id, "session-1", **budgets)
    rows = evaluate_strategy(memory, probe_task(conversation, questions), model, progress=False)
    largest = max(r.prompt_tokens for r in rows)
    reached = sum(bool(r.evidence_reached) for r in rows if r.probe)
    passed = reached == len(questions) and largest <= token_limit
    print(f"evidence reached: {reached} of {len(questions)}; largest prompt: {largest} tokens "
          f"(limit {token_limit}) → {'PASS' if passed else 'not yet: change the budgets'}")
    first = next(r for r in rows if r.probe)  # what the summary layer sent: the fact itself, or only a word?
    summary = [memory_body(part.text)[1] for part in first.prompt.of_kind("summary")]
    print(f"the summary sent at turn {first.turn}:", "\n".join(["", *summary]) if summary else "none yet")
    return pd.DataFrame([{"turn": r.turn, "prompt": r.prompt_tokens, "window": t.window_section_tokens,
                          "summary": t.summary_section_tokens, "retrieved": t.retrieved_section_tokens,
                          "evidence reached": _LAYER.get(r.how, r.how) or False, reply_column(model): r.reply}
                         for r, t in zip(rows, memory.log, strict=True) if r.probe]).set_index("turn")
