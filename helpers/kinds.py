"""Kinds of stored turns: which turns state something worth retrieving, by rules (no model).

``classify_turn`` gives each stored turn its ``kind`` (``is_echo`` marks an answer that only repeats
its memories), so a search can filter in Milvus (``SEARCHED_KINDS``) instead of re-ranking.
``language_of`` and ``normalized`` are the one language rule and the one de-duplication key of the course."""

from __future__ import annotations

import re
from collections.abc import Mapping

#: Every kind a row is stored with (``turn``: a whole "User: ...\nAI: ..." row, lesson 06).
KINDS = ("turn", "statement", "question", "request", "chat", "reply", "dont_know", "echo")
SEARCHED_KINDS = ("statement",)  #: kinds searched as evidence: what was stated
NEVER_NEIGHBOURS = ("chat", "dont_know", "echo", "question", "request")  #: never a hit's context: no fact

#: English words that carry no content (BM25-style stop words).
STOP_WORDS = tuple("""a an the and or but if then so of to in on at by for with from about as into
over after before than that this these those is are was were be been being am do does did done
have has had having i me my mine myself you your yours we our us he him his she her hers it its
they them their what which who whom whose when where why how s t d ll m re ve not no can could
would should will shall may might must just very too also there here all any some""".split())
#: Words of small talk that state nothing ("Hey Mel! Good to see you! How have you been?").
CHAT_WORDS = frozenset("""hey hi hello oh wow yeah yes yep ok okay nice great awesome cool
amazing wonderful fantastic lovely thanks thank congratulations congrats glad good see hear
sounds sound really sure haha lol omg well hmm ah aw awww dear sorry happy fun interesting
helpful makes sense go got right exactly agreed bye""".split())
#: Korean small talk, matched at the start of a word (particles and endings follow).
CHAT_PREFIXES_KO = ("네", "응", "와", "우와", "고마", "감사", "이해했", "알겠", "그렇", "맞아", "맞네",
                    "도움", "됐어", "좋네", "대박", "ㅋ", "ㅎ")
#: A question turn may open with a few words of its own; a turn whose non-question sentences
#: hold at least this many content words is a ``statement`` ("I love painting. Do you?").
STATEMENT_WORDS = 2

HANGUL_SYLLABLES = "\uac00-\ud7a3"  #: the range of Hangul syllables (가-힣), for regex classes
_STOP = frozenset(STOP_WORDS)
_WORD = re.compile(r"\w+")
#: a sentence ends at ``. ! ? 。 ！ ？ …``, but not at a mark inside a word ("socket.io", "Node.js",
#: "v3.3.2": a mark followed by a letter or digit is part of the word) nor after a title ("Dr. Farah")
_SENTENCE = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|vs|e\.g|i\.e)\.\s+|[^.!?。！？…]|[.!?…](?=\w))+(?:[.!?。！？…]+[\"')\]]*|$)"
)
_ASKS = re.compile(r"[?？][\"')\]]*$")
_REQUEST_START = re.compile(
    r"^(please\s+)?(explain|give|write|tell|suggest|list|translate|help|recommend|summari[sz]e|"
    r"draft|make|show|plan|describe|compare|name|find|create|convert|define|outline|proofread|"
    r"rewrite|fix|check|can you|could you|would you)\b", re.IGNORECASE)
_REQUEST_END_KO = re.compile(r"(주세요|주실래요|줘|줄래|알려 줘|부탁해요|부탁드려요)[.!?~]*\s*$")
_DONT_KNOW = re.compile(
    r"\b(i\s+(do not|don't|dont)\s+know|i'm not sure|i am not sure|i don't have (that|any)|"
    r"you (haven't|have not|never) (told|mentioned|said)|no idea|i can't (recall|remember)|"
    r"i do not have (that|any))\b|모르겠|알 수 없|말씀하신 적이 없", re.IGNORECASE)
_FIRST_PERSON = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|im|ive|me|my|mine|myself|we|we're|we've|our|ours|us)\b|"
    r"(저는|제가|저도|나는|내가|나도|저희|우리)", re.IGNORECASE)
_HELPER_TALK = re.compile(  # what an assistant says of itself while helping: not a fact
    r"\b(i(\s+(can|could|can't|cannot|hope|think|suggest|recommend|understand|see|mean|guess|remember|"
    r"would|will|am\s+(glad|sorry|happy|not sure))|['’](d|ll|m\s+(glad|sorry|happy|not sure|here)))|"
    r"let\s+(me|us)|(help|tell|ask|from|for)\s+me|you\s+told\s+me|(can|may)\s+i)\b",
    re.IGNORECASE)
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|「[^」]*」')


def normalized(text: str) -> str:
    """Lower-cased, whitespace folded: the one de-duplication key of stored and retrieved text."""
    return " ".join(text.lower().split())


def named_speaker(text: str, names: Mapping[str, str] | None) -> str | None:
    """The one name of ``names`` (role -> name) that ``text`` mentions, any case, as a word or
    before a particle ("Marta's", "민수는"; not "Annabel" for Ann), else ``None`` (none or several)."""
    found = [n for n in (names or {}).values()
             if n and re.search(rf"\b{re.escape(n)}(?![a-z])", text, re.IGNORECASE)]
    return found[0] if len(found) == 1 else None


def language_of(text: str) -> str:
    """``"ko"`` if at least a fifth of the letters of ``text`` are Hangul syllables, else ``"en"``."""
    letters = [c for c in text if c.isalpha()]
    hangul = sum(HANGUL_SYLLABLES[0] <= c <= HANGUL_SYLLABLES[-1] for c in letters)
    return "ko" if letters and hangul / len(letters) >= 0.2 else "en"


def content_words(text: str) -> list[str]:
    """The lower-cased words of ``text`` of two characters or more that are not in
    ``STOP_WORDS`` or ``CHAT_WORDS`` (nor a Korean word starting with ``CHAT_PREFIXES_KO``)."""
    return [w for w in _WORD.findall(text.lower())
            if len(w) > 1 and w not in _STOP and w not in CHAT_WORDS
            and not (w[0] >= "\u3131" and w.startswith(CHAT_PREFIXES_KO))]


def split_sentences(text: str) -> list[str]:
    """``text`` cut after ``. ! ? 。 ！ ？ …`` but not at one followed by a letter or digit (``Node.js``)
    nor after a title or "e.g." ("Dr. Farah"); closing quotes and brackets stay with their sentence; empty
    pieces dropped."""
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def speaks_of_self(text: str) -> bool:
    """Does ``text`` say something about its speaker ("my kids", "저는 ...")? First-person words,
    once quoted speech and helper phrases ("I can help", "let me know") are taken out."""
    return bool(_FIRST_PERSON.search(_HELPER_TALK.sub(" ", _QUOTED.sub(" ", text))))


class OtherSpeaker:
    """Is the other side of the conversation a person or an AI assistant? After ``min_turns`` of
    its turns, a person when at least ``share`` of them ``speaks_of_self`` (an assistant rarely
    does). Attributes: ``turns`` seen, ``self_talk`` (how many spoke of the speaker)."""

    def __init__(self, share: float = 0.25, min_turns: int = 10) -> None:
        self.share, self.min_turns = share, min_turns
        self.turns = self.self_talk = 0

    def add(self, text: str) -> None:
        """Count one of the other side's turns."""
        self.turns += 1
        self.self_talk += speaks_of_self(text)

    @property
    def is_person(self) -> bool:
        return self.turns >= self.min_turns and self.self_talk >= self.share * self.turns


def _start_and_end(text: str, keep: int = 1200) -> str:
    """A long text's first and last ``keep`` characters (what it asks opens or closes it): the rules
    read a pasted file in the time of a sentence."""
    return text if len(text) <= 2 * keep else f"{text[:keep]} … {text[-keep:]}"


def classify_turn(text: str, speaker: str = "user", person: bool = False) -> str:
    """The ``kind`` to store a turn with. ``text``: the turn (``TypeError`` if not a str); ``speaker``:
    ``"user"`` or ``"assistant"`` (anything else: the user); ``person``: the assistant's side is a person
    (``OtherSpeaker.is_person``): its turns are searched like the user's, never ``"reply"``. Returns
    ``"dont_know"`` (the assistant says it does not know); ``"question"`` (every sentence with content
    asks: the others hold fewer than ``STATEMENT_WORDS`` content words); ``"request"`` (the user's turn
    starts like an instruction or ends like a Korean request); ``"reply"`` (the assistant's turn not
    speaking of itself); ``"chat"`` (no content word); else ``"statement"``. A text over 2,400
    characters is classified by its first and last 1,200."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    stripped = _start_and_end(text).strip()
    if speaker == "assistant" and _DONT_KNOW.search(stripped):
        return "dont_know"
    sentences = split_sentences(stripped)
    asking = [s for s in sentences if _ASKS.search(s)]
    if asking:
        said = " ".join(s for s in sentences if s not in asking)
        if len(content_words(said)) < STATEMENT_WORDS:
            return "question"
    elif speaker != "assistant" and (_REQUEST_START.match(stripped) or _REQUEST_END_KO.search(stripped)):
        return "request"
    if speaker == "assistant" and not person and not speaks_of_self(stripped):
        return "reply"
    if not content_words(stripped):
        return "chat"
    return "statement"


def asks(text: str) -> bool:
    """Does the new message ``text`` ask, so memory is searched for it? A question or request
    (``classify_turn``; TypeError if not a str), or a last sentence (of its last 1,200 characters)
    asking about something: ``?``, ``STATEMENT_WORDS`` content words ("Builds fail. Which CI is faster?")."""
    if classify_turn(text) in ("question", "request"):
        return True
    last = (split_sentences(text.rstrip()[-1200:]) or [""])[-1]
    return bool(_ASKS.search(last)) and len(content_words(last)) >= STATEMENT_WORDS


def is_echo(reply: str, supplied: str, share: float = 0.6) -> bool:
    """Does ``reply`` only repeat ``supplied`` (the retrieved section and summary its prompt
    carried): at least ``share`` of its content words (3 or more) are words of ``supplied``?"""
    words = content_words(reply)
    if len(words) < 3 or not supplied:
        return False
    known = set(content_words(supplied))
    return sum(w in known for w in words) >= share * len(words)


# -- rules chosen on public benchmark chats ---------------------------------------------------------

#: A question or request of more content words than this tells its context ("I'm setting up Express
#: 4.18 with Socket.io 4.6 on port 3000 ..., can you help?"): memories store it as a statement (searched),
#: while as the new message it is still a question. Questions asked of a memory hold ten or fewer.
ASKED_WORDS = 20
_NOT_RECALL = r"^(?!.*\b(wonder|forg[eo]t|remember|recall|did (i|we) (say|tell|mention))\b|.*(잊|기억))"
#: ... as is one opening by telling ("I met Jiho in May, do you think ...?", "저는 ... 만났는데, ...?"),
TELLS_FIRST = re.compile(_NOT_RECALL + r"(\W*((so|and|but|hey|hi|hello|ok|okay|well|also|oh|now|btw)\b\W*)*"
                         r"(i|im|my|we|our)\b|\W*(저는|제가|저희[는가]|나는|내가|우리[는가]|전|난)\s.*(는데|은데|인데|ㄴ데)[,\s]+\S)",
                         re.IGNORECASE)  # not one asking for a memory ("I wonder"); I’m: "i" then \b
#: ... or the user's to an assistant holding a number ("Can I help my brother, 12, raise his 68%?"), not
#: asking for a memory either (read over the whole text; ``TELLS_FIRST``'s exclusion reads its first line).
TELLS_NUMBER = re.compile(_NOT_RECALL + r".*\d", re.IGNORECASE | re.DOTALL)


def stored_kind(text: str, speaker: str, person: bool, long: bool, supplied: str) -> str:
    """The kind a message is stored with: ``kinds.classify_turn``'s (``person``: the reply side is a
    person), and two rules that keep what was told findable, chosen on public chats (docs/design-notes.md,
    "Real chats"): a question or request that tells its context is a ``"statement"`` (``long``: more than
    one chunk; more than ``ASKED_WORDS`` content words; opening by telling, ``TELLS_FIRST``; or the
    user's to an assistant holding a number, ``TELLS_NUMBER``; neither asking for a memory); an
    assistant's reply only repeating ``supplied`` (its prompt's memories) is an ``"echo"``."""
    kind = classify_turn(text, speaker, person)
    tells_first = (speaker == "user" or person) and TELLS_FIRST.match(text)
    tells_number = speaker == "user" and not person and TELLS_NUMBER.match(text)
    if kind in ("question", "request") and (long or len(content_words(text)) > ASKED_WORDS
                                            or tells_first or tells_number):
        kind = "statement"  # a pasted file, or a question telling its context: content to find
    if speaker == "assistant" and kind in ("reply", "statement") and is_echo(text, supplied):
        kind = "echo"
    return kind
