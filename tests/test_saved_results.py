"""Saved results hold on another machine: every embedding the course makes is perturbed (relative noise
``NOISE``, a fixed seed per text, as another CPU's floats would differ), lesson 08's conversations are
replayed through every strategy, and each saved number must stay within the tolerance stated once in
``helpers.course.measure`` (docs/design-notes.md, "Saved numbers on another machine"). The perturbation:
``benchmarks/float_noise.py``; how many choices flip at each noise level: ``bench_float_noise.py``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from float_noise import perturbed_embeddings  # noqa: E402

from helpers.course import embeddings  # noqa: E402
from helpers.course.measure import saved_differences  # noqa: E402
from helpers.evaluate import (  # noqa: E402
    default_strategies,
    evaluate_strategy,
    load_long_conversation,
    summarize_runs,
)

# Relative, per number of a vector: far above the float noise between two CPUs running one binary
# (about 1e-7 of a float32), far below what changes a text's meaning (e5 cosines of related and
# unrelated sentences differ by 1e-2 and more).
NOISE = 1e-5
# The conversations whose saved results lesson 08 shows. In CI: the one it replays live (30 s); `-m slow`
# adds the others (about 4 minutes more on 2 cores).
CONVERSATIONS = ["long_conversation",
                 *(pytest.param(n, marks=pytest.mark.slow)
                   for n in ("long_conversation_ko", "hard_conversation", "friends_conversation",
                             "heldout_two_person", "heldout_assistant"))]


@pytest.fixture
def perturbed():
    """Every embedding made while the test runs is perturbed by ``NOISE``; no perturbed vector outlives it."""
    with perturbed_embeddings(NOISE) as engine:
        yield engine


def test_the_perturbation_moves_every_vector_a_little_and_always_the_same_way(perturbed):
    first = embeddings.vector_cache.vectors(["제 고향은 전주예요.", "My dog is Bori."])
    embeddings.vector_cache.clear()
    again = embeddings.vector_cache.vectors(["제 고향은 전주예요.", "My dog is Bori."])
    real = np.asarray(perturbed.engine.encode(["제 고향은 전주예요.", "My dog is Bori."]))
    assert np.array_equal(first, again)  # one text, one vector: a machine, not a dice
    change = np.abs(first - real) / np.abs(real).clip(1e-6)
    assert 1e-7 < float(np.median(change)) < 1e-4  # noise at the stated size, on every number


@pytest.mark.parametrize("name", CONVERSATIONS)
def test_saved_results_hold_with_every_embedding_perturbed(perturbed, tmp_path, model, name):
    from helpers.course.data import data_dir
    from helpers.course.milvus import open_store, quiet_milvus_logs

    quiet_milvus_logs()
    conversation = load_long_conversation(data_dir() / "evaluation" / f"{name}.json")
    saved = json.loads((data_dir() / "evaluation" / f"results_{name}.json").read_text(encoding="utf-8"))
    with open_store("perturbed", uri=str(tmp_path / "perturbed.db"), drop_existing=True) as store:
        runs = {s.name: evaluate_strategy(s, conversation, model, progress=False)
                for s in default_strategies(store, conversation["user_id"], conversation.get("speakers"))}
    probes = sum(1 for p in conversation["probes"] if p["expects"])
    assert saved_differences(summarize_runs(runs), saved["summary"], probes) == []
