"""``make evaluate`` (``python -m helpers.course.measure``: every strategy of ``helpers.evaluate``'s
``default_strategies`` on one long conversation, headless) and lesson 08's closing exercise (your own
chat export against context windows: ``load_exported_conversation``, ``context_fit``)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from langchain_core.messages import BaseMessage

from helpers import evaluate
from helpers.config import project_root, runtime_dir, short_path
from helpers.tokens import count_tokens


def saved_result(results: dict, conversation: dict, measured: str) -> dict:
    """What ``data/evaluation/results_<conversation>.json`` holds (lesson 08 can show it instead of a
    live run): ``measured`` (command, models, date), ``conversation``, ``summary``, ``per_category``."""
    return {"measured": measured, "conversation": conversation["id"], "summary": results["summary"],
            "per_category": evaluate.per_category_recall(results["turns"], conversation)}


# How far a live replay may land from a saved one: an early reply that differs on another machine is
# re-sent by every later prompt; a change to what the memory sends is not within it (docs/design-notes.md,
# "Saved numbers on another machine").
TOKEN_TOLERANCE = 0.02  #: relative, every count column (tokens, calls, embeddings, dollars); a count: >= 1
PROBE_TOLERANCE = 2  #: probes, in every share column and in "unanswerable answered"
_SHARES = ("evidence recall", "answers correct")


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


def results_markdown(table: list[dict], conversation: dict) -> str:
    """The results table as Markdown, with a line on what was measured."""
    columns = list(table[0])
    lines = [f"# Memory strategies on `{conversation['id']}`", "", conversation["description"],
             "Tokens as `helpers.tokens` counts them (cl100k_base + OpenAI's per-message rule); "
             "'%' is relative to full history; evidence recall = probes whose evidence reached "
             "the model / answerable probes.", "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in table]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run every strategy on a long conversation headless; write results to ``--out``."""
    import argparse
    import datetime

    from helpers.course.milvus import open_store, quiet_milvus_logs
    from helpers.course.setup import get_chat_model, show_setup

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=project_root() / "build" / "evaluation")
    parser.add_argument("--turns", type=int, default=None, help="stop after this many turns")
    parser.add_argument("--conversation", type=Path, default=None)
    parser.add_argument("--save", type=Path, default=None,
                        help="also write the saved result lesson 08 shows here")
    args = parser.parse_args(argv)
    try:
        conversation = evaluate.load_long_conversation(args.conversation)
    except (OSError, ValueError) as exc:  # one sentence on stderr, exit status 1, no traceback
        raise SystemExit(str(exc)) from None
    settings = show_setup()
    quiet_milvus_logs()
    model = get_chat_model(settings)
    # a Lite folder of its own, so a notebook holding a lesson's folder does not block it
    uri = (str(runtime_dir() / "milvus" / "evaluation.db") if settings.milvus_kind == "lite"
           else settings.milvus_uri)
    print(f"The evaluation stores its rows in the collection 'evaluation' at {uri}")
    with open_store("evaluation", uri=uri, settings=settings, drop_existing=True) as store:
        runs = {s.name: evaluate.evaluate_strategy(s, conversation, model, args.turns)
                for s in evaluate.default_strategies(store, conversation["user_id"],
                                                     conversation.get("speakers"))}
    table = evaluate.summarize_runs(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.md").write_text(results_markdown(table, conversation), encoding="utf-8")
    results = {"summary": table, "turns": evaluate.runs_to_json(runs)}
    (args.out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.save:
        from helpers.course.embeddings import fingerprint

        measured = (f"python -m helpers.course.measure --conversation {args.conversation or ''} "
                    f"(evidence recall by turn id; {settings.describe().split(' | Database')[0]} | "
                    f"Database: Milvus {settings.milvus_kind} at {short_path(uri)}; "
                    f"vectors {fingerprint()}), {datetime.date.today().isoformat()}")
        args.save.write_text(json.dumps(saved_result(results, conversation, measured), indent=1,
                                        ensure_ascii=False) + "\n", encoding="utf-8")
    print(results_markdown(table, conversation))
    print(f"written: {args.out / 'results.md'}, {args.out / 'results.json'}")
    return 0


def load_exported_conversation(path: str | Path) -> list[BaseMessage]:
    """Read a chat export: a JSON list of ``{"role": ..., "content": ...}`` objects, as most chat tools export
    (UTF-8, a BOM allowed; roles in any case; ``model``: Gemini's assistant; a tool or function result is
    refused, not skipped: its tokens count; text made NFC: one form whatever keyboard typed it).
    ValueError naming the file and line (not JSON) or the item."""
    from langchain_core.messages import convert_to_messages

    roles = ("system", "developer", "user", "human", "assistant", "ai", "model")
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON (cut short?): {exc}") from None
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a JSON list of {{'role', 'content'}} objects")
    for i, item in enumerate(raw):
        if not (isinstance(item, dict) and isinstance(item.get("role"), str)
                and isinstance(item.get("content"), str)):
            raise ValueError(f"{path}: item {i} is not a {{'role': str, 'content': str}} object")
        if item["role"].lower() not in roles:
            raise ValueError(f"{path}: item {i} has role {item['role']!r}; accepted, any case: "
                             f"{', '.join(roles)} (a tool or function result: make it 'user' or remove it)")
    return convert_to_messages([("ai" if (role := item["role"].lower()) == "model" else role,
                                 unicodedata.normalize("NFC", item["content"])) for item in raw])


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


if __name__ == "__main__":
    raise SystemExit(main())
