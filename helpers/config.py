"""Configuration: which chat model, embedding model and Milvus the course uses.

Everything comes from environment variables, read from the process environment and from a
``.env`` file at the project root (python-dotenv; a real environment variable wins over ``.env``).
``.env.example`` documents every variable. With no key the course runs fully offline:

=====================  =======================================================================
variable               meaning (default)
=====================  =======================================================================
``OPENAI_API_KEY``     key of any OpenAI-compatible endpoint; unset = offline stand-in model
``OPENAI_BASE_URL``    that endpoint (OpenAI's own when unset); DeepSeek, DashScope, Ollama, vLLM
``CHAT_MODEL``         model name at that endpoint (``gpt-4o-mini``)
``EMBEDDING_MODEL``    an embedding model at an OpenAI-compatible endpoint; unset = offline
                       multilingual-e5-small (384 dimensions)
``EMBEDDING_BASE_URL`` endpoint for embeddings (``OPENAI_BASE_URL``)
``EMBEDDING_API_KEY``  key for embeddings (``OPENAI_API_KEY``)
``MILVUS_URI``         a Milvus Lite path, ``http://host:19530``, or a Zilliz Cloud URI
                       (a Lite folder per lesson: ``<runtime dir>/milvus/06_retrieval.db``,
                       ``07_layered.db``, ``08_measuring.db``; ``course.db`` otherwise)
``MILVUS_TOKEN``       token for a server or Zilliz Cloud (none)
``COURSE_OFFLINE``     ``1`` forces the offline models even when a key is set
``COURSE_DOTENV``      path of the ``.env`` to read (``<project root>/.env``); ``none`` reads none
``COURSE_RUNTIME_DIR`` folder for runtime files (``<project root>/.runtime``, ignored by git)
=====================  =======================================================================
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import dotenv_values

OFFLINE = "offline"
OPENAI_COMPATIBLE = "openai-compatible"
DEFAULT_CHAT_MODEL = "gpt-4o-mini"
OFFLINE_CHAT_MODEL = "offline-stand-in"
OFFLINE_EMBEDDING_MODEL = "multilingual-e5-small"
# Values people leave in a copied .env.example; they mean "no key".
_PLACEHOLDER_KEYS = {"", "sk-...", "your-key-here", "changeme", "none"}


def project_root() -> Path:
    """The course folder: ``$COURSE_HOME``, else the folder that holds the ``helpers`` package
    when it is a source checkout (it has ``pyproject.toml``), else the current directory."""
    if os.environ.get("COURSE_HOME"):
        return Path(os.environ["COURSE_HOME"]).resolve()
    here = Path(__file__).resolve().parent.parent
    if (here / "pyproject.toml").is_file():
        return here
    return Path.cwd()


def runtime_dir() -> Path:
    """Folder for runtime files (history files, Milvus Lite data, tokenizer cache), created on
    demand: ``$COURSE_RUNTIME_DIR`` or ``<project root>/.runtime`` (ignored by git)."""
    path = Path(os.environ.get("COURSE_RUNTIME_DIR") or project_root() / ".runtime")
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class Settings:
    """The active configuration. Build it with ``load_settings``; keys never appear in ``repr``."""

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
    milvus_uri_is_default: bool = False
    """True when ``MILVUS_URI`` was not set: ``milvus_uri`` is the default Milvus Lite path, and
    each lesson gets its own Lite folder beside it (``lesson_milvus_uri``)."""

    @property
    def milvus_kind(self) -> str:
        """``"lite"``, ``"cloud"`` or ``"server"``: ``milvus_kind(self.milvus_uri)``."""
        return milvus_kind(self.milvus_uri)

    def describe(self) -> str:
        """One line naming the active chat model, embeddings and database."""
        if self.chat_provider == OFFLINE:
            chat = "offline stand-in (not a language model)"
        else:
            chat = f"{self.chat_model} at {self.chat_base_url or 'OpenAI'}"
        if self.embedding_provider == OFFLINE:
            emb = f"{OFFLINE_EMBEDDING_MODEL} (offline, 384-d, multilingual)"
        else:
            emb = f"{self.embedding_model} at {self.embedding_base_url or 'OpenAI'}"
        if self.milvus_kind == "lite":
            db = f"Milvus Lite at {_short_path(self.milvus_uri)}"
        else:
            db = f"Milvus {self.milvus_kind} at {self.milvus_uri}"
        return f"Chat: {chat} | Embeddings: {emb} | Database: {db}"


def milvus_kind(uri: str) -> str:
    """What a Milvus URI points at (the one rule the course uses everywhere).

    Args:
        uri: a ``MILVUS_URI`` value.

    Returns:
        ``"server"`` or ``"cloud"`` (Zilliz Cloud: the host name contains ``zilliz``) for a
        network URI (``http://``, ``https://``, ``tcp://``, ``grpc://``, ``unix:``), else
        ``"lite"`` (a local Milvus Lite path such as ``.runtime/milvus/course.db``).
    """
    if not uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:")):
        return "lite"
    return "cloud" if "zilliz" in uri else "server"


# Each lesson that opens Milvus Lite has its own folder: Milvus Lite lets one process open a
# folder, and JupyterLab keeps a kernel running when its tab closes, so a shared folder made the
# next lesson fail with a lock error.
LESSON_LITE_FOLDERS = {"06": "06_retrieval.db", "07": "07_layered.db", "08": "08_measuring.db"}


def lesson_of_collection(collection: str) -> str | None:
    """The lesson a collection belongs to, from its name (``lesson06``, ``lesson06_langchain``
    -> ``"06"``), or None."""
    match = re.fullmatch(r"lesson(\d\d)(_\w*)?", collection)
    return match.group(1) if match and match.group(1) in LESSON_LITE_FOLDERS else None


def lesson_milvus_uri(lesson: str | None, settings: Settings | None = None) -> str:
    """The Milvus URI a lesson uses: its own Lite folder (``<runtime dir>/milvus/06_retrieval.db``)
    when ``MILVUS_URI`` is not set, else ``MILVUS_URI`` unchanged (a server is shared by design;
    a Lite path you set is yours to choose).

    Args:
        lesson: ``"06"``, ``"07"``, ``"08"`` (a key of ``LESSON_LITE_FOLDERS``) or None (the
            default ``course.db``).
        settings: the ``Settings`` from ``show_setup()`` (default: ``load_settings()``).
    """
    settings = settings or load_settings()
    if lesson is None or not settings.milvus_uri_is_default:
        return settings.milvus_uri
    if lesson not in LESSON_LITE_FOLDERS:
        raise ValueError(f"no Lite folder for lesson {lesson!r}; known: {sorted(LESSON_LITE_FOLDERS)}")
    return str(Path(settings.milvus_uri).parent / LESSON_LITE_FOLDERS[lesson])


def milvus_connection(settings: Settings | None = None,
                      lesson: str | None = None) -> tuple[str, str | None]:
    """``(uri, token)`` of the Milvus the course uses: from ``settings`` (the ones ``show_setup()``
    returned), else from the environment (``load_settings()``); with ``lesson``, that lesson's own
    Lite folder (``lesson_milvus_uri``). ``MILVUS_URI`` itself is resolved only in
    ``load_settings``."""
    settings = settings or load_settings()
    return lesson_milvus_uri(lesson, settings), settings.milvus_token


def _short_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(project_root()))
    except ValueError:
        return path


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def read_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables the course reads: ``.env`` values overlaid by the process environment.

    Args:
        environ: the process environment (default ``os.environ``).

    Returns:
        A new dict. ``COURSE_DOTENV`` in ``environ`` picks the ``.env`` file (``none``: no file).
    """
    environ = dict(os.environ if environ is None else environ)
    choice = environ.get("COURSE_DOTENV")
    if choice and choice.lower() == "none":
        return environ
    path = Path(choice) if choice else project_root() / ".env"
    values = {k: v for k, v in dotenv_values(path).items() if v is not None} if path.is_file() else {}
    values.update(environ)
    return values


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Decide which chat model, embeddings and Milvus to use.

    Args:
        environ: variables to read (default: ``.env`` + ``os.environ``, see ``read_environment``).
            Pass a dict in tests.

    Returns:
        ``Settings``. Falls back to the offline models when no usable key is set; every fallback
        is explained by a plain sentence in ``Settings.notes``. Never raises for a missing key.
    """
    env = read_environment() if environ is None else dict(environ)
    notes: list[str] = []
    forced_offline = (env.get("COURSE_OFFLINE") or "").strip().lower() in {"1", "true", "yes"}
    key = _clean(env.get("OPENAI_API_KEY"))
    if key is not None and key.lower() in _PLACEHOLDER_KEYS:
        notes.append("OPENAI_API_KEY still holds the placeholder from .env.example: ignored.")
        key = None
    base_url = _clean(env.get("OPENAI_BASE_URL"))

    if forced_offline:
        notes.append("COURSE_OFFLINE=1: using the offline models.")
    if key and not forced_offline:
        chat_provider, chat_model = OPENAI_COMPATIBLE, _clean(env.get("CHAT_MODEL"))
        if chat_model is None:
            chat_model = DEFAULT_CHAT_MODEL
            notes.append(f"CHAT_MODEL is not set: using {DEFAULT_CHAT_MODEL}.")
    else:
        chat_provider, chat_model, base_url = OFFLINE, OFFLINE_CHAT_MODEL, None
        if not key and not forced_offline:
            notes.append("No OPENAI_API_KEY: using the offline stand-in chat model.")

    emb_model = _clean(env.get("EMBEDDING_MODEL"))
    emb_key = _clean(env.get("EMBEDDING_API_KEY")) or key
    emb_url = _clean(env.get("EMBEDDING_BASE_URL")) or _clean(env.get("OPENAI_BASE_URL"))
    if emb_model and emb_key and not forced_offline:
        emb_provider = OPENAI_COMPATIBLE
    else:
        if emb_model and not forced_offline:
            notes.append(f"EMBEDDING_MODEL={emb_model} but no key: using offline embeddings.")
        emb_provider, emb_model, emb_url, emb_key = OFFLINE, OFFLINE_EMBEDDING_MODEL, None, None

    milvus_uri = _clean(env.get("MILVUS_URI"))
    uri_is_default = milvus_uri is None
    if milvus_uri is None:
        root = Path(env["COURSE_RUNTIME_DIR"]) if env.get("COURSE_RUNTIME_DIR") else None
        milvus_uri = str((root or runtime_dir()) / "milvus" / "course.db")

    return Settings(
        chat_provider=chat_provider,
        chat_model=chat_model,
        chat_base_url=base_url if chat_provider == OPENAI_COMPATIBLE else None,
        chat_api_key=key if chat_provider == OPENAI_COMPATIBLE else None,
        embedding_provider=emb_provider,
        embedding_model=emb_model,
        embedding_base_url=emb_url,
        embedding_api_key=emb_key,
        milvus_uri=milvus_uri,
        milvus_token=_clean(env.get("MILVUS_TOKEN")),
        notes=tuple(notes),
        milvus_uri_is_default=uri_is_default,
    )
