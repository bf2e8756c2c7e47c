"""The strategies ``benchmarks/bench_public_sets.py`` compares on public chats: the course's defaults
and the ablation rows (one change each), by name. The options they switch on were measured and not
adopted: they live here, in the lab, not in ``helpers``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from helpers import fulltext
from helpers.kinds import SEARCHED_KINDS, asks
from helpers.layered import MAX_RETRIEVAL_TOKENS, LayeredMemory
from helpers.retrieval import step_messages
from lab.expansion import ExpandedWords, WordNeighbours
from lab.named import NamedSearch
from lab.preferences import Preferences
from lab.queries import PartsSearch


class KindsSearch:
    """A store whose ``search`` looks in rows of ``kinds`` whatever kinds it is asked for (layered memory
    asks for ``kinds.SEARCHED_KINDS``); everything else goes to ``store`` unchanged."""

    def __init__(self, store, kinds: Sequence[str]) -> None:
        self.store, self.kinds = store, tuple(kinds)

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def search(self, user_id: str, query: str, top_k: int = 3, **kwargs) -> list:
        kwargs["kinds"] = self.kinds
        return self.store.search(user_id, query, top_k, **kwargs)


class LayeredVariant(LayeredMemory):
    """``LayeredMemory`` with the ablation's switches: ``kinds`` searched (``KindsSearch``);
    ``max_retrieval_tokens`` the grown budget's cap (layered memory's: ``MAX_RETRIEVAL_TOKENS``);
    ``preferences`` a standing layer (``lab.preferences``) or ``None``; ``search_parts`` one search per
    part of a question (``lab.queries``); ``search_named`` a question naming one person searches their rows
    apart too (``lab.named``); ``preferences_assistant_only`` the layer is sent only while the reply side is
    no person; ``expand_words`` the ``WordNeighbours.k`` of its words search (``lab.expansion``; ``None``,
    as in every row measured before it: the question's words as asked)."""

    def __init__(
        self,
        store,
        *args,
        kinds: Sequence[str] = SEARCHED_KINDS,
        max_retrieval_tokens: int = MAX_RETRIEVAL_TOKENS,
        preferences: Preferences | None = None,
        search_parts: bool = False,
        search_named: bool = False,
        preferences_assistant_only: bool = False,
        expand_words: int | None = None,
        **kwargs,
    ) -> None:
        self.vocabulary = WordNeighbours(store, kwargs.get("names"), expand_words)
        searched = PartsSearch(store) if search_parts else store
        searched = NamedSearch(searched, kwargs.get("names")) if search_named else searched
        searched = ExpandedWords(searched, self.vocabulary) if expand_words is not None else searched
        searched = KindsSearch(searched, kinds) if tuple(kinds) != SEARCHED_KINDS else searched
        super().__init__(searched, *args, **kwargs)
        self.search_named = search_named
        if max_retrieval_tokens < MAX_RETRIEVAL_TOKENS:  # a row raises layered memory's cap, never lowers it
            raise ValueError(f"max_retrieval_tokens must be at least {MAX_RETRIEVAL_TOKENS}")
        self.searched_kinds, self.max_retrieval_tokens = tuple(kinds), max_retrieval_tokens
        self.preferences = preferences
        self.preferences_assistant_only = preferences_assistant_only

    def retrieval_budget(self, message):  # LayeredMemory's, its cap raised to this row's
        budget = super().retrieval_budget(message)
        if not asks(message):
            return budget
        return max(budget, min(self.max_retrieval_tokens, int(self.retrieval_share * self.stored_tokens)))

    def prefer(self, question):
        return None if self.search_named else super().prefer(question)  # searched apart instead

    def prompt(self, system, stored, new_message):
        prompt = super().prompt(system, stored, new_message)
        if self.preferences is None or (self.preferences_assistant_only and self.other_speaker.is_person):
            return prompt  # a friend sets no standing instructions: "I always ..." is a fact, searched
        return self.preferences.insert_into(prompt)

    def after_turn(self, model, stored):
        new = step_messages(stored)
        if self.preferences is not None:
            for message in new:
                self.preferences.add(message)
        stored = super().after_turn(model, stored)
        self.vocabulary.add(m.text for m in new)  # kept where the store searches by words
        return stored


SEARCHED_ALL = ("statement", "reply", "question", "request")  # every kind that can carry a fact
LESSON_08 = {"window_tokens": 100, "max_summary_tokens": 150}  # default_strategies' layered budgets
#: rows on a ``HybridStore`` whose words' weight is not 1 (Milvus's RRF): row -> ``words_weight``
WORDS_WEIGHT = {"default": fulltext.WORDS_WEIGHT, "default+expand3": 1.0, "default+named": 0.3,
                "default+prefs": 0.3, "default+prefs150a": 0.3,
                "default+bm25w0.5": 0.5, "default+bm25w0.3": 0.3, "default+bm25w0.5+cap8000": 0.5}


def rows(store, conversation: dict) -> dict[str, Callable]:
    """Row name -> a no-argument factory of its strategy, over ``store`` for ``conversation``."""
    from helpers.evaluate import default_strategies
    from helpers.retrieval import RetrievalMemory
    from helpers.window import FullHistory

    user, names = conversation["user_id"], conversation.get("speakers")

    def variant(**switches):
        return lambda: LayeredVariant(store, f"{user}-layered", "session-1", names=names, **switches)

    return {
        "full": FullHistory,
        "retrieval": lambda: RetrievalMemory(store, f"{user}-retrieval", "session-1", top_k=3, names=names),
        "layered": lambda: LayeredMemory(store, f"{user}-layered", "session-1", names=names),
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
        "+bm25+share15+kinds+prefs": variant(
            retrieval_share=0.15, max_retrieval_tokens=8000, kinds=SEARCHED_ALL, preferences=Preferences()
        ),
        "+kinds+prefs+bm25": variant(kinds=SEARCHED_ALL, preferences=Preferences()),
        # lesson 08's layered memory (default_strategies: window 100, summary cap 150) and the two
        # candidates for its default, each one change on it
        "default": lambda: default_strategies(store, user, names)[-1],
        "default+bm25+share15": variant(**LESSON_08, retrieval_share=0.15, max_retrieval_tokens=8000),
        # the next candidates: BM25 alone, and BM25 with the assistant's replies (and the user's
        # questions and requests) searchable, both at the default share
        "default+bm25": variant(**LESSON_08),
        "default+bm25+kinds": variant(**LESSON_08, kinds=SEARCHED_ALL),
        # the room the goal allows on a long history (the cap binds past 40,000 stored tokens), and
        # words as a smaller voice than meaning in the fusion (``WORDS_WEIGHT``)
        "default+cap8000": variant(**LESSON_08, max_retrieval_tokens=8000),
        "default+cap12000": variant(**LESSON_08, max_retrieval_tokens=12000),
        **{row: variant(**LESSON_08) for row in WORDS_WEIGHT if row.startswith("default+bm25w")},
        "default+bm25w0.5+cap8000": variant(**LESSON_08, max_retrieval_tokens=8000),
        # the words searched: the question without the speakers' names, and each asked word's 3 nearest
        # words of the conversation, the words' ranking weighted 1 (``lab.expansion``; not adopted)
        "default+expand3": variant(**LESSON_08, expand_words=3),
        # a question naming one person searches that person's rows apart too (``lab.named``)
        "default+named": variant(**LESSON_08, search_named=True),
        # the user's standing instructions and preferences, always sent (``lab.preferences``)
        "default+prefs": variant(**LESSON_08, preferences=Preferences()),
        # ... at most 150 tokens, and only while the reply side is an assistant, not a person
        "default+prefs150a": variant(**LESSON_08, preferences=Preferences(max_tokens=150),
                                     preferences_assistant_only=True),
        "default+bm25+share15+kinds+prefs": variant(
            **LESSON_08, retrieval_share=0.15, max_retrieval_tokens=8000, kinds=SEARCHED_ALL,
            preferences=Preferences()
        ),
    }
