"""Deterministic embeddings for tests where the embedding model is not the subject: a store's
isolation, chunking, ids or filters behave the same with any vectors, and these are instant."""

from __future__ import annotations

import hashlib
import math

from langchain_core.embeddings import Embeddings


class HashEmbeddings(Embeddings):
    """Unit vectors of ``dim`` floats from SHA-256 of the text; counts the texts it embeds."""

    def __init__(self, dim: int = 16) -> None:
        self.dim = dim
        self.texts = 0

    def _vector(self, text: str) -> list[float]:
        raw, counter = [], 0
        while len(raw) < self.dim:
            raw += [b - 127.5 for b in hashlib.sha256(f"{counter}:{text}".encode()).digest()]
            counter += 1
        raw = raw[: self.dim]
        norm = math.sqrt(sum(x * x for x in raw))
        return [x / norm for x in raw]

    def embed_documents(self, texts):
        self.texts += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text):
        self.texts += 1
        return self._vector(text)
