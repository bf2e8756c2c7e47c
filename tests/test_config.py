"""Configuration fallbacks: no key, placeholder key, forced offline, .env handling, Milvus URI."""

from __future__ import annotations

from pathlib import Path

from helpers.config import (
    DEFAULT_CHAT_MODEL,
    OFFLINE,
    OPENAI_COMPATIBLE,
    load_settings,
    read_environment,
    short_path,
)

BASE = {"COURSE_DOTENV": "none", "COURSE_RUNTIME_DIR": "/tmp/course-runtime-test"}


def test_no_key_means_offline_everything():
    s = load_settings(dict(BASE))
    assert (s.chat_provider, s.embedding_provider) == (OFFLINE, OFFLINE)
    assert s.chat_model == "offline-stand-in"
    assert s.embedding_model == "multilingual-e5-small"
    assert s.milvus_uri == "/tmp/course-runtime-test/milvus/course.db"
    assert s.milvus_backend == "lite"
    assert any("No OPENAI_API_KEY" in n for n in s.notes)
    line = s.describe()
    assert line.startswith("Chat: offline stand-in") and "Milvus Lite" in line


def test_key_selects_openai_compatible_with_default_model():
    s = load_settings({**BASE, "OPENAI_API_KEY": "abc123", "OPENAI_BASE_URL": "http://x:1/v1"})
    assert s.chat_provider == OPENAI_COMPATIBLE
    assert s.chat_model == DEFAULT_CHAT_MODEL
    assert s.chat_base_url == "http://x:1/v1"
    assert any("CHAT_MODEL is not set" in n for n in s.notes)
    # embeddings stay offline unless EMBEDDING_MODEL is set
    assert s.embedding_provider == OFFLINE
    assert "abc123" not in repr(s) and "abc123" not in s.describe()


def test_placeholder_key_is_ignored_with_a_note():
    s = load_settings({**BASE, "OPENAI_API_KEY": "sk-..."})
    assert s.chat_provider == OFFLINE
    assert any("placeholder" in n for n in s.notes)


def test_course_offline_wins_over_a_key():
    s = load_settings({**BASE, "OPENAI_API_KEY": "abc123", "EMBEDDING_MODEL": "e1",
                       "COURSE_OFFLINE": "1"})
    assert (s.chat_provider, s.embedding_provider) == (OFFLINE, OFFLINE)
    assert s.chat_api_key is None


def test_embedding_model_needs_a_key():
    s = load_settings({**BASE, "EMBEDDING_MODEL": "text-embedding-3-small"})
    assert s.embedding_provider == OFFLINE
    assert any("EMBEDDING_MODEL" in n for n in s.notes)
    s = load_settings({**BASE, "EMBEDDING_MODEL": "text-embedding-3-small",
                       "EMBEDDING_API_KEY": "k2", "EMBEDDING_BASE_URL": "http://e:2/v1"})
    assert (s.embedding_provider, s.embedding_model) == (OPENAI_COMPATIBLE, "text-embedding-3-small")
    assert (s.embedding_api_key, s.embedding_base_url) == ("k2", "http://e:2/v1")
    assert s.chat_provider == OFFLINE  # an embedding key alone does not turn the chat model on


def test_milvus_uri_kinds():
    assert load_settings({**BASE, "MILVUS_URI": "http://localhost:19530"}).milvus_backend == "server"
    cloud = load_settings({**BASE, "MILVUS_URI": "https://in03-x.serverless.gcp-us-west1.cloud.zilliz.com",
                           "MILVUS_TOKEN": "t"})
    assert cloud.milvus_backend == "cloud" and cloud.milvus_token == "t"
    assert load_settings({**BASE, "MILVUS_URI": "./my.db"}).milvus_backend == "lite"


def test_dotenv_file_is_read_and_the_environment_wins(tmp_path: Path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("OPENAI_API_KEY=from-file\nCHAT_MODEL=file-model\nMILVUS_URI=\n",
                      encoding="utf-8")
    env = read_environment({"COURSE_DOTENV": str(dotenv), "CHAT_MODEL": "env-model"})
    assert env["OPENAI_API_KEY"] == "from-file"
    assert env["CHAT_MODEL"] == "env-model"
    s = load_settings({**env, "COURSE_RUNTIME_DIR": str(tmp_path)})
    assert (s.chat_provider, s.chat_model) == (OPENAI_COMPATIBLE, "env-model")
    assert s.milvus_uri == str(tmp_path / "milvus" / "course.db")  # empty value = default


def test_dotenv_none_reads_no_file(tmp_path: Path, monkeypatch):
    (tmp_path / ".env").write_text("OPENAI_API_KEY=from-file\n", encoding="utf-8")
    monkeypatch.setenv("COURSE_HOME", str(tmp_path))
    assert "OPENAI_API_KEY" not in read_environment({"COURSE_DOTENV": "none"})
    assert read_environment({})["OPENAI_API_KEY"] == "from-file"  # default: <project root>/.env


def test_show_setup_offline_prints_one_line(capsys):
    from helpers import show_setup

    settings = show_setup()
    out = capsys.readouterr().out.splitlines()
    assert settings.chat_provider == OFFLINE
    assert out[0].startswith("Chat: offline stand-in") and "Embeddings:" in out[0]
    if settings.milvus_uri_is_default:  # each lesson opens its own folder: the line names the place
        assert out[0].endswith(", a folder per lesson") and "course.db" not in out[0]
    else:
        assert f"Database: Milvus Lite at {short_path(settings.milvus_uri)}" in out[0]
    assert all(line.startswith("  note:") for line in out[1:])


def test_short_path_is_relative_inside_the_project_only(tmp_path: Path, monkeypatch):
    from helpers.config import short_path

    monkeypatch.setenv("COURSE_HOME", str(tmp_path))
    assert short_path(str(tmp_path / ".runtime" / "milvus" / "course.db")) == ".runtime/milvus/course.db"
    assert short_path("/elsewhere/x.db") == "/elsewhere/x.db"


def test_exports_point_at_the_new_homes():
    import helpers
    from helpers.course import data, embeddings, setup

    assert helpers.get_chat_model is setup.get_chat_model
    assert helpers.get_embeddings is embeddings.get_embeddings
    assert helpers.load_conversation is data.load_conversation


def test_in_ipython_a_lite_folder_held_by_another_kernel_is_one_plain_sentence(capsys, monkeypatch):
    """README: a second kernel of the same lesson gets a plain error naming the lesson: the sentence, not
    45 lines of traceback around it. The cell still fails (a headless run reports it)."""
    from IPython.core.interactiveshell import InteractiveShell

    from helpers.course.setup import show_setup

    monkeypatch.setenv("COURSE_OFFLINE", "1")
    shell = InteractiveShell.instance()
    try:
        show_setup()
        capsys.readouterr()
        result = shell.run_cell("from helpers.course.milvus import LiteLockedError\n"
                                "raise LiteLockedError('The folder is open in another process.')")
        assert isinstance(result.error_in_exec, Exception)
        assert capsys.readouterr().out == "LiteLockedError: The folder is open in another process.\n"
    finally:
        InteractiveShell.clear_instance()
