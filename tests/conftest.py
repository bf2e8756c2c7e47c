"""Shared test setup: every test runs offline with no key, whatever the developer's .env says."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# the lesson runner (scripts/lessons.py: `make lessons`) is a script, not a helper: the tests import it
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

COURSE_VARIABLES = [
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "CHAT_MODEL", "EMBEDDING_MODEL", "EMBEDDING_BASE_URL",
    "EMBEDDING_API_KEY", "MILVUS_URI", "MILVUS_TOKEN", "COURSE_OFFLINE",
]


@pytest.fixture(scope="session", autouse=True)
def offline_environment(tmp_path_factory):
    """No .env, no keys, runtime files in a temporary folder. Kernels started by notebook tests
    inherit this environment."""
    saved = dict(os.environ)
    for name in COURSE_VARIABLES:
        os.environ.pop(name, None)
    os.environ["COURSE_DOTENV"] = "none"
    os.environ["COURSE_RUNTIME_DIR"] = str(tmp_path_factory.mktemp("runtime"))
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(autouse=True)
def no_settings_from_an_earlier_test(monkeypatch):
    """Each test starts with no ``show_setup`` remembered (``setup.active_settings``): a test's refused
    key does not reach the next test's check."""
    import helpers.course.setup as setup

    monkeypatch.setattr(setup, "_active", None)


@pytest.fixture(scope="session", autouse=True)
def other_python_in_background(request, offline_environment):
    """When the session collected tests/test_other_python.py's test, its work (a venv of a second
    Python, unit tests and lessons there) starts now, in a thread: it runs on the other core while the
    rest of the suite runs on this one. It uses the session's Milvus server (started now, not later)."""
    items = [item for item in request.session.items if item.get_closest_marker("other_python")]
    if not items:
        return
    try:
        uri = request.getfixturevalue("milvus_server").uri
    except pytest.skip.Exception:  # no server on this platform: the test itself says so
        return
    items[0].module.start(uri)


@pytest.fixture
def openai_server():
    """An OpenAI-compatible endpoint on localhost (see openai_compatible_server.py)."""
    from openai_compatible_server import OpenAICompatibleServer

    with OpenAICompatibleServer() as server:
        yield server


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory):
    """A real Milvus server (the standalone binary of the PyPI package ``milvus``) for the whole
    session, on a free port with data in a temporary folder; see milvus_server.py. Skips with the
    reason where the platform cannot run it (set MILVUS_TEST_URI to use your own server)."""
    from milvus_server import milvus_server_session

    yield from milvus_server_session(tmp_path_factory)


# --- Milvus fixtures shared by the storage, retrieval and library tests ---------------------------


@pytest.fixture(scope="module")
def lite_uri(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("lite") / "tests.db")


@pytest.fixture(scope="module", params=["lite", "server"])
def uri(request, lite_uri) -> str:
    """Each test that takes ``uri`` runs on Milvus Lite and on the server."""
    if request.param == "lite":
        return lite_uri
    return request.getfixturevalue("milvus_server").uri


@pytest.fixture(scope="module")
def e5():
    """The offline embedding model (multilingual-e5-small), once per module."""
    from helpers.course.embeddings import get_embeddings

    return get_embeddings()


@pytest.fixture(scope="module")
def model():
    """The offline stand-in chat model (a test file may define its own ``model``)."""
    from helpers.course.offline_model import OfflineChatModel

    return OfflineChatModel()


@pytest.fixture(scope="module")
def intro():
    """The 8-turn English introduction (``data/conversations/alice_intro_en.json``)."""
    from helpers.course.data import load_conversation

    return load_conversation("alice_intro_en")


@pytest.fixture(scope="module")
def month():
    """The 17-turn English month (``data/conversations/alice_month_en.json``)."""
    from helpers.course.data import load_conversation

    return load_conversation("alice_month_en")


@pytest.fixture(scope="session")
def full_history_replay():
    """``replay(path) -> (conversation, rows, model calls)``: a conversation file replayed through
    ``FullHistory`` with the offline stand-in, once per test session. Several tests ask different
    questions of the same replay (nothing dropped, every evidence reached); replaying once for all
    of them keeps CI within its time budget. The rows are shared: read them, never change them."""
    from helpers.calls import ModelCalls
    from helpers.course.offline_model import OfflineChatModel
    from helpers.evaluate import evaluate_strategy, load_long_conversation
    from helpers.window import FullHistory

    done: dict[str, tuple] = {}

    def replay(path):
        key = str(Path(path).resolve())
        if key not in done:
            conversation = load_long_conversation(Path(path))
            calls = ModelCalls()  # not with_listeners: its tracer copies every prompt, each call
            rows = evaluate_strategy(FullHistory(), conversation, OfflineChatModel(callbacks=[calls]),
                                     progress=False)
            done[key] = (conversation, rows, calls.calls)
        return done[key]

    return replay
