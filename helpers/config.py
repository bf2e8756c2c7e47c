"""Configuration: which chat model, embedding model and Milvus the course uses.

Variables (each documented in ``.env.example``) come from the process environment over a ``.env``
file at the project root (python-dotenv; the environment wins). With no key everything runs offline:
the stand-in chat model, multilingual-e5-small embeddings and Milvus Lite (``course.db``).
"""

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


def milvus_kind(uri: str) -> str:
    """``"server"``, or ``"cloud"`` (host contains ``zilliz``), for a network URI (``http://``,
    ``https://``, ``tcp://``, ``grpc://``, ``unix:``); else ``"lite"`` (a Milvus Lite path)."""
    network = uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))
    return ("cloud" if "zilliz" in uri else "server") if network else "lite"


def short_path(path: str) -> str:
    """``path`` relative to the project root when it is inside it, else unchanged."""
    try:
        return str(Path(path).resolve().relative_to(project_root()))
    except ValueError:
        return path


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

    @property
    def milvus_kind(self) -> str:
        """``"lite"``, ``"cloud"`` or ``"server"``: ``milvus_kind(self.milvus_uri)``."""
        return milvus_kind(self.milvus_uri)

    def describe(self) -> str:
        """One line naming the active chat model, embeddings and database."""
        chat = ("offline stand-in (not a language model)" if self.chat_provider == OFFLINE
                else f"{self.chat_model} at {self.chat_base_url or 'OpenAI'}")
        emb = (f"{OFFLINE_EMBEDDING_MODEL} (offline, 384-d, multilingual)"
               if self.embedding_provider == OFFLINE
               else f"{self.embedding_model} at {self.embedding_base_url or 'OpenAI'}")
        db = (f"Milvus Lite at {short_path(self.milvus_uri)}" if self.milvus_kind == "lite"
              else f"Milvus {self.milvus_kind} at {self.milvus_uri}")
        return f"Chat: {chat} | Embeddings: {emb} | Database: {db}"


def _clean(value: str | None) -> str | None:
    return (value or "").strip() or None


def read_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A new dict: ``.env`` values overlaid by ``environ`` (default ``os.environ``), whose
    ``COURSE_DOTENV`` picks the file (default ``<project root>/.env``; ``none``: no file)."""
    environ = dict(os.environ if environ is None else environ)
    choice = environ.get("COURSE_DOTENV")
    if choice and choice.lower() == "none":
        return environ
    path = Path(choice) if choice else project_root() / ".env"
    values = {k: v for k, v in dotenv_values(path).items() if v is not None} if path.is_file() else {}
    return {**values, **environ}


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Which chat model, embeddings and Milvus to use, from ``environ`` (default ``read_environment()``).
    No usable key: the offline models, each fallback explained in ``notes``; never raises for it."""
    env = read_environment() if environ is None else dict(environ)
    notes: list[str] = []
    offline = (env.get("COURSE_OFFLINE") or "").strip().lower() in {"1", "true", "yes"}
    key = _clean(env.get("OPENAI_API_KEY"))
    if key is not None and key.lower() in _PLACEHOLDER_KEYS:
        notes.append("OPENAI_API_KEY still holds the placeholder from .env.example: ignored.")
        key = None
    if offline:
        notes.append("COURSE_OFFLINE=1: using the offline models.")
    elif not key:
        notes.append("No OPENAI_API_KEY: using the offline stand-in chat model.")
    chat_on = bool(key) and not offline
    if chat_on and not _clean(env.get("CHAT_MODEL")):
        notes.append(f"CHAT_MODEL is not set: using {DEFAULT_CHAT_MODEL}.")
    chat_model = (_clean(env.get("CHAT_MODEL")) or DEFAULT_CHAT_MODEL) if chat_on else OFFLINE_CHAT_MODEL
    emb_model = _clean(env.get("EMBEDDING_MODEL"))
    emb_key = _clean(env.get("EMBEDDING_API_KEY")) or key
    emb_url = _clean(env.get("EMBEDDING_BASE_URL")) or _clean(env.get("OPENAI_BASE_URL"))
    emb_on = bool(emb_model and emb_key) and not offline
    if not emb_on:
        if emb_model and not offline:
            notes.append(f"EMBEDDING_MODEL={emb_model} but no key: using offline embeddings.")
        emb_model, emb_url, emb_key = OFFLINE_EMBEDDING_MODEL, None, None
    milvus_uri = _clean(env.get("MILVUS_URI"))
    if uri_is_default := milvus_uri is None:
        root = Path(env["COURSE_RUNTIME_DIR"]) if env.get("COURSE_RUNTIME_DIR") else runtime_dir()
        milvus_uri = str(root / "milvus" / "course.db")
    return Settings(
        chat_provider=OPENAI_COMPATIBLE if chat_on else OFFLINE, chat_model=chat_model,
        chat_base_url=_clean(env.get("OPENAI_BASE_URL")) if chat_on else None,
        chat_api_key=key if chat_on else None, embedding_provider=OPENAI_COMPATIBLE if emb_on else OFFLINE,
        embedding_model=emb_model, embedding_base_url=emb_url, embedding_api_key=emb_key,
        milvus_uri=milvus_uri, milvus_token=_clean(env.get("MILVUS_TOKEN")), notes=tuple(notes),
        milvus_uri_is_default=uri_is_default)
