"""The offline stand-in's rules for written memory (``helpers.written``): what a real model is asked
to do with structured output (``written.model_writer``), done by rule so lesson 09 runs without a key.

- ``extract``: the sentences of a user message that state something about the user (first person,
  not a question, not a request; Korean drops the subject, so a Korean statement with two content
  words counts too, as the stand-in's summaries count it).
- ``decide``: NOOP if the fact is already stored word for word; else, among the similar stored facts,
  one *about the same thing* (a topic word of the stand-in's lexicon in common, ``lexicon.tokenize``,
  and no other person's fact; without topic words, two content words in common) is UPDATEd, or
  DELETEd when the new fact takes it back ("no longer", "더 이상"); else ADD. A rule, not
  understanding: it misses changes said in other words, and merges facts that share a topic.
"""

from __future__ import annotations

import re

from helpers.course.lexicon import tokenize
from helpers.kinds import HANGUL_SYLLABLES
from helpers.written import ADD, DELETE, NOOP, UPDATE, Decision, Fact

_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|mine)\b|(?:^|\s)(?:저는|제가|제|저도|저한테|저의|"
                           r"나는|내가|내|전|저희)(?=\s|$)", re.I)
_SENTENCE = re.compile(r"(?<=[.!?。])\s+|(?<=요\.)\s*|(?<=다\.)\s*")
_HANGUL = re.compile(f"[{HANGUL_SYLLABLES}]")
_REQUEST = re.compile(r"^\s*(?:please\s+)?(?:can|could|would|will)\s+you\b"
                      r"|^\s*(?:tell|give|show|remind)\s+me\b", re.I)
_TAKEN_BACK = re.compile(r"\b(?:no longer|not any ?more|anymore|stopped|quit)\b|더\s*이상|그만", re.I)
_PEOPLE = {"SISTER", "BROTHER", "SIBLING", "MOTHER", "FATHER", "PARENT", "SPOUSE", "CHILD", "FRIEND"}
_NOT_TOPICS = {"LIKE", "NAME"}  # "favourite" alone does not make two facts about one thing


def extract(message: str) -> list[str]:
    """The sentences of ``message`` that state a fact about the user, in order."""
    sentences = [s.strip() for s in _SENTENCE.split(message) if s and s.strip()]
    return [s for s in sentences if not s.rstrip().endswith("?") and not _REQUEST.match(s) and (
        _FIRST_PERSON.search(s) or (_HANGUL.search(s) and len(tokenize(s)) >= 2))]


def _about(text: str) -> tuple[set[str], set[str], set[str]]:
    """(topics, people, other content words) of a sentence, by the stand-in's lexicon."""
    tokens = tokenize(text)
    concepts = {t.concept for t in tokens if t.concept}
    return concepts - _PEOPLE - _NOT_TOPICS, concepts & _PEOPLE, {t.forms[0] for t in tokens if not t.concept}


def same_thing(new: str, stored: str) -> bool:
    """True if the fact ``new`` is about what ``stored`` is about (the rule in the module's docstring)."""
    (topics, people, words), (old_topics, old_people, old_words) = _about(new), _about(stored)
    if people != old_people:
        return False
    if topics or old_topics:
        return bool(topics & old_topics)
    return len(words & old_words) >= 2


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def decide(fact: str, similar: list[tuple[Fact, float]]) -> Decision:
    """One decision for ``fact`` against ``similar`` (stored facts, most similar first)."""
    if any(_plain(f.text) == _plain(fact) for f, _ in similar):
        return Decision(NOOP, fact, next(f.id for f, _ in similar if _plain(f.text) == _plain(fact)))
    match = next((f for f, _ in similar if same_thing(fact, f.text)), None)
    if match is None:
        return Decision(ADD, fact)
    return Decision(DELETE if _TAKEN_BACK.search(fact) else UPDATE, fact, match.id)
