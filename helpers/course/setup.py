"""``show_setup()``, the first code cell of every lesson, and ``get_chat_model()`` (plumbing);
provider errors become one plain sentence (``describe_provider_error``)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helpers import config
from helpers.config import OFFLINE, OFFLINE_CHAT_MODEL, OFFLINE_EMBEDDING_MODEL, Settings, load_settings

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel


def get_chat_model(settings: Settings | None = None, **kwargs: Any) -> BaseChatModel:
    """The configured chat model (``settings`` default ``load_settings()``): ``ChatOpenAI`` via
    ``init_chat_model`` at the OpenAI-compatible endpoint, ``temperature=0``, a 60 s timeout and 2
    retries unless ``kwargs`` say otherwise; offline, ``OfflineChatModel(**kwargs)``."""
    settings = settings or load_settings()
    if settings.chat_provider == OFFLINE:
        from helpers.course.offline_model import OfflineChatModel

        return OfflineChatModel(**kwargs)
    from langchain.chat_models import init_chat_model

    options = {"temperature": 0, "timeout": 60, "max_retries": 2, **kwargs}
    return init_chat_model(settings.chat_model, model_provider="openai", base_url=settings.chat_base_url,
                           api_key=settings.chat_api_key, **options)


def describe_provider_error(exc: BaseException, settings: Settings, part: str = "chat") -> str | None:
    """A plain sentence for an ``openai`` client error ``exc`` (key refused, endpoint unreachable,
    unknown model, rate limit or quota, other API error), or ``None`` if ``exc`` is not one.
    ``settings`` name the endpoint and model; ``part`` (``"chat"`` or ``"embeddings"``) the variables."""
    import openai

    if part == "embeddings":
        own_key = settings.embedding_api_key and settings.embedding_api_key != settings.chat_api_key
        key_var, url_var, model_var = ("EMBEDDING_API_KEY" if own_key else "OPENAI_API_KEY",
                                       "EMBEDDING_BASE_URL", "EMBEDDING_MODEL")
        model, where = settings.embedding_model, settings.embedding_base_url or "OpenAI's API"
    else:
        key_var, url_var, model_var = "OPENAI_API_KEY", "OPENAI_BASE_URL", "CHAT_MODEL"
        model, where = settings.chat_model, settings.chat_base_url or "OpenAI's API"
    fix = "Fix it in .env and restart the kernel, or remove the key to work offline."
    if _set_in_shell(key_var):  # what the kernel was started with wins over .env (config.read_environment)
        fix = (f"{key_var} is set in the shell that started JupyterLab, and it wins over .env: fix or unset "
               "it there and restart JupyterLab, or remove the key to work offline.")
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


def _set_in_shell(name: str) -> bool:  # in the process environment, with another value than .env's
    value = os.environ.get(name)
    return bool(value) and value != config.read_environment({"COURSE_DOTENV": os.environ.get(
        "COURSE_DOTENV", "")}).get(name)


def list_models(settings: Settings, part: str = "chat") -> tuple[str | None, list[str]]:
    """Test the key of ``part`` (``"chat"``: ``OPENAI_*``; ``"embeddings"``: ``EMBEDDING_*``) by asking
    for the model list (no tokens): ``(None, model ids)`` if it works (``[]``: the server has no list),
    else ``(a plain sentence, [])``."""
    import openai

    key, url = ((settings.embedding_api_key, settings.embedding_base_url) if part == "embeddings"
                else (settings.chat_api_key, settings.chat_base_url))
    client = openai.OpenAI(api_key=key, base_url=url, timeout=10, max_retries=0)
    try:
        return None, [m.id for m in client.models.list()]
    except (openai.AuthenticationError, openai.PermissionDeniedError, openai.APIConnectionError) as exc:
        return describe_provider_error(exc, settings, part), []
    except openai.APIError:
        return None, []  # e.g. a server without /models: the key may still be fine
    except Exception as exc:  # noqa: BLE001 - e.g. a web page (a captive portal) answering 200 with HTML
        url_var, where = (("EMBEDDING_BASE_URL", settings.embedding_base_url) if part == "embeddings"
                          else ("OPENAI_BASE_URL", settings.chat_base_url))
        return (f"{where or 'OpenAI API'} answered, but not as an OpenAI-compatible API "
                f"({type(exc).__name__}; a wrong {url_var}, or a network login page). Fix it in .env and "
                "restart the kernel, or remove the key to work offline."), []


def _install_plain_errors(settings: Settings) -> None:
    """In IPython, show as one plain sentence instead of a traceback: a provider's error (a real model or
    embeddings configured) and the course's own setup errors, whose message already says what to do (a
    Milvus Lite folder another kernel holds, a Milvus server not reachable)."""
    ipython = sys.modules.get("IPython")
    if (shell := ipython.get_ipython() if ipython else None) is None:
        return
    from helpers.course.milvus import LiteLockedError, MilvusUnavailableError

    plain: tuple[type[BaseException], ...] = (LiteLockedError, MilvusUnavailableError)
    if settings.chat_provider != OFFLINE or settings.embedding_provider != OFFLINE:
        import openai

        plain += (openai.APIError,)

    def handler(shell, etype, value, tb, tb_offset=None):  # IPython's custom_exc signature
        request = getattr(value, "request", None)
        part = "embeddings" if request is not None and "/embeddings" in str(request.url) else "chat"
        print(describe_provider_error(value, settings, part) or f"{etype.__name__}: {value}")
        return []

    shell.set_custom_exc(plain, handler)


def checked_settings() -> tuple[Settings, list[str]]:
    """``(settings, notes)``: the ``.env`` settings with each configured key tested once against the model
    list; a refused key, an unreachable endpoint or one that is no OpenAI-compatible API makes that part
    offline, with a sentence in ``notes`` (a ``CHAT_MODEL`` the endpoint does not list only gets a note:
    some providers list part of their models). Never raises for a missing or wrong key."""
    settings = load_settings()
    notes, offline = list(settings.notes), []
    for part, provider, name in (("chat", settings.chat_provider, "chat model"),
                                 ("embeddings", settings.embedding_provider, "embeddings")):
        if provider == OFFLINE:
            continue
        problem, models = list_models(settings, part)
        if problem:
            notes.append(f"{problem} This kernel uses the offline {name} for now.")
            offline.append(part)
        elif part == "chat" and models and settings.chat_model not in models:
            notes.append(f"CHAT_MODEL={settings.chat_model!r} is not in the model list of "
                         f"{settings.chat_base_url or 'OpenAI'}; calls may fail. "
                         f"Some it lists: {', '.join(sorted(models)[:5])}.")
    if "chat" in offline:
        settings = replace(settings, chat_provider=OFFLINE, chat_model=OFFLINE_CHAT_MODEL,
                           chat_base_url=None, chat_api_key=None)
    if "embeddings" in offline:
        settings = replace(settings, embedding_provider=OFFLINE, embedding_model=OFFLINE_EMBEDDING_MODEL,
                           embedding_base_url=None, embedding_api_key=None)
    return settings, notes


def show_setup() -> Settings:
    """Print one line naming the active chat model, embeddings and database, plus a sentence for each
    fallback taken (``checked_settings``), and return the ``Settings`` to pass on
    (``get_chat_model(settings)``, ``get_embeddings(settings)``). Never raises for a missing or wrong key;
    remembers them only for ``active_settings`` (a function given no settings reads the environment
    again)."""
    settings, notes = checked_settings()
    _install_plain_errors(settings)
    lite = Path(settings.milvus_uri)  # with no MILVUS_URI each lesson opens its own folder beside it
    folders = f"Milvus Lite in {config.short_path(str(lite.parent))}, a folder per lesson"
    print(settings.describe().replace(f"Milvus Lite at {config.short_path(str(lite))}", folders)
          if settings.milvus_uri_is_default else settings.describe())
    for note in notes:
        print("  note:", note)
    global _active
    _active = settings
    return settings


_active: Settings | None = None  # what the last show_setup returned, fallbacks included


def active_settings() -> Settings:
    """The ``Settings`` the last ``show_setup()`` in this process returned (a failed key already
    replaced by the offline models), else ``load_settings()``: what a check's Why names."""
    return _active or load_settings()
