"""Tests for helpers.course.library_way: the library's retriever on the same data as a MemoryStore
(Milvus Lite and the server, ``uri`` fixture in conftest.py)."""

from __future__ import annotations

import uuid

import pytest

from helpers.course.library_way import langchain_retriever
from helpers.course.milvus import open_store
from helpers.retrieval import format_turn
from helpers.store import eq_filter


def test_langchain_retriever_on_the_same_data(uri, e5):
    store = open_store(uri=uri, collection=f"t_{uuid.uuid4().hex[:10]}", embeddings=e5,
                       drop_existing=True)
    try:
        store.add("ann", "s1", 1, format_turn("My job is a software engineer.", "Got it."))
        store.add("ann", "s1", 2, format_turn("I like green tea.", "Got it."))
        store.add("bob", "s2", 1, format_turn("My job is a nurse.", "Got it."))
        vector_store, retriever = langchain_retriever(
            store.rows("ann"), "ann", uri=uri, collection=f"lc_{uuid.uuid4().hex[:10]}",
            embeddings=e5)
        docs = retriever.invoke("What is my job?")
        assert "software engineer" in docs[0].page_content
        assert {d.metadata["user_id"] for d in docs} == {"ann"}
        (doc, score), = vector_store.similarity_search_with_score(
            "What is my job?", k=1, expr=eq_filter(user_id="ann"))
        (mine,) = store.search("ann", "What is my job?", top_k=1)
        assert score == pytest.approx(mine.score, abs=0.01)  # same cosine similarity
        vector_store.client.drop_collection(vector_store.collection_name)
    finally:
        store.drop()
