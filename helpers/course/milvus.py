"""Where the course's Milvus is and how a lesson connects to it, with plain-sentence errors.

With no ``MILVUS_URI`` each lesson that opens Milvus Lite has its own folder (``LESSON_LITE_FOLDERS``,
chosen by ``lesson=``, never by a collection's name): Milvus Lite lets one process open a folder, and
JupyterLab keeps a kernel running when its tab closes."""

from __future__ import annotations

import logging
from pathlib import Path

from helpers.config import Settings, load_settings, milvus_backend
from helpers.store import DEFAULT_COLLECTION, LITE_FLUSH_EVERY, MemoryStore, MilvusStoreError

LESSON_LITE_FOLDERS = {"06": "06_retrieval.db", "07": "07_layered.db", "08": "08_measuring.db"}


class LiteLockedError(MilvusStoreError):
    """Another process (often another notebook's kernel) has the Milvus Lite folder open."""


class MilvusUnavailableError(MilvusStoreError):
    """The Milvus server at the URI cannot be reached (not started, wrong host or port)."""


def lesson_milvus_uri(lesson: str | None, settings: Settings | None = None) -> str:
    """The Milvus URI a lesson uses: without ``MILVUS_URI``, its own Lite folder
    (``<runtime dir>/milvus/06_retrieval.db``; ``lesson=None``: ``course.db``), else ``MILVUS_URI``
    unchanged (a server is shared by design; a Lite path you set is yours). ``lesson``: a key of
    ``LESSON_LITE_FOLDERS``; ``settings`` default ``load_settings()``. ValueError: an unknown lesson."""
    settings = settings or load_settings()
    if lesson is None or not settings.milvus_uri_is_default:
        return settings.milvus_uri
    if lesson not in LESSON_LITE_FOLDERS:
        raise ValueError(f"no Lite folder for lesson {lesson!r}; known: {sorted(LESSON_LITE_FOLDERS)}")
    return str(Path(settings.milvus_uri).parent / LESSON_LITE_FOLDERS[lesson])


def milvus_connection(settings: Settings | None = None, lesson: str | None = None, uri: str | None = None,
                      token: str | None = None) -> tuple[str, str | None]:
    """``(uri, token)`` of the course's Milvus: ``lesson_milvus_uri(lesson, settings)`` and ``token``
    (default ``MILVUS_TOKEN``). A given ``uri`` is returned with ``token`` unchanged (no default)."""
    if uri is not None:
        return str(uri), token
    settings = settings or load_settings()
    return lesson_milvus_uri(lesson, settings), token or settings.milvus_token


def import_pymilvus():
    """Import ``pymilvus`` and return it. On import pymilvus reads a ``MILVUS_URI`` of its own (and
    the nearest ``.env``) and refuses anything but ``http[s]://...``, so a Milvus Lite path there
    (which the course allows) would break the import: it runs with a placeholder server URI, which
    pymilvus only records as an unused default, and the variable is restored after."""
    import importlib
    import os
    import sys

    if "pymilvus" in sys.modules:
        return sys.modules["pymilvus"]
    saved = os.environ.get("MILVUS_URI")
    os.environ["MILVUS_URI"] = "http://localhost:19530"
    try:
        module = importlib.import_module("pymilvus")
    finally:
        if saved is None:
            os.environ.pop("MILVUS_URI", None)
        else:
            os.environ["MILVUS_URI"] = saved
    quiet_milvus_logs()  # importing pymilvus sets its logger back to WARNING
    return module


def quiet_milvus_logs(level: int = logging.CRITICAL) -> None:
    """Set the ``pymilvus`` and ``milvus_lite`` loggers to ``level``: a failed call logs a long traceback
    even when the caller catches it; the course raises plain sentences. ``logging.DEBUG``: see them."""
    for name in ("pymilvus", "milvus_lite"):
        logging.getLogger(name).setLevel(level)


quiet_milvus_logs()


def _lite_folder_locked(path: str) -> bool:
    """True if another open file holds the advisory lock Milvus Lite keeps on ``<path>/LOCK``."""
    lock = Path(path) / "LOCK"
    if not lock.exists():
        return False
    try:
        import fcntl
    except ImportError:  # Windows: cannot probe; the error is almost always this
        return True
    with open(lock, "a+b") as file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
    return False  # closing the file released our lock


def _unreachable(uri: str, exc: Exception) -> str:
    why = getattr(exc, "message", exc)
    if milvus_backend(uri) == "lite":
        return (f"Milvus Lite at {uri} stopped answering in this process ({why}). Milvus Lite runs "
                "inside your kernel: this happens after a crash of its engine. Re-run the cell that "
                "opens the store; if that fails too, restart the kernel.")
    return (f"Cannot reach the Milvus server at {uri} ({why}). Start it with `docker compose up -d` "
            "and wait until it is healthy, check MILVUS_URI (e.g. http://localhost:19530) in .env, or "
            "remove MILVUS_URI to use the default Milvus Lite file under the runtime folder.")


# Milvus Lite serves gRPC on a thread of this process. pymilvus pings every connection every 10 s,
# even with no call under way; Lite's server keeps gRPC's default policy (a ping at most every
# 5 minutes without data) and answers an idle client with GOAWAY "too_many_pings" after two such
# pings, which can leave the next call failing. A loopback peer in the same process cannot
# vanish unseen, so keepalive is switched off for Lite only; servers keep pymilvus' defaults.
LITE_GRPC_OPTIONS = {"grpc.keepalive_time_ms": 2**31 - 1, "grpc.keepalive_permit_without_calls": False}


def quiet_faiss_clustering() -> None:
    """Milvus Lite trains an IVF_FLAT index per small segment in this process, and faiss prints "WARNING
    clustering N points to N centroids" to stderr (a notebook shows it) when a segment has under 39
    points a cell. ``min_points_per_centroid`` decides only that line (the same centroids, the same
    hits: ``tests/test_milvus_store.py``), so Lite's IVF_FLAT indexes are made with it at 1."""
    import faiss

    if getattr(faiss.IndexIVFFlat, "quiet_clustering", False):
        return

    class QuietIVFFlat(faiss.IndexIVFFlat):
        quiet_clustering = True

        def __init__(self, *args):
            super().__init__(*args)
            self.cp.min_points_per_centroid = 1

    faiss.IndexIVFFlat = QuietIVFFlat


def connect(uri: str, token: str | None = None, timeout: float = 30.0):
    """A ``pymilvus.MilvusClient`` for ``uri`` (a Milvus Lite path ending in ``.db``, its folder created;
    ``http://host:19530``; a Zilliz Cloud URI), ``token`` (server, cloud), ``timeout`` (s). Raises
    LiteLockedError (another process has this Lite folder open; the message names the lesson's kernel and
    how to free it), MilvusUnavailableError (the server cannot be reached; the message says how to start
    one), MilvusStoreError (Lite could not open it otherwise), ValueError (a Lite path without ``.db``)."""
    import_pymilvus()
    from pymilvus import MilvusClient
    from pymilvus.exceptions import ConnectionConfigException, MilvusException

    uri = str(uri)
    if milvus_backend(uri) == "lite":
        if not uri.endswith(".db"):
            raise ValueError(f"a Milvus Lite path must end in '.db', got {uri!r}")
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
        quiet_faiss_clustering()
    options = {"grpc_options": LITE_GRPC_OPTIONS} if milvus_backend(uri) == "lite" else {}
    try:
        return MilvusClient(uri=uri, token=token or "", timeout=timeout, **options)
    except ConnectionConfigException as exc:
        if milvus_backend(uri) != "lite" or "Open local milvus failed" not in str(exc):
            raise
        if not _lite_folder_locked(uri):
            raise MilvusStoreError(f"Milvus Lite could not open {uri}: {exc.message}") from None
        owner = {name: n for n, name in LESSON_LITE_FOLDERS.items()}.get(Path(uri).name)
        who = (f"another kernel running lesson {owner} (JupyterLab keeps a kernel running when its tab "
               "closes; Kernel → Shut Down All Kernels, or the Running panel)" if owner
               else "often another notebook's kernel")
        raise LiteLockedError(
            f"The Milvus Lite folder {uri} is open in another process: {who}. Milvus Lite allows one "
            "process per folder. Shut down or restart that kernel (closing the client is not enough), "
            "use another path, or run a Milvus server (docker compose up -d) and set "
            "MILVUS_URI=http://localhost:19530.") from None
    except MilvusException as exc:
        raise MilvusUnavailableError(_unreachable(uri, exc)) from None


def open_store(collection: str = DEFAULT_COLLECTION, *, lesson: str | None = None, uri: str | None = None,
               token: str | None = None, settings: Settings | None = None, embeddings=None,
               flush_every: int | str | None = "auto", store_class: type[MemoryStore] | None = None,
               **options) -> MemoryStore:
    """A ``MemoryStore`` (``collection``, created if missing) on the course's Milvus.

    ``lesson`` (``"06"``, ``"07"``, ``"08"``): that lesson's Lite folder when ``MILVUS_URI`` is not set
    (``None``: ``course.db``); ``uri``, ``token``: another Milvus (default ``milvus_connection(settings,
    lesson)``); ``settings`` from ``show_setup()`` (default: the environment) also pick the default
    ``embeddings`` (a LangChain ``Embeddings``); ``flush_every``: rows, ``None``, or ``"auto"``:
    ``LITE_FLUSH_EVERY`` on Milvus Lite, never on a server (it seals segments itself); ``options``: other
    ``MemoryStore`` arguments (``dim``, ``drop_existing``, ``timeout`` ...); ``store_class``: the class
    to make (default ``helpers.fulltext.HybridStore``: a ``MemoryStore`` whose rows' words are indexed too,
    dense-only where the server has no BM25). Raises what ``connect`` and the
    store raise (LiteLockedError, MilvusUnavailableError, DimensionMismatchError, MilvusStoreError)."""
    from helpers.course.embeddings import get_embeddings

    uri, token = milvus_connection(settings, lesson, uri, token)
    backend = milvus_backend(uri)
    if flush_every == "auto":
        flush_every = LITE_FLUSH_EVERY if backend == "lite" else None
    embeddings = embeddings if embeddings is not None else get_embeddings(settings)
    if store_class is None:  # words and meaning: layered memory searches both (helpers.fulltext)
        from helpers.fulltext import HybridStore as store_class
    client = connect(uri, token, options.get("timeout", 30.0))
    try:
        return store_class(client, collection, embeddings, flush_every=flush_every, uri=uri, backend=backend,
                           **options)
    except Exception:
        client.close()
        raise


def drop_collection(collection: str, *, lesson: str | None = None, uri: str | None = None,
                    token: str | None = None, settings: Settings | None = None) -> bool:
    """Delete ``collection`` without opening it as a store (works when its vector length does not
    match the current embedding model). ``lesson``, ``uri``, ``token``, ``settings`` as for
    ``open_store``. Returns ``True`` if it existed. Raises what ``connect`` raises."""
    client = connect(*milvus_connection(settings, lesson, uri, token))
    try:
        if existed := client.has_collection(collection):
            client.drop_collection(collection)
        return existed
    finally:
        client.close()
