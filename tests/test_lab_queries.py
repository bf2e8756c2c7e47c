"""One search per part of a question (lab.queries), on Milvus Lite with hash embeddings."""

import uuid

import pytest
from hash_embeddings import HashEmbeddings

from helpers.budget import fill_budget
from helpers.course.milvus import open_store
from lab.queries import PartsSearch, question_parts


@pytest.mark.parametrize(("question", "parts"), [
    ("Which of Marta's kids broke her wrist, and how old is she?",
     ["Which of Marta's kids broke her wrist", "how old is she?"]),
    ("Where did Ann move? What is her cat called?", ["Where did Ann move?", "What is her cat called?"]),
    ("What did Ann donate and when did she volunteer?", ["What did Ann donate", "when did she volunteer?"]),
    ("What martial arts has John done?", []),  # one part: the question alone
    ("Did Tom and Ann go to Rome?", []),  # "and" between names does not open a question
    ("Is it set up in Socket.io, and why?", []),  # "why" alone has no content word
])
def test_question_parts(question, parts):
    assert question_parts(question) == (parts or [question])


def test_parts_search_brings_each_parts_best_hit_first(tmp_path):
    """HashEmbeddings give an exact text score 1.0: each part finds its own line first, so the
    fused list starts with both, though the whole question matches neither."""
    lines = [f"Line {i} says nothing much." for i in range(30)]
    lines[4], lines[21] = "Where did Ann move?", "What is her cat called?"
    with open_store("parts", uri=str(tmp_path / "p.db"), dim=16, embeddings=HashEmbeddings(16),
                    drop_existing=True) as store:
        user = f"u{uuid.uuid4().hex[:8]}"
        for i, line in enumerate(lines):
            store.add(user, "s1", i, line, kind="statement", speaker="user")
        question = "Where did Ann move? What is her cat called?"
        whole = [h.content for h in store.search(user, question, 5)]
        fused = [h.content for h in PartsSearch(store).search(user, question, 5)]
        assert set(fused[:2]) == {lines[4], lines[21]} and fused[:2] != whole[:2]
        assert PartsSearch(store).count(user) == 30  # everything else goes to the store
        calls = store.embedding_calls  # through fill_budget too, each part is embedded and searched
        chosen, _ = fill_budget(PartsSearch(store), user, question, 300, candidates=5, neighbours_of=0)
        assert store.embedding_calls == calls + 2 and {r.content for r in chosen[:2]} == {lines[4], lines[21]}
