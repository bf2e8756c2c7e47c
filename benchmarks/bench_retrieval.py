"""Benchmark: per-turn overhead of retrieval memory (``helpers.store.MemoryStore``), Lite and server.

Run from the project root::

    .venv/bin/python benchmarks/bench_retrieval.py            # 1k and 10k stored turns
    .venv/bin/python benchmarks/bench_retrieval.py --full     # also 100k (Lite: ~2 GB, minutes)
    .venv/bin/python benchmarks/bench_retrieval.py --no-server
    .venv/bin/python benchmarks/bench_retrieval.py --quick    # 1k only, fewer turns and queries

What one *turn* costs retrieval memory, embedding excluded (it is the same for every store): a
``MemoryStore.search`` (top-3, filtered by user) plus a ``MemoryStore.add`` of the new turn (one
``"User: ...\nAI: ..."`` row of kind ``turn``, ``retrieval.format_turn``, as ``RetrievalMemory``
writes it). Vectors are precomputed random unit vectors of dimension 384 (multilingual-e5-small's
size), so nothing here measures the embedding model. Stores are opened with
``helpers.course.milvus.open_store``.

Setup per backend and size: ``N`` stored turns, spread round-robin over ``--users`` users, written
in batches and flushed (what a long-running store looks like). Then ``--turns`` turns, each for a
random user: the question is a noisy copy of one of that user's stored turns (cosine ~0.7 to it,
a paraphrase) and the new turn is a fresh random vector. Measured:

* ``search`` / ``insert`` / ``overhead`` (search + insert): median (p50) and p95, milliseconds.
* ``recall@3``: share of the exact top-3 (numpy, same user, same vectors, including turns written
  during the run) that the search returned.
* ``numpy``: exact brute-force search over the user's rows in one numpy matrix, the floor.
* nprobe sweep: recall and search p50 for several ``nprobe`` (why ``DEFAULT_NPROBE`` is what it is).
* flush: search p50 with 1,000 rows written but not flushed, and the time to flush them; and a
  Milvus Lite sweep over ``flush_every`` (``--sweep-size`` stored turns, default 10k, 300 turns
  each, flushes included): why ``LITE_FLUSH_EVERY`` is what it is. ``--only-flush-sweep`` runs
  just that. The sweep's store never flushes by itself; the benchmark flushes every
  ``flush_every`` rows and times it.
* server: consistency ``Session`` (the store's default), with ``--think-ms`` (500) between a
  turn's write and the next search, as in a chat; the ``Strong`` column is a search p50 with
  ``Strong`` consistency, which waits for a server time tick every time.

Random vectors have no cluster structure, the worst case for an IVF index (real embeddings
cluster); recall here is a lower bound. The server is the Milvus 2.3.5 standalone binary from the
PyPI package ``milvus``, started like the tests start it (``tests/milvus_server.py``, Linux x86_64
only); ``--no-server`` skips it. The script prints tables; it is not a timed test.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from helpers.course.milvus import open_store
from helpers.retrieval import format_turn
from helpers.store import DEFAULT_NPROBE, MemoryStore

DIM = 384
TOP_K = 3
SEED = 2026
BATCH = 1000
UNFLUSHED = 1000


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def paraphrase(rng: np.random.Generator, vector: np.ndarray) -> np.ndarray:
    """A unit vector at cosine ~0.7 to ``vector``."""
    noise = rng.standard_normal(DIM).astype(np.float32)
    noise /= np.linalg.norm(noise)
    query = 0.7 * vector + 0.714 * noise
    return query / np.linalg.norm(query)


def rows_for(vectors: np.ndarray, users: list[str], start: int) -> tuple[list[dict], list[str]]:
    """Rows shaped as ``MemoryStore.add(..., kind="turn")`` writes them (one chunk per turn)."""
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
    rows, ids = [], []
    for i, vector in enumerate(vectors):
        turn_id = uuid.uuid4().hex
        ids.append(f"{turn_id}-0")
        rows.append({"id": ids[-1], "vector": vector.tolist(), "content": format_turn(f"turn {start + i}"),
                     "user_id": users[(start + i) % len(users)], "session_id": "bench", "round": start + i,
                     "kind": "turn", "speaker": "", "name": "", "date": "", "timestamp": stamp,
                     "turn_id": turn_id, "chunk": 0, "chunks": 1, "embedded": 1})
    return rows, ids


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


class Corpus:
    """The stored vectors, their users and ids, for exact search (numpy)."""

    def __init__(self, users: list[str]) -> None:
        self.users = users
        self.vectors = np.zeros((0, DIM), dtype=np.float32)
        self.owner = np.zeros(0, dtype=np.int32)
        self.ids: list[str] = []

    def add(self, vectors: np.ndarray, owners: np.ndarray, ids: list[str]) -> None:
        self.vectors = np.vstack([self.vectors, vectors])
        self.owner = np.concatenate([self.owner, owners])
        self.ids += ids

    def exact(self, user: int, query: np.ndarray) -> tuple[set[str], float]:
        """Exact top-k ids of ``user`` for ``query`` and the seconds numpy took."""
        began = time.perf_counter()
        rows = np.flatnonzero(self.owner == user)
        scores = self.vectors[rows] @ query
        best = rows[np.argsort(-scores)[:TOP_K]]
        took = time.perf_counter() - began
        return {self.ids[i] for i in best}, took


def fill(store: MemoryStore, corpus: Corpus, rng: np.random.Generator, n: int) -> float:
    began = time.perf_counter()
    for start in range(0, n, BATCH):
        count = min(BATCH, n - start)
        vectors = unit_vectors(rng, count)
        rows, ids = rows_for(vectors, corpus.users, start)
        store.client.insert(store.collection, rows)
        corpus.add(vectors, np.array([(start + i) % len(corpus.users) for i in range(count)]), ids)
    store.flush()
    return time.perf_counter() - began


def wait_for_index(store: MemoryStore, rows: int, timeout: float = 600) -> float:
    """On a server, wait until the IVF_FLAT index covers all ``rows`` flushed rows (until then
    the server searches them with its interim index, ``queryNode.segcore.interimIndex``, whose
    nprobe is 16 whatever the request says). Returns the seconds waited."""
    began = time.monotonic()
    if store.backend == "lite":
        return 0.0
    while time.monotonic() - began < timeout:
        info = store.client.describe_index(store.collection, "vector")
        if info.get("state") == "Finished" and int(info.get("indexed_rows", 0)) >= rows:
            break
        time.sleep(1)
    time.sleep(2)  # let the query node load the indexed segments
    return time.monotonic() - began


def measure_searches(store, corpus, rng, queries: int, nprobe: int) -> tuple[float, float]:
    """(search p50 ms, recall@k) over ``queries`` searches at ``nprobe``; nothing written."""
    store.nprobe = nprobe
    times, hits = [], 0
    for _ in range(queries):
        user = int(rng.integers(len(corpus.users)))
        target = rng.choice(np.flatnonzero(corpus.owner == user))
        query = paraphrase(rng, corpus.vectors[target])
        exact, _ = corpus.exact(user, query)
        began = time.perf_counter()
        found = store.search(corpus.users[user], None, TOP_K, query_vector=query.tolist())
        times.append((time.perf_counter() - began) * 1000)
        hits += len(exact & {i for m in found for i in m.ids})
    return statistics.median(times), hits / (queries * TOP_K)


def measure_turns(store, corpus, rng, turns: int, think_s: float, flush_every: int | None = None) -> dict:
    """Per-turn search + insert; ``think_s`` passes between a turn's write and the next search
    (the model answering and the user typing; Session consistency waits for a server time tick
    only when a search follows this client's write more closely than that). ``flush_every``: the
    benchmark flushes after this many rows written (inside the turn, timed); ``None``: the store's
    own policy."""
    search_ms, insert_ms, total_ms, numpy_ms, hits = [], [], [], [], 0
    unflushed, flush_s = 0, []
    for _ in range(turns):
        time.sleep(think_s)
        user = int(rng.integers(len(corpus.users)))
        target = rng.choice(np.flatnonzero(corpus.owner == user))
        query = paraphrase(rng, corpus.vectors[target])
        exact, took = corpus.exact(user, query)
        numpy_ms.append(took * 1000)
        began = time.perf_counter()
        found = store.search(corpus.users[user], None, TOP_K, query_vector=query.tolist())
        middle = time.perf_counter()
        new = unit_vectors(rng, 1)
        ids = store.add(corpus.users[user], "bench", 1, format_turn("a new turn", "its answer"),
                        kind="turn", vector=new[0].tolist())
        unflushed += len(ids)
        if flush_every is not None and unflushed >= flush_every:
            flush_s.append(store.flush())
            unflushed = 0
        end = time.perf_counter()
        corpus.add(new, np.array([user]), ids)
        search_ms.append((middle - began) * 1000)
        insert_ms.append((end - middle) * 1000)
        total_ms.append((end - began) * 1000)
        hits += len(exact & {i for m in found for i in m.ids})
    return {
        "search p50": statistics.median(search_ms), "insert p50": statistics.median(insert_ms),
        "overhead p50": statistics.median(total_ms), "overhead p95": pct(total_ms, 95),
        "overhead mean": statistics.fmean(total_ms), "overhead max": max(total_ms),
        "recall@3": hits / (turns * TOP_K), "numpy p50": statistics.median(numpy_ms),
        "flushes": len(flush_s), "flush s (mean)": statistics.fmean(flush_s) if flush_s else 0.0,
    }


def measure_flush(store, corpus, rng, queries: int) -> tuple[float, float]:
    """(search p50 ms with UNFLUSHED rows not flushed, seconds to flush them)."""
    saved, store.flush_every = store.flush_every, None
    start = len(corpus.ids)
    for begin in range(0, UNFLUSHED, BATCH):
        vectors = unit_vectors(rng, min(BATCH, UNFLUSHED - begin))
        rows, ids = rows_for(vectors, corpus.users, start + begin)
        store.client.insert(store.collection, rows)
        corpus.add(vectors, np.array([(start + begin + i) % len(corpus.users) for i in range(len(ids))]), ids)
    unflushed_ms, _ = measure_searches(store, corpus, rng, queries, DEFAULT_NPROBE)
    flush_s = store.flush()
    store.flush_every = saved
    return unflushed_ms, flush_s


def close_store(store: MemoryStore) -> None:
    """Drop the collection, close the client and, on Lite, stop this process's Milvus Lite engine
    for the path (``close()`` alone keeps it running, and its memory, until the process exits)."""
    store.drop()
    store.close()
    if store.backend == "lite":
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(store.uri)
    gc.collect()


def flush_sweep(folder: str, args) -> list[dict]:
    """Milvus Lite, ``args.sweep_size`` stored turns: per-turn overhead over ``--sweep-turns`` turns
    for several ``flush_every`` values (flushes included in the turn that triggers them)."""
    results = []
    for every in args.flush_every:
        rng = np.random.default_rng(SEED)
        corpus = Corpus([f"user{i:03d}" for i in range(args.users)])
        store = open_store("sweep", uri=str(Path(folder) / f"sweep{every}.db"), dim=DIM,
                           drop_existing=True, flush_every=None)
        fill(store, corpus, rng, args.sweep_size)
        turn = measure_turns(store, corpus, rng, args.sweep_turns, 0, flush_every=every)
        results.append({"flush_every": every, **turn})
        close_store(store)
    return results


def peak_mb() -> float:
    """Peak resident memory of this process so far (MB): Milvus Lite runs inside it."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def server_peak_mb(server) -> float | None:
    proc = getattr(getattr(server, "_server", None), "server_proc", None)
    status = Path(f"/proc/{proc.pid}/status") if proc else None
    if status is None or not status.exists():
        return None
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def run(kind: str, uri: str, size: int, args, server=None) -> dict:
    rng = np.random.default_rng(SEED + size)
    users = [f"user{i:03d}" for i in range(args.users)]
    corpus = Corpus(users)
    store = open_store(f"bench_{size}", uri=uri, dim=DIM, drop_existing=True)
    fill_s = fill(store, corpus, rng, size)
    index_s = wait_for_index(store, size)
    store.search(users[0], None, TOP_K, query_vector=corpus.vectors[0].tolist())  # warm up
    sweep = {nprobe: measure_searches(store, corpus, rng, args.queries, nprobe) for nprobe in args.nprobe}
    store.nprobe = DEFAULT_NPROBE
    strong_ms = None
    if kind == "server":  # what Strong consistency costs per search
        store.consistency_level = "Strong"
        strong_ms, _ = measure_searches(store, corpus, rng, 10, DEFAULT_NPROBE)
        store.consistency_level = "Session"
    turn = measure_turns(store, corpus, rng, args.turns, args.think_ms / 1000 if kind == "server" else 0)
    unflushed_ms, flush_s = measure_flush(store, corpus, rng, args.queries)
    result = {"backend": kind, "stored turns": size, "fill s": fill_s, "index s": index_s,
              "strong p50": strong_ms, **turn, "sweep": sweep,
              "search p50, 1k unflushed": unflushed_ms, "flush 1k rows s": flush_s,
              "peak MB": peak_mb() if kind == "lite" else server_peak_mb(server)}
    close_store(store)
    return result


def start_server():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from milvus_server import MilvusTestServer, unsupported_reason

    reason = unsupported_reason()
    if reason:
        print(f"server: skipped ({reason})")
        return None
    server = MilvusTestServer(tempfile.mkdtemp(prefix="bench-milvus-")).start()
    print(f"server: Milvus 2.3.5 standalone started in {server.start_seconds:.1f} s at {server.uri}")
    return server


def print_tables(results: list[dict], nprobes: list[int]) -> None:
    print(f"\nPer-turn retrieval overhead (search top-{TOP_K} + insert one turn), ms, embedding "
          f"excluded, nprobe={DEFAULT_NPROBE}, consistency Session (Strong: search p50 with Strong)")
    head = (f"{'backend':8} {'turns':>7} {'search':>7} {'insert':>7} {'p50':>7} {'p95':>7} "
            f"{'recall@3':>9} {'numpy':>7} {'Strong':>7} {'fill s':>7} {'index s':>8} {'peak MB':>8}")
    print(head)
    print("-" * len(head))
    for r in results:
        peak = f"{r['peak MB']:8.0f}" if r["peak MB"] else f"{'-':>8}"
        strong = f"{r['strong p50']:7.1f}" if r["strong p50"] is not None else f"{'-':>7}"
        print(f"{r['backend']:8} {r['stored turns']:7,} {r['search p50']:7.1f} {r['insert p50']:7.1f} "
              f"{r['overhead p50']:7.1f} {r['overhead p95']:7.1f} {r['recall@3']:9.3f} "
              f"{r['numpy p50']:7.2f} {strong} {r['fill s']:7.1f} {r['index s']:8.1f} {peak}")
    print("\nnprobe sweep (search only: p50 ms / recall@3), and the flush policy")
    cols = "".join(f"{'nprobe ' + str(n):>17}" for n in nprobes)
    head = f"{'backend':8} {'turns':>7}{cols} {'1k unflushed':>13} {'flush 1k':>9}"
    print(head)
    print("-" * len(head))
    for r in results:
        cells = "".join(f"{r['sweep'][n][0]:9.1f} / {r['sweep'][n][1]:5.3f}" for n in nprobes)
        print(f"{r['backend']:8} {r['stored turns']:7,}{cells} {r['search p50, 1k unflushed']:10.1f} ms "
              f"{r['flush 1k rows s']:7.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="also 100,000 stored turns")
    parser.add_argument("--no-server", action="store_true", help="Milvus Lite only")
    parser.add_argument("--server-uri", help="use this running server instead of starting one")
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--turns", type=int, default=60, help="measured turns per size")
    parser.add_argument("--queries", type=int, default=40, help="searches per nprobe / flush point")
    parser.add_argument("--flush-every", type=lambda s: [int(x) for x in s.split(",")],
                        default=[100, 300, 1000], help="flush_every values of the Lite flush sweep")
    parser.add_argument("--sweep-turns", type=int, default=300, help="turns per flush_every value")
    parser.add_argument("--sweep-size", type=int, default=10_000, help="stored turns in the flush sweep")
    parser.add_argument("--quick", action="store_true",
                        help="1,000 stored turns only, 20 turns, 10 queries, flush sweep at 1,000 turns")
    parser.add_argument("--no-flush-sweep", action="store_true")
    parser.add_argument("--only-flush-sweep", action="store_true")
    parser.add_argument("--think-ms", type=float, default=500,
                        help="server only: pause between a turn's write and the next search")
    parser.add_argument("--nprobe", type=lambda s: [int(x) for x in s.split(",")], default=[16, 64, 128])
    args = parser.parse_args()
    sizes = [1_000, 10_000] + ([100_000] if args.full else [])
    if args.quick:
        sizes, args.turns, args.queries = [1_000], 20, 10
        args.sweep_size = 1_000
    if args.only_flush_sweep:
        sizes, args.no_server = [], True

    results = []
    with tempfile.TemporaryDirectory(prefix="bench-lite-") as folder:
        for size in sizes:
            print(f"lite {size:,} ...", flush=True)
            results.append(run("lite", str(Path(folder) / f"bench{size}.db"), size, args))
        sweep = [] if args.no_flush_sweep else flush_sweep(folder, args)
    server = None
    if not args.no_server:
        server = None if args.server_uri else start_server()
        uri = args.server_uri or (server.uri if server else None)
        try:
            if uri:
                for size in sizes:
                    print(f"server {size:,} ...", flush=True)
                    results.append(run("server", uri, size, args, server))
        finally:
            if server:
                server.stop()
    print_tables(results, args.nprobe)
    if sweep:
        print(f"\nMilvus Lite flush policy, {args.sweep_size:,} stored turns, {args.sweep_turns} turns each "
              "(overhead ms per turn, the flushing turn included)")
        head = (f"{'flush_every':>11} {'p50':>7} {'p95':>7} {'mean':>7} {'max':>7} {'flushes':>8} "
                f"{'flush s':>8}")
        print(head)
        print("-" * len(head))
        for r in sweep:
            print(f"{r['flush_every']:11,} {r['overhead p50']:7.1f} {r['overhead p95']:7.1f} "
                  f"{r['overhead mean']:7.1f} {r['overhead max']:7.1f} {r['flushes']:8} "
                  f"{r['flush s (mean)']:8.2f}")


if __name__ == "__main__":
    main()
