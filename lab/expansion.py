"""Words a question does not say: the words searched by BM25, widened by the conversation's own words.

"What martial arts has John done?" shares no word with "I'm off to do some taekwondo!", and that line's
embedding, about much else too, ranks it far down by meaning. The word *taekwondo* alone sits near
*martial* and *arts*. ``WordNeighbours`` keeps each content word this memory has written, embedded once
(a passage), and ``words_query`` adds to a question's words each one's ``k`` nearest of them (the
question's words embedded as queries): query expansion with word embeddings, drawn from the
conversation's own vocabulary (Kuzi, Shtok and Kurland, "Query Expansion Using Word Embeddings",
CIKM 2016). Only the words search (``HybridStore``, BM25) reads the widened text; the search by meaning
embeds the question as asked, and no added word is ever sent to the model.

The speakers' names are left out of the words searched: every line is said by or to one of them
("Hey John! ..."), so a name matches half the conversation. Which names: ``LayeredMemory(names=...)``.

The words live in this object's memory, a matrix of unit vectors: they exist to build one query and
are gone with the memory (a Milvus collection would outlive a user's forgetting; the rows found are
always the store's own). Not adopted (row ``default+expand3``: ``ExpandedWords`` around the store, ``k = 3``,
the store's ``words_weight=1.0``): docs/design-notes.md, "Words a question does not say"."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np

from helpers.kinds import HANGUL_SYLLABLES, content_words
from helpers.text import nfc

EXPAND_WORDS = 3  #: nearest words added per asked word (chosen on two public two-person chats)
MAX_ASKED_WORDS = 32  #: asked words given neighbours (a long question is mostly a paste; the search cuts it)
MAX_NEW_WORDS = 200  #: new words kept a turn: a pasted file's embedding work stays bounded (the rest: later)
_HANGUL = HANGUL_SYLLABLES


def _worth_a_neighbour(word: str, leave_out: tuple[str, ...]) -> bool:
    """Letters only, 3 or more (Hangul 2), not a name's word nor, in Korean, a name with its particle."""
    korean = _HANGUL[0] <= word[0] <= _HANGUL[-1]
    return (word.isalpha() and len(word) >= (2 if korean else 3) and word not in leave_out
            and not (korean and word.startswith(leave_out)))  # "민수는"


def _words(text: str, leave_out: tuple[str, ...]) -> list[str]:
    """The content words of ``text`` (NFC) worth a neighbour, each once, in order."""
    return [w for w in dict.fromkeys(content_words(nfc(text))) if _worth_a_neighbour(w, leave_out)]


def without_names(text: str, names: Iterable[str]) -> str:
    """``text`` (NFC) with each of ``names`` and each word of one blanked: any case, with ``'s`` or a Korean
    particle after it; not "Annabel" or "Annä" for Ann."""
    words = {w for n in names if n and n.strip() for w in [nfc(n).strip(), *nfc(n).split()]}
    if not words:
        return nfc(text)
    alternatives = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
    pattern = rf"\b(?:{alternatives})(?:['’]s)?(?!(?![{_HANGUL}])\w)"  # a Korean particle may follow
    return re.sub(pattern, " ", nfc(text), flags=re.IGNORECASE)


class WordNeighbours:
    """The content words written so far, each embedded once by ``store.embed`` (counted in its
    ``embedding_calls``), and their nearest ones for a question (``words_query``). ``names``: role ->
    name of the speakers (left out of what is kept and searched); ``k``: words added per asked word
    (int >= 0; 0: only the names are left out; ``None``: the question searched as asked, nothing kept;
    set it before the first turn: words are kept from then on). Words are kept only where ``store``
    searches by words (its ``full_text``: ``HybridStore`` on a Milvus with BM25). ValueError: another k."""

    def __init__(self, store, names: Mapping[str, str] | None = None, k: int | None = EXPAND_WORDS) -> None:
        self.store, self.k = store, k
        self.names = [nfc(n) for n in (names or {}).values() if n and n.strip()]
        self._leave_out = tuple({w for n in self.names for w in content_words(n)})
        self._words: list[str] = []
        self._index: dict[str, int] = {}
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    @property
    def k(self) -> int | None:
        return self._k

    @k.setter
    def k(self, k: int | None) -> None:
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
            raise ValueError(f"k must be an int >= 0 or None, got {k!r}")
        self._k = k

    def __len__(self) -> int:
        return len(self._words)

    def add(self, texts: Iterable[str]) -> int:
        """Keep the new content words of ``texts``, the first ``MAX_NEW_WORDS`` (one embedding call for all of
        them; a word left out is kept when it comes again); returns how many."""
        if not self.k or not getattr(self.store, "full_text", False):  # words only a words search reads
            return 0
        new = [w for w in dict.fromkeys(w for t in texts for w in _words(t, self._leave_out))
               if w not in self._index][:MAX_NEW_WORDS]
        if not new:
            return 0
        vectors = np.asarray(self.store.embed(new), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        self._vectors = vectors if not self._words else np.vstack([self._vectors, vectors])
        for w in new:
            self._index[w] = len(self._words)
            self._words.append(w)
        return len(new)

    def neighbours(self, question: str) -> list[str]:
        """Each asked word's ``k`` nearest kept words (cosine, best first), not asked already, each once; the
        first ``MAX_ASKED_WORDS`` asked words only (one query embedding each)."""
        asked = _words(question, self._leave_out)[:MAX_ASKED_WORDS]
        if not (self.k and asked and self._words):
            return []
        queries = np.asarray(self.store.embed(asked, query=True), dtype=np.float32)
        added: dict[str, None] = {}
        for sims in queries @ self._vectors.T:
            near = [self._words[i] for i in np.argsort(-sims)[: self.k + len(asked)]
                    if self._words[i] not in asked]
            added.update(dict.fromkeys(near[: self.k]))
        return list(added)

    def words_query(self, question: str) -> str | bool:
        """What a search by words reads for ``question`` (``fill_budget(words=...)``): ``True`` (the
        question's own words) if ``k`` is None; else the question without the speakers' names, then the
        neighbours of its words (``""`` when nothing is left: no search by words)."""
        if self.k is None:
            return True
        said = without_names(question, self.names)
        return " ".join([said.strip(), *self.neighbours(said)]).strip()


class ExpandedWords:
    """A store whose ``search(words=True)`` reads ``vocabulary.words_query(query)`` by words instead of the
    question as asked; everything else goes to ``store``. ``vocabulary``: a ``WordNeighbours`` over
    ``store``, fed the messages written (``vocabulary.add``) by its owner."""

    def __init__(self, store, vocabulary: WordNeighbours) -> None:
        self.store, self.vocabulary = store, vocabulary

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def search(self, user_id: str, query: str, top_k: int = 3, *, words: bool | str = False, **kwargs):
        if words is True and isinstance(query, str):
            words = self.vocabulary.words_query(query)
        return self.store.search(user_id, query, top_k, words=words, **kwargs)
