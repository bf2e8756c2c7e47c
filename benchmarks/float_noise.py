"""Another machine's floats, on this one: every embedding the course makes is perturbed by relative noise
(``perturbed_embeddings``), the same noise for the same text, as one machine would give. Used by
``tests/test_saved_results.py`` and ``benchmarks/bench_float_noise.py``."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator

import numpy as np

from helpers.course import embeddings


class PerturbedEngine:
    """The embedding engine, each number of a vector multiplied by ``1 + noise * N(0, 1)``, seeded by
    ``seed`` and the text: one text always gets the same vector."""

    def __init__(self, engine, noise: float, seed: str = "machine-b") -> None:
        self.engine, self.noise, self.seed = engine, noise, seed

    def encode(self, texts, is_query=False):
        vectors = np.array(self.engine.encode(texts, is_query), dtype=np.float32).reshape(len(texts), -1)
        for row, text in zip(vectors, texts, strict=True):
            key = hashlib.sha256(f"{self.seed}|{is_query}|{text}".encode()).digest()[:8]
            noise = np.random.default_rng(int.from_bytes(key, "little")).standard_normal(row.shape)
            row *= (1 + self.noise * noise).astype(np.float32)
        return vectors


@contextlib.contextmanager
def perturbed_embeddings(noise: float, seed: str = "machine-b") -> Iterator[PerturbedEngine]:
    """Within the block every embedding is perturbed; the process's vector cache is emptied on entry and
    exit, so no perturbed vector outlives it."""
    real = embeddings._engine
    engine = PerturbedEngine(real(), noise, seed)
    embeddings.vector_cache.clear()
    embeddings._engine = lambda: engine
    try:
        yield engine
    finally:
        embeddings._engine = real
        embeddings.vector_cache.clear()
