"""``make evaluate``: every strategy of ``helpers.evaluate``'s ``default_strategies`` replayed on one long
conversation, headless, as lesson 08 replays them; ``--save`` writes the saved result lesson 08 shows.

``python scripts/measure.py --out build/evaluation [--conversation data/evaluation/<name>.json]
[--save data/evaluation/results_<name>.json] [--turns N]``"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import evaluate  # noqa: E402
from helpers.config import project_root, runtime_dir, short_path  # noqa: E402

FINGERPRINT_TEXTS = ("My dog is called Bori.", "제 고향은 전주예요.", "What is my name?", "제 이름이 뭐예요?")


def fingerprint() -> str:
    """12 hex digits of SHA-1 over the exact bits of this machine's vectors of ``FINGERPRINT_TEXTS`` (both
    roles): equal on two machines, their embedder gives the same vectors. Saved results name the one
    they were made with, so a different number elsewhere can be told apart from a different embedder."""
    import hashlib

    from helpers.course.embeddings import _engine

    bits = _engine().encode(list(FINGERPRINT_TEXTS), False).tobytes()
    bits += _engine().encode(list(FINGERPRINT_TEXTS), True).tobytes()
    return hashlib.sha1(bits).hexdigest()[:12]


def saved_result(results: dict, conversation: dict, measured: str) -> dict:
    """What ``data/evaluation/results_<conversation>.json`` holds (lesson 08 can show it instead of a
    live run): ``measured`` (command, models, date), ``conversation``, ``summary``, ``per_category``."""
    return {"measured": measured, "conversation": conversation["id"], "summary": results["summary"],
            "per_category": evaluate.per_category_recall(results["turns"], conversation)}


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
    uri = (str(runtime_dir() / "milvus" / "evaluation.db") if settings.milvus_backend == "lite"
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
        measured = (f"python scripts/measure.py --conversation {args.conversation or ''} "
                    f"(evidence recall by turn id; {settings.describe().split(' | Database')[0]} | "
                    f"Database: Milvus {settings.milvus_backend} at {short_path(uri)}; "
                    f"vectors {fingerprint()}), {datetime.date.today().isoformat()}")
        args.save.write_text(json.dumps(saved_result(results, conversation, measured), indent=1,
                                        ensure_ascii=False) + "\n", encoding="utf-8")
    print(results_markdown(table, conversation))
    print(f"written: {args.out / 'results.md'}, {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
