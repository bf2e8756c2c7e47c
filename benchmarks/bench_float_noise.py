"""Benchmark: which choices of the course flip under float noise (issue 36).

Run from the project root::

    .venv/bin/python benchmarks/bench_float_noise.py [--noise 1e-5 1e-3] [--conversations long_conversation]

Replays each conversation through lesson 08's strategies (``evaluate.default_strategies``) once as it is,
then with every embedding perturbed (``float_noise.perturbed_embeddings``) at each noise level, and
prints per strategy: the steps whose prompt differs, whose reply differs, and the headline numbers'
change. It prints a table; it is not a timed test."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from float_noise import perturbed_embeddings  # noqa: E402

from helpers import evaluate  # noqa: E402
from helpers.course.data import data_dir  # noqa: E402
from helpers.course.milvus import open_store, quiet_milvus_logs  # noqa: E402
from helpers.course.setup import get_chat_model  # noqa: E402


def replay(conversation: dict, folder: str) -> dict:
    with open_store("noise", uri=f"{folder}/noise.db", drop_existing=True) as store:
        return {s.name: evaluate.evaluate_strategy(s, conversation, get_chat_model(), progress=False)
                for s in evaluate.default_strategies(store, conversation["user_id"],
                                                     conversation.get("speakers"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noise", type=float, nargs="+", default=[1e-6, 1e-5, 1e-4, 1e-3])
    parser.add_argument("--conversations", nargs="+",
                        default=["long_conversation", "long_conversation_ko"])
    args = parser.parse_args()
    quiet_milvus_logs()
    print("| conversation | noise | strategy | prompts differ | replies differ | prompt tokens (total) "
          "| recall |")
    print("|---|---|---|---|---|---|---|")
    for name in args.conversations:
        conversation = evaluate.load_long_conversation(data_dir() / "evaluation" / f"{name}.json")
        with tempfile.TemporaryDirectory() as folder:
            base = replay(conversation, folder)
            for noise in args.noise:
                with perturbed_embeddings(noise):
                    runs = replay(conversation, folder)
                rows = evaluate.summarize_runs(runs)
                for (strategy, records), table in zip(runs.items(), rows, strict=True):
                    was = base[strategy]
                    prompts = sum(a.prompt_tokens != b.prompt_tokens or [m.text for m in a.prompt] !=
                                  [m.text for m in b.prompt] for a, b in zip(was, records, strict=True))
                    replies = sum(a.reply != b.reply for a, b in zip(was, records, strict=True))
                    before = evaluate.summarize_runs({strategy: was})[0]
                    print(f"| {name} | {noise:g} | {strategy} | {prompts} | {replies} | "
                          f"{before['prompt tokens (total)']} -> {table['prompt tokens (total)']} | "
                          f"{before['evidence recall']} -> {table['evidence recall']} |", flush=True)


if __name__ == "__main__":
    main()
