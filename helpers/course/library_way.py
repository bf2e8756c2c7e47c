"""The library way of 2026, wrapped so the lessons can compare it with the helpers: ``LibrarySummary``
(``SummarizationMiddleware`` as a ``helpers.memory.MemoryStrategy``, lesson 05) and ``langchain_retriever``
(``langchain_milvus.Milvus`` over a ``MemoryStore``'s rows, lesson 06)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage

from helpers.course.milvus import LITE_GRPC_OPTIONS, milvus_backend
from helpers.memory import Prompt, label
from helpers.store import DEFAULT_NLIST, DEFAULT_NPROBE, Row, eq_filter, validate_id
from helpers.tokens import count_tokens


class LibrarySummary:
    """``SummarizationMiddleware(model, trigger, keep, token_counter=count_tokens)`` as a strategy.

    Like ``create_agent``, it runs the middleware's ``before_model`` hook on the state (every message
    so far plus the new one) and sends ``[system prompt, *state]``; the middleware decides what is
    summarized (into a ``HumanMessage`` "Here is a summary of the conversation to date: ...") and kept.
    ``model`` writes the summaries; ``trigger``, ``keep``: e.g. ``("messages", 6)``, ``("messages", 2)``;
    ``("tokens", n)`` counts with ``helpers.tokens.count_tokens``."""

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
        self._asked: int | None = None  # len(stored) + 1 when prompt() ran this turn
        self._covers: dict[str, tuple[str, ...]] = {}  # summary message id -> ids it folded in

    @property
    def name(self) -> str:
        return f"SummarizationMiddleware (trigger {self.trigger}, keep {self.keep})"

    def prompt(self, system: SystemMessage, stored: Sequence[BaseMessage],
               new_message: HumanMessage) -> Prompt:
        """Run the middleware on ``[*stored, new_message]`` (it may summarize); ``[system, *state]``."""
        state = [*stored, new_message]
        update = self.middleware.before_model({"messages": state}, None)
        if update is not None:
            new_state = [m for m in update["messages"] if not isinstance(m, RemoveMessage)]
            kept, before = {m.id for m in new_state}, {m.id for m in state}
            folded = [i for m in state if m.id not in kept for i in self._covers.get(m.id, (m.id,))]
            for m in new_state:
                if m.id not in before:  # the summary (create_agent's add_messages would give it an id)
                    m.id = m.id or str(uuid.uuid4())
                    self._covers[m.id] = tuple(folded)
            state = new_state
        self._state, self._asked = state, len(stored) + 1  # after_turn adds what came after the question
        return label([system, *state] if system.text else list(state), system, new_message,
                     summaries=self._covers)

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        """The state after this turn: what the middleware left, plus the reply; a step that sent
        nothing (a recorded line stored as it was) is kept as it is."""
        asked, self._asked = self._asked, None
        return [*self._state, *stored[asked:]] if asked is not None else list(stored)

    def start_session(self, session_id: str, stored: Sequence[BaseMessage],
                      date: str = "") -> list[BaseMessage]:
        return list(stored)


def langchain_retriever(rows: Sequence[Row], user_id: str, *, uri: str, token: str | None = None,
                        collection: str = "conversation_memory_langchain",
                        embeddings: Embeddings | None = None):
    """The same rows in ``langchain_milvus.Milvus``, searched via ``as_retriever``.

    ``Milvus`` creates its own collection (fields ``pk``, ``text``, ``vector``, one per metadata key; by
    default an AUTOINDEX with **L2** distance); here index and search are ``MemoryStore``'s IVF_FLAT +
    COSINE (its ``nlist``, ``nprobe``), so the scores compare. The collection is dropped and refilled on
    every call. ``rows``: to index, e.g. ``store.rows(user_id)``; ``user_id``: the only user whose rows the
    retriever returns (escaped filter); ``uri``, ``token``: a Lite path or a server (may be the store's
    own); ``collection``: LangChain's (not the store's: the schemas differ); ``embeddings``: default
    ``get_embeddings()``. Returns ``(vector_store, retriever)``: ``retriever.invoke("What is my job?")``
    gives the top 3 ``Document``s (metadata: user_id, session_id, round, timestamp);
    ``vector_store.similarity_search_with_score(q, k, expr=...)`` adds cosine scores. Raises
    ``store.InvalidIdError`` for an invalid ``user_id``."""
    from langchain_milvus import Milvus

    from helpers.course.embeddings import get_embeddings

    validate_id(user_id, "user id")
    vector_store = Milvus(
        embedding_function=embeddings or get_embeddings(), collection_name=collection,
        connection_args={"uri": uri, "token": token or "",
                         **({"grpc_options": LITE_GRPC_OPTIONS} if milvus_backend(uri) == "lite" else {})},
        index_params={"index_type": "IVF_FLAT", "metric_type": "COSINE",
                      "params": {"nlist": DEFAULT_NLIST}},
        search_params={"metric_type": "COSINE", "params": {"nprobe": DEFAULT_NPROBE}},
        consistency_level="Strong", partition_key_field="user_id", drop_old=True, auto_id=True)
    if rows:
        vector_store.add_texts([r.content for r in rows], metadatas=[
            {"user_id": r.user_id or user_id, "session_id": r.session_id, "round": r.round,
             "timestamp": r.timestamp} for r in rows])
    search = {"k": 3, "expr": eq_filter(user_id=user_id)}
    return vector_store, vector_store.as_retriever(search_kwargs=search)

