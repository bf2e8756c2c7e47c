"""Prompt caching, counted: the part of each prompt the provider has already seen, and the bill.

A later prompt that begins with the same tokens as the one before reads them from the provider's cache at
a lower price; the rest is billed as input, and may be written to the cache. The rules, as the providers'
docs state them (``data/prices.json`` names each source; dollars per million tokens): only an exact prefix
matches; below the model's minimum prefix nothing is cached; a new session starts cold. We compare with
the previous call only (a lower bound on savings) and ignore rounding to blocks."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from langchain_core.messages import BaseMessage

from helpers import tokens
from helpers.config import project_root
from helpers.memory import Prompt, label
from helpers.tokens import REPLY_PRIMING_TOKENS, ROLE_NAMES, TOKENS_PER_MESSAGE, count_tokens, encode_text
from helpers.window import StoresEverything, newest_fitting, next_human

DEFAULT_MODEL = "Claude Sonnet 4.5"  # the price lesson 08's table uses (``data/prices.json``)
_FRAMING = [-1] * TOKENS_PER_MESSAGE  # the per-message tokens every message starts with


@dataclass(frozen=True)
class Price:
    """One row of ``data/prices.json``: US dollars per million tokens; ``min_prefix`` in tokens,
    ``ttl_minutes`` in minutes; ``source`` / ``caching_source``: where the numbers were read."""

    model: str
    provider: str
    input: float
    cached_input: float
    cache_write: float
    min_prefix: int
    ttl_minutes: int
    source: str
    caching_source: str


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """Model name -> ``Price`` from ``path`` (default ``data/prices.json``). KeyError naming the
    field a row lacks; FileNotFoundError / json.JSONDecodeError as raised."""
    path = Path(path) if path else project_root() / "data" / "prices.json"
    rows = json.loads(path.read_text(encoding="utf-8"))["models"]
    return {r["model"]: Price(r["model"], r["provider"], r["input_per_mtok"], r["cached_input_per_mtok"],
                              r["cache_write_per_mtok"], r["min_cached_prefix_tokens"],
                              r["cache_ttl_minutes"], r["source"], r["caching_source"]) for r in rows}


def prompt_token_ids(messages: Sequence[BaseMessage], model: str | None = None) -> list[int]:
    """The prompt as one token sequence (ints), as ``count_tokens`` counts it: per message, the framing
    tokens (as ``-1``), its role, its text (``tokens.message_text``: tool calls as their JSON), its other
    blocks (an image: as many ids < -1 as its tokens, from a hash of the block: a changed image is not the
    cached one) and its name. Reply priming is left out: it ends every prompt, never in a shared prefix."""
    ids: list[int] = []
    for m in messages:
        ids += _message_ids(ROLE_NAMES.get(m.type, m.type), tokens.message_text(m), model)
        for block in [] if isinstance(m.content, str) else m.content:  # its own ids, while it stays the same
            digest = hashlib.sha256(json.dumps(block, sort_keys=True, default=str).encode()).digest()
            ids += [-2 - int.from_bytes(digest[:7], "little")] * tokens.non_text_block_tokens(block)
        ids += [-1, *encode_text(m.name, model)] if m.name else []
    return ids


@lru_cache(maxsize=100_000)
def _message_ids(role: str, text: str, model: str | None) -> tuple[int, ...]:
    return (*_FRAMING, *encode_text(role, model), *encode_text(text, model))


def shared_prefix(previous: Sequence[int], current: Sequence[int]) -> int:
    """Tokens (int) at the start of ``current`` equal to the start of ``previous``."""
    n = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        n += 1
    return n


@dataclass(frozen=True)
class CallBill:
    """One call's input as a cache bills it (tokens; US dollars)."""

    prompt_tokens: int  # all of the prompt (``count_tokens``)
    shared_tokens: int  # its prefix equal to the previous call's prompt
    cached_tokens: int  # read from the cache: the shared prefix, if it passed the minimum
    written_tokens: int  # stored for the next call (0 below the minimum)
    dollars: float  # with caching
    dollars_uncached: float  # every token at the input price


def bill_prompts(prompts: Sequence[Sequence[BaseMessage]], price: Price,
                 sessions: Sequence[str] | None = None) -> list[CallBill]:
    """A ``CallBill`` per prompt, in order (an empty prompt: no call, all zeros). ``sessions``: one
    session id per prompt; the cache starts cold when it changes (sessions are days apart)."""
    bills, previous, session = [], [], None
    for n, messages in enumerate(prompts):
        if not messages:
            bills.append(CallBill(0, 0, 0, 0, 0.0, 0.0))
            continue
        if sessions is not None and sessions[n] != session:
            previous, session = [], sessions[n]
        ids = prompt_token_ids(messages)
        total = len(ids) + REPLY_PRIMING_TOKENS
        shared = shared_prefix(previous, ids)
        cached = shared if shared >= price.min_prefix else 0
        written = len(ids) - cached if len(ids) >= price.min_prefix else 0
        plain = total - cached - written
        dollars = (cached * price.cached_input + written * price.cache_write + plain * price.input) / 1e6
        bills.append(CallBill(total, shared, cached, written, dollars, total * price.input / 1e6))
        previous = ids
    return bills


def caching_totals(records: Sequence, price: Price) -> dict:
    """Over a replay's records (``memory.TurnRecord``): prompt tokens read from the cache, and input
    dollars without and with caching. The memory's own calls (summaries) are billed at the input
    price in both: their prompts change with every fold."""
    bills = bill_prompts([r.prompt for r in records], price, [r.session_id for r in records])
    extra = sum(r.memory_call_input_tokens for r in records) * price.input / 1e6
    return {"cached prompt tokens (total)": sum(b.cached_tokens for b in bills),
            "input $ without caching": round(sum(b.dollars_uncached for b in bills) + extra, 4),
            "input $ with caching": round(sum(b.dollars for b in bills) + extra, 4)}


class SteppedTokenWindow(StoresEverything):
    """A token window that moves rarely: it only appends until the prompt passes ``max_tokens``,
    then cuts to the newest messages within ``cut_to`` tokens (starting on a user message). Between
    cuts every prompt begins with the previous one, so a cache can serve it; a sliding window
    (``window.TokenWindow``) changes its first message nearly every turn. Same ``MemoryStrategy``
    protocol; ValueError unless ``0 < cut_to < max_tokens``."""

    cost_note = ("when the prompt passes the budget (a large cut)", "the newest messages, cut in steps")

    def __init__(self, max_tokens: int = 1600, cut_to: int = 800) -> None:
        if not 0 < cut_to < max_tokens:
            raise ValueError(f"need 0 < cut_to < max_tokens, got cut_to={cut_to}, max_tokens={max_tokens}")
        self.max_tokens, self.cut_to, self.start = max_tokens, cut_to, 0
        self.name = f"stepped token window ({max_tokens} → {cut_to} tokens)"

    def prompt(self, system, stored, new_message) -> Prompt:
        self.start = self.start if self.start <= len(stored) else 0  # a new replay
        messages = [*stored[self.start:], new_message]
        if count_tokens([system, *messages]) > self.max_tokens:
            budget = self.cut_to - count_tokens([system])  # the system prompt and priming stay
            k = next_human(messages, newest_fitting(messages, budget), len(messages) - 1)
            self.start += min(k, len(messages) - 1)
            messages = messages[min(k, len(messages) - 1):]
        return label([system, *messages], system, new_message)
