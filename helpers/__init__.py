"""helpers: the memory code behind the course on LLM conversation memory.

Entry points the lessons and tests use::

    from helpers import show_setup, get_chat_model, get_embeddings, count_tokens

Names are imported lazily, so ``import helpers`` stays fast: a lesson imports only what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> submodule that defines it
_EXPORTS = {
    "Settings": "config",
    "load_settings": "config",
    "runtime_dir": "config",
    "count_tokens": "tokens",
    "count_message_tokens": "tokens",
    "count_text_tokens": "tokens",
    "get_chat_model": "course.setup",
    "get_embeddings": "course.embeddings",
    "E5Embeddings": "course.embeddings",
    "show_setup": "course.setup",
    "OfflineChatModel": "course.offline_model",
    "FileHistory": "history",
    "HistoryFileError": "history",
    "InvalidSessionIdError": "history",
    "load_conversation": "course.data",
    "render_messages": "course.display",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # for editors and type checkers only
    from helpers.config import Settings, load_settings, runtime_dir  # noqa: F401
    from helpers.course.data import load_conversation  # noqa: F401
    from helpers.course.display import render_messages  # noqa: F401
    from helpers.course.embeddings import E5Embeddings, get_embeddings  # noqa: F401
    from helpers.course.offline_model import OfflineChatModel  # noqa: F401
    from helpers.course.setup import get_chat_model, show_setup  # noqa: F401
    from helpers.history import FileHistory, HistoryFileError, InvalidSessionIdError  # noqa: F401
    from helpers.tokens import count_message_tokens, count_text_tokens, count_tokens  # noqa: F401


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = importlib.import_module(f"helpers.{_EXPORTS[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'helpers' has no attribute {name!r}")
