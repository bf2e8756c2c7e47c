"""The real-model path: the openai / langchain-openai clients over real HTTP to an
OpenAI-compatible endpoint on localhost, with usage numbers, and plain sentences for a wrong key,
an unreachable endpoint and an unknown model."""

from __future__ import annotations

import socket

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from openai_compatible_server import EMBEDDING_DIM, MODEL, VALID_KEY, fake_embedding

from helpers import count_tokens, get_chat_model, get_embeddings, load_settings
from helpers.course.setup import describe_provider_error, list_models, show_setup
from helpers.tokens import count_text_tokens


def settings_for(server, key=VALID_KEY, model=MODEL, **extra):
    return load_settings({"COURSE_DOTENV": "none", "OPENAI_API_KEY": key,
                          "OPENAI_BASE_URL": server.base_url, "CHAT_MODEL": model, **extra})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_chat_over_http_with_usage(openai_server):
    model = get_chat_model(settings_for(openai_server))
    assert isinstance(model, ChatOpenAI)
    messages = [SystemMessage("Answer briefly."), HumanMessage("I keep three beehives."),
                HumanMessage("How many beehives do I keep?")]
    reply = model.invoke(messages)
    assert "three" in reply.content
    sent = openai_server.requests[-1]["body"]
    assert sent["model"] == MODEL
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "user"]
    assert reply.usage_metadata["input_tokens"] == count_tokens(messages)
    assert reply.usage_metadata["output_tokens"] == count_text_tokens(reply.content)
    assert reply.usage_metadata["total_tokens"] == (
        reply.usage_metadata["input_tokens"] + reply.usage_metadata["output_tokens"]
    )


def test_embeddings_over_http(openai_server):
    settings = settings_for(openai_server, EMBEDDING_MODEL="test-embedding")
    embeddings = get_embeddings(settings)
    assert isinstance(embeddings, OpenAIEmbeddings)
    vectors = embeddings.embed_documents(["What is my job?", "제 직업은 간호사예요."])
    assert len(vectors) == 2 and len(vectors[0]) == EMBEDDING_DIM
    assert vectors[1] == pytest.approx(fake_embedding("제 직업은 간호사예요."))
    # text is sent, not token ids, so any OpenAI-compatible server understands it
    assert openai_server.requests[-1]["body"]["input"] == ["What is my job?", "제 직업은 간호사예요."]


def test_wrong_key_is_a_plain_sentence(openai_server, capsys):
    settings = settings_for(openai_server, key="wrong-key")
    problem = list_models(settings)[0]
    assert problem.startswith("The key in OPENAI_API_KEY was refused by http://127.0.0.1:")
    with pytest.raises(openai.AuthenticationError) as caught:
        get_chat_model(settings, max_retries=0).invoke("hello")
    assert describe_provider_error(caught.value, settings) == problem
    assert list_models(settings_for(openai_server))[0] is None


def test_unknown_model_is_a_plain_sentence(openai_server):
    settings = settings_for(openai_server, model="no-such-model")
    with pytest.raises(openai.NotFoundError) as caught:
        get_chat_model(settings, max_retries=0).invoke("hello")
    assert "does not serve the model 'no-such-model' (CHAT_MODEL)" in describe_provider_error(
        caught.value, settings
    )


def test_unreachable_endpoint_is_a_plain_sentence():
    settings = load_settings({"COURSE_DOTENV": "none", "OPENAI_API_KEY": "k",
                              "OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"})
    assert list_models(settings)[0].startswith("Could not reach http://127.0.0.1:")


def test_an_endpoint_answering_a_web_page_is_a_plain_sentence_and_goes_offline(monkeypatch, capsys):
    """A wrong OPENAI_BASE_URL that answers 200 with HTML (a captive portal, a web site): one sentence,
    the offline stand-in, and a check's Why names the stand-in, not the configured model."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from helpers.course.selfcheck import ask


    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<html><body>Please log in to the network</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        monkeypatch.setenv("OPENAI_API_KEY", "sk-some-key")
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("COURSE_DOTENV", "none")
        problem = list_models(load_settings())[0]
        assert problem.startswith(f"{url} answered, but not as an OpenAI-compatible API (")
        settings = show_setup()
        out = capsys.readouterr().out
        assert settings.chat_provider == "offline" and "This kernel uses the offline chat model" in out
        q = ask("01.second_call")
        q.measured(2, works="1, 2", tried=4)
        assert "gpt-4o-mini" not in q.why() and load_settings().chat_model == "gpt-4o-mini"
    finally:
        server.shutdown()


def test_show_setup_falls_back_offline_on_a_refused_key(openai_server, monkeypatch, capsys):
    import helpers.course.embeddings as embeddings
    import helpers.course.setup as setup

    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("CHAT_MODEL", MODEL)
    settings = show_setup()
    out = capsys.readouterr().out
    assert settings.chat_provider == "offline"
    assert out.startswith("Chat: offline stand-in")
    assert "was refused by" in out and "This kernel uses the offline chat model" in out
    assert "Traceback" not in out
    assert get_chat_model(settings).__class__.__name__ == "OfflineChatModel"
    # without the settings, the environment's key is used; only a check's Why reads what show_setup chose
    assert isinstance(get_chat_model(), ChatOpenAI)
    assert setup.active_settings() == settings
    assert not hasattr(setup, "_fallback") and not hasattr(embeddings, "_fallback")
    # with the right key, show_setup's settings use the endpoint again
    monkeypatch.setenv("OPENAI_API_KEY", VALID_KEY)
    settings = show_setup()
    assert settings.chat_provider == "openai-compatible"
    assert f"Chat: {MODEL} at {openai_server.base_url}" in capsys.readouterr().out
    assert isinstance(get_chat_model(settings), ChatOpenAI)


def test_show_setup_falls_back_per_part(openai_server, monkeypatch, capsys):
    """A refused embedding key names EMBEDDING_API_KEY and only the embeddings go offline; an
    unlisted CHAT_MODEL gets a note."""

    monkeypatch.setenv("OPENAI_API_KEY", VALID_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("CHAT_MODEL", "typo-model")
    monkeypatch.setenv("EMBEDDING_MODEL", "test-embedding")
    monkeypatch.setenv("EMBEDDING_API_KEY", "wrong-embedding-key")
    settings = show_setup()
    out = capsys.readouterr().out
    assert settings.chat_provider == "openai-compatible"
    assert settings.embedding_provider == "offline"
    assert "The key in EMBEDDING_API_KEY was refused by" in out
    assert "This kernel uses the offline embeddings" in out
    assert "CHAT_MODEL='typo-model' is not in the model list" in out and MODEL in out
    assert "Traceback" not in out


def test_a_refused_key_from_the_shell_says_the_shell_wins_over_dotenv(openai_server, monkeypatch, tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("OPENAI_API_KEY=sk-in-the-file\n")
    monkeypatch.setenv("COURSE_DOTENV", str(dotenv))
    settings = settings_for(openai_server, key="wrong-key")
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")  # exported in the shell: it wins over the file
    problem = list_models(settings)[0]
    assert "OPENAI_API_KEY is set in the shell that started JupyterLab, and it wins over .env" in problem
    dotenv.write_text("OPENAI_API_KEY=wrong-key\n")  # the same key in the file: fix it there
    assert list_models(settings)[0].endswith("Fix it in .env and restart the kernel, or remove the key to "
                                             "work offline.")
