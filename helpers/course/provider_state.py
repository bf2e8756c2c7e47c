"""Provider-side state (lesson 09): what a conversation chained on the provider's side sends, next to
what a client-side history sends, and what each provider keeps (``data/provider_features.json``,
every row with its source and date).

With a key, ``chained_model`` is LangChain's way: ``ChatOpenAI(use_responses_api=True,
use_previous_response_id=True)`` drops every message up to the last reply it got and sends that
reply's id instead. Offline, ``responses_request`` shows the body it would send, built by hand; the
tests check it against what the client sends to a localhost server."""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

from helpers.config import Settings, project_root
from helpers.tokens import ROLE_NAMES, count_text_tokens, count_tokens


def provider_features() -> list[dict]:
    """The rows of ``data/provider_features.json`` (provider, feature, request, keeps, bills,
    you lose, source, taken)."""
    path = project_root() / "data" / "provider_features.json"
    return json.loads(path.read_text(encoding="utf-8"))["features"]


def responses_request(model: str, messages: Sequence[BaseMessage]) -> dict:
    """The JSON body of ``POST /v1/responses`` that ``ChatOpenAI(use_responses_api=True,
    use_previous_response_id=True)`` sends for ``messages`` (text messages only): the messages after
    the newest reply with a Responses API id (``langchain_openai``'s rule: it starts with ``resp_``),
    and that id as ``previous_response_id``."""
    start, previous = 0, None
    for i in range(len(messages) - 1, -1, -1):
        rid = messages[i].response_metadata.get("id") if isinstance(messages[i], AIMessage) else None
        if rid and rid.startswith("resp_"):
            start, previous = i + 1, rid
            break
    items = [{"content": m.text, "role": ROLE_NAMES[m.type], "type": "message"} for m in messages[start:]]
    body = {"model": model, "stream": False, "input": items}
    return body | ({"previous_response_id": previous} if previous else {})


def chat_completions_request(model: str, messages: Sequence[BaseMessage]) -> dict:
    """The JSON body of ``POST /v1/chat/completions`` for a client-side history: every message, every turn."""
    return {"model": model, "messages": [{"role": ROLE_NAMES[m.type], "content": m.text} for m in messages]}


def request_tokens(body: dict) -> int:
    """Tokens (cl100k_base) of the text a request body carries (``input`` or ``messages``): what
    travels, not what is billed."""
    items = body.get("input") or body.get("messages") or []
    return sum(count_text_tokens(i["content"]) for i in items)


def chained_model(settings: Settings):
    """``ChatOpenAI`` at ``settings``' endpoint that chains turns on the provider's side
    (``use_responses_api=True, use_previous_response_id=True``). Needs a key."""
    from helpers.course.setup import get_chat_model

    return get_chat_model(settings, use_responses_api=True, use_previous_response_id=True)


def replay_chained(model, system: BaseMessage, turns: Sequence[str]) -> list[dict]:
    """Send ``turns`` (user messages) through ``chained_model``; one row per turn: tokens the
    request carried, input tokens the provider billed (``usage_metadata``), of which cached, and
    the tokens a client-side history would have sent."""
    from langchain_core.messages import HumanMessage

    history, rows = [system], []
    for text in turns:
        history.append(HumanMessage(text))
        body = responses_request(getattr(model, "model_name", ""), history)
        reply = model.invoke(history)
        usage = reply.usage_metadata or {}
        rows.append({"user": text, "reply": reply.text, "tokens sent": request_tokens(body),
                     "input tokens billed": usage.get("input_tokens"),
                     "of which cached": (usage.get("input_token_details") or {}).get("cache_read"),
                     "client-side history would send": count_tokens(history)})
        history.append(reply)
    return rows
