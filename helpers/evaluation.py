"""The measurement harness (lesson 08, ``make evaluate``): every strategy on one long conversation.

``evaluate_strategy(strategy, conversation, model)`` replays the long conversation
(``data/evaluation/``, made by ``scripts/make_long_conversation.py``) through a strategy with the
one loop, ``helpers.replay.replay``, whose ``TurnRecord`` holds the costs of each turn (prompt
tokens, the memory's own model and embedding calls, its overhead in ms). This module adds, for
probe turns:

* ``evidence_reached``: whether the facts that answer the probe reached the model. A probe lists
  its evidence turns and the words that carry the answer (``expects``); the evidence reached the
  model if every evidence turn is in the prompt by message id (the prompt's typed parts name their
  sources, ``helpers.memory.PromptPart``): sent verbatim, retrieved from Milvus, or folded into the
  running summary with the answer's words still in it. Words that appear only in some other
  message do not count. ``how`` says which. This measures memory, not the model: a model can
  still answer badly.
* ``answer_correct``: whether the reply contains the expected words. With the offline stand-in
  this mostly mirrors evidence recall; with a real model configured it is answer accuracy.

Evidence recall of a strategy = probes whose evidence reached the model / answerable probes (a
probe with no evidence, "unanswerable", is left out).
``summarize_runs`` makes the results table; ``python -m helpers.evaluation`` (``make evaluate``)
runs ``default_strategies`` headless.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage

from helpers.data import data_dir
from helpers.memory import RETRIEVED, SUMMARY, VERBATIM, MemoryStrategy, Prompt, PromptPart, message_id
from helpers.recall import classify_turn
from helpers.replay import Turn, TurnRecord, replay, totals
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


def evidence_reached(prompt: Prompt, probe: dict,
                     evidence_ids: dict[str, str] | None = None) -> tuple[bool, str | None]:
    """Did the turns that answer ``probe`` reach the model, and how?

    The honest measure (``evidence_ids`` given, as ``evaluate_strategy`` does): every evidence
    turn of the probe must be in the prompt, found by message id in the typed parts' ``sources``
    (``helpers.memory.PromptPart``): sent verbatim, retrieved, or folded into the running summary.
    Through the summary only counts when the answer's words (``expects``) survived the folding,
    i.e. are in the text of the parts that carry the evidence. Words that happen to appear in some
    other message (an earlier question still in the window, an answer the model gave) count for
    nothing: that leak made the word-only measure lenient (50 of a 20-message window's 52 "hits"
    on real conversations).

    Args:
        prompt: the ``Prompt`` the answer call was sent.
        probe: a probe of the conversation (``evidence``: turn ids; ``expects``: answer words).
        evidence_ids: data turn id -> message id in the replay (``replay_message_ids``). ``None``:
            the word-only measure, for prompts whose parts name no sources (every expected word
            anywhere in the verbatim, summary or retrieved text).

    Returns:
        ``(reached, how)``: ``how`` is ``"verbatim"``, ``"summary"``, ``"retrieved"``, ``"mixed"``
        (evidence spread over several kinds of parts) or ``None`` when not reached.
    """
    words = [word.lower() for word in probe["expects"]]
    if evidence_ids is None:
        texts = {kind: "\n".join(p.text for p in prompt.of_kind(kind)).lower()
                 for kind in (VERBATIM, SUMMARY, RETRIEVED)}
        if not all(word in "\n".join(texts.values()) for word in words):
            return False, None
        for how in (VERBATIM, SUMMARY, RETRIEVED):
            if all(word in texts[how] for word in words):
                return True, how
        return True, "mixed"
    covering: dict[str, list[PromptPart]] = {}
    for kind in (VERBATIM, RETRIEVED, SUMMARY):
        for piece in prompt.of_kind(kind):
            for source in piece.sources:
                covering.setdefault(source, []).append(piece)
    needed = [evidence_ids.get(turn_id) for turn_id in probe["evidence"]]
    if not needed or any(m is None or m not in covering for m in needed):
        return False, None
    carriers = {id(p): p for m in needed for p in covering[m]}.values()
    direct = {m for m in needed if any(p.kind != SUMMARY for p in covering[m])}
    if len(direct) < len(needed):  # some evidence only through the summary: its facts must be there
        text = "\n".join(p.text for p in carriers).lower()
        if not all(word in text for word in words):
            return False, None
    kinds = {p.kind for p in carriers}
    return True, kinds.pop() if len(kinds) == 1 else "mixed"


def replay_message_ids(turns: Sequence[dict]) -> dict[str, str]:
    """Data turn id -> the message id the replay gives it (``helpers.memory.message_id``), for
    the turns ``conversation_turns`` makes: a user line is ``t<n>-user``, an assistant line of a
    two-speaker file the ``t<n>-reply`` of the user turn before it."""
    ids: dict[str, str] = {}
    number, reply_open = 0, False
    for t in turns:
        if t.get("speaker") == "assistant":
            if number and reply_open:
                ids[t["id"]], reply_open = message_id(number, "reply"), False
            continue
        number += 1
        ids[t["id"]], reply_open = message_id(number, "user"), True
    return ids


def evaluate_strategy(
    strategy: MemoryStrategy,
    conversation: dict,
    model: BaseChatModel,
    max_turns: int | None = None,
    progress: bool = True,
) -> list[TurnRecord]:
    """Replay ``conversation`` through one strategy (``helpers.replay.replay``) and score its
    probe turns.

    Args:
        strategy: any ``helpers.memory.MemoryStrategy``; ``start_session`` is called whenever the
            conversation's session changes.
        conversation: from ``load_long_conversation()``.
        model: the chat model.
        max_turns: stop after this many turns (default: all).
        progress: show a tqdm progress bar.

    Returns:
        One ``TurnRecord`` per user turn (an assistant line of a two-speaker file is the reply of
        the turn before it, see ``conversation_turns``); probe turns have ``probe``,
        ``evidence_reached``, ``how`` and ``answer_correct`` set. A probe with no evidence
        (unanswerable) is not a probe for recall: its ``how`` is ``"unanswerable"`` and its
        ``answer_correct`` says whether the reply says it does not know
        (``recall.classify_turn(reply, "assistant") == "dont_know"``).
    """
    from tqdm.auto import tqdm

    probes = {p["turn_id"]: p for p in conversation["probes"]}
    turns = conversation_turns(conversation["turns"][:max_turns])
    evidence_ids = replay_message_ids(conversation["turns"][:max_turns])

    def score(record: TurnRecord, turn: Turn) -> None:
        probe = probes.get(turn.turn_id)
        if probe is not None and not probe["expects"]:
            record.how = "unanswerable"  # no evidence exists: not counted in evidence recall
            # the right answer is "I don't know": anything else was answered from something else
            record.answer_correct = classify_turn(record.reply, "assistant") == "dont_know"
        elif probe is not None:
            record.probe = True
            record.evidence_reached, record.how = evidence_reached(record.prompt, probe, evidence_ids)
            record.answer_correct = all(w.lower() in record.reply.lower() for w in probe["expects"])

    return replay(strategy, tqdm(turns, desc=strategy.name, disable=not progress), model,
                  conversation["system"], on_turn=score)


def conversation_turns(turns: Sequence[dict]) -> list[Turn]:
    """The ``Turn`` objects to replay. A two-speaker file (turns with ``speaker``, e.g.
    ``hard_conversation.json``): each assistant line becomes the recorded reply of the user turn
    before it (an AI message, no model call); user turns without one (the probes) are answered by
    the model. Session dates go with each turn."""
    out: list[Turn] = []
    for t in turns:
        if t.get("speaker") == "assistant":
            if out and out[-1].reply is None:
                out[-1] = Turn(out[-1].text, out[-1].session_id, out[-1].turn_id, out[-1].date,
                               t["text"])
            continue
        out.append(Turn(t["text"], t["session_id"], t["id"], t.get("date", "")))
    return out


def summarize_runs(runs: dict[str, list[TurnRecord]]) -> list[dict]:
    """One row per strategy: totals (``helpers.replay.totals``) and recall; the first strategy
    is the reference for the ``%`` column (full history)."""
    table = []
    full_total = None
    for name, records in runs.items():
        total = totals(records)
        prompt_total = total["prompt tokens (total)"]
        full_total = full_total or prompt_total
        table.append({
            "strategy": name,
            "prompt tokens at last turn": total["prompt tokens (last turn)"],
            "prompt tokens (total)": prompt_total,
            "% of first strategy's tokens": round(100 * prompt_total / full_total, 1)
            if full_total else None,
            "extra calls": total["extra calls"],
            "extra call tokens": total["extra call tokens"],
            "all input tokens (total)": prompt_total + total["extra call tokens"],
            "extra embeddings": total["extra embeddings"],
            "overhead ms (p50)": total["overhead ms (p50)"],
            "overhead ms without embedding (p50)": total["overhead ms without embedding (p50)"],
            "evidence recall": total["evidence recall"],
            "answers correct": total["answers correct"],
            "unanswerable answered": _unanswerable_answered(records),
        })
    return table


def _unanswerable_answered(records: Sequence[TurnRecord]) -> str | None:
    """``"k/n"``: of the n probes with no evidence, k got an answer other than "I don't know"
    (answered from memories that do not hold the answer); ``None`` when there are none."""
    unanswerable = [r for r in records if r.how == "unanswerable"]
    if not unanswerable:
        return None
    return f"{sum(r.answer_correct is False for r in unanswerable)}/{len(unanswerable)}"


_JSON_FIELDS = ("strategy", "turn", "turn_id", "session_id", "prompt_tokens", "reply_tokens",
                "memory_calls", "memory_call_input_tokens", "memory_call_output_tokens",
                "embedding_calls", "overhead_ms", "embedding_ms", "probe", "evidence_reached",
                "how", "answer_correct")


def runs_to_json(runs: dict[str, list[TurnRecord]]) -> dict:
    """Per-turn numbers of every strategy, JSON-ready (no messages)."""
    return {name: [{f: getattr(r, f) for f in _JSON_FIELDS} for r in records]
            for name, records in runs.items()}


# --- the strategies compared, and the headless command ------------------------------------------


def default_strategies(store, user_id: str) -> list:
    """The strategies lesson 08 compares, full history first (the reference).

    Args:
        store: a ``helpers.milvus_store.MemoryStore`` (retrieval and layered memory share it,
            under different user ids so they do not see each other's rows).
        user_id: the conversation's user id.
    """
    from helpers.layered import LayeredMemory
    from helpers.retrieval import RetrievalMemory
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


def per_category_recall(turns: dict[str, list[dict]], conversation: dict) -> dict[str, dict]:
    """Evidence recall per probe category (single-hop, multi-hop, temporal, updated-fact), per
    strategy.

    Args:
        turns: ``runs_to_json(runs)``: strategy -> per-turn rows (``turn_id``, ``probe``,
            ``evidence_reached``).
        conversation: the replayed conversation (its probes' ``category``; a probe without one
            counts as ``single-hop``, or ``updated-fact`` when ``changed``).

    Returns:
        ``{strategy: {category: recall, ...}}``, recall rounded to 3 places, categories sorted.
    """
    category = {p["turn_id"]: p.get("category") or ("updated-fact" if p.get("changed")
                                                     else "single-hop")
                for p in conversation["probes"]}
    out = {}
    for name, rows in turns.items():
        counts: dict[str, list[int]] = {}
        for row in rows:
            if row["probe"]:
                c = counts.setdefault(category[row["turn_id"]], [0, 0])
                c[0] += bool(row["evidence_reached"])
                c[1] += 1
        out[name] = {k: round(v[0] / v[1], 3) for k, v in sorted(counts.items())}
    return out


def saved_result(results: dict, conversation: dict, measured: str) -> dict:
    """What ``data/evaluation/results_<conversation>.json`` holds (lesson 08 shows it instead
    of a live run): ``measured`` (the command, the models, the date), ``conversation`` (its
    id), ``summary`` (``summarize_runs``) and ``per_category`` (``per_category_recall``).

    Args:
        results: ``{"summary": ..., "turns": ...}`` as ``main`` writes ``results.json``.
    """
    return {"measured": measured, "conversation": conversation["id"],
            "summary": results["summary"],
            "per_category": per_category_recall(results["turns"], conversation)}


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

    from helpers.config import _short_path, project_root, runtime_dir
    from helpers.course.setup import show_setup
    from helpers.milvus_store import MemoryStore, quiet_milvus_logs
    from helpers.models import get_chat_model

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=project_root() / "build" / "evaluation")
    parser.add_argument("--turns", type=int, default=None, help="stop after this many turns")
    parser.add_argument("--conversation", type=Path, default=None)
    parser.add_argument("--save", type=Path, default=None,
                        help="also write the saved result lesson 08 shows (saved_result) here")
    args = parser.parse_args(argv)
    settings = show_setup()
    quiet_milvus_logs()
    conversation = load_long_conversation(args.conversation)
    model = get_chat_model(settings)
    # a Lite file of its own, so a notebook holding the course's Lite folder does not block it
    uri = (str(runtime_dir() / "milvus" / "evaluation.db") if settings.milvus_kind == "lite"
           else settings.milvus_uri)
    print(f"The evaluation stores its memories in the collection 'evaluation' at {uri}")
    with MemoryStore(uri=uri, token=settings.milvus_token, collection="evaluation",
                     drop_existing=True, settings=settings, memory_fields=True) as store:
        runs = {}
        for strategy in default_strategies(store, conversation["user_id"]):
            runs[strategy.name] = evaluate_strategy(strategy, conversation, model, args.turns)
    table = summarize_runs(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.md").write_text(results_markdown(table, conversation), encoding="utf-8")
    results = {"summary": table, "turns": runs_to_json(runs)}
    (args.out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.save:
        import datetime

        measured = (f"python -m helpers.evaluation --conversation {args.conversation or ''} "
                    f"(evidence recall by turn id; {settings.describe().split(' | Database')[0]} | "
                    f"Database: Milvus {settings.milvus_kind} at {_short_path(uri)}), "
                    f"{datetime.date.today().isoformat()}")
        args.save.write_text(json.dumps(saved_result(results, conversation, measured), indent=1,
                                        ensure_ascii=False) + "\n", encoding="utf-8")
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
