"""data/prices.json: every row names its model, provider, prices, caching rules and their sources."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

PRICES = Path(__file__).resolve().parent.parent / "data" / "prices.json"


def test_prices_have_model_provider_two_prices_and_a_source():
    data = json.loads(PRICES.read_text(encoding="utf-8"))
    assert data["description"].strip()
    assert len(data["models"]) >= 2
    for row in data["models"]:
        assert row["model"].strip() and row["provider"].strip(), row
        assert row["input_per_mtok"] > 0 and row["cached_input_per_mtok"] > 0, row
        assert row["cached_input_per_mtok"] < row["input_per_mtok"], row  # a cache hit is the cheaper rate
        assert row["source"].startswith("https://"), row
        datetime.date.fromisoformat(row["taken"])  # the day the price was read
        assert isinstance(row["verified"], bool), row
        if not row["verified"]:  # the description says why
            assert row["model"] in data["description"], row["model"]


def test_every_row_states_its_caching_rules_with_a_source():
    data = json.loads(PRICES.read_text(encoding="utf-8"))
    for row in data["models"]:
        # writing a cache entry costs the input price or more, never less
        assert row["cache_write_per_mtok"] >= row["input_per_mtok"], row
        assert row["cache_ttl_minutes"] > 0 and row["min_cached_prefix_tokens"] >= 1, row
        assert row["caching"].strip() and row["caching_source"].startswith("https://"), row
    by_provider = {row["provider"]: row for row in data["models"]}
    # OpenAI caches automatically from 1,024 tokens with no fee for writing; Anthropic bills
    # a 5-minute write at 1.25x and a read at 0.1x its input price (each provider's docs)
    openai = by_provider["OpenAI"]
    assert openai["min_cached_prefix_tokens"] == 1024
    assert openai["cache_write_per_mtok"] == openai["input_per_mtok"]
    for row in (r for r in data["models"] if r["provider"] == "Anthropic"):
        assert row["cache_write_per_mtok"] == row["input_per_mtok"] * 1.25, row
        assert abs(row["cached_input_per_mtok"] - row["input_per_mtok"] * 0.1) < 1e-9, row
    assert all(r["min_cached_prefix_tokens"] in (512, 1024, 2048, 4096) for r in data["models"])
