"""Words a question does not say (``lab.expansion``): the words search widened by the
conversation's own nearest words, with the real e5 embedder and Milvus Lite."""

import unicodedata

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from lab.expansion import WordNeighbours, without_names

NAMES = {"user": "John", "assistant": "Maria"}
LINES = ["I'm off to do some taekwondo!", "We ordered pizza and pasta for dinner.",
         "My guitar lessons start on Monday.", "Maria, my homework is due Friday."]


class Embedder:
    """What ``WordNeighbours`` needs of a store: ``embed`` (the course's e5, as ``MemoryStore.embed``)."""

    def __init__(self, e5):
        self.e5, self.texts = e5, 0

    def embed(self, texts, query=False):
        self.texts += len(texts)
        return [self.e5.embed_query(t) for t in texts] if query else self.e5.embed_documents(list(texts))


def test_names_are_blanked_as_words_in_any_case():
    assert without_names("What martial arts has John done? And MARIA's?", NAMES.values()).split() == [
        "What", "martial", "arts", "has", "done?", "And", "?"]
    assert without_names("Johnny and Mariana, Annä", [*NAMES.values(), "Ann"]) == "Johnny and Mariana, Annä"
    assert without_names("no names", []) == "no names"
    assert without_names("민수는 태권도를 배워요", ["민수"]) == " 는 태권도를 배워요"  # a particle may follow
    assert without_names(unicodedata.normalize("NFD", "José said"), ["José"]) == "  said"  # a Mac's NFD
    assert without_names("Mary, Jane and Mary Jane", ["Mary Jane"]).split() == [",", "and"]


def test_a_category_question_gets_its_members_words(e5):
    store = Embedder(e5)
    store.full_text = True  # as a HybridStore on Milvus Lite: words are searched
    words = WordNeighbours(store, NAMES, k=2)
    assert words.add(LINES) == len(words) > 0
    assert "maria" not in words._index and "john" not in words._index  # names are never kept
    assert words.add(LINES) == 0 and store.texts == len(words)  # each word embedded once
    assert "taekwondo" in words.neighbours("What martial arts has John done?")
    query = words.words_query("What martial arts has John done?")
    assert query.startswith("What martial arts has") and "john" not in query.lower()
    assert "taekwondo" in query.split()


def test_no_neighbours_at_k_0_and_bad_k_refused(e5):
    store = Embedder(e5)
    store.full_text = True
    words = WordNeighbours(store, NAMES, k=0)
    assert words.add(LINES) == 0 and store.texts == 0
    assert words.words_query("What did John eat?").split() == ["What", "did", "eat?"]
    assert WordNeighbours(store, NAMES).words_query("John?") == "?"
    assert WordNeighbours(Embedder(e5), NAMES).add(LINES) == 0  # a store with no words search: none kept
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match="k must be an int >= 0 or None"):
            WordNeighbours(store, NAMES, k=bad)
        with pytest.raises(ValueError, match="k must be an int >= 0 or None"):
            words.k = bad  # the attribute is checked too


def test_layered_memory_widens_its_words_search_when_asked_and_where_the_store_has_one(lite_uri, e5, model):
    from helpers.course.milvus import open_store
    from helpers.fulltext import HybridStore
    from helpers.layered import LayeredMemory
    from helpers.store import MemoryStore
    from lab.public_rows import LayeredVariant

    with open_store("expansion", uri=lite_uri, embeddings=e5, drop_existing=True,
                    store_class=HybridStore) as store:
        assert not hasattr(LayeredMemory(store, "john", "s1", names=NAMES), "vocabulary")  # not in helpers
        memory = LayeredVariant(store, "john", "s1", names=NAMES, window_tokens=10, expand_words=3)
        stored = []
        for i, line in enumerate(LINES):
            stored = memory.after_turn(model, [*stored, HumanMessage(line, id=f"t{i}"),
                                               AIMessage("Nice!", id=f"t{i}-reply")])
        assert store.full_text and "taekwondo" in memory.vocabulary._index
        searched = memory.vocabulary.words_query("What martial arts has John done?")
        assert "john" not in searched.lower() and "taekwondo" in searched.split()
        asked = HumanMessage("What martial arts has John done?")
        prompt = memory.prompt(SystemMessage("Be brief."), stored, asked)
        assert any("taekwondo" in hit.content for hit in memory.last_retrieved)
        assert any("taekwondo" in part.text for part in prompt.of_kind("retrieved"))
        memory.vocabulary.k = None  # as the default: nothing kept, nothing added
        assert memory.vocabulary.words_query("What has John done?") is True
        before = store.embedding_calls
        memory.after_turn(model, [*stored, HumanMessage("I bought a kite.", id="t9"),
                                  AIMessage("Fun!", id="t9-reply")])
        assert store.embedding_calls - before == 1  # the one statement, no words
    with open_store("expansion_dense", uri=lite_uri, embeddings=e5, drop_existing=True,
                    store_class=MemoryStore) as dense:  # no words search (as the 2.3.5 server): no words kept
        memory = LayeredVariant(dense, "john", "s1", names=NAMES, expand_words=3)
        memory.after_turn(model, [HumanMessage(LINES[0], id="t1"), AIMessage("Nice!", id="t1-reply")])
        assert len(memory.vocabulary) == 0 and dense.embedding_calls == 1


def test_a_search_by_words_reads_the_text_it_is_given(lite_uri, e5):
    """``MemoryStore.search(words=<text>)``: the words searched are that text, not the query's. Hashed
    vectors know no meaning, so only the words can find the line."""
    from hash_embeddings import HashEmbeddings

    from helpers.course.milvus import open_store
    from helpers.fulltext import HybridStore

    with open_store("expansion_words", uri=lite_uri, embeddings=HashEmbeddings(), dim=16,
                    drop_existing=True, store_class=HybridStore, words_weight=1.0) as store:
        lines = [f"Filler line {i} about the weather and lunch." for i in range(40)]
        lines[23] = "I'm off to do some taekwondo!"
        for i, line in enumerate(lines):
            store.add("john", "s1", i, line, kind="statement", speaker="user")
        asked = "What martial arts has John done?"
        as_asked = [h.content for h in store.search("john", asked, 3, words=True)]
        assert lines[23] not in as_asked  # no shared word, no meaning
        words = WordNeighbours(Embedder(e5), NAMES, k=2)
        words.store.full_text = True
        words.add(lines)
        widened = words.words_query(asked)
        assert "taekwondo" in widened.split(), widened
        rank = {words: [h.content for h in store.search("john", asked, 40, words=words)].index(lines[23])
                for words in (True, widened)}
        assert rank[widened] < rank[True]  # the line has a word the widened text has
        # only the words given count: one line holds "taekwondo", so it comes first whatever its vector
        assert store.search("john", "zzz", 40, words="taekwondo")[0].content == lines[23]
        assert [h.content for h in store.search("john", "zzz", 40, words=True)] == [
            h.content for h in store.search("john", "zzz", 40)]  # "zzz" is in no line: meaning alone


@pytest.mark.parametrize("language", ["en", "ko"])
def test_a_pasted_file_of_20000_tokens_keeps_the_words_bounded(e5, language):
    """The option on: a paste's new words are kept MAX_NEW_WORDS at a time (one embedding call), and a
    question as long as the paste gives neighbours to its first MAX_ASKED_WORDS words only."""
    import itertools

    from long_messages import pasted_file

    from helpers.tokens import count_text_tokens
    from lab.expansion import MAX_ASKED_WORDS, MAX_NEW_WORDS

    made_up = ["".join(letters) for letters in itertools.product("bdgkmpstvz", "aeiou", "lnr", "aeiou")][:400]
    paste = pasted_file(language, 20000) + "\n" + " ".join(made_up)  # 400 words it never had
    assert count_text_tokens(paste) >= 20000
    store = Embedder(e5)
    store.full_text = True
    words = WordNeighbours(store, NAMES, k=3)
    assert words.add([paste]) == MAX_NEW_WORDS == store.texts  # one call, bounded
    assert words.add([paste]) == MAX_NEW_WORDS and len(words) == 2 * MAX_NEW_WORDS  # the rest: next turn
    store.texts = 0
    assert isinstance(words.words_query(paste), str)
    assert store.texts <= MAX_ASKED_WORDS  # the asked words embedded as queries, no more
