"""The library way of 2026, wrapped so the lessons can compare it with the helpers.

* ``LibrarySummary``: LangChain v1's ``SummarizationMiddleware`` (what ``create_agent`` runs before
  each model call) as a ``helpers.memory.MemoryStrategy``, so ``helpers.memory.replay`` measures it
  exactly like ``helpers.summary.RunningSummary`` (lesson 05).
* ``langchain_retriever``: ``langchain_milvus.Milvus`` + ``as_retriever`` over the same rows as a
  ``helpers.store.MemoryStore``, with the same COSINE / IVF_FLAT settings (lesson 06).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage

from helpers.memory import Prompt, label
from helpers.store import DEFAULT_NLIST, DEFAULT_NPROBE, Row, eq_filter, validate_id
from helpers.tokens import count_tokens


class LibrarySummary:
    """``SummarizationMiddleware(model, trigger, keep, token_counter=count_tokens)`` as a strategy.

    ``create_agent`` calls the middleware's ``before_model`` hook on the conversation state (every
    message so far plus the new one) before each model call, then sends ``[system prompt, *state]``.
    This wrapper does the same steps, so the middleware decides what is summarized and kept, and
    leaves the answer call to the replay loop. The middleware replaces the state with a
    ``HumanMessage`` "Here is a summary of the conversation to date: ..." plus the kept messages.

    Args:
        model: the chat model that writes the summaries (the middleware's ``model``).
        trigger, keep: passed to ``SummarizationMiddleware``, e.g. ``("messages", 6)`` and
            ``("messages", 2)``; ``("tokens", n)`` counts with ``helpers.tokens.count_tokens``.
    """

    cost_note = ("when the history passes the trigger", "the library's summary + recent messages")
    embedding_calls = 0
    embedding_seconds = 0.0

    def __init__(self, model: BaseChatModel, trigger: tuple[str, int] = ("messages", 6),
                 keep: tuple[str, int] = ("messages", 2)) -> None:
        from langchain.agents.middleware import SummarizationMiddleware

        self.trigger, self.keep = trigger, keep
        self.middleware = SummarizationMiddleware(model=model, trigger=trigger, keep=keep,
                                                  token_counter=count_tokens)
        self._state: list[BaseMessage] = []
        self._covers: dict[str, tuple[str, ...]] = {}  # summary message id -> ids it folded in

    @property
    def name(self) -> str:
        return f"SummarizationMiddleware (trigger {self.trigger}, keep {self.keep})"

    def prompt(self, system: SystemMessage, stored: Sequence[BaseMessage],
               new_message: HumanMessage) -> Prompt:
        """Run the middleware on ``[*stored, new_message]`` (it may call the model to summarize)
        and return ``[system, *state]`` as ``create_agent`` would send it."""
        state = [*stored, new_message]
        update = self.middleware.before_model({"messages": state}, None)
        if update is not None:
            before = {m.id for m in state}
            new_state = [m for m in update["messages"] if not isinstance(m, RemoveMessage)]
            kept = {m.id for m in new_state}
            folded = [m for m in state if m.id not in kept]
            for m in new_state:
                if m.id not in before:  # the middleware's summary message (create_agent's
                    m.id = m.id or str(uuid.uuid4())  # add_messages would give it an id)
                    older = [i for f in folded for i in self._covers.get(f.id, (f.id,))]
                    self._covers[m.id] = tuple(older)
            state = new_state
        self._state = state
        messages = [system, *state] if system.text else list(state)
        return label(messages, system, new_message, summaries=self._covers)

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        """The state after this turn: what the middleware left, plus the reply."""
        return [*self._state, stored[-1]]

    def start_session(self, session_id: str, stored: Sequence[BaseMessage],
                      date: str = "") -> list[BaseMessage]:
        return list(stored)


def langchain_retriever(
    rows: Sequence[Row],
    user_id: str,
    *,
    uri: str,
    token: str | None = None,
    collection: str = "conversation_memory_langchain",
    embeddings: Embeddings | None = None,
    top_k: int = 3,
    nlist: int = DEFAULT_NLIST,
    nprobe: int = DEFAULT_NPROBE,
):
    """The library way: the same rows in ``langchain_milvus.Milvus``, searched via ``as_retriever``.

    ``langchain_milvus.Milvus`` creates its own collection (fields ``pk``, ``text``, ``vector``
    and one per metadata key) and, by default, an AUTOINDEX with **L2** distance; here the index
    and search parameters are the same IVF_FLAT + COSINE as ``MemoryStore``'s, so the scores
    compare. The collection is dropped and refilled on every call (``drop_old=True``).

    Args:
        rows: rows to index, e.g. ``store.rows(user_id)`` (the same data as the store).
        user_id: the retriever only returns this user's rows (escaped filter expression).
        uri, token: where (a Lite path or a server); may be the store's own ``uri``.
        collection: LangChain's collection (not the store's: the schemas differ).
        embeddings: default ``helpers.embeddings.get_embeddings()``.
        top_k: documents per query.
        nlist, nprobe: IVF_FLAT parameters.

    Returns:
        ``(vector_store, retriever)``. ``retriever.invoke("What is my job?")`` returns
        ``Document`` objects (metadata: user_id, session_id, round, timestamp);
        ``vector_store.similarity_search_with_score(q, k, expr=...)`` adds cosine scores.

    Raises:
        store.InvalidIdError: ``user_id`` is not a valid id.
    """
    from langchain_milvus import Milvus

    from helpers.embeddings import get_embeddings

    validate_id(user_id, "user id")
    vector_store = Milvus(
        embedding_function=embeddings or get_embeddings(),
        collection_name=collection,
        connection_args={"uri": uri, "token": token or ""},
        index_params={"index_type": "IVF_FLAT", "metric_type": "COSINE", "params": {"nlist": nlist}},
        search_params={"metric_type": "COSINE", "params": {"nprobe": nprobe}},
        consistency_level="Strong",
        partition_key_field="user_id",
        drop_old=True,
        auto_id=True,
    )
    if rows:
        vector_store.add_texts(
            [r.content for r in rows],
            metadatas=[{"user_id": r.user_id or user_id, "session_id": r.session_id,
                        "round": r.round, "timestamp": r.timestamp} for r in rows],
        )
    retriever = vector_store.as_retriever(
        search_kwargs={"k": top_k, "expr": eq_filter(user_id=user_id)}
    )
    return vector_store, retriever
