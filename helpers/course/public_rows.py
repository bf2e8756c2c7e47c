"""The strategies ``benchmarks/bench_public_sets.py`` compares on public chats: the course's defaults
and the ablation rows (one change each), by name."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from helpers.budget import fill_budget
from helpers.kinds import SEARCHED_KINDS, classify_turn, named_speaker, normalized
from helpers.layered import LayeredMemory, WindowBudgetError
from helpers.memory import COVERS_KEY, RETRIEVED_ID
from helpers.preferences import Preferences
from helpers.queries import PartsSearch
from helpers.retrieval import step_messages


class OpenLayered(LayeredMemory):
    """``LayeredMemory`` that sends a new message longer than ``window_tokens`` whole, with nothing
    else in the window (what the replay of a real chat needs: a pasted file must not stop it)."""

    def prompt(self, system, stored, new_message):
        try:
            return super().prompt(system, stored, new_message)
        except WindowBudgetError as exc:
            needed = exc.__cause__.required_tokens
            window, self.window_tokens = self.window_tokens, needed
            try:
                return super().prompt(system, stored, new_message)
            finally:
                self.window_tokens = window


class LayeredVariant(OpenLayered):
    """``OpenLayered`` with the ablation's switches: ``kinds`` searched; ``max_retrieval_tokens`` the
    grown budget's cap; ``preferences`` a standing layer (``helpers.preferences``) or ``None``;
    ``search_parts`` one search per part of a question (``helpers.queries``)."""

    def __init__(self, *args, kinds: Sequence[str] = SEARCHED_KINDS, max_retrieval_tokens: int = 4000,
                 preferences: Preferences | None = None, search_parts: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.searched = PartsSearch(self.store) if search_parts else self.store
        self.kinds, self.preferences = tuple(kinds), preferences
        self.max_retrieval_tokens = max_retrieval_tokens

    def retrieval_budget(self, message: str) -> int:
        if classify_turn(message) not in ("question", "request"):
            return self.statement_retrieval_tokens
        grown = min(self.max_retrieval_tokens, int(self.retrieval_share * self.stored_tokens))
        return max(self.retrieval_tokens, grown)

    def prompt(self, system, stored, new_message):
        prompt = super().prompt(system, stored, new_message)
        return self.preferences.insert_into(prompt) if self.preferences is not None else prompt

    def _retrieve(self, question, window):
        from langchain_core.messages import SystemMessage

        budget = self.retrieval_budget(question)
        self._turn.retrieved = self.last_retrieved = []
        if budget < 1:
            return None
        calls = self.store.embedding_calls
        in_window, named = {normalized(m.text) for m in window}, named_speaker(question, self.names)
        hits, text = fill_budget(self.searched, self.user_id, question, budget, kinds=self.kinds,
                                 candidates=max(30, budget // 20), neighbours_of=self.neighbours_of,
                                 skip=lambda hit: normalized(hit.content) in in_window,
                                 prefer=(lambda hit: hit.name == named) if named else None)
        self._turn.embedding_calls += self.store.embedding_calls - calls
        self._turn.retrieved = self.last_retrieved = list(hits)
        covers = {COVERS_KEY: list(self._written.sources(hits))}
        return SystemMessage(text, id=RETRIEVED_ID, additional_kwargs=covers) if text else None

    def after_turn(self, model, stored):
        if self.preferences is not None:
            for message in step_messages(stored):
                self.preferences.add(message)
        return super().after_turn(model, stored)


SEARCHED_ALL = ("statement", "reply", "question", "request")  # every kind that can carry a fact


def rows(store, conversation: dict) -> dict[str, Callable]:
    """Row name -> a no-argument factory of its strategy, over ``store`` for ``conversation``."""
    from helpers.retrieval import RetrievalMemory
    from helpers.window import FullHistory

    user, names = conversation["user_id"], conversation.get("speakers")

    def variant(**switches):
        return lambda: LayeredVariant(store, f"{user}-layered", "session-1", names=names, **switches)

    return {
        "full": FullHistory,
        "retrieval": lambda: RetrievalMemory(store, f"{user}-retrieval", "session-1", top_k=3, names=names),
        "layered": lambda: OpenLayered(store, f"{user}-layered", "session-1", names=names),
        "+kinds": variant(kinds=SEARCHED_ALL),
        "+prefs": variant(preferences=Preferences()),
        "+kinds+prefs": variant(kinds=SEARCHED_ALL, preferences=Preferences()),
        "+cap8000": variant(max_retrieval_tokens=8000),
        "+bm25": variant(),
        "+parts": variant(search_parts=True),
        "+share15": variant(retrieval_share=0.15, max_retrieval_tokens=8000),
        "+bm25+share15": variant(retrieval_share=0.15, max_retrieval_tokens=8000),
        "+bm25+parts": variant(search_parts=True),
        "+bm25+kinds": variant(kinds=SEARCHED_ALL),
        "+bm25+kinds+prefs": variant(kinds=SEARCHED_ALL, preferences=Preferences()),
        "+bm25+prefs": variant(preferences=Preferences()),
        "+kinds+prefs+bm25": variant(kinds=SEARCHED_ALL, preferences=Preferences()),
    }
