"""Tests of helpers.store (and the connecting of helpers.course.milvus) on Milvus Lite and on a real
Milvus server (2.3.5 standalone, started by tests/milvus_server.py; skipped with the reason where the
platform cannot run it).

Most tests use ``HashEmbeddings``: deterministic 16-d unit vectors from a hash of the text, so the
same text always gets the same vector (score 1.0 for an exact match) and no model is loaded.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
import unicodedata
import uuid
from pathlib import Path

import pytest
from hash_embeddings import HashEmbeddings
from langchain_core.embeddings import Embeddings

from helpers.chunks import WAITING
from helpers.course.milvus import (
    LiteLockedError,
    MilvusUnavailableError,
    connect,
    drop_collection,
    open_store,
)
from helpers.retrieval import RetrievalMemory, format_turn
from helpers.safe import InvalidIdError, filter_literal
from helpers.store import (
    CHUNK_MAX_BYTES,
    CONTENT_MAX_BYTES,
    LITE_FLUSH_EVERY,
    DimensionMismatchError,
    MemoryStore,
    MilvusStoreError,
    StoreClosedError,
    eq_filter,
    in_filter,
    split_utf8,
    utf8_len,
)

DIM = 16
HOSTILE_IDS = ['a" or user_id != "x', "a' or 1==1", "../etc", "", "a b", "x\\", "ann\n", "ü-ser", "a" * 129]


def kind_of(uri: str) -> str:
    return "lite" if uri.endswith(".db") else "server"


def new_store(uri: str, dim: int = DIM, embeddings: Embeddings | None = None, **kwargs) -> MemoryStore:
    name = kwargs.pop("collection", f"t_{uuid.uuid4().hex[:10]}")
    return open_store(uri=uri, collection=name, dim=dim, embeddings=embeddings or HashEmbeddings(dim),
                      drop_existing=True, **kwargs)


def add_turn(store: MemoryStore, user: str, session: str, round_: int, text: str,
             reply: str | None = None, **kwargs) -> list[str]:
    """One turn as ``RetrievalMemory`` writes it: ``format_turn(text, reply)``, kind ``"turn"``."""
    return store.add(user, session, round_, format_turn(text, reply), **kwargs)


@pytest.fixture(scope="module")
def store(uri):
    """One collection per backend for the module (a server takes ~3 s to create and load one);
    tests keep apart by using their own user ids (``user`` fixture)."""
    s = new_store(uri)
    yield s
    s.drop()


@pytest.fixture
def user() -> str:
    return f"u{uuid.uuid4().hex[:12]}"


# --- pure functions ------------------------------------------------------------------------------


def test_split_utf8_cuts_between_characters_within_budget():
    text = "가나다" * 700 + " end 😀" * 300  # 3-byte Hangul, 4-byte emoji
    for budget in (4, 5, 7, 100, 5000):
        pieces = split_utf8(text, budget)
        assert "".join(pieces) == text
        assert all(0 < utf8_len(p) <= budget for p in pieces)
    assert split_utf8("", 10) == [""]
    assert split_utf8("short", 10) == ["short"]
    with pytest.raises(ValueError):
        split_utf8("abc", 3)


def test_split_utf8_prefers_a_space_near_the_end():
    pieces = split_utf8("word " * 30, 40)
    assert all(p.endswith(" ") for p in pieces[:-1])


def test_korean_2000_characters_is_6000_bytes_and_two_chunks():
    turn = format_turn("가" * 2000)
    assert len(turn) == 2006 and utf8_len(turn) == 6006
    assert [utf8_len(p) for p in split_utf8(turn, CONTENT_MAX_BYTES)] == [4998, 1008]


def test_filter_literal_escapes_quotes_backslashes_and_control_characters():
    assert filter_literal('a" or user_id != "x') == '"a\\" or user_id != \\"x"'
    assert filter_literal("back\\") == '"back\\\\"'
    assert filter_literal("a\nb\tc\rd") == '"a\\nb\\tc\\rd"'
    assert eq_filter(user_id="ann", round=3) == 'user_id == "ann" and round == 3'
    assert in_filter("kind", ["a", 'b"']) == 'kind in ["a", "b\\""]'
    with pytest.raises(ValueError):
        eq_filter(**{"user_id or 1": "x"})
    with pytest.raises(ValueError):
        in_filter("kind)", ["a"])
    with pytest.raises(TypeError):
        filter_literal(3)


def test_format_turn():
    assert format_turn("hi", "hello") == "User: hi\nAI: hello"
    assert format_turn("hi") == "User: hi"


def test_pymilvus_loggers_are_quiet():
    assert logging.getLogger("pymilvus").getEffectiveLevel() >= logging.CRITICAL
    assert logging.getLogger("milvus_lite").getEffectiveLevel() >= logging.CRITICAL


# --- both backends ----------------------------------------------------------------------------------


def test_users_never_see_each_others_memories(store, user):
    ann, bob, carol = f"{user}-ann", f"{user}-bob", f"{user}-carol"
    add_turn(store, ann, "s1", 1, "My job is a software engineer.", "Got it.")
    add_turn(store, ann, "s1", 2, "I live in Busan.", "Got it.")
    add_turn(store, bob, "s9", 1, "I live in Busan.", "Got it.")
    same_text = "User: I live in Busan.\nAI: Got it."
    for who, expected_turns in ((ann, 2), (bob, 1)):
        found = store.search(who, same_text, top_k=10)
        assert {m.user_id for m in found} == {who}
        assert len(found) == expected_turns
        assert found[0].content == same_text and found[0].score == pytest.approx(1.0, abs=1e-4)
        assert {m.user_id for m in store.rows(who)} == {who} and len(store.rows(who)) == expected_turns
    assert store.search(carol, same_text) == []
    assert store.count(ann) == 2 and store.count(bob) == 1
    only_s1 = store.search(ann, same_text, top_k=10, session_id="s1")
    assert len(only_s1) == 2 and store.search(ann, same_text, session_id="s2") == []


def test_read_after_write_without_flush(store, user):
    for round_ in range(1, 6):
        text = f"fact number {round_}"
        add_turn(store, user, "s1", round_, text)
        found = store.search(user, format_turn(text), top_k=1)
        assert found and found[0].round == round_ and found[0].content == format_turn(text)


def test_search_result_fields_and_min_score(store, user):
    ids = add_turn(store, user, "s1", 4, "I like cats.", "Noted.", timestamp="2026-01-31T09:30:00+00:00")
    (hit,) = store.search(user, "User: I like cats.\nAI: Noted.", top_k=3)
    assert hit.ids == tuple(ids) and hit.round == 4 and hit.session_id == "s1"
    assert hit.timestamp == "2026-01-31T09:30:00.000+00:00" and len(hit.ids) == 1  # stored in UTC, ms
    assert (hit.kind, hit.speaker, hit.name, hit.date) == ("turn", "", "", "")
    assert store.search(user, "something else entirely", min_score=0.99) == []
    (row,) = store.rows(user)
    assert row.content == hit.content and not hasattr(row, "score")


def test_add_writes_the_columns_and_refuses_bad_values(store, user):
    ids = store.add(user, "s1", 2, "제 이름은 수아예요.", kind="statement", speaker="user", name="Sua",
                    date="2025-02-22", vector=HashEmbeddings(DIM).embed_query("x"))
    (row,) = store.rows(user)
    assert (row.kind, row.speaker, row.name, row.date, row.ids) == ("statement", "user", "Sua",
                                                                     "2025-02-22", tuple(ids))
    assert row.timestamp.endswith("+00:00")  # now, UTC
    bad = [dict(timestamp="yesterday"), dict(date="next Tuesday"), dict(kind="k" * 33),
           dict(name="이" * 22)]  # 66 bytes: a server counts bytes
    for options in bad:
        with pytest.raises(ValueError):
            store.add(user, "s1", 3, "x", **options)
    with pytest.raises(TypeError):
        store.add(user, "s1", -1, "x")
    with pytest.raises(TypeError):
        store.add(user, "s1", 1, None)
    with pytest.raises(ValueError, match="one vector"):
        store.add(user, "s1", 1, "가" * 2000, vector=[0.0] * DIM)  # two chunks
    assert store.count(user) == 1


def test_an_unpaired_surrogate_or_a_query_that_is_not_text_is_refused_plainly(store, user):
    calls = store.embedding_calls
    with pytest.raises(ValueError) as info:
        store.add(user, "s1", 1, "I love it \ud83d so much")
    assert str(info.value).startswith("the text holds an unpaired surrogate '\\ud83d' at character 10 "
                                      "(after 'I love it '): half of a UTF-16 pair, not valid UTF-8. "
                                      "Nothing was written.")
    with pytest.raises(ValueError, match="name holds an unpaired surrogate '\\\\udc00' at character 3"):
        store.add(user, "s1", 1, "fine", name="Ann\udc00")
    assert store.count(user) == 0 and store.embedding_calls == calls  # nothing embedded or written
    with pytest.raises(TypeError, match="query must be a str \\(the text to search by\\), got None"):
        store.search(user, None)
    assert store.embedding_calls == calls


def test_a_round_past_int64_and_a_date_that_is_not_iso_are_refused_naming_the_field(store, user):
    with pytest.raises(TypeError, match=r"round must be an int in \[0, 2\*\*63\)"):
        store.add(user, "s1", 2**63, "fine")
    with pytest.raises(ValueError, match="date must be ISO 8601 .* got 'yesterday'; nothing written"):
        store.add(user, "s1", 1, "fine", date="yesterday")
    assert store.count(user) == 0


def test_korean_turn_over_the_byte_limit_round_trips_whole(store, user):
    calls = store.embedding_calls
    korean = "가" * 2000  # 6,000 UTF-8 bytes: a server rejects it in one VARCHAR(5000)
    ids = add_turn(store, user, "s1", 1, korean, "네, 알겠어요.")
    whole = format_turn(korean, "네, 알겠어요.")
    assert len(ids) == 6 and store.embedding_calls - calls == 6  # one embedding per part of 1,200 bytes
    assert store.count(user) == 6
    for query in split_utf8(whole, store.max_chunk_bytes):  # a hit on any part returns the whole turn
        (hit,) = store.search(user, query, top_k=1)
        assert hit.content == whole and hit.ids == tuple(ids)
    (listed,) = store.rows(user)
    assert listed.content == whole


def test_dimension_mismatch_is_refused_before_insert_or_search(uri):
    name = f"t_{uuid.uuid4().hex[:10]}"
    first = new_store(uri, dim=DIM, collection=name)
    add_turn(first, "ann", "s1", 1, "hello")
    probe = HashEmbeddings(dim=DIM * 2)
    with pytest.raises(DimensionMismatchError) as info:
        open_store(uri=uri, collection=name, embeddings=probe)  # dim from a probe embedding
    message = str(info.value)
    assert f"stores {DIM}-dimensional" in message and f"makes {DIM * 2}-dimensional" in message
    assert "another collection name" in message
    assert f"drop_collection({name!r}, uri={uri!r})" in message  # this store's Milvus, not course.db
    assert isinstance(info.value, ValueError)
    assert probe.texts == 1  # only the probe: nothing embedded for an insert or a search
    with pytest.raises(DimensionMismatchError) as info:  # the length came from the argument: it says so
        open_store(uri=uri, collection=name, dim=DIM * 2, embeddings=HashEmbeddings(DIM * 2))
    assert (f"stores {DIM}-dimensional vectors, but dim={DIM * 2} was passed (pass {DIM}, or no dim for the "
            "model's length). Nothing was inserted or searched.") in str(info.value)
    assert "embedding model makes" not in str(info.value)
    with pytest.raises(DimensionMismatchError):
        first.add("ann", "s1", 2, "wrong size", vector=[0.1] * (DIM + 1))
    with pytest.raises(DimensionMismatchError):
        first.search("ann", None, query_vector=[0.1] * (DIM - 1))
    assert first.count() == 1
    first.close()
    assert drop_collection(name, uri=uri) is True and drop_collection(name, uri=uri) is False
    fresh = open_store(uri=uri, collection=name, embeddings=probe)  # the fix works
    assert fresh.dim == DIM * 2
    fresh.drop()


def test_a_collection_of_another_schema_is_refused(uri):
    name = f"t_{uuid.uuid4().hex[:10]}"
    client = connect(uri)
    client.create_collection(name, dimension=DIM)  # id + vector only
    try:
        with pytest.raises(MilvusStoreError, match="lacks content, ") as info:
            MemoryStore(client, name, HashEmbeddings(DIM), dim=DIM, uri=uri)
        assert str(info.value).endswith("not this course's, or an older version's. Use another name or "
                                        "drop_existing=True.")
    finally:
        client.drop_collection(name)
        client.close()


def test_unsafe_user_ids_are_refused_and_nothing_is_written(store):
    before = store.count()
    for bad in HOSTILE_IDS:
        calls = [(store.add, bad, "s1", 1, "x"), (store.search, bad, "x"), (store.rows, bad),
                 (store.count, bad), (store.delete_user, bad), (store.add, "ann", bad, 1, "x"),
                 (store.rows, "ann", bad), (store.neighbours, bad, [])]
        for method, *args in calls:
            with pytest.raises(InvalidIdError):
                method(*args)
        with pytest.raises(InvalidIdError, match="user id"):
            RetrievalMemory(store, bad)
    assert store.count() == before


def test_hostile_strings_are_escaped_in_filters(store, user):
    """Values that would break out of a naively quoted filter match exactly one row each."""
    values = ['a" or user_id != "x', "it's", "back\\slash\\", 'mix\'"\\end', "tab\tnew\nline"]
    for i, value in enumerate(values):
        add_turn(store, user, "s1", i, value)
    for value in values:
        where = eq_filter(user_id=user, content=format_turn(value))
        rows = store.client.query(store.collection, filter=where, output_fields=["content"],
                                  consistency_level="Strong")
        assert [r["content"] for r in rows] == [format_turn(value)]


def test_insert_vs_upsert_per_backend(store, user):
    """A server keeps both rows of a duplicate primary key; Milvus Lite overwrites (last write
    wins). This is why ``add`` uses fresh uuid ids and plain insert."""
    (row_id,) = add_turn(store, user, "s1", 1, "original")
    row = {"id": row_id, "vector": [1.0] + [0.0] * (DIM - 1), "content": "duplicate", "user_id": user,
           "session_id": "s1", "round": 1, "kind": "turn", "speaker": "", "name": "", "date": "",
           "timestamp": "2026-01-31T09:30:00+00:00", "turn_id": row_id[:-2], "chunk": 0, "chunks": 1,
           "embedded": 1}
    store.client.insert(store.collection, [row])
    assert store.count(user) == (1 if kind_of(store.uri) == "lite" else 2)
    store.client.upsert(store.collection, [{**row, "content": "upserted"}])
    by_id = store.client.query(store.collection, filter=eq_filter(id=row_id), output_fields=["content"],
                               consistency_level="Strong")
    assert [r["content"] for r in by_id] == ["upserted"]  # upsert replaces both copies
    if kind_of(store.uri) == "lite":
        assert [m.content for m in store.rows(user)] == ["upserted"]
    # Not asserted for the server: on Milvus 2.3.5 an upserted row of a partition-key collection
    # was, in most runs, found by id but no longer by a user_id filter. Another reason for
    # add to insert fresh ids and never upsert.


def test_unique_ids_with_concurrent_writer_threads(store, user):
    ids: list[str] = []
    lock = threading.Lock()
    calls = store.embedding_calls

    def writer(n: int) -> None:
        for _ in range(15):  # same user, session and round everywhere: ids must still differ
            written = add_turn(store, user, "s1", 1, f"writer {n}")
            with lock:
                ids.extend(written)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == len(set(ids)) == 60
    assert store.count(user) == 60
    assert store.embedding_calls - calls == 60  # the counter under the lock lost nothing


def _process_writer(uri: str, collection: str, user: str, n: int, queue) -> None:
    store = open_store(uri=uri, collection=collection, dim=DIM, embeddings=HashEmbeddings())
    queue.put([i for _ in range(15) for i in add_turn(store, user, "s1", 1, f"process {n}")])
    store.close()


def test_unique_ids_with_two_writer_processes(milvus_server, user):
    """Two processes write the same user/session/round at once (a server allows many clients;
    Milvus Lite allows one process per folder, see the lock test)."""
    store = new_store(milvus_server.uri, consistency_level="Strong")  # sees other clients' writes
    try:
        context = multiprocessing.get_context("spawn")
        queue = context.Queue()
        workers = [context.Process(target=_process_writer,
                                   args=(milvus_server.uri, store.collection, user, n, queue))
                   for n in range(2)]
        for w in workers:
            w.start()
        ids = queue.get(timeout=120) + queue.get(timeout=120)
        for w in workers:
            w.join(30)
            assert w.exitcode == 0
        assert len(ids) == len(set(ids)) == 30
        assert store.count(user) == 30
    finally:
        store.drop()


def test_released_collection_is_loaded_again(store, user):
    add_turn(store, user, "s1", 1, "remember me")
    store.client.release_collection(store.collection)
    assert store.search(user, "User: remember me", top_k=1)[0].content == "User: remember me"
    store.client.release_collection(store.collection)
    assert store.count(user) == 1 and store.rows(user)[0].content == "User: remember me"


def test_flush_policy_counts_rows(store, user, monkeypatch):
    assert store.flush_every == (LITE_FLUSH_EVERY if kind_of(store.uri) == "lite" else None)
    flushes, flush = [], store.flush
    monkeypatch.setattr(store, "flush", lambda: flushes.append(flush()) or flushes[-1])
    monkeypatch.setattr(store, "flush_every", 5)
    store.flush()  # starts the count at 0
    for r in range(6):
        add_turn(store, user, "s1", r, f"turn {r}")
    assert len(flushes) == 2 and all(seconds > 0 for seconds in flushes)
    assert store.search(user, "User: turn 2", top_k=1)[0].round == 2  # flushed rows found


def test_delete_user_removes_one_users_rows_only(uri):
    store = new_store(uri)
    try:
        for r in range(1, 4):
            add_turn(store, "ann", "s1", r, f"ann's fact {r}")
        add_turn(store, "ann", "s2", 1, "가" * 2000)  # six chunks of 1,200 bytes: six rows
        add_turn(store, "bob", "s1", 1, "ann's fact 1")
        if kind_of(uri) == "lite":
            store.flush()  # flushed and unflushed rows both go
        add_turn(store, "ann", "s3", 1, "written after the flush")
        assert store.count("ann") == 10
        assert store.delete_user("ann") == 10
        assert store.count("ann") == 0 and store.rows("ann") == []
        assert store.search("ann", "User: ann's fact 1", top_k=5) == []
        (kept,) = store.search("bob", "User: ann's fact 1", top_k=5)
        assert kept.user_id == "bob" and store.count("bob") == 1 and store.count() == 1
        assert store.delete_user("ann") == 0 and store.delete_user("nobody") == 0
        add_turn(store, "ann", "s4", 1, "a new start")  # the user can write again
        assert [h.content for h in store.search("ann", "User: a new start")] == ["User: a new start"]
    finally:
        store.drop()


def test_closed_and_dropped_stores_say_so(uri):
    store = new_store(uri)
    add_turn(store, "ann", "s1", 1, "hello")
    store.close()
    with pytest.raises(StoreClosedError, match=r"closed by store\.close\(\).*Reopen it"):
        store.search("ann", "hello")
    reopened = open_store(uri=uri, collection=store.collection, dim=DIM, embeddings=HashEmbeddings())
    assert reopened.count("ann") == 1
    reopened.drop()
    with pytest.raises(StoreClosedError, match=r"closed by store\.drop\(\)"):
        reopened.count()


# --- clear errors -----------------------------------------------------------------------------


def test_server_unreachable_gives_a_plain_sentence():
    from milvus_server import free_port

    with pytest.raises(MilvusUnavailableError) as info:
        connect(f"http://127.0.0.1:{free_port()}", timeout=5)
    message = str(info.value)
    assert "docker compose up -d" in message and "MILVUS_URI" in message and "Lite" in message
    assert isinstance(info.value, MilvusStoreError)


def test_lite_folder_locked_by_another_process(tmp_path, capfd):
    path = str(tmp_path / "06_retrieval.db")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from pymilvus import MilvusClient
            MilvusClient(uri={path!r})
            print("ready", flush=True)
            sys.stdin.read()  # hold the folder until the test closes our stdin
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        capfd.readouterr()
        with pytest.raises(LiteLockedError) as info:
            open_store(uri=path, dim=DIM, embeddings=HashEmbeddings())
        message = str(info.value)
        assert "another process" in message and "kernel running lesson 06" in message
        assert "Traceback" not in capfd.readouterr().err  # the noisy loggers stay quiet
    finally:
        holder.stdin.close()
        holder.wait(30)
    with pytest.raises(ValueError, match=r"\.db"):
        connect(str(tmp_path / "no_suffix"))
    reopened = open_store(uri=path, dim=DIM, embeddings=HashEmbeddings())  # free again
    reopened.close()


def test_lite_connections_send_no_keepalive_pings(tmp_path):
    """Lite's in-process gRPC server answers pymilvus' 10-second pings on an idle connection with
    GOAWAY "too_many_pings" (seen failing a long lesson on a loaded machine): the course's Lite
    clients, its own and the library way's, send none; a server connection keeps pymilvus' defaults."""
    from helpers.course.milvus import LITE_GRPC_OPTIONS

    client = connect(str(tmp_path / "idle.db"))
    try:
        options = client._handler._grpc_options  # what pymilvus builds the channel with
        assert options["grpc.keepalive_permit_without_calls"] is False
        assert options["grpc.keepalive_time_ms"] == LITE_GRPC_OPTIONS["grpc.keepalive_time_ms"] > 3600_000
    finally:
        client.close()


# --- long messages: chunks small enough for e5, embedding bounded per call ---------------------------


def test_bounded_text_keeps_the_start_and_the_end_within_the_bytes():
    from helpers.safe import bounded_text

    text = "가나다라 " * 3000
    short = bounded_text(text, CHUNK_MAX_BYTES)
    assert utf8_len(short) <= CHUNK_MAX_BYTES and " … " in short
    assert text.startswith(short.split(" … ")[0]) and text.endswith(short.split(" … ")[-1])
    assert bounded_text("Why did it fail?", CHUNK_MAX_BYTES) == "Why did it fail?"


@pytest.mark.parametrize("language", ["en", "ko"])
def test_a_pasted_file_is_stored_in_chunks_each_found_by_its_own_words(lite_uri, user, language):
    from long_messages import LINES, pasted_file

    embedder = HashEmbeddings(DIM)
    seen: list[str] = []
    embedder.embed_documents = lambda texts, inner=embedder.embed_documents: seen.extend(texts) or inner(
        texts)
    store = new_store(lite_uri, embeddings=embedder)
    try:
        paste = pasted_file(language)
        ids = store.add(user, "s1", 1, paste, speaker="user", embed_chunks=8)
        chunks = split_utf8(paste, CHUNK_MAX_BYTES)
        assert len(ids) == len(chunks) > 30 and all(utf8_len(p) <= CHUNK_MAX_BYTES for p in chunks)
        assert seen == chunks[:8] and len(store.waiting) == len(chunks) - 8  # 8 chunks embedded now
        store.add(user, "s1", 2, "Thanks!", speaker="user", embed_chunks=8)  # its chunk, then 7 waiting
        assert seen[8:] == ["Thanks!", *chunks[8:15]] and len(store.waiting) == len(chunks) - 15
        assert store.catch_up() == len(chunks) - 15 and store.waiting == [] and seen[-1] == chunks[-1]
        middle = chunks[len(chunks) // 2]
        (hit,) = store.search(user, middle, top_k=1, chunks=True)  # hash vectors: the same text is found
        assert hit.content == middle and hit.chunk_of == (len(chunks) // 2 + 1, len(chunks))
        (whole,) = store.search(user, middle, top_k=1)  # the default: the whole message
        assert whole.content == paste and whole.chunk_of is None
        line = LINES[language].format(n=300)
        assert line in "".join(p for p in chunks)
    finally:
        store.drop()


def test_only_the_first_embedded_chunks_are_embedded_the_rest_stored_now_never_a_dense_hit(lite_uri, user):
    embedder = HashEmbeddings(DIM)
    seen: list[str] = []
    embedder.embed_documents = lambda texts, inner=embedder.embed_documents: seen.extend(texts) or inner(
        texts)
    store = new_store(lite_uri, embeddings=embedder, max_chunk_bytes=40)
    try:
        text = " ".join(f"step {n} of the plan." for n in range(1, 13))
        chunks = split_utf8(text, 40)  # 7 chunks of at most 40 bytes
        for bad in (0, True, 1.5):
            with pytest.raises(ValueError, match="embedded_chunks"):
                store.add(user, "s1", 1, text, embedded_chunks=bad)
        ids = store.add(user, "s1", 1, text, speaker="assistant", embed_chunks=1, embedded_chunks=2)
        assert len(ids) == len(chunks) == 7 and seen == chunks[:1]
        assert store.waiting[0]["content"] == chunks[1]
        found = store.client.query(store.collection, filter=f'user_id == "{user}"',
                                   output_fields=["chunk", "embedded"])
        assert sorted((r["chunk"], r["embedded"]) for r in found) == [  # the second waits, written as WAITING
            (0, 1), (1, WAITING), *((i, 0) for i in range(2, 7))]
        assert store.catch_up() == 1 and seen == chunks[:2]  # the second chunk waited; the rest never will
        (whole,) = store.rows(user)
        assert whole.content == text and whole.chunk_of is None  # every chunk, joined
        hits = store.search(user, None, 20, chunks=True, query_vector=[1.0] + [0.0] * (DIM - 1))
        assert sorted(h.chunk_of for h in hits) == [(1, 7), (2, 7)]  # not the placeholders: their vector
        (hit,) = store.search(user, chunks[4], 1)  # a whole-row hit brings all its chunks
        assert hit.content == text and hit.chunk_of is None
    finally:
        store.drop()


def test_a_long_query_is_embedded_by_its_start_and_end(lite_uri, user):
    from long_messages import pasted_file

    embedder = HashEmbeddings(DIM)
    asked: list[str] = []
    embedder.embed_query = lambda text, inner=embedder.embed_query: asked.append(text) or inner(text)
    store = new_store(lite_uri, embeddings=embedder)
    try:
        store.search(user, pasted_file("en"), top_k=1)
        (query,) = asked
        assert utf8_len(query) <= CHUNK_MAX_BYTES and query.endswith("Why did it fail?")
    finally:
        store.drop()


# --- full text (BM25) fused with meaning: helpers.fulltext ----------------------------------------


def test_hybrid_store_finds_a_rare_word_on_lite_and_stays_dense_on_an_old_server(uri, user):
    """HashEmbeddings know no meaning: an exact word match can only come from BM25. Milvus Lite 3 runs
    BM25 functions; the 2.3.5 server has none, so there the store is a plain dense store."""
    from helpers.fulltext import SPARSE_FIELD, HybridStore

    store = new_store(uri, store_class=HybridStore, words_weight=1.0)
    try:
        assert store.full_text is (kind_of(uri) == "lite")
        fields = {f["name"] for f in store.client.describe_collection(store.collection)["fields"]}
        assert (SPARSE_FIELD in fields) is store.full_text
        texts = [f"Filler line number {i} about the weather and lunch." for i in range(40)]
        texts[17] = "I synced the server clock with the NTP pool yesterday."
        texts[23] = "해운대에서 서핑을 배웠어요."
        for i, text in enumerate(texts):
            store.add(user, "s1", i, text, kind="statement", speaker="user")
        hits = store.search(user, "when did I set up NTP", 3, kinds=["statement"], words=True)
        assert len(hits) == 3 and all(h.kind == "statement" for h in hits)
        if store.full_text:
            assert hits[0].content == texts[17]
            composed = "해운대에서 서핑"
            typed = unicodedata.normalize("NFD", composed)  # a Mac's decomposed Hangul: searched as NFC
            found = [h.content for h in store.search(user, typed, 3, words=True)]
            assert texts[23] in found
            assert found == [h.content for h in store.search(user, composed, 3, words=True)]
        assert store.search(user, "NTP", 3, kinds=["question"], words=True) == []  # the filter holds in both
        unasked = store.search(user, "when did I set up NTP", 40)  # words only when asked: meaning alone
        assert [h.content for h in unasked] == [h.content for h in MemoryStore.search(
            store, user, "when did I set up NTP", 40)]
        dense = store.search(user, "when did I set up NTP", 3, min_score=-1.0)  # a threshold: meaning only
        assert [h.content for h in dense] == [h.content for h in MemoryStore.search(
            store, user, "when did I set up NTP", 3, min_score=-1.0)]
    finally:
        store.drop()


def test_hybrid_store_weighs_the_words_ranking_in_the_fusion(uri, user):
    """Each chunk scores 1 / (60 + rank by meaning) + words_weight / (60 + rank by words): "NTP" is in
    one line only, so only that line gets the words' share."""
    from helpers.fulltext import RRF_K, HybridStore

    store = new_store(uri, store_class=HybridStore, words_weight=0.3)
    try:
        for i in range(20):
            text = "I synced the clock with NTP." if i == 11 else f"Filler line {i} about lunch."
            store.add(user, "s1", i, text, kind="statement", speaker="user")
        dense = [h.content for h in MemoryStore.search(store, user, "NTP", 20)]
        fused = store.search(user, "NTP", 20, words=True)
        if not store.full_text:  # the 2.3.5 server: meaning alone
            assert [h.content for h in fused] == dense
            return
        expected = {text: 1 / (RRF_K + rank) for rank, text in enumerate(dense, start=1)}
        expected["I synced the clock with NTP."] += 0.3 / (RRF_K + 1)
        assert {h.content: h.score for h in fused} == pytest.approx(expected)
        assert [h.content for h in fused] == sorted(expected, key=lambda text: -expected[text])
    finally:
        store.drop()


def test_rows_are_oldest_first_by_utc_time_whatever_the_offset(store, user):
    add_turn(store, user, "s1", 1, "I moved to Porto.", timestamp="2026-03-01T01:00:00+00:00")
    add_turn(store, user, "s1", 2, "I live in Lyon.", timestamp="2026-03-01T09:00:00+09:00")  # 00:00 UTC
    rows = store.rows(user)
    assert [r.content for r in rows] == [format_turn("I live in Lyon."), format_turn("I moved to Porto.")]
    assert [r.timestamp for r in rows] == ["2026-03-01T00:00:00.000+00:00", "2026-03-01T01:00:00.000+00:00"]


def test_store_add_refuses_blank_text_and_writes_nothing(store, user):
    for blank in ("", "   ", "\n", "\u3000", "\u200b", "\ufeff \t"):
        with pytest.raises(ValueError, match="blank"):
            store.add(user, "s1", 1, blank)
    assert store.count(user) == 0
    add_turn(store, user, "s1", 1, "Hello there, I am Ann.")
    found = store.search(user, "Hello?", top_k=3)  # no blank row to win
    assert [h.content for h in found] == [format_turn("Hello there, I am Ann.")]


def test_store_keeps_korean_typed_on_macos_as_nfc_and_finds_it_alike(store, user):
    fact, question = "제 고향은 전주예요.", "제 고향이 어디예요?"
    store.add(user, "s1", 1, unicodedata.normalize("NFD", fact), kind="statement",
              name=unicodedata.normalize("NFD", "민수"))
    (row,) = store.rows(user)
    assert (row.content, row.name) == (fact, "민수")
    composed = store.search(user, question, top_k=1)[0].score
    decomposed = store.search(user, unicodedata.normalize("NFD", question), top_k=1)[0].score
    assert decomposed == pytest.approx(composed)


def test_rows_never_searched_are_stored_without_embedding_and_a_turn_is_one_insert(lite_uri, user):
    store = new_store(lite_uri)
    try:
        inserts, calls = [], store.embedding_calls
        real = store.client.insert
        store.client.insert = lambda *a, **k: inserts.append(len(a[1])) or real(*a, **k)
        with store.one_insert():
            store.add(user, "s1", 1, "What is my job?", kind="question", embed=False)
            store.add(user, "s1", 2, "Nurse, you said.", kind="reply", embed=False)
            store.add(user, "s1", 3, "I work as a nurse.", kind="statement")
        assert inserts == [3] and store.embedding_calls == calls + 1  # one insert; one text embedded
        assert [r.content for r in store.rows(user)] == [
            "What is my job?", "Nurse, you said.", "I work as a nurse."]
        (hit,) = store.search(user, "I work as a nurse.", 1, kinds=["statement"])
        assert hit.round == 3
    finally:
        store.drop()


def test_a_search_reads_every_column_of_the_rows_it_keeps_and_no_long_row_crowds_out_a_short_one(
        lite_uri, user):
    store = new_store(lite_uri, max_chunk_bytes=40)
    try:
        plan = " ".join(f"step {n} of the plan." for n in range(1, 13))  # 7 chunks of at most 40 bytes
        for round_ in (1, 2, 3):
            store.add(user, "s1", round_, f"{plan} ({round_})", kind="statement", speaker="assistant",
                      name="Aria", date="2025-03-01")
        store.add(user, "s2", 9, "short fact 3", kind="statement", speaker="user", name="Sua",
                  date="2025-03-02")
        reads, query = [], store._query
        store._query = lambda where, limit=16384: reads.append(where) or query(where, 10)  # 10 chunks a read
        hits = store.search(user, "short fact 3", 4)  # 21 chunks of long rows kept: over one read's cap
        assert [(h.content, h.round) for h in hits][:1] == [("short fact 3", 9)] and len(reads) == 2
        assert (hits[0].kind, hits[0].speaker, hits[0].name, hits[0].date, hits[0].session_id) == (
            "statement", "user", "Sua", "2025-03-02", "s2")
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        chunks = store.search(user, "step 5 of the plan.", 3, chunks=True)
        assert len(chunks) == 3 and all((p.speaker, p.name, p.date) == ("assistant", "Aria", "2025-03-01")
                                       and p.chunk_of[1] == 7 for p in chunks)
        assert [p.score for p in chunks] == sorted((p.score for p in chunks), reverse=True)
    finally:
        store.drop()


def test_make_check_checks_the_milvus_that_milvus_uri_names(uri):
    """``make check``'s Milvus step opens the server MILVUS_URI names (a Lite path: a Lite of its own)."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "check_milvus.py"

    def check(milvus_uri: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "MILVUS_URI": milvus_uri}
        return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                              timeout=300)

    server = uri.startswith("http")
    name = f"Milvus at {uri} (MILVUS_URI)" if server else "Milvus Lite"
    done = check(uri)
    assert done.returncode == 0 and done.stdout.startswith(f"{name}: stored, found and deleted 2"), done
    if server:  # nothing of it left on the server; then the same check where no server listens
        client = connect(uri, None)
        try:
            assert not client.has_collection("course_check")
        finally:
            client.close()
        done = check("http://localhost:9")
        assert done.returncode == 1 and "check FAILED: MilvusUnavailableError" in done.stdout, done


def test_make_check_falls_back_as_a_lesson_does_when_the_embeddings_endpoint_is_unreachable(tmp_path):
    """A wrong key or an unreachable embeddings endpoint: lesson 00 notes it and the lessons use the offline
    embedder, so ``make check``'s Milvus step checks Milvus with that embedder and passes, not "FAILED:
    APIConnectionError" (a learner sent to debug Milvus)."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "check_milvus.py"
    env = {**os.environ, "OPENAI_API_KEY": "sk-bogus", "EMBEDDING_MODEL": "text-embedding-3-small",
           "EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1", "MILVUS_URI": str(tmp_path / "lite.db")}
    env.pop("COURSE_OFFLINE", None)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("Milvus Lite: stored, found and deleted 2"), done


def test_quiet_faiss_clustering_changes_no_centroid_and_no_hit():
    """The silenced warning is all it changes: the same centroids and the same hits as faiss's default."""
    import faiss
    import numpy as np

    from helpers.course.milvus import quiet_faiss_clustering

    quiet_faiss_clustering()
    quiet, plain = faiss.IndexIVFFlat, faiss.IndexIVFFlat.__mro__[1]
    assert quiet.quiet_clustering and not getattr(plain, "quiet_clustering", False)
    vectors = np.random.default_rng(0).standard_normal((300, DIM)).astype("float32")
    found = []
    for make in (quiet, plain):
        quantizer = faiss.IndexFlat(DIM, faiss.METRIC_INNER_PRODUCT)
        index = make(quantizer, DIM, 64, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.add(vectors)
        found.append((quantizer.reconstruct_n(0, quantizer.ntotal), index.search(vectors[:30], 5)[1]))
    assert np.array_equal(found[0][0], found[1][0]) and np.array_equal(found[0][1], found[1][1])
    assert found[0][0].shape == (64, DIM)


def test_a_small_lite_collection_prints_no_faiss_warning(tmp_path, capfd):
    """Lite indexes a 12-row segment with IVF_FLAT: no "WARNING clustering" line reaches stderr."""
    store = new_store(str(tmp_path / "quiet.db"))
    try:
        for n in range(12):
            store.add("quiet", "s1", n + 1, f"fact number {n}", kind="statement", speaker="user")
        store.flush()
        assert len(store.search("quiet", "fact number 3", 3)) == 3
    finally:
        store.drop()
        store.close()
    assert "WARNING clustering" not in capfd.readouterr().err
