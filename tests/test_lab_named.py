"""A question naming one person searches their rows apart, fused by rank (lab.named: not adopted),
with the offline stand-in and Milvus Lite."""

from __future__ import annotations

import pytest

from helpers.course.offline_model import OfflineChatModel
from helpers.evaluate import evaluate_strategy


@pytest.fixture(scope="module")
def model():
    return OfflineChatModel()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from helpers.course.milvus import open_store, quiet_milvus_logs

    quiet_milvus_logs()
    uri = str(tmp_path_factory.mktemp("named") / "named.db")
    with open_store("named_test", uri=uri, drop_existing=True) as store:
        yield store


def test_a_question_naming_a_person_can_search_their_rows_apart(store, model):
    """lab.named (not adopted): the question naming Mel searches her rows apart, fused with everyone's
    by reciprocal rank; her line comes first as with the default, and a hit's score is its fused one."""
    from test_evaluation import OPENERS

    from helpers.store import Hit
    from lab.public_rows import LayeredVariant

    memory = LayeredVariant(store, "tess-n", "s1", names=OPENERS["speakers"], window_tokens=60,
                            search_named=True)
    rows = evaluate_strategy(memory, OPENERS, model, progress=False)
    text = {t["id"]: t["text"] for t in OPENERS["turns"]}
    (part,) = rows[3].prompt.of_kind("retrieved")
    assert part.text.splitlines()[3] == f"Mel (assistant): {text['a1']} {text['a2']}"
    assert (rows[3].evidence_reached, rows[3].how) == (True, "retrieved")
    (hit,) = [t.retrieved[0] for t in memory.log if t.retrieved and t.retrieved[0].name == "Mel"]
    assert isinstance(hit, Hit) and hit.score == pytest.approx(1 / 61 + 0.5 / 61)  # first in both lists
