"""Measure every memory strategy on one long conversation: cost per turn and evidence recall.

``evaluate(strategies, conversation)`` replays the long conversation (``data/evaluation/``, made
by ``scripts/make_long_conversation.py``) through each strategy and records per turn:

* ``prompt_tokens``: tokens of the answer call's prompt (``helpers.tokens.count_tokens``);
* ``extra_calls``: chat-model calls made for memory (summaries), and ``extra_call_tokens``, the
  prompt tokens those calls sent (so "all input tokens" = answer prompts + memory's own calls);
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
        self.calls = 0
        self.input_tokens = 0
        self._started: dict = {}

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        self.calls += 1
        self.input_tokens += count_tokens(messages[0])
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
    extra_call_tokens: int = 0  # prompt tokens of the extra (summary) calls
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
        elif message.type == "system" and message.id == "retrieved-memories":
            parts["retrieved"].append(text)
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
            ``start_session(session_id, stored) -> stored`` (called when the session changes;
            returns what to carry over) and ``embedding_calls`` (a running count of embedding
            calls). Without ``start_session`` the history runs on across sessions.
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
                stored = list(strategy.start_session(session, stored))
        embeddings_before = getattr(strategy, "embedding_calls", 0)
        model_before, calls_before, tokens_before = timer.seconds, timer.calls, timer.input_tokens
        start = time.perf_counter()
        new_message = HumanMessage(turn["text"])
        prompt = strategy.prompt(system, stored, new_message)
        prompt_done = time.perf_counter()
        reply = timed.invoke(prompt)
        answer_done = time.perf_counter()
        stored, _ = strategy.after_turn(timed, [*stored, new_message, reply])
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
            extra_calls=timer.calls - calls_before - 1,  # every model call but the answer
            extra_embeddings=getattr(strategy, "embedding_calls", 0) - embeddings_before,
            overhead_ms=overhead * 1000,
            extra_call_tokens=timer.input_tokens - tokens_before - count_tokens(prompt),
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
            "extra call tokens": sum(r.extra_call_tokens for r in rows),
            "all input tokens (total)": total + sum(r.extra_call_tokens for r in rows),
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


# --- the strategies compared, and the headless command ------------------------------------------


def default_strategies(store, user_id: str) -> list:
    """The strategies lesson 08 compares, full history first (the reference).

    Args:
        store: a ``helpers.milvus_store.MemoryStore`` (retrieval and layered memory share it,
            under different user ids so they do not see each other's rows).
        user_id: the conversation's user id.
    """
    from helpers.layered import LayeredMemory
    from helpers.milvus_store import RetrievalMemory
    from helpers.strategies import CountWindow, FullHistory, RunningSummary, TokenWindow
    from helpers.summarization import TokenTrigger

    return [
        FullHistory(),
        CountWindow(20),
        TokenWindow(800),
        RunningSummary(TokenTrigger(1200, 300), max_summary_tokens=600),
        RetrievalMemory(store, f"{user_id}-retrieval", "session-1", top_k=3),
        LayeredMemory(store, f"{user_id}-layered", "session-1"),
    ]


# strategy name prefix -> (when memory works, what reaches the model); the article's columns
_KINDS = {
    "full history": ("never", "everything"),
    "count window": ("every turn (a slice)", "the newest messages"),
    "token window": ("every turn (trim_messages)", "the newest messages within the budget"),
    "summary": ("when the history passes the trigger", "a running summary + recent messages"),
    "retrieval": ("every turn (embed + search + insert)", "top-k turns by meaning, any session"),
    "layered": ("every turn; summary calls now and then",
                "window + running summary + top-k from Milvus"),
}


def cost_table_rows(runs: dict[str, list[EvalTurn]]) -> list[dict]:
    """The article's cost table (trigger, cost, what is kept) with measured numbers: per strategy,
    when it works, the mean prompt tokens per turn, extra model calls and embedding calls per 100
    turns, what reaches the model, and the evidence recall."""
    rows = []
    for name, turns in runs.items():
        trigger, kept = next((v for k, v in _KINDS.items() if name.startswith(k)), ("", ""))
        probes = [t for t in turns if t.probe]
        n = max(len(turns), 1)
        rows.append({
            "strategy": name,
            "trigger": trigger,
            "prompt tokens / turn": round(sum(t.prompt_tokens for t in turns) / n),
            "extra calls / 100 turns": round(100 * sum(t.extra_calls for t in turns) / n, 1),
            "embeddings / 100 turns": round(100 * sum(t.extra_embeddings for t in turns) / n, 1),
            "what is kept": kept,
            "evidence recall": round(sum(bool(t.evidence_reached) for t in probes)
                                     / len(probes), 3) if probes else None,
        })
    return rows


def results_markdown(table: list[dict], conversation: dict) -> str:
    """The results table as Markdown, with a line on what was measured."""
    columns = list(table[0])
    lines = [
        f"# Memory strategies on `{conversation['id']}`",
        "",
        conversation["description"],
        "Tokens as `helpers.tokens` counts them (cl100k_base + OpenAI's per-message rule); "
        "'%' is relative to full history; evidence recall = probes whose answer reached the "
        "model / all probes.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for row in table:
        lines.append("| " + " | ".join(str(row[c]) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m helpers.evaluation``: run every strategy on the long conversation headless
    and write ``results.md``, ``results.json`` (summary + per-turn rows) to ``--out``."""
    import argparse

    from helpers.config import project_root, runtime_dir
    from helpers.milvus_store import MemoryStore, quiet_milvus_logs
    from helpers.models import get_chat_model, show_setup

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=project_root() / "build" / "evaluation")
    parser.add_argument("--turns", type=int, default=None, help="stop after this many turns")
    parser.add_argument("--conversation", type=Path, default=None)
    args = parser.parse_args(argv)
    settings = show_setup()
    quiet_milvus_logs()
    conversation = load_long_conversation(args.conversation)
    model = get_chat_model()
    # a Lite file of its own, so a notebook holding the course's Lite folder does not block it
    uri = (str(runtime_dir() / "milvus" / "evaluation.db") if settings.milvus_kind == "lite"
           else settings.milvus_uri)
    print(f"The evaluation stores its memories in the collection 'evaluation' at {uri}")
    with MemoryStore(uri=uri, token=settings.milvus_token, collection="evaluation",
                     drop_existing=True) as store:
        runs = {}
        for strategy in default_strategies(store, conversation["user_id"]):
            runs[strategy.name] = evaluate_strategy(strategy, conversation, model, args.turns)
    table = summarize_runs(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.md").write_text(results_markdown(table, conversation), encoding="utf-8")
    (args.out / "results.json").write_text(
        json.dumps({"summary": table, "turns": runs_to_json(runs)}, indent=1), encoding="utf-8")
    print(results_markdown(table, conversation))
    print(f"written: {args.out / 'results.md'}, {args.out / 'results.json'}")
    return 0


# --- the closing exercise: your own conversation -----------------------------------------------


def load_exported_conversation(path: str | Path) -> list[BaseMessage]:
    """Read an exported conversation: a JSON list of ``{"role": ..., "content": ...}`` objects
    (roles ``system``, ``user``/``human``, ``assistant``/``ai``), as most chat tools export.

    Raises:
        ValueError: not a JSON list of role/content objects (the message says which item).
    """
    from langchain_core.messages import convert_to_messages

    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a JSON list of {{'role', 'content'}} objects")
    for i, item in enumerate(raw):
        if not (isinstance(item, dict) and isinstance(item.get("role"), str)
                and isinstance(item.get("content"), str)):
            raise ValueError(f"{path}: item {i} is not a {{'role': str, 'content': str}} object")
    return convert_to_messages([(item["role"], item["content"]) for item in raw])


def context_fit(messages: Sequence[BaseMessage], reply_tokens: int = 1000) -> list[dict]:
    """How the whole conversation fits common models' context windows.

    Args:
        messages: the conversation.
        reply_tokens: room kept for the reply (tokens).

    Returns:
        One row per model of ``data/context_windows.json``: its window, the share the
        conversation (plus ``reply_tokens``) takes, and whether it fits. Token counts are
        cl100k_base estimates; other providers' tokenizers differ by some percent.
    """
    windows = json.loads((data_dir() / "context_windows.json").read_text(encoding="utf-8"))
    total = count_tokens(messages) + reply_tokens
    return [
        {"model": m["model"], "provider": m["provider"], "context window": m["context_tokens"],
         "conversation + reply": total,
         "% of window": round(100 * total / m["context_tokens"], 1),
         "fits": total <= m["context_tokens"], "source": m["source"]}
        for m in windows["models"]
    ]


if __name__ == "__main__":
    import sys

    sys.exit(main())
