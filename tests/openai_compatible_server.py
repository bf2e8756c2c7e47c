"""A small OpenAI-compatible HTTP endpoint on localhost, for testing the real-model path.

The course's real-model code (``openai`` + ``langchain-openai`` clients) talks to it over real HTTP,
exactly as it would talk to OpenAI, DeepSeek, Ollama or vLLM. Answers come from the offline
stand-in model; usage numbers are counted with the course's tokenizer, so tests can check them.

Routes: ``GET /v1/models``, ``POST /v1/chat/completions`` (non-streaming), ``POST /v1/embeddings``,
``POST /v1/responses`` (non-streaming; ``previous_response_id`` chains to a stored response: the server
keeps every turn and bills the whole chain as input, reporting the previous chain as cached from
1,024 tokens, as OpenAI documents its automatic caching). Any key other than ``VALID_KEY`` gets the
401 error body OpenAI sends.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from langchain_core.messages import convert_to_messages

from helpers.course.offline_model import OfflineChatModel
from helpers.tokens import count_text_tokens, count_tokens

VALID_KEY = "test-key-for-localhost"
MODEL = "course-test-model"
EMBEDDING_DIM = 16


def fake_embedding(text: str) -> list[float]:
    """A deterministic unit vector of ``EMBEDDING_DIM`` floats derived from the text's hash."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = [b - 127.5 for b in digest[:EMBEDDING_DIM]]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def _input_messages(items) -> list:
    """Responses API ``input`` (a string, or items with a role and text or content blocks) as messages."""
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    def text(content):
        return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    roles = {"developer": "system"}
    return convert_to_messages([(roles.get(i["role"], i["role"]), text(i["content"]))
                                for i in items if i.get("role")])


class _Handler(BaseHTTPRequestHandler):
    server_version = "course-test-openai/1"
    requests_seen: list[dict] = []
    responses: dict[str, list] = {}  # response id -> every message of its chain, its reply included

    def log_message(self, *args):  # keep test output quiet
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {VALID_KEY}":
            return True
        self._send(401, {"error": {"message": "Incorrect API key provided.",
                                   "type": "invalid_request_error", "code": "invalid_api_key"}})
        return False

    def do_GET(self):
        if not self._authorized():
            return
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self):
        if not self._authorized():
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        type(self).requests_seen.append({"path": self.path, "body": body})
        if self.path.endswith("/chat/completions"):
            if body.get("model") != MODEL:
                self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not "
                                           "exist", "type": "invalid_request_error",
                                           "code": "model_not_found"}})
                return
            messages = convert_to_messages(
                [(m["role"], m["content"]) for m in body["messages"]]
            )
            reply = OfflineChatModel().invoke(messages).content
            prompt, completion = count_tokens(messages), count_text_tokens(reply)
            self._send(200, {
                "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": MODEL,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion},
            })
        elif self.path.endswith("/responses"):
            self._respond(body)
        elif self.path.endswith("/embeddings"):
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            used = sum(count_text_tokens(t) for t in texts)
            self._send(200, {
                "object": "list", "model": body.get("model"),
                "data": [{"object": "embedding", "index": i, "embedding": fake_embedding(t)}
                         for i, t in enumerate(texts)],
                "usage": {"prompt_tokens": used, "total_tokens": used},
            })
        else:
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})


    def _respond(self, body: dict) -> None:
        from langchain_core.messages import AIMessage

        previous = body.get("previous_response_id")
        if previous is not None and previous not in self.responses:
            self._send(400, {"error": {"message": f"Previous response with id '{previous}' not found.",
                                       "type": "invalid_request_error", "param": "previous_response_id"}})
            return
        earlier = self.responses.get(previous, [])
        chain = [*earlier, *_input_messages(body["input"])]
        reply = OfflineChatModel().invoke(chain).content
        response_id = f"resp_{len(self.responses) + 1:04d}"
        self.responses[response_id] = [*chain, AIMessage(reply)]
        prompt, completion = count_tokens(chain), count_text_tokens(reply)
        cached = count_tokens(earlier) - 3 if count_tokens(earlier) >= 1024 else 0
        self._send(200, {
            "id": response_id, "object": "response", "created_at": 0, "status": "completed",
            "model": MODEL, "previous_response_id": previous, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "text": {"format": {"type": "text"}},
            "output": [{"type": "message", "id": f"msg_{response_id[5:]}", "status": "completed",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": reply, "annotations": []}]}],
            "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": max(cached, 0)},
                      "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": prompt + completion},
        })


class OpenAICompatibleServer:
    """Context manager: serves on 127.0.0.1 on a free port; ``base_url`` ends in ``/v1``."""

    def __enter__(self) -> OpenAICompatibleServer:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.requests = _Handler.requests_seen
        self.requests.clear()
        _Handler.responses.clear()
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
