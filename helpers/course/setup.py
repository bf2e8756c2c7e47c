"""``show_setup()``: the first code cell of every lesson (course plumbing).

It prints one line naming the active chat model, embeddings and database, tests a configured key
once (no tokens spent), falls back to the offline models for a part whose key is refused, and
returns the ``Settings`` the lesson passes on. Provider errors become one plain sentence.
"""

from __future__ import annotations

import sys

from helpers.config import OFFLINE, OFFLINE_EMBEDDING_MODEL, Settings, load_settings


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
        The ``Settings`` to pass on (``get_chat_model(settings)``, ``get_embeddings(settings)``,
        ``MemoryStore(settings=settings)``); a part that fell back is offline in them. Nothing is
        kept in a global: a function given no settings reads the environment again. Never
        raises for a missing or wrong key.
    """
    settings = load_settings()
    notes = list(settings.notes)
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
        settings = _offline_for(settings, offline_parts)
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
