"""Written memory as a ``MemoryStrategy``: no lesson replays it and no default uses it (lesson 09 writes
facts with ``helpers.written.FactStore`` by hand), so it lives here, beside the benchmarks. After each
turn the user's message is written as facts; a prompt sends the closest current facts as data."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from helpers.config import check_setting
from helpers.history import each_once
from helpers.kinds import asks
from helpers.memory import COVERS_KEY, RETRIEVED_ID, Prompt, label
from helpers.retrieval import step_messages
from helpers.text import is_blank
from helpers.window import StoresEverything
from helpers.written import Decide, Extract, FactStore, format_facts


class WrittenMemory(StoresEverything):
    """A ``MemoryStrategy``: after each turn the user's message is written as facts (``FactStore.write``);
    a prompt sends the ``top_k`` facts closest to the new message, as a user-role memory block, when
    the message asks (``kinds.asks``, as layered memory searches),
    and the last ``keep_recent`` messages."""

    cost_note = ("every turn: extract, decide, embed", "the closest current facts + the newest messages")

    def __init__(self, embeddings, extract: Extract, decide: Decide, top_k: int = 5,
                 keep_recent: int = 2) -> None:
        check_setting("top_k", top_k, 1), check_setting("keep_recent", keep_recent, 0)  # refused when made
        self.store, self.extract, self.decide = FactStore(embeddings), extract, decide
        self.top_k, self.keep_recent, self.similar_k = top_k, keep_recent, 5
        self.name = f"written facts (top-{top_k})"

    embedding_calls = property(lambda self: self.store.embedding_calls)
    embedding_seconds = property(lambda self: self.store.embedding_seconds)

    def prompt(self, system, stored, new_message) -> Prompt:
        asked = asks(new_message.text) and not is_blank(new_message.text)
        found = [fact for fact, _ in self.store.search(new_message.text, self.top_k)] if asked else []
        recent = list(stored[-self.keep_recent:]) if self.keep_recent else []
        block = ([HumanMessage(format_facts(found), id=RETRIEVED_ID,
                               additional_kwargs={COVERS_KEY: [f.source for f in found]})] if found else [])
        return label([system, *block, *recent, new_message], system, new_message)

    def after_turn(self, model, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Write the user message of the step (``retrieval.step_messages``: answered or not) as facts."""
        for user in (m for m in step_messages(stored) if m.type == "human"):
            self.store.write(user.text, user.id or "", self.extract, self.decide, self.similar_k)
        return each_once(stored)
