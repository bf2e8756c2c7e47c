"""The offline stand-in chat model: a transparent, rule-based replacement for an LLM.

With no API key the course still runs: ``OfflineChatModel`` answers from the messages it is sent,
using plain word matching that you can read in this file. It is not a language model and does not
understand anything. It is good enough to show what memory does: when a fact is in the prompt it
quotes it back; when memory dropped the fact it says it does not know.

Pipeline for one call (the functions named here are public and tested):

1. ``find_evidence(messages)``: cut the user's and system's messages into sentences
   (``split_sentences``); drop questions, instructions, AI turns and ``AI:`` lines.
2. Summary requested (``is_summary_request``)? ``summarize_facts`` lists the first-person facts.
3. Else a question (``is_question``)? Cut it into its questions (``split_question``: "What is my
   name and where do I live?" is two). For each, ``find_answers`` ranks the sentences by ``score``
   (a later sentence that ``corrects`` the best one goes first); quote them or say "I don't know".
   Else acknowledge the statement (greeting a name it introduces).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from html import unescape
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from helpers.tokens import count_text_tokens, count_tokens

MODEL_NAME = "offline-stand-in"

# --- Word lists (general vocabulary, no lesson text) ------------------------------------------
# Synonym groups ("concepts"): words in one group match each other. English words are stemmed
# when the table is built; Korean entries match a word that starts with them (2+ syllables) or
# equals them (1 syllable).
CONCEPTS = {
    "NAME": "name call nickname 이름 성함 불러 부르 별명",
    "JOB": "job work profession occupation career employer employed company office "
    "직업 일 일하 일해 근무 회사 직장 출근",
    "PLACE": "live home house apartment city town move reside resident stay based located "
    "location address country place neighborhood neighbourhood 살아 살고 살았 살지 살며 삽니 사는 "
    "사세 사시 거주 이사 머물 위치 집 동네 도시 주소 나라 곳",
    "HOMETOWN": "hometown 고향 출신",
    "LIKE": "favorite favourite like love enjoy prefer fan adore 좋아 제일 가장 최애 사랑 즐겨 선호",
    "AGE": "age born birthday 나이 살 생일 태어 연세 세",
    "ALLERGY": "allergy allergic 알레르기 알러지",
    "STUDY": "study student school university college major class course learn "
    "공부 학교 대학 전공 배우 배워 수업",
    # holders: whose fact it is
    "PET": "pet dog cat puppy kitten hamster parrot rabbit bunny "
    "반려 애완 강아지 개 고양이 햄스터 토끼 앵무새 키우 키워",
    "SISTER": "sister 언니 누나 여동생",
    "BROTHER": "brother 형 오빠 남동생",
    "SIBLING": "sibling 동생",
    "MOTHER": "mother mom mum 엄마 어머니",
    "FATHER": "father dad 아빠 아버지",
    "PARENT": "parent 부모",
    "SPOUSE": "wife husband spouse partner 아내 남편 부인 와이프",
    "CHILD": "son daughter kid child children 아들 딸 아이 자녀",
    "FRIEND": "friend 친구",
    "COLLEAGUE": "coworker colleague boss manager 동료 상사 팀장",
    # categories: what kind of thing the fact is about
    "FOOD": "food dish meal cuisine eat dinner lunch breakfast snack "
    "음식 요리 먹 먹고 먹는 먹었 먹어 식사 메뉴",
    "DRINK": "drink beverage 음료 마시 마셔",
    "COLOR": "color colour 색 색깔 색상",
    "MOVIE": "movie film cinema 영화",
    "BOOK": "book novel author 책 소설 작가",
    "MUSIC": "music song band singer 음악 노래 가수 밴드",
    "SPORT": "sport 운동 스포츠",
    "GAME": "game 게임",
    "LANGUAGE": "language 언어",
    "CAR": "car drive vehicle 차 자동차 운전",
    "HOBBY": "hobby 취미",
    "SEASON": "season 계절",
}
HOLDERS = {"PET", "SISTER", "BROTHER", "SIBLING", "MOTHER", "FATHER", "PARENT", "SPOUSE",
           "CHILD", "FRIEND", "COLLEAGUE"}
CATEGORIES = {"FOOD", "DRINK", "COLOR", "MOVIE", "BOOK", "MUSIC", "SPORT", "GAME", "LANGUAGE",
              "CAR", "HOBBY", "SEASON"}
# A narrower group matches its broader one at 0.75 ("my sister" / "my sibling"). HOMETOWN is not
# a kind of PLACE: where I grew up and where I live now are different facts.
BROADER = {"SISTER": "SIBLING", "BROTHER": "SIBLING", "MOTHER": "PARENT", "FATHER": "PARENT"}

EN_STOP = set(
    "a an the is are am was were be been being do does did doing done have has had having i me "
    "my mine myself you your yours yourself we us our ours it its this that these those there "
    "here what whats where when who whom whose which why how of to in on at for from with by "
    "about as and or but so if then than too very really just also any some all can could would "
    "will shall should may might must not no yes yeah ok okay please tell remind say said told "
    "know knew remember recall think mention mentioned ask asked again now still get got thing "
    "something anything everything kind sort much many lot well hi hello hey thanks thank bye "
    "goodbye welcome nice meet great good cool awesome sure question answer user assistant ai "
    "human summary summarize conversation memory memories fact facts information info message "
    "messages relevant history context use using only below above following previous earlier "
    "round let let's appreciate sorry glad see understand agree wonder guess mean".split()
)
KO_STOP = set(
    "저 제 나 내 저희 우리 전 난 당신 너 뭐 무엇 어디 어디서 언제 누구 누가 몇 어떻게 어떤 어느 "
    "무슨 왜 뭘 뭔가 뭔지 뭐였 기억 기억해 기억하 기억나 알아 알고 아는 알려 알려줘 알려주세요 "
    "말해 말해줘 말씀 말했 있 있어 있어요 있나요 있는 있습니다 없 없어요 이 그 저것 이것 그것 것 "
    "거 게 요 네 예 아니 아니요 좀 혹시 정말 진짜 너무 아주 지금 그리고 하지만 그래서 그런데 또 "
    "다시 해 해요 했어요 합니다 하고 하는 하세요 이에요 예요 입니다 이야 안녕 안녕하세요 감사 "
    "감사합니다 고마워 고마워요 고맙습니다 반가워 반가워요 반갑습니다 질문 대답 답 사용자 대화 "
    "요약 정보 사실 메시지 기록 관련 다음 이전 주세요 줘 수 때 등 씨 님 대해 대한 관해 맞아 "
    "다 전부 모두 모든".split()
)
KO_STOP_PREFIXES = ("있", "없", "알겠", "그렇")  # 있어요, 없나요, 알겠습니다, 그렇군요 ...
# Korean particles and endings that are stripped to find a word's stem ("이름은" -> "이름").
KO_ENDINGS = sorted(
    "에서는 에게서 으로는 이라고 라고 에서 에게 한테 으로 까지 부터 처럼 보다 이랑 이나 이에요 "
    "이예요 예요 에요 입니다 이었어요 였어요 이었다 였다 이야 이다 인가요 인데요 인데 이죠 이고 "
    "했었어요 했어요 해요 합니다 했습니다 하고 하는 하세요 하나요 했나요 하지 해서 아요 어요 "
    "나요 까요 습니다 세요 었어요 았어요 은 는 이 가 을 를 에 의 도 로 와 과 랑 만 요 야 서 고 죠"
    .split(), key=len, reverse=True)
_KO_ADJUNCT_PARTICLES = ("랑", "와", "과", "하고", "한테", "에게", "께", "보다", "처럼", "를", "을")
KO_SHORT_STEM_OK = set("은 는 이 가 을 를 에 의 도 로 와 과 만".split())  # "집은" -> "집"
KO_QUESTION_WORDS = set("뭐 무엇 어디 언제 누구 누가 몇 어떻게 어떤 어느 무슨 왜 뭘 뭔가 뭔지".split())
KO_FIRST_PERSON = ("저희", "우리", "저", "제", "나", "내")
KO_FIRST_PERSON_PARTICLES = {"", "는", "가", "를", "도", "의", "에", "에게", "한테", "와", "랑", "만",
                             "로", "게"}
EN_FIRST_PERSON = {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"}
EN_QUESTION_START = set(
    "what where when who whom whose which why how do does did is are am was were can could "
    "would will should have has".split()
)

EN_TEXT = {
    "quote": 'You told me: "{}"', "earlier": 'Earlier you said: "{}"',
    "also": 'You also said: "{}"', "unknown": "I don't know: nothing in the messages I was sent "
    "says that.", "ack": "Got it.", "greet": "Nice to meet you, {}!",
    "heading": "Facts the user stated:", "no_facts": "No facts stated yet.",
}
KO_TEXT = {
    "quote": '전에 이렇게 말씀하셨어요: "{}"', "earlier": '그 전에는 이렇게 말씀하셨어요: "{}"',
    "also": '이렇게도 말씀하셨어요: "{}"', "unknown": "모르겠어요. 제가 받은 메시지에는 그 정보가 없어요.",
    "ack": "알겠어요.", "greet": "반가워요, {} 님!",
    "heading": "사용자가 말한 사실:", "no_facts": "아직 말한 사실이 없어요.",
}
_PLACEHOLDERS = {EN_TEXT["no_facts"], KO_TEXT["no_facts"]}

_HANGUL = re.compile(r"[가-힣]")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|\d+|[가-힣]+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?。？！])\s+|(?<=[?？])(?=[가-힣A-Za-z])")
_ABBREVIATIONS = ("Mr.", "Mrs.", "Ms.", "Dr.", "St.", "e.g.", "i.e.")
_XML_MESSAGE = re.compile(r'<message type="(\w+)">(.*?)</message>', re.S)
_ROLE_PREFIX = re.compile(r"^(human|user|ai|assistant|system|사용자|어시스턴트)\s*:\s*", re.I)
_ROLES = {"human": "human", "user": "human", "사용자": "human", "system": "system"}
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")
_TAG = re.compile(r"^\s*\[[^\]]{0,40}\]\s*")
_SUMMARY_REQUEST = re.compile(
    r"\bsummari[sz](?:e|ing)\b|\bsum up\b|\brecap\b|\bnew summary\s*:"
    r"|\b(?:write|give|make|create|produce|update|extend|provide|return|prepare|generate)\b"
    r"[^.?!\n]{0,40}\bsummary\b|요약\s*(?:해|하|을|좀|부탁)|정리해\s*(?:줘|주세요|줄래)",
    re.I,
)
_PHRASES = [  # multi-word phrases that mean one concept
    (re.compile(r"\bfor a living\b", re.I), " job "),
    (re.compile(r"\b(?:am|are|is|was|were|'m|come|comes|came|originally)\s+from\b", re.I),
     " hometown "),
    (re.compile(r"\bwhere\b(.*)\bfrom\b", re.I), r"where \1 hometown"),
    (re.compile(r"\bfrom(?=\W*$)", re.I), " hometown "),  # "What city am I from?"
    (re.compile(r"\bgo(?:es)? by\b", re.I), " name "),
    (re.compile(r"\bhow old\b|\byears? old\b", re.I), " age "),
    (re.compile(r"\b(?:grew|grow|growing) up\b", re.I), " hometown "),
    (re.compile(r"\bI(?:'m|’m| am) (?:a|an) ", re.I), " job "),  # "I'm a nurse"
    # "What do I do?" / "What does my sister do?" ask for a job; "... do on weekends?" does not
    (re.compile(r"\bwhat (?:do|does) ((?:I|we|my|our)\b[\w' ]{0,20}?) do\b"
                r"(?=\W*(?:again|now|exactly)?\W*$)", re.I), r"what \1 job"),
    (re.compile(r"뭐\s*하는\s*(?:사람|분)"), " job "),  # "제가 뭐 하는 사람이에요?"
    (re.compile(r"(?:저는|나는|전|난)\s+(?:[가-힣]+\s+)?[가-힣]*(?:사|생|원|자|가|관|님)"
                r"(?:이에요|예요|입니다|이야|야)"), r"\g<0> job "),  # "저는 간호사예요"
]
_QUESTION_JOIN = re.compile(  # "..., and where ...", "... 그리고 ...", "뭔지랑 / 사는지랑 ...", "뭐고 ..."
    r"(,?\s+and\s+(?=(?:what|where|when|who|whose|which|why|how|do|does|did|am|is|are|can)\b)"
    r"|\s+그리고\s+|(?<=[는은인뭔딘군젠건]지)랑\s+|(?<=뭐)고\s+|(?<=디)고\s+)", re.I)
_CORRECTION = re.compile(
    r"\b(?:actually|correction|I meant|I misspoke)\b|^\s*no\b[,.!]|,\s*not\b|아니라|아니고|정정|"
    r"잘못\s*말", re.I)
_NEGATED = re.compile(  # the word a correction takes back: "Bea, not Ann", "not Faro", "민지가 아니라"
    r"(?i:,\s*not\s+(?:in |at |from |the |an? |my )?)([\w'-]+)|\bnot\s+([A-Z][\w'-]*)"
    r"|([가-힣A-Za-z]+?)[이가]?\s*아니(?:라|고)")
_CLAUSE_BREAK = re.compile(
    r",?\s+(?:and|but)\s+(?=(?:I|I'm|my|we|our)\b)|;\s*|(?<=고)\s+|(?<=며)\s+|(?<=지만)\s+"
    r"|(?<=는데)\s+", re.I)
_EN_NAME = [
    re.compile(r"\b(?i:my name is|my name's|call me|i go by)\s+([A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)"),
    re.compile(r"\b(?:I'm|I am|I’m)\s+([A-Z][a-z][\w'-]*)"),
]
_KO_NAME = [
    re.compile(r"(?:제|내|저의|나의)\s*이름은\s*([가-힣A-Za-z]+)"),
    re.compile(r"(?:저는|나는|전|난)\s+([가-힣]{1,5}?)(?:입니다|이에요|예요|이야|야|"
               r"이라고\s*(?:합니다|해요)|라고\s*(?:합니다|해요))(?=[\s.!?,~]|$)"),
    re.compile(r"(?:^|\s)([가-힣]{1,5}?)(?:이)?라고\s*(?:합니다|해요|불러)"),
]
_APPOSITIVE = re.compile(r"\b(?:[Mm]y|[Oo]ur)\s+(?:[a-z]+\s+)?([a-z]+),?\s+[A-Z][a-z]+")
_NOT_A_NAME = re.compile(  # "I'm Korean": nationalities and beliefs are not names
    r"\w+(?:ese|ish)|American|Korean|Canadian|Mexican|French|German|Italian|Indian|Australian|"
    r"Brazilian|Russian|Dutch|Greek|Thai|Swiss|Vietnamese|Filipino|Catholic|Muslim|Christian|"
    r"Buddhist|Hindu|Vegan|Vegetarian"
)
_KO_COPULA = ("이라고", "이에요", "입니다", "라고", "예요", "이야", "이다", "이고", "야", "다", "고", "요")


def _stem(word: str) -> str:
    """Light English stemming: plural, -ing, -ed, final e ("lives", "living", "lived" -> "liv")."""
    if len(word) > 4 and word.endswith(("ies", "ied")):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses", "zes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # "running" -> "run"
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def _build_lexicon() -> tuple[dict[str, str], dict[str, str]]:
    english, korean = {}, {}
    for concept, words in CONCEPTS.items():
        for word in words.split():
            if _HANGUL.search(word):
                korean[word] = concept
            else:
                english[_stem(word)] = concept
    return english, korean


_EN_CONCEPT, _KO_CONCEPT = _build_lexicon()
_KO_PREFIXES = sorted((w for w in _KO_CONCEPT if len(w) >= 2), key=len, reverse=True)


@dataclass(frozen=True)
class Token:
    """One content word: its normalized spellings and its synonym group.

    ``forms``: an English stem, or a Korean word with and without particles ("이름은", "이름").
    ``concept``: a key of ``CONCEPTS`` ("NAME", "PET", ...) or ``None``.
    """

    forms: tuple[str, ...]
    concept: str | None
    hangul: bool


@dataclass(frozen=True)
class Statement:
    """One sentence the model was sent. ``role``: "human" (the user said it), "system" (system
    message, e.g. a summary or retrieved memories) or "context" (other text around a transcript);
    ``position``: order in the input (larger = later); ``bullet``: it was a list item."""

    text: str
    role: str
    position: int
    bullet: bool = False


def detect_language(text: str) -> str:
    """Return "ko" when ``text`` is mostly Hangul (syllables count 3x Latin letters), else "en"."""
    hangul = len(_HANGUL.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return "ko" if hangul and hangul * 3 >= latin else "en"


def split_sentences(text: str) -> list[str]:
    """Split ``text`` (str) into stripped sentences at line breaks and at . ! ? followed by space.

    Returns a list of non-empty strings; "Dr. Kim" style abbreviations are not split.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        pieces: list[str] = []
        for piece in _SENTENCE_BREAK.split(line.strip()):
            if pieces and pieces[-1].endswith(_ABBREVIATIONS):
                pieces[-1] += " " + piece.strip()
            elif piece.strip():
                pieces.append(piece.strip())
        sentences += pieces
    return sentences


def _korean_forms(word: str) -> list[str]:
    forms = {word}
    for ending in KO_ENDINGS:
        stem = word[: -len(ending)]
        if word.endswith(ending) and stem and (
            len(ending) > 1 or len(stem) >= 2 or ending in KO_SHORT_STEM_OK
        ):
            forms.add(stem)
    return sorted(forms, key=lambda f: (-len(f), f))


def _korean_concept(forms: list[str]) -> str | None:
    for form in forms:
        if form in _KO_CONCEPT:
            return _KO_CONCEPT[form]
        for prefix in _KO_PREFIXES:
            if form.startswith(prefix):
                return _KO_CONCEPT[prefix]
    return None


@lru_cache(maxsize=4096)
def tokenize(text: str) -> tuple[Token, ...]:
    """Content words of ``text`` (str): stopwords dropped, English stemmed, Korean particles
    stripped, each word mapped to its synonym group. Returns a tuple of ``Token``."""
    if introduced_name(text) or any(
        _EN_CONCEPT.get(_stem(word)) in HOLDERS for word in _APPOSITIVE.findall(text)
    ):
        text += " name"  # "I'm Ann", "민수라고 해요", "my cat, Miso" state a name
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    tokens = []
    for raw in _WORD.findall(text):
        if _HANGUL.match(raw):
            forms = _korean_forms(raw)
            concept = _korean_concept(forms)
            if concept is None and (raw.startswith(KO_STOP_PREFIXES) or KO_STOP & set(forms)):
                continue
            tokens.append(Token(tuple(forms), concept, True))
        else:
            word = raw.lower().replace("’", "'").split("'")[0]
            if word in EN_STOP or (len(word) < 2 and not word.isdigit()):
                continue
            stem = _stem(word)
            tokens.append(Token((stem,), _EN_CONCEPT.get(stem), False))
    return tuple(tokens)


def has_first_person(text: str) -> bool:
    """True if ``text`` says I / my / we ... or 저 / 제 / 나 / 내 / 저희 / 우리 (with a particle)."""
    for raw in _WORD.findall(text):
        if raw.lower().replace("’", "'").split("'")[0] in EN_FIRST_PERSON:
            return True
        if raw in ("전", "난", "날", "절") or any(
            raw.startswith(fp) and raw[len(fp):] in KO_FIRST_PERSON_PARTICLES
            for fp in KO_FIRST_PERSON
        ):
            return True
    return False


def is_question(sentence: str) -> bool:
    """True if ``sentence`` (one sentence, str) asks something: it ends with "?", starts with
    "tell me"/"remind me", starts with a wh-word or auxiliary and has no final "." or "!", or
    (Korean) has a question word (뭐, 어디, 언제 ...), a question ending (까, 나요) or asks 알려/말해."""
    text = sentence.strip()
    if text.endswith(("?", "？")) or re.match(r"(?i)(tell|remind) me\b", text):
        return True
    words = _WORD.findall(text)
    if not words:
        return False
    if detect_language(text) == "en":
        first = words[0].lower().replace("’", "'").split("'")[0]  # "What's" -> "what"
        return not text.endswith((".", "!")) and first in EN_QUESTION_START
    if re.search(r"(알려|말해)\s*(줘|주세요|줄래|주실)", text):
        return True
    if text.endswith((".", "!")):
        return False
    last = words[-1]
    return last.endswith(("까", "나요", "냐", "인가요")) or any(
        form in KO_QUESTION_WORDS for w in words if _HANGUL.match(w) for form in _korean_forms(w)
    )


_ABOUT_CONVERSATION = re.compile(
    r"\b(?:conversation|chat|discussion|messages?|history|transcript|so far|above|below"
    r"|we (?:talked|discussed|said)|I (?:said|told|mentioned))\b|대화|이야기|메시지|지금까지|내용",
    re.I,
)


def is_summary_request(text: str) -> bool:
    """True if ``text`` asks for a summary of the conversation (summarize / write a summary /
    sum up / 요약해 ... together with conversation, messages, so far, 대화 ...).

    A summary that is merely provided ("Here is a summary ...", "대화 요약:") is not a request,
    and neither is a summary of something else ("Summarise the plot of Hamlet"): that is an
    ordinary request the stand-in cannot do."""
    if not _SUMMARY_REQUEST.search(text):
        return False
    if _ABOUT_CONVERSATION.search(text):
        return True
    # a bare "Summarize, please." / "요약해 주세요." means this conversation; "Summarise the plot
    # of Hamlet" names something else
    rest = _SUMMARY_REQUEST.sub(" ", text)
    return len(tokenize(rest)) <= 1


def _message_role(message: BaseMessage) -> str:
    role = getattr(message, "role", None) or message.type  # ChatMessage has .role
    return _ROLES.get(str(role).lower(), "ai")


def _message_text(message: BaseMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(
        b if isinstance(b, str) else str(b.get("text", ""))
        for b in message.content
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    )


def _strip_markers(line: str) -> tuple[str, bool]:
    bullet = bool(_BULLET.match(line))
    line = _BULLET.sub("", line)
    while _TAG.match(line):
        line = _TAG.sub("", line, count=1)
    return line.strip(), bullet


def _role_lines(text: str, default_role: str) -> list[tuple[str, str, bool]]:
    """(role, line, bullet) for every line; "Human:"/"AI:" prefixes and <message> blocks set the
    role, lines after a prefix keep it until a blank line."""
    if _XML_MESSAGE.search(text):
        parts, start = [], 0
        for match in _XML_MESSAGE.finditer(text):
            parts += _role_lines(text[start : match.start()], "context")
            role = _ROLES.get(match.group(1).lower(), "ai")
            parts += _role_lines(unescape(match.group(2)), role)
            start = match.end()
        return parts + _role_lines(text[start:], "context")
    lines = [_strip_markers(raw) for raw in text.splitlines()]
    transcript = any(_ROLE_PREFIX.match(line) for line, _ in lines)
    base = "context" if transcript and default_role == "human" else default_role
    role, result = base, []
    for line, bullet in lines:
        prefix = _ROLE_PREFIX.match(line)
        if prefix:
            role = _ROLES.get(prefix.group(1).lower(), "ai")
            line, _ = _strip_markers(line[prefix.end() :])
        elif not line:
            role = base
        if line:
            result.append((role, line, bullet))
    return result


def find_evidence(messages: Sequence[BaseMessage]) -> list[Statement]:
    """Every sentence the user (or a system message) stated, oldest first.

    Args:
        messages: LangChain messages. AI and tool messages are skipped, and so are "AI:" /
            "Assistant:" lines inside other messages; questions, summary instructions and
            headings (lines ending with ":") are dropped.

    Returns:
        A list of ``Statement`` in input order (``position`` 0, 1, 2, ...).
    """
    statements: list[Statement] = []
    for message in messages:
        default_role = _message_role(message)
        if default_role == "ai":
            continue
        for role, line, bullet in _role_lines(_message_text(message), default_role):
            if role == "ai":
                continue
            for sentence in split_sentences(line):
                if (is_question(sentence) or is_summary_request(sentence)
                        or sentence.endswith((":", "："))):
                    continue
                statements.append(Statement(sentence, role, len(statements), bullet))
    return statements


def _token_match(q: Token, s: Token) -> float:
    """1.0 same word or synonym group, 0.75 related group or Korean word inside another."""
    if q.concept and s.concept:
        return 1.0 if q.concept == s.concept else 0.75 if _related(q.concept, s.concept) else 0.0
    if q.concept or s.concept:
        return 0.0
    if set(q.forms) & set(s.forms):
        return 1.0
    if q.hangul and s.hangul and any(
        min(len(a), len(b)) >= 2 and (a in b or b in a) for a in q.forms for b in s.forms
    ):
        return 0.75  # "동생" in "여동생"
    return 0.0


def _related(a: str, b: str) -> bool:
    """``a`` is a kind of ``b`` or the other way round ("SISTER" and "SIBLING")."""
    return BROADER.get(a) == b or BROADER.get(b) == a


def _holders_compatible(a: str, b: str) -> bool:
    return a == b or _related(a, b)


def _score_clause(question: tuple[Token, ...], clause: tuple[Token, ...]) -> float:
    q_holders = {t.concept for t in question if t.concept in HOLDERS}
    s_holders = {t.concept for t in clause if t.concept in HOLDERS}
    if any(not any(_holders_compatible(h, s) for s in s_holders) for h in q_holders):
        return 0.0  # asks about my sister, the sentence is not about her
    q_cats = {t.concept for t in question if t.concept in CATEGORIES}
    s_cats = {t.concept for t in clause if t.concept in CATEGORIES}
    if q_cats and s_cats and not q_cats & s_cats:
        return 0.0  # asks about a color, the sentence is about food
    if "HOMETOWN" in {t.concept for t in question} - {t.concept for t in clause}:
        return 0.0  # asks where I am from, the sentence is not about that (maybe where I live)
    matches = [max((_token_match(q, s) for s in clause), default=0.0) for q in question]
    topic = [q for q in question if q.concept not in HOLDERS]
    hits = [i for i, s in enumerate(clause) if any(_token_match(q, s) for q in topic)]
    if topic and not hits:
        return 0.0  # only the holder matched ("my sister" but nothing about her name)
    coverage = sum(matches) / len(question)
    first_hit = hits[0] if hits else len(clause)
    if any(
        t.concept in HOLDERS and not _is_adjunct(t)
        and not any(_holders_compatible(t.concept, h) for h in q_holders)
        for t in clause[:first_hit]
    ):
        coverage *= 0.4  # "My sister is called ..." does not answer "What is my name?"
    return round(coverage, 6)


def _is_adjunct(token: Token) -> bool:
    """A Korean word marked "with / to / object" (고양이랑, 언니한테, 개를): not the subject."""
    return token.hangul and token.forms[0].endswith(_KO_ADJUNCT_PARTICLES)


def _unique(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    seen, kept = set(), []
    for token in tokens:
        key = token.concept or token.forms
        if key not in seen:
            seen.add(key)
            kept.append(token)
    return tuple(kept)


def score(question: str, statement: str) -> float:
    """How well ``statement`` answers ``question`` (both str): 0.0 (not at all) to 1.0.

    The share of the question's content words (or their synonyms) found in the statement, scored
    on the whole sentence and on each of its clauses (best wins). It is 0 when the question names a
    person or pet the statement does not mention, or a different category (color vs food); x0.4
    when the statement is about someone the question did not name (that person or pet comes
    before the matching words, as in "My sister is called Mina" for "What is my name?").
    """
    q_tokens = _unique(tokenize(question))
    if not q_tokens:
        return 0.0
    pieces = [statement] + [p for p in _CLAUSE_BREAK.split(statement) if p and p.strip()]
    return max(_score_clause(q_tokens, tokenize(piece)) for piece in pieces)


# A request, not a fact about the user: "Give me three ideas", "Tell me a joke", "Can you ...".
_REQUEST = re.compile(
    r"\s*(?:please\s+)?(?:give|tell|show|send|recommend|suggest|help|explain|write|make|find|"
    r"remind|summari[sz]e|translate|list|describe|teach|let)\b(?!\s+(?:is|are|was)\b)"
    r"|\s*(?:can|could|would|will)\s+you\b",
    re.I,
)


def is_fact(statement: Statement) -> bool:
    """True if ``statement`` is a fact worth keeping in a summary: it has a content word and is
    in the first person. Korean drops the subject ("부산에 살아요"), so a Korean user sentence or
    list item with two content words counts too (one word alone is usually "좋아요"-like filler)."""
    tokens = tokenize(statement.text)
    if statement.text in _PLACEHOLDERS or not tokens or _REQUEST.match(statement.text):
        return False
    if has_first_person(statement.text):
        return True
    korean = detect_language(statement.text) == "ko"
    return korean and len(tokens) >= 2 and (statement.role == "human" or statement.bullet)


def summarize_facts(
    statements: Sequence[Statement], max_facts: int = 60, language: str = "en"
) -> str:
    """An extractive summary: the user's facts as a bulleted list, oldest first.

    Args:
        statements: from ``find_evidence`` (an earlier summary's bullet lines are statements too,
            so a running summary keeps them).
        max_facts: keep at most this many facts, the most recent ones (>= 1).
        language: "ko" or "en", used only when no statement shows the conversation's language.

    Returns:
        "Facts the user stated:\\n- ..." (Korean heading for a Korean conversation). Repeated
        facts appear once, at their latest position, so a changed fact comes after the old one.

    Raises:
        ValueError: ``max_facts`` < 1.
    """
    if max_facts < 1:
        raise ValueError(f"max_facts must be at least 1, got {max_facts}")
    latest: dict[str, Statement] = {}
    for statement in statements:
        if is_fact(statement):
            key = re.sub(r"\s+", " ", statement.text.lower()).rstrip(" .!")
            latest.pop(key, None)
            latest[key] = statement
    facts = [s.text for s in latest.values()][-max_facts:]
    sample = " ".join(facts) or " ".join(s.text for s in statements if s.role == "human")
    text = KO_TEXT if (detect_language(sample) if sample else language) == "ko" else EN_TEXT
    if not facts:
        return f"{text['heading']}\n{text['no_facts']}"
    return text["heading"] + "".join(f"\n- {fact}" for fact in facts)


def split_question(question: str) -> list[str]:
    """The questions asked in ``question`` (str), in order: its question sentences, and the parts
    of a compound question joined by "and" / 그리고 / "-지랑" when each part asks something
    ("What is my name and where do I live?" -> "What is my name", "where do I live?")."""
    parts = []
    for sentence in split_sentences(question):
        pieces = _QUESTION_JOIN.split(sentence)  # [part, joiner, part, joiner, part ...]
        current = pieces[0]
        for joiner, piece in zip(pieces[1::2], pieces[2::2], strict=True):
            if is_question(current) and is_question(piece):
                parts.append(current)
                current = piece
            else:
                current += joiner + piece  # "my sister and brother": one question
        parts.append(current)
    return [part for part in parts if is_question(part)] or [question]


def corrects(statement: str, earlier: str, on_topic: bool) -> bool:
    """True if ``statement`` corrects ``earlier`` (both str): it says "actually", "I meant",
    ", not ...", "아니라", "정정" ... and is ``on_topic``, or it negates a word of ``earlier``
    ("No, it's Bea, not Ann." corrects "My name is Ann.")."""
    negated = {word for found in _NEGATED.findall(statement) for word in found
               if word and word.lower() not in EN_STOP | KO_STOP}
    return (on_topic and bool(_CORRECTION.search(statement))) or any(
        re.search(rf"(?<!\w){re.escape(word)}", earlier, re.I) for word in negated
    )


def find_answers(
    question: str, evidence: Sequence[Statement], max_quotes: int = 3, min_overlap: float = 0.5
) -> list[Statement]:
    """The statements that answer ``question`` (one question, str), in the order to quote them.

    The best one (highest ``score``, the latest on ties) comes first, then others scoring at
    least 80% of it; none if the best scores below ``min_overlap``. A later statement that
    ``corrects`` the best one goes first ("Actually, my name is Bea, not Ann."). At most
    ``max_quotes`` statements.
    """
    ranked = sorted(
        ((score(question, s.text), s) for s in evidence), key=lambda p: (-p[0], -p[1].position)
    )
    if not ranked or ranked[0][0] < min_overlap:
        return []
    best_score, best = ranked[0]
    found = [s for value, s in ranked if value >= max(min_overlap, 0.8 * best_score)]
    corrections = [s for value, s in ranked
                   if s.position > best.position and corrects(s.text, best.text, value >= min_overlap)]
    if corrections:
        found.insert(0, max(corrections, key=lambda s: s.position))
    return _distinct(found)[:max_quotes]


def _distinct(statements: Sequence[Statement]) -> list[Statement]:
    """``statements`` with each sentence once (its first occurrence kept)."""
    first: dict[str, Statement] = {}
    for statement in statements:
        first.setdefault(statement.text, statement)
    return list(first.values())


def _facts_about_me(evidence: Sequence[Statement], max_quotes: int) -> list[Statement]:
    """For "Who am I?" / "What do you know about me?": the user's name first, then recent facts."""
    facts = [s for s in evidence if is_fact(s)]
    name = find_answers("name", facts, max_quotes=1)
    return _distinct(name + facts[::-1])[:max_quotes]


def _quote(statements: Sequence[Statement], text: dict[str, str]) -> str:
    """'You told me: "..."' for the first statement, then "Earlier you said" (an older one) or
    "You also said" (a newer one) for the others."""
    first = statements[0]
    return " ".join([text["quote"].format(first.text)] + [
        text["earlier" if s.position < first.position else "also"].format(s.text)
        for s in statements[1:]
    ])


def answer_question(
    question: str,
    evidence: Sequence[Statement],
    max_quotes: int = 3,
    min_overlap: float = 0.5,
) -> str:
    """Answer ``question`` by quoting the statements in ``evidence`` that match it best.

    Args:
        question: the user's question (str); each question in it (``split_question``) is
            answered in turn. Hangul in it makes the reply Korean.
        evidence: statements from ``find_evidence``.
        max_quotes: quote at most this many sentences per question.
        min_overlap: ``score`` (0-1) the best sentence needs; below it the reply is "I don't know".

    Returns:
        The reply (str): for each question, the ``find_answers`` statements quoted ("You told
        me: ...", then "Earlier you said: ..." for older ones), or "I don't know". A question with
        no content words that is about the user ("Who am I?", "What do you know about me?")
        quotes the user's name and latest facts.
    """
    text = KO_TEXT if detect_language(question) == "ko" else EN_TEXT
    replies, quoted = [], set()
    for part in split_question(question):
        if tokenize(part):
            found = find_answers(part, evidence, max_quotes, min_overlap)
        else:
            found = _facts_about_me(evidence, max_quotes) if has_first_person(part) else []
        fresh = [s for s in found if s.text not in quoted]
        if found and not fresh:
            continue  # an earlier part of the question already quoted these
        quoted.update(s.text for s in fresh)
        replies.append(_quote(fresh, text) if fresh else text["unknown"])
    return " ".join(dict.fromkeys(replies))  # "I don't know" once, even for two parts


def introduced_name(text: str) -> str | None:
    """The name ``text`` introduces ("My name is Ann", "I'm Ann", "call me Ann", "제 이름은 민수예요",
    "저는 민수입니다", "민수라고 해요"), or ``None``. "I'm X" counts only when X is capitalized;
    Korean words ending like an occupation (학생, 의사) are not taken as names."""
    for pattern in _EN_NAME:
        match = pattern.search(text)
        if match and not _NOT_A_NAME.fullmatch(match.group(1)):
            name = match.group(1)
            return name[0].upper() + name[1:]
    for pattern in _KO_NAME:
        match = pattern.search(text)
        if match:
            name = match.group(1)
            for ending in _KO_COPULA:
                if name.endswith(ending) and len(name) > len(ending):
                    name = name[: -len(ending)]
                    break
            if not name.endswith(("사", "생", "사람")):
                return name
    return None


def _last_human_lines(messages: Sequence[BaseMessage]) -> list[str]:
    for message in reversed(messages):
        if _message_role(message) == "human":
            lines = _role_lines(_message_text(message), "human")
            return [line for role, line, _ in lines if role != "ai"]
    return []


def _own_lines(messages: Sequence[BaseMessage]) -> list[str]:
    """The last human message's lines without quoted history: when it carries "User: ..." /
    "AI: ..." lines (retrieved memories, a transcript), only the lines outside them are the
    user's new words."""
    for message in reversed(messages):
        if _message_role(message) == "human":
            lines = _role_lines(_message_text(message), "human")
            quoted = any(role == "context" for role, _, _ in lines)
            return [line for role, line, _ in lines if not quoted or role == "context"]
    return []


def _last_human_sentences(messages: Sequence[BaseMessage]) -> list[str]:
    return [s for line in _last_human_lines(messages) for s in split_sentences(line)]


def wants_summary(messages: Sequence[BaseMessage]) -> bool:
    """True if the last human message asks for a summary, or a system message does and the last
    human message asks no question."""
    for message in reversed(messages):
        if _message_role(message) == "human":
            if is_summary_request(_message_text(message)):
                return True
            if any(is_question(s) for s in _last_human_sentences(messages)):
                return False
            break
    return any(
        _message_role(m) == "system" and is_summary_request(_message_text(m)) for m in messages
    )


def respond(
    messages: Sequence[BaseMessage],
    max_summary_facts: int = 60,
    max_quotes: int = 3,
    min_overlap: float = 0.5,
) -> str:
    """The reply text for ``messages``: a summary, an answer, or an acknowledgement.

    Args:
        messages: LangChain messages, oldest first (the last human message is the request).
        max_summary_facts, max_quotes, min_overlap: see ``summarize_facts``, ``answer_question``.

    Returns:
        The reply (str). Deterministic; uses nothing but ``messages``.

    Raises:
        ValueError: ``max_summary_facts`` < 1 and a summary was asked for.
    """
    evidence = find_evidence(messages)
    lines = _own_lines(messages)  # not quoted history: an old question there is not asked now
    if wants_summary(messages):
        request = " ".join(_message_text(m) for m in messages if _message_role(m) != "ai")
        return summarize_facts(evidence, max_summary_facts, detect_language(request))
    asking = [line for line in lines if any(is_question(s) for s in split_sentences(line))]
    if asking:  # the last line that asks something: "What's my name? And where do I live?"
        return answer_question(asking[-1], evidence, max_quotes, min_overlap)
    said = " ".join(lines)  # not the quoted history: its names were introduced long ago
    text = KO_TEXT if detect_language(said) == "ko" else EN_TEXT
    name = introduced_name(said)
    return text["greet"].format(name) if name else text["ack"]


class OfflineChatModel(BaseChatModel):
    """Offline stand-in: a transparent, rule-based program, NOT a language model.

    It needs no network and no key, keeps no state between calls, and answers only from the
    messages it is sent (a user's earlier turns, a summary or retrieved memories):

    * a question: every sentence the user stated (not AI turns, not questions) gets a score, the
      share of the question's words, or synonyms (name/called, job/work, live/moved ...),
      it contains; the best one is quoted ("You told me: ..."), the latest one on ties, and a
      later correction ("Actually, ...", "..., not Ann") before it. If no sentence scores
      ``min_overlap``, it says it does not know. "What is my name and where do I live?" is
      answered part by part; "Who am I?" quotes the user's name, then recent facts.
    * "summarize ...": it lists the first-person facts the user stated (an earlier summary's
      facts included), in the conversation's language.
    * anything else: "Got it.", or a greeting if you told it your name.
    """

    max_summary_facts: int = 60
    """A summary keeps at most this many facts (the most recent)."""
    max_quotes: int = 3
    """An answer quotes at most this many sentences."""
    min_overlap: float = 0.5
    """Share of the question's words a sentence must contain to count as an answer (0-1)."""

    @property
    def _llm_type(self) -> str:
        return MODEL_NAME

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": MODEL_NAME,
            "max_summary_facts": self.max_summary_facts,
            "max_quotes": self.max_quotes,
            "min_overlap": self.min_overlap,
        }

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = respond(messages, self.max_summary_facts, self.max_quotes, self.min_overlap)
        for marker in stop or []:
            text = text.split(marker)[0] if marker else text
        input_tokens, output_tokens = count_tokens(messages), count_text_tokens(text)
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
            },
            response_metadata={"model_name": MODEL_NAME},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineChatModel:
        """Accept tools so ``create_agent`` works; this model never calls them. Returns self."""
        return self
