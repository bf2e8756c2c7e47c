"""data/prices.json: every row names its model and provider, two positive prices and its source."""

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
