"""Configuration: which chat model, embeddings and Milvus the course uses (variables: ``.env.example``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import dotenv_values

OFFLINE, OPENAI_COMPATIBLE = "offline", "openai-compatible"  # the two kinds of provider
DEFAULT_CHAT_MODEL, OFFLINE_CHAT_MODEL = "gpt-4o-mini", "offline-stand-in"
OFFLINE_EMBEDDING_MODEL = "multilingual-e5-small"
_PLACEHOLDER_KEYS = {"", "sk-...", "your-key-here", "changeme", "none"}  # left from .env.example


def project_root() -> Path:
    """``$COURSE_HOME``, else the source checkout holding ``helpers`` (with ``pyproject.toml``), else cwd."""
    if os.environ.get("COURSE_HOME"):
        return Path(os.environ["COURSE_HOME"]).resolve()
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def runtime_dir() -> Path:
    """Folder for runtime files, created on demand: ``$COURSE_RUNTIME_DIR`` or ``<project root>/.runtime``."""
    path = Path(os.environ.get("COURSE_RUNTIME_DIR") or project_root() / ".runtime")
    path.mkdir(parents=True, exist_ok=True)
    return path


def milvus_backend(uri: str) -> str:
    """``"cloud"`` (a zilliz host) or ``"server"`` for a network URI, else ``"lite"`` (a Milvus Lite path)."""
    network = uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))
    return ("cloud" if "zilliz" in uri else "server") if network else "lite"


def check_setting(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` if an int (not a bool) in ``low..high`` (``None`` or 0: no bound), else ValueError naming
    ``name``: a setting refused when made, not as an error mid-chat."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= (high or value):
        raise ValueError(f"{name} must be >= {low}{f' and <= {high}' if high else ''}, an int: got {value!r}")
    return value


def short_path(path: str) -> str:
    """``path`` relative to the project root when it is inside it, else unchanged."""
    resolved, root = Path(path).resolve(), project_root()
    return str(resolved.relative_to(root)) if resolved.is_relative_to(root) else path


@dataclass(frozen=True)
class Settings:
    """The active configuration (from ``load_settings``); keys never appear in ``repr``."""

    chat_provider: str
    chat_model: str
    chat_base_url: str | None
    embedding_provider: str
    embedding_model: str
    embedding_base_url: str | None
    milvus_uri: str
    chat_api_key: str | None = field(default=None, repr=False)
    embedding_api_key: str | None = field(default=None, repr=False)
    milvus_token: str | None = field(default=None, repr=False)
    notes: tuple[str, ...] = ()
    milvus_uri_is_default: bool = False  # no MILVUS_URI: a lesson may use a Lite folder beside it
    milvus_backend = property(lambda self: milvus_backend(self.milvus_uri), doc="``milvus_backend(uri)``.")

    def describe(self) -> str:
        """One line naming the active chat model, embeddings and database."""
        chat = ("offline stand-in (not a language model)" if self.chat_provider == OFFLINE
                else f"{self.chat_model} at {self.chat_base_url or 'OpenAI'}")
        emb = (f"{OFFLINE_EMBEDDING_MODEL} (offline, 384-d, multilingual)" if self.embedding_provider
               == OFFLINE else f"{self.embedding_model} at {self.embedding_base_url or 'OpenAI'}")
        db = (f"Milvus Lite at {short_path(self.milvus_uri)}" if self.milvus_backend == "lite"
              else f"Milvus {self.milvus_backend} at {self.milvus_uri}")
        return f"Chat: {chat} | Embeddings: {emb} | Database: {db}"


def read_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A new dict: ``.env`` values overlaid by ``environ`` (default ``os.environ``), whose
    ``COURSE_DOTENV`` picks the file (default ``<project root>/.env``; ``none``: no file)."""
    environ = dict(os.environ if environ is None else environ)
    choice = environ.get("COURSE_DOTENV") or str(project_root() / ".env")
    if choice.lower() == "none" or not Path(choice).is_file():
        return environ
    return {**{k: v for k, v in dotenv_values(choice).items() if v is not None}, **environ}


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Which chat model, embeddings and Milvus to use, from ``environ`` (default ``read_environment()``).
    No usable key: the offline models, each fallback explained in ``notes``; never raises for it."""
    env = read_environment() if environ is None else dict(environ)
    def get(name: str) -> str | None:  # unset, empty and blank all mean None
        return (env.get(name) or "").strip() or None
    offline, key = (get("COURSE_OFFLINE") or "").lower() in {"1", "true", "yes"}, get("OPENAI_API_KEY")
    placeholder = bool(key) and key.lower() in _PLACEHOLDER_KEYS
    key = None if offline or placeholder else key  # from here on, a key means the chat model is on
    chat_model, emb_model = get("CHAT_MODEL"), None if offline else get("EMBEDDING_MODEL")
    emb_key = get("EMBEDDING_API_KEY") or key
    notes = tuple(note for note, applies in (
        ("OPENAI_API_KEY still holds the placeholder from .env.example: ignored.", placeholder),
        ("COURSE_OFFLINE=1: using the offline models.", offline),
        ("No OPENAI_API_KEY: using the offline stand-in chat model.", not offline and not key),
        (f"CHAT_MODEL is not set: using {DEFAULT_CHAT_MODEL}.", key and not chat_model),
        (f"EMBEDDING_MODEL={emb_model} but no key: using offline embeddings.", emb_model and not emb_key),
    ) if applies)
    emb_model, emb_key = (emb_model, emb_key) if emb_model and emb_key else (None, None)  # both, or off
    uri_is_default, home = get("MILVUS_URI") is None, env.get("COURSE_RUNTIME_DIR")
    milvus_uri = get("MILVUS_URI") or str((Path(home) if home else runtime_dir()) / "milvus" / "course.db")
    chat = ((OPENAI_COMPATIBLE, chat_model or DEFAULT_CHAT_MODEL, get("OPENAI_BASE_URL")) if key
            else (OFFLINE, OFFLINE_CHAT_MODEL, None))  # provider, model, base URL
    emb = ((OPENAI_COMPATIBLE, emb_model, get("EMBEDDING_BASE_URL") or get("OPENAI_BASE_URL")) if emb_model
           else (OFFLINE, OFFLINE_EMBEDDING_MODEL, None))
    return Settings(*chat, *emb, milvus_uri, chat_api_key=key, embedding_api_key=emb_key,
                    milvus_token=get("MILVUS_TOKEN"), notes=notes, milvus_uri_is_default=uri_is_default)
