"""Measure every memory strategy on one long conversation: cost per turn and evidence recall.

``evaluate(strategies, conversation)`` replays the long conversation (``data/evaluation/``, made
by ``scripts/make_long_conversation.py``) through each strategy and records per turn:

* ``prompt_tokens``: tokens of the answer call's prompt (``helpers.tokens.count_tokens``);
* ``extra_calls``: chat-model calls made for memory (summaries);
* ``extra_embeddings``: embedding calls made for memory (queries and stored texts);
* ``overhead_ms``: wall time the memory spent on the turn (building the prompt, trimming,
  summarizing, embedding, Milvus), *excluding* the chat model's own calls;
* for probe turns, ``evidence_reached``: whether the facts that answer the probe reached the model.
  A probe lists its evidence turns and the words that carry the answer (``expects``); the
  evidence reached the model if every expected word is in the text of the prompt, whether
  verbatim (the turn itself was sent), through the running summary, or retrieved from Milvus.
  ``how`` says which. This measures memory, not the model: a model can still answer badly.
* ``answer_correct``: whether the reply contains the expected words. With the offline stand-in
  this mostly mirrors evidence recall; with a real model configured it is answer accuracy.

Evidence recall of a strategy = probes whose evidence reached the model / all probes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from helpers.data import data_dir
from helpers.tokens import count_tokens


def load_long_conversation(path: str | Path | None = None) -> dict:
    """The long evaluation conversation (format: ``data/README.md``).

    Args:
        path: a JSON file; default ``data/evaluation/long_conversation.json``.

    Raises:
        FileNotFoundError: no such file. ValueError: not a conversation of that format.
    """
    path = Path(path) if path else data_dir() / "evaluation" / "long_conversation.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for key in ("turns", "probes", "system", "user_id"):
        if key not in data:
            raise ValueError(f"{path} lacks {key!r}: not a long conversation file")
    return data


class _ModelTimer(BaseCallbackHandler):
    """Adds up the wall time spent inside chat-model calls (to subtract it from overhead)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started: dict = {}

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        self._started[run_id] = time.perf_counter()

    def on_llm_end(self, response, *, run_id, **kwargs):
        self.seconds += time.perf_counter() - self._started.pop(run_id, time.perf_counter())

    def on_llm_error(self, error, *, run_id, **kwargs):
        self.seconds += time.perf_counter() - self._started.pop(run_id, time.perf_counter())


@dataclass
class EvalTurn:
    """One turn of an evaluation replay (tokens as ``helpers.tokens`` counts them)."""

    strategy: str
    turn: int
    turn_id: str
    session_id: str
    prompt_tokens: int
    extra_calls: int
    extra_embeddings: int
    overhead_ms: float
    probe: bool = False
    evidence_reached: bool | None = None
    how: str | None = None  # verbatim / summary / retrieved / None
    answer_correct: bool | None = None


def _prompt_text(prompt: Sequence[BaseMessage], question: str) -> tuple[str, dict[str, str]]:
    """All text the model was sent except the probe question itself, and the text per part."""
    parts = {"verbatim": [], "summary": [], "retrieved": []}
    for message in prompt:
        text = message.text
        if message.type == "system" and (message.id or "").startswith("running-summary"):
            parts["summary"].append(text)
        elif message is prompt[-1] and message.type == "human":
            before, sep, _ = text.rpartition(question)
            parts["retrieved"].append(before if sep else "")
        else:
            parts["verbatim"].append(text)
    joined = {k: "\n".join(v) for k, v in parts.items()}
    return "\n".join(joined.values()), joined


def evidence_reached(prompt: Sequence[BaseMessage], probe: dict) -> tuple[bool, str | None]:
    """Did the words that answer ``probe`` reach the model, and how?

    Args:
        prompt: the messages the answer call was sent.
        probe: a probe of the long conversation (``question``, ``expects``).

    Returns:
        ``(reached, how)``: ``how`` is ``"verbatim"`` (in a message of the conversation itself),
        ``"summary"`` (in the running summary), ``"retrieved"`` (in retrieved memories placed
        before the question) or ``None``. The first part that holds every expected word wins.
    """
    text, parts = _prompt_text(prompt, probe["question"])
    if not all(word.lower() in text.lower() for word in probe["expects"]):
        return False, None
    for how in ("verbatim", "summary", "retrieved"):
        if all(word.lower() in parts[how].lower() for word in probe["expects"]):
            return True, how
    return True, "mixed"


def evaluate_strategy(
    strategy,
    conversation: dict,
    model: BaseChatModel,
    max_turns: int | None = None,
    progress: bool = True,
) -> list[EvalTurn]:
    """Replay ``conversation`` through one strategy and measure every turn.

    Args:
        strategy: an object with ``name``, ``prompt(system, stored, new_message)`` and
            ``after_turn(model, stored)`` (``helpers.strategies``), optionally
            ``start_session(session_id)`` (called when the session changes) and
            ``embedding_calls`` (a running count of embedding calls).
        conversation: from ``load_long_conversation()``.
        model: the chat model.
        max_turns: stop after this many turns (default: all).
        progress: show a tqdm progress bar.

    Returns:
        One ``EvalTurn`` per turn.
    """
    from tqdm.auto import tqdm

    timer = _ModelTimer()
    timed = model.with_config(callbacks=[timer])
    system = SystemMessage(conversation["system"])
    probes = {p["turn_id"]: p for p in conversation["probes"]}
    turns = conversation["turns"][:max_turns]
    stored: list[BaseMessage] = []
    session = None
    rows = []
    for number, turn in enumerate(tqdm(turns, desc=strategy.name, disable=not progress), start=1):
        if turn["session_id"] != session:
            session = turn["session_id"]
            if hasattr(strategy, "start_session"):
                strategy.start_session(session)
        embeddings_before = getattr(strategy, "embedding_calls", 0)
        model_before = timer.seconds
        start = time.perf_counter()
        new_message = HumanMessage(turn["text"])
        prompt = strategy.prompt(system, stored, new_message)
        prompt_done = time.perf_counter()
        reply = timed.invoke(prompt)
        answer_done = time.perf_counter()
        stored, step = strategy.after_turn(timed, [*stored, new_message, reply])
        end = time.perf_counter()
        answer_seconds = answer_done - prompt_done
        model_in_memory = (timer.seconds - model_before) - answer_seconds
        overhead = (end - start) - answer_seconds - max(0.0, model_in_memory)
        row = EvalTurn(
            strategy=strategy.name,
            turn=number,
            turn_id=turn["id"],
            session_id=session,
            prompt_tokens=count_tokens(prompt),
            extra_calls=1 if step else 0,
            extra_embeddings=getattr(strategy, "embedding_calls", 0) - embeddings_before,
            overhead_ms=overhead * 1000,
        )
        if turn["id"] in probes:
            probe = probes[turn["id"]]
            row.probe = True
            row.evidence_reached, row.how = evidence_reached(prompt, probe)
            row.answer_correct = all(w.lower() in reply.text.lower() for w in probe["expects"])
        rows.append(row)
    return rows


def summarize_runs(runs: dict[str, list[EvalTurn]]) -> list[dict]:
    """One row per strategy: totals and recall (see the module docstring for each measure)."""
    import statistics

    table = []
    full_total = None
    for name, rows in runs.items():
        probes = [r for r in rows if r.probe]
        total = sum(r.prompt_tokens for r in rows)
        full_total = full_total or total  # the first strategy is the reference (full history)
        table.append({
            "strategy": name,
            "prompt tokens at last turn": rows[-1].prompt_tokens if rows else 0,
            "prompt tokens (total)": total,
            "% of first strategy's tokens": round(100 * total / full_total, 1) if full_total else None,
            "extra calls": sum(r.extra_calls for r in rows),
            "extra embeddings": sum(r.extra_embeddings for r in rows),
            "overhead ms (p50)": round(statistics.median(r.overhead_ms for r in rows), 2) if rows else 0,
            "evidence recall": round(sum(r.evidence_reached for r in probes) / len(probes), 3)
            if probes else None,
            "answers correct": round(sum(r.answer_correct for r in probes) / len(probes), 3)
            if probes else None,
        })
    return table


def runs_to_json(runs: dict[str, list[EvalTurn]]) -> dict:
    """Per-turn rows of every strategy, JSON-ready."""
    return {name: [asdict(r) for r in rows] for name, rows in runs.items()}
