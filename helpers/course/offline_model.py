"""The offline stand-in chat model: a transparent, rule-based replacement for an LLM.

With no API key the course still runs: ``OfflineChatModel`` answers from the messages it is sent
by plain word matching. It understands nothing, but it shows what memory does: when a fact is in
the prompt it quotes it back; when memory dropped the fact it says it does not know.

Pipeline for one call (the functions named here are public and tested):

1. ``find_evidence(messages)``: cut the user's and system's messages into sentences
   (``split_sentences``); drop questions, instructions, AI turns and ``AI:`` lines.
2. Summary requested (``is_summary_request``)? ``summarize_facts`` lists the first-person facts.
3. Else a question (``is_question``)? Cut it into its questions (``split_question``: "What is my
   name and where do I live?" is two). For each, ``find_answers`` ranks the sentences by ``score``
   (a later sentence that ``corrects`` the best one goes first); quote them or say "I don't know".
   Else acknowledge the statement (greeting a name it introduces)."""

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

from helpers.kinds import normalized
from helpers.tokens import count_text_tokens, count_tokens

MODEL_NAME = "offline-stand-in"

# --- Word lists (general vocabulary, no lesson text) ------------------------------------------
# Synonym groups: words in one group match each other. English words are stemmed; a Korean entry
# matches a word starting with it (2+ syllables) or equal to it (1 syllable).
CONCEPTS = {
    "NAME": "name call nickname 이름 성함 불러 부르 별명",
    "JOB": "job work profession occupation career employer employed company office "
    "직업 일 일하 일해 근무 회사 직장 출근",
    "PLACE": "live home house apartment city town move reside resident stay based located location "
    "address country place neighborhood neighbourhood 살아 살고 살았 살지 살며 삽니 사는 사세 사시 거주 "
    "이사 머물 위치 집 동네 도시 주소 나라 곳",
    "HOMETOWN": "hometown 고향 출신",
    "LIKE": "favorite favourite like love enjoy prefer fan adore 좋아 제일 가장 최애 사랑 즐겨 선호",
    "AGE": "age born birthday 나이 살 생일 태어 연세 세", "ALLERGY": "allergy allergic 알레르기 알러지",
    "STUDY": "study student school university college major class course learn "
    "공부 학교 대학 전공 배우 배워 수업",
    # holders: whose fact it is
    "PET": "pet dog cat puppy kitten hamster parrot rabbit bunny "
    "반려 애완 강아지 개 고양이 햄스터 토끼 앵무새 키우 키워",
    "SISTER": "sister 언니 누나 여동생", "BROTHER": "brother 형 오빠 남동생", "SIBLING": "sibling 동생",
    "MOTHER": "mother mom mum 엄마 어머니", "FATHER": "father dad 아빠 아버지", "PARENT": "parent 부모",
    "SPOUSE": "wife husband spouse partner 아내 남편 부인 와이프",
    "CHILD": "son daughter kid child children 아들 딸 아이 자녀", "FRIEND": "friend 친구",
    "COLLEAGUE": "coworker colleague boss manager 동료 상사 팀장",
    # categories: what kind of thing the fact is about
    "FOOD": "food dish meal cuisine eat dinner lunch breakfast snack 음식 요리 먹 먹고 먹는 먹었 먹어 식사 "
    "메뉴", "DRINK": "drink beverage 음료 마시 마셔", "COLOR": "color colour 색 색깔 색상",
    "MOVIE": "movie film cinema 영화", "BOOK": "book novel author 책 소설 작가",
    "MUSIC": "music song band singer 음악 노래 가수 밴드", "SPORT": "sport 운동 스포츠", "GAME": "game 게임",
    "LANGUAGE": "language 언어", "CAR": "car drive vehicle 차 자동차 운전", "HOBBY": "hobby 취미",
    "SEASON": "season 계절",
}
HOLDERS = set("PET SISTER BROTHER SIBLING MOTHER FATHER PARENT SPOUSE CHILD FRIEND COLLEAGUE".split())
CATEGORIES = set("FOOD DRINK COLOR MOVIE BOOK MUSIC SPORT GAME LANGUAGE CAR HOBBY SEASON".split())
# A narrower group matches its broader one at 0.75 ("my sister" / "my sibling"). HOMETOWN is not
# a kind of PLACE: where I grew up and where I live now are different facts.
BROADER = {"SISTER": "SIBLING", "BROTHER": "SIBLING", "MOTHER": "PARENT", "FATHER": "PARENT"}

EN_STOP = set(
    "a an the is are am was were be been being do does did doing done have has had having i me my mine "
    "myself you your yours yourself we us our ours it its this that these those there here what whats where "
    "when who whom whose which why how of to in on at for from with by about as and or but so if then than "
    "too very really just also any some all can could would will shall should may might must not no yes yeah "
    "ok okay please tell remind say said told know knew remember recall think mention mentioned ask asked "
    "again now still get got thing something anything everything kind sort much many lot well hi hello hey "
    "thanks thank bye goodbye welcome nice meet great good cool awesome sure question answer user assistant "
    "ai human summary summarize conversation memory memories fact facts information info message messages "
    "relevant history context use using only below above following previous earlier round let let's "
    "appreciate sorry glad see understand agree wonder guess mean".split())
KO_STOP = set(
    "저 제 나 내 저희 우리 전 난 당신 너 뭐 무엇 어디 어디서 언제 누구 누가 몇 어떻게 어떤 어느 무슨 왜 뭘 "
    "뭔가 뭔지 뭐였 기억 기억해 기억하 기억나 알아 알고 아는 알려 알려줘 알려주세요 말해 말해줘 말씀 말했 있 "
    "있어 있어요 있나요 있는 있습니다 없 없어요 이 그 저것 이것 그것 것 거 게 요 네 예 아니 아니요 좀 혹시 "
    "정말 진짜 너무 아주 지금 그리고 하지만 그래서 그런데 또 다시 해 해요 했어요 합니다 하고 하는 하세요 "
    "이에요 예요 입니다 이야 안녕 안녕하세요 감사 감사합니다 고마워 고마워요 고맙습니다 반가워 반가워요 "
    "반갑습니다 질문 대답 답 사용자 대화 요약 정보 사실 메시지 기록 관련 다음 이전 주세요 줘 수 때 등 씨 님 "
    "대해 대한 관해 맞아 다 전부 모두 모든".split())
KO_STOP_PREFIXES = ("있", "없", "알겠", "그렇")  # 있어요, 없나요, 알겠습니다, 그렇군요 ...
# Korean particles and endings stripped to find a word's stem ("이름은" -> "이름"), longest first.
KO_ENDINGS = sorted(
    "에서는 에게서 으로는 이라고 라고 에서 에게 한테 으로 까지 부터 처럼 보다 이랑 이나 이에요 이예요 예요 "
    "에요 입니다 이었어요 였어요 이었다 였다 이야 이다 인가요 인데요 인데 이죠 이고 했었어요 했어요 해요 "
    "합니다 했습니다 하고 하는 하세요 하나요 했나요 하지 해서 아요 어요 나요 까요 습니다 세요 었어요 았어요 "
    "은 는 이 가 을 를 에 의 도 로 와 과 랑 만 요 야 서 고 죠".split(), key=len, reverse=True)
_KO_ADJUNCT_PARTICLES = ("랑", "와", "과", "하고", "한테", "에게", "께", "보다", "처럼", "를", "을")
KO_SHORT_STEM_OK = set("은 는 이 가 을 를 에 의 도 로 와 과 만".split())  # "집은" -> "집"
KO_QUESTION_WORDS = set("뭐 무엇 어디 언제 누구 누가 몇 어떻게 어떤 어느 무슨 왜 뭘 뭔가 뭔지".split())
KO_FIRST_PERSON = ("저희", "우리", "저", "제", "나", "내")
KO_FIRST_PERSON_PARTICLES = {""} | set("는 가 를 도 의 에 에게 한테 와 랑 만 로 게".split())
EN_FIRST_PERSON = set("i me my mine myself we us our ours".split())
EN_QUESTION_START = set("what where when who whom whose which why how do does did is are am was were can "
                        "could would will should have has".split())

EN_TEXT = {
    "quote": 'You told me: "{}"', "earlier": 'Earlier you said: "{}"', "also": 'You also said: "{}"',
    "unknown": "I don't know: nothing in the messages I was sent says that.", "ack": "Got it.",
    "greet": "Nice to meet you, {}!", "heading": "Facts the user stated:", "no_facts": "No facts stated yet.",
}
KO_TEXT = {
    "quote": '전에 이렇게 말씀하셨어요: "{}"', "earlier": '그 전에는 이렇게 말씀하셨어요: "{}"',
    "also": '이렇게도 말씀하셨어요: "{}"', "unknown": "모르겠어요. 제가 받은 메시지에는 그 정보가 없어요.",
    "ack": "알겠어요.", "greet": "반가워요, {} 님!", "heading": "사용자가 말한 사실:",
    "no_facts": "아직 말한 사실이 없어요.",
}
_PLACEHOLDERS = {EN_TEXT["no_facts"], KO_TEXT["no_facts"]}

_HANGUL = re.compile(r"[가-힣]")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|\d+|[가-힣]+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?。？！])\s+|(?<=[?？])(?=[가-힣A-Za-z])")
_ABBREVIATIONS = ("Mr.", "Mrs.", "Ms.", "Dr.", "St.", "e.g.", "i.e.")
_XML_MESSAGE = re.compile(r'<message type="(\w+)">(.*?)</message>', re.S)
_ROLE_PREFIX = re.compile(  # "User:", "AI:", and a named line's role: "Marta (assistant):"
    r"^(?:[^\s:()][^:()\n]{0,40} \()?(human|user|ai|assistant|system|사용자|어시스턴트)\)?\s*:\s*", re.I)
_ROLES = {"human": "human", "user": "human", "사용자": "human", "system": "system"}
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")
_TAGS = re.compile(r"^\s*(?:\[[^\]]{0,40}\]\s*)+")  # leading tags: "[round 3] [session-2] ..."
_SUMMARY_REQUEST = re.compile(
    r"\bsummari[sz](?:e|ing)\b|\bsum up\b|\brecap\b|\bnew summary\s*:"
    r"|\b(?:write|give|make|create|produce|update|extend|provide|return|prepare|generate)\b"
    r"[^.?!\n]{0,40}\bsummary\b|요약\s*(?:해|하|을|좀|부탁)|정리해\s*(?:줘|주세요|줄래)", re.I)
_ABOUT_CONVERSATION = re.compile(
    r"\b(?:conversation|chat|discussion|messages?|history|transcript|so far|above|below"
    r"|we (?:talked|discussed|said)|I (?:said|told|mentioned))\b|대화|이야기|메시지|지금까지|내용", re.I)
_PHRASES = [  # multi-word phrases that mean one concept
    (re.compile(r"\bfor a living\b", re.I), " job "),
    (re.compile(r"\b(?:am|are|is|was|were|'m|come|comes|came|originally)\s+from\b", re.I), " hometown "),
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
# A request, not a fact about the user: "Give me three ideas", "Tell me a joke", "Can you ...".
_REQUEST = re.compile(
    r"\s*(?:please\s+)?(?:give|tell|show|send|recommend|suggest|help|explain|write|make|find|"
    r"remind|summari[sz]e|translate|list|describe|teach|let)\b(?!\s+(?:is|are|was)\b)"
    r"|\s*(?:can|could|would|will)\s+you\b", re.I)
_EN_NAME = [
    re.compile(r"\b(?i:my name is|my name's|call me|i go by)\s+([A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)"),
    re.compile(r"\b(?:I'm|I am|I’m)\s+([A-Z][a-z][\w'-]*)")]
_KO_NAME = [re.compile(r"(?:제|내|저의|나의)\s*이름은\s*([가-힣A-Za-z]+)"),
            re.compile(r"(?:저는|나는|전|난)\s+([가-힣]{1,5}?)(?:입니다|이에요|예요|이야|야|"
                       r"이라고\s*(?:합니다|해요)|라고\s*(?:합니다|해요))(?=[\s.!?,~]|$)"),
            re.compile(r"(?:^|\s)([가-힣]{1,5}?)(?:이)?라고\s*(?:합니다|해요|불러)")]
_APPOSITIVE = re.compile(r"\b(?:[Mm]y|[Oo]ur)\s+(?:[a-z]+\s+)?([a-z]+),?\s+[A-Z][a-z]+")
_NOT_A_NAME = re.compile(  # "I'm Korean": nationalities and beliefs are not names
    r"\w+(?:ese|ish)|American|Korean|Canadian|Mexican|French|German|Italian|Indian|Australian|"
    r"Brazilian|Russian|Dutch|Greek|Thai|Swiss|Vietnamese|Filipino|Catholic|Muslim|Christian|"
    r"Buddhist|Hindu|Vegan|Vegetarian")
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


_EN_CONCEPT = {_stem(w): c for c, ws in CONCEPTS.items() for w in ws.split() if not _HANGUL.search(w)}
_KO_CONCEPT = {w: c for c, ws in CONCEPTS.items() for w in ws.split() if _HANGUL.search(w)}
_KO_PREFIXES = sorted((w for w in _KO_CONCEPT if len(w) >= 2), key=len, reverse=True)


@dataclass(frozen=True)
class Token:
    """One content word: ``forms`` (an English stem, or a Korean word with and without particles:
    "이름은", "이름"), ``concept`` (a key of ``CONCEPTS`` or ``None``), ``hangul`` (Korean)."""

    forms: tuple[str, ...]
    concept: str | None
    hangul: bool


@dataclass(frozen=True)
class Statement:
    """One sentence the model was sent. ``role``: "human" (the user's), "system" (e.g. a summary,
    memories) or "context" (text around a transcript); ``position``: input order; ``bullet``: list item."""

    text: str
    role: str
    position: int
    bullet: bool = False


# Not kinds.language_of: that one wants Hangul >= 20% of all letters; here >= 25% of Hangul + Latin.
def detect_language(text: str) -> str:
    """Return "ko" when ``text`` is mostly Hangul (syllables count 3x Latin letters), else "en"."""
    hangul = len(_HANGUL.findall(text))
    return "ko" if hangul and hangul * 3 >= len(re.findall(r"[A-Za-z]", text)) else "en"


# Not kinds.split_sentences: that one ignores line breaks and cuts after every . ! ? ("Dr.", "3.5").
def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped: cut at line breaks and at . ! ? + space, not after "Dr."."""
    sentences: list[str] = []
    for line in text.splitlines():
        pieces: list[str] = []
        for piece in (p.strip() for p in _SENTENCE_BREAK.split(line.strip())):
            if pieces and pieces[-1].endswith(_ABBREVIATIONS):
                pieces[-1] += " " + piece
            elif piece:
                pieces.append(piece)
        sentences += pieces
    return sentences


def _korean_forms(word: str) -> list[str]:
    """``word`` and its stems without each of its ``KO_ENDINGS`` (see KO_SHORT_STEM_OK), longest first."""
    forms = {word} | {word[: -len(e)] for e in KO_ENDINGS if word.endswith(e) and len(word) > len(e)
                      and (len(e) > 1 or len(word) - len(e) >= 2 or e in KO_SHORT_STEM_OK)}
    return sorted(forms, key=lambda f: (-len(f), f))


def _en_word(raw: str) -> str:
    return raw.lower().replace("’", "'").split("'")[0]  # "What's" -> "what"


@lru_cache(maxsize=4096)
def tokenize(text: str) -> tuple[Token, ...]:
    """``text``'s content words as ``Token``: no stopwords, English stemmed, Korean particles cut."""
    if introduced_name(text) or any(_EN_CONCEPT.get(_stem(w)) in HOLDERS for w in _APPOSITIVE.findall(text)):
        text += " name"  # "I'm Ann", "민수라고 해요", "my cat, Miso" state a name
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    tokens = []
    for raw in _WORD.findall(text):
        if _HANGUL.match(raw):
            forms = _korean_forms(raw)
            concept = next((_KO_CONCEPT[k] for f in forms for k in (f, *_KO_PREFIXES)  # the form, or
                            if k in _KO_CONCEPT and f.startswith(k)), None)  # its longest prefix
            if concept or not (raw.startswith(KO_STOP_PREFIXES) or KO_STOP & set(forms)):
                tokens.append(Token(tuple(forms), concept, True))
        elif (word := _en_word(raw)) not in EN_STOP and (len(word) >= 2 or word.isdigit()):
            tokens.append(Token((_stem(word),), _EN_CONCEPT.get(_stem(word)), False))
    return tuple(tokens)


# Not kinds.speaks_of_self: that one drops quotes and helper talk ("I can help") and misses 제 / 내 / 난.
def has_first_person(text: str) -> bool:
    """True if ``text`` says I / my / we ... or 저 / 제 / 나 / 내 / 저희 / 우리 (with a particle)."""
    return any(_en_word(raw) in EN_FIRST_PERSON or raw in ("전", "난", "날", "절") or any(
        raw.startswith(fp) and raw[len(fp):] in KO_FIRST_PERSON_PARTICLES for fp in KO_FIRST_PERSON
    ) for raw in _WORD.findall(text))


def is_question(sentence: str) -> bool:
    """True if ``sentence`` asks something: it ends with "?", starts with "tell me"/"remind me",
    starts with a wh-word or auxiliary and has no final "." or "!", or (Korean) asks 알려/말해 or
    has no final "." or "!" and a question word (뭐, 어디 ...) or ending (까, 나요)."""
    text = sentence.strip()
    if text.endswith(("?", "？")) or re.match(r"(?i)(tell|remind) me\b", text):
        return True
    words = _WORD.findall(text)
    if not words:
        return False
    if detect_language(text) == "en":
        return not text.endswith((".", "!")) and _en_word(words[0]) in EN_QUESTION_START
    return bool(re.search(r"(알려|말해)\s*(줘|주세요|줄래|주실)", text)) or (
        not text.endswith((".", "!")) and (words[-1].endswith(("까", "나요", "냐", "인가요")) or any(
            form in KO_QUESTION_WORDS for w in words if _HANGUL.match(w) for form in _korean_forms(w))))


def is_summary_request(text: str) -> bool:
    """True if ``text`` asks for a summary of this conversation (summarize / sum up / 요약해 ...
    with conversation, so far, 대화 ..., or bare: "Summarize, please."). A summary merely provided
    ("대화 요약:") or one of something else ("Summarise the plot of Hamlet") is not."""
    return bool(_SUMMARY_REQUEST.search(text)) and (
        bool(_ABOUT_CONVERSATION.search(text)) or len(tokenize(_SUMMARY_REQUEST.sub(" ", text))) <= 1)


def _message_role(message: BaseMessage) -> str:
    return _ROLES.get(str(getattr(message, "role", None) or message.type).lower(), "ai")  # ChatMessage.role


def _message_text(message: BaseMessage) -> str:  # str content, or its text blocks
    if isinstance(message.content, str):
        return message.content
    return "\n".join(b if isinstance(b, str) else str(b.get("text", "")) for b in message.content
                     if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text"))


def _strip_markers(line: str) -> tuple[str, bool]:
    bullet = bool(_BULLET.match(line))
    return _TAGS.sub("", _BULLET.sub("", line)).strip(), bullet


def _role_lines(text: str, default_role: str) -> list[tuple[str, str, bool]]:
    """(role, line, bullet) for every line; "Human:"/"AI:" prefixes and <message> blocks set the
    role, lines after a prefix keep it until a blank line."""
    if _XML_MESSAGE.search(text):
        parts, start = [], 0
        for match in _XML_MESSAGE.finditer(text):
            parts += _role_lines(text[start : match.start()], "context")
            parts += _role_lines(unescape(match.group(2)), _ROLES.get(match.group(1).lower(), "ai"))
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
    """Every sentence the user (or a system message) stated, as ``Statement`` in input order; AI and
    tool messages, "AI:" lines, questions, summary requests and headings (ending ":") left out."""
    statements: list[Statement] = []
    for message in (m for m in messages if _message_role(m) != "ai"):
        for role, line, bullet in _role_lines(_message_text(message), _message_role(message)):
            for sentence in split_sentences(line) if role != "ai" else []:
                if not (is_question(sentence) or is_summary_request(sentence)
                        or sentence.endswith((":", "："))):  # a heading
                    statements.append(Statement(sentence, role, len(statements), bullet))
    return statements


def _kin(a: str, b: str) -> bool:
    """Same group, or one is a kind of the other ("SISTER" and "SIBLING")."""
    return a == b or BROADER.get(a) == b or BROADER.get(b) == a


def _token_match(q: Token, s: Token) -> float:
    """1.0 same word or synonym group, 0.75 related group or Korean word inside another."""
    if q.concept or s.concept:  # a word in a synonym group matches only that group or a related one
        related = q.concept and s.concept and _kin(q.concept, s.concept)
        return 1.0 if q.concept == s.concept else 0.75 if related else 0.0
    if set(q.forms) & set(s.forms):
        return 1.0
    hangul = q.hangul and s.hangul
    return 0.75 if hangul and any(min(len(a), len(b)) >= 2 and (a in b or b in a)
                                  for a in q.forms for b in s.forms) else 0.0  # "동생" in "여동생"


def _score_clause(question: tuple[Token, ...], clause: tuple[Token, ...]) -> float:
    q_holders, s_holders = ({t.concept for t in x if t.concept in HOLDERS} for x in (question, clause))
    if any(not any(_kin(h, s) for s in s_holders) for h in q_holders):
        return 0.0  # asks about my sister, the sentence is not about her
    q_cats, s_cats = ({t.concept for t in x if t.concept in CATEGORIES} for x in (question, clause))
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
    if any(t.concept in HOLDERS and not (t.hangul and t.forms[0].endswith(_KO_ADJUNCT_PARTICLES))
           and not any(_kin(t.concept, h) for h in q_holders)  # 고양이랑 / 언니한테 is not the subject
           for t in clause[:first_hit]):
        coverage *= 0.4  # "My sister is called ..." does not answer "What is my name?"
    return round(coverage, 6)


def score(question: str, statement: str) -> float:
    """How well ``statement`` answers ``question`` (0-1): the share of the question's content words
    (or synonyms) in it, best of the whole sentence and its clauses (``_score_clause`` has the rules)."""
    q_tokens = tuple(_distinct(tokenize(question), lambda t: t.concept or t.forms))
    if not q_tokens:
        return 0.0
    pieces = [statement] + [p for p in _CLAUSE_BREAK.split(statement) if p and p.strip()]
    return max(_score_clause(q_tokens, tokenize(piece)) for piece in pieces)


def is_fact(statement: Statement) -> bool:
    """True if ``statement`` is worth keeping in a summary: a content word, in the first person.
    Korean drops the subject ("부산에 살아요"), so a Korean user sentence or list item with two
    content words counts too (one alone is usually "좋아요"-like filler)."""
    tokens = tokenize(statement.text)
    if statement.text in _PLACEHOLDERS or not tokens or _REQUEST.match(statement.text):
        return False
    return has_first_person(statement.text) or (detect_language(statement.text) == "ko" and len(tokens) >= 2
                                                and (statement.role == "human" or statement.bullet))


def summarize_facts(statements: Sequence[Statement], max_facts: int = 60, language: str = "en") -> str:
    """An extractive summary, "Facts the user stated:\\n- ..." (Korean heading for Korean;
    ``language`` if no statement shows it): the ``max_facts`` latest ``is_fact`` statements, each
    once at its latest position (a changed fact follows the old one), oldest first. An earlier
    summary's bullets are statements too, so it keeps them. ValueError if ``max_facts`` < 1."""
    if max_facts < 1:
        raise ValueError(f"max_facts must be at least 1, got {max_facts}")
    newest_first = [s for s in statements if is_fact(s)][::-1]  # so each fact is kept at its latest
    facts = [s.text for s in _distinct(newest_first, lambda s: normalized(s.text).rstrip(" .!"))]
    facts = facts[::-1][-max_facts:]
    sample = " ".join(facts) or " ".join(s.text for s in statements if s.role == "human")
    text = KO_TEXT if (detect_language(sample) if sample else language) == "ko" else EN_TEXT
    return text["heading"] + ("".join(f"\n- {fact}" for fact in facts) if facts else f"\n{text['no_facts']}")


def split_question(question: str) -> list[str]:
    """The questions in ``question``: its question sentences, cut at "and" / 그리고 / "-지랑" where
    each part asks something ("What is my name and where do I live?" is two)."""
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
    """True if ``statement`` corrects ``earlier``: it says "actually", ", not ...", "아니라" ... and is
    ``on_topic``, or it negates a word of ``earlier`` ("Bea, not Ann." corrects "My name is Ann.")."""
    negated = {word for found in _NEGATED.findall(statement) for word in found
               if word and word.lower() not in EN_STOP | KO_STOP}
    return (on_topic and bool(_CORRECTION.search(statement))) or any(
        re.search(rf"(?<!\w){re.escape(word)}", earlier, re.I) for word in negated)


def find_answers(question: str, evidence: Sequence[Statement], max_quotes: int = 3,
                 min_overlap: float = 0.5) -> list[Statement]:
    """The statements answering ``question`` (one question), in quoting order: the best ``score``
    (latest on ties), then others scoring at least 80% of it, at most ``max_quotes``; none if the
    best is below ``min_overlap``. A later statement that ``corrects`` the best one goes first."""
    ranked = sorted(((score(question, s.text), s) for s in evidence), key=lambda p: (-p[0], -p[1].position))
    if not ranked or ranked[0][0] < min_overlap:
        return []
    best_score, best = ranked[0]
    found = [s for value, s in ranked if value >= max(min_overlap, 0.8 * best_score)]
    corrections = [s for value, s in ranked
                   if s.position > best.position and corrects(s.text, best.text, value >= min_overlap)]
    if corrections:
        found.insert(0, max(corrections, key=lambda s: s.position))
    return _distinct(found)[:max_quotes]


def _distinct(items: Sequence[Any], key: Any = lambda s: s.text) -> list[Any]:
    """``items`` in order with each ``key(item)`` once (its first occurrence kept)."""
    first: dict[Any, Any] = {}
    for item in items:
        first.setdefault(key(item), item)
    return list(first.values())


def answer_question(question: str, evidence: Sequence[Statement], max_quotes: int = 3,
                    min_overlap: float = 0.5, language: str | None = None) -> str:
    """Answer each question in ``question`` (``split_question``) by quoting its ``find_answers``
    ("You told me: ...", then "Earlier you said: ..." / "You also said: ..."), or "I don't know"
    (said once). Hangul in ``question`` makes the reply Korean (``language``, if given, decides)."""
    text = KO_TEXT if (language or detect_language(question)) == "ko" else EN_TEXT
    replies, quoted = [], set()
    for part in split_question(question):
        if tokenize(part):
            found = find_answers(part, evidence, max_quotes, min_overlap)
        else:  # "Who am I?", "What do you know about me?": the user's name, then the latest facts
            facts = [s for s in evidence if is_fact(s)] if has_first_person(part) else []
            found = _distinct(find_answers("name", facts, max_quotes=1) + facts[::-1])[:max_quotes]
        fresh = [s for s in found if s.text not in quoted]
        if found and not fresh:
            continue  # an earlier part of the question already quoted these
        quoted.update(s.text for s in fresh)
        replies.append(" ".join([text["quote"].format(fresh[0].text)] + [
            text["earlier" if s.position < fresh[0].position else "also"].format(s.text) for s in fresh[1:]
        ]) if fresh else text["unknown"])
    return " ".join(dict.fromkeys(replies))


def introduced_name(text: str) -> str | None:
    """The name ``text`` introduces ("My name is Ann", "I'm Ann", "call me Ann", "제 이름은 민수예요",
    "저는 민수입니다", "민수라고 해요"), or ``None``. "I'm X" counts only when X is capitalized;
    Korean words ending like an occupation (학생, 의사) are not names."""
    for pattern in _EN_NAME:
        match = pattern.search(text)
        if match and not _NOT_A_NAME.fullmatch(match.group(1)):
            return match.group(1)[0].upper() + match.group(1)[1:]
    for match in filter(None, (pattern.search(text) for pattern in _KO_NAME)):
        name = match.group(1)
        ending = next((e for e in _KO_COPULA if name.endswith(e) and len(name) > len(e)), "")
        name = name[: len(name) - len(ending)]
        if not name.endswith(("사", "생", "사람")):
            return name
    return None


_MEMORY_BLOCK = re.compile(r"<memory\b[^>]*>.*?(?:</memory>|\Z)", re.S | re.I)
_REPLY_LANGUAGE = re.compile(
    r"\b(?:reply|respond|answer|speak|write|talk)\b[^.!?\n]{0,30}?\bin\s+(korean|english)\b"
    r"|(한국어|영어)로만?\s*(?:답|대답|말|써)", re.I)


def instructed_language(messages: Sequence[BaseMessage]) -> str | None:
    """The answer language an instruction asks for ("reply only in Korean", "영어로만 답해"): ``"ko"``,
    ``"en"`` or ``None``, the latest instruction winning. Read only from system messages and the user's
    messages *outside* ``<memory ...>`` blocks: a memory is evidence, never an instruction (a minimal
    rule until the stand-in's own reading of memory blocks lands)."""
    found = None
    for message in messages:
        if _message_role(message) in ("system", "human"):
            for match in _REPLY_LANGUAGE.finditer(_MEMORY_BLOCK.sub(" ", _message_text(message))):
                found = "ko" if (match.group(1) or match.group(2)).lower() in ("korean", "한국어") else "en"
    return found


def respond(messages: Sequence[BaseMessage], max_summary_facts: int = 60, max_quotes: int = 3,
            min_overlap: float = 0.5) -> str:
    """The reply to ``messages`` (the last human message is the request): a summary, an answer or
    an acknowledgement, from ``messages`` only. Parameters as in ``summarize_facts``, ``find_answers``."""
    evidence = find_evidence(messages)
    last = next((_message_text(m) for m in reversed(messages) if _message_role(m) == "human"), "")
    lines = _role_lines(last, "human")
    # A summary is asked for by the last human message, or by a system message if that asks nothing.
    asks = any(is_question(s) for role, line, _ in lines if role != "ai" for s in split_sentences(line))
    system_asks = any(_message_role(m) == "system" and is_summary_request(_message_text(m)) for m in messages)
    if is_summary_request(last) or (not asks and system_asks):
        request = " ".join(_message_text(m) for m in messages if _message_role(m) != "ai")
        return summarize_facts(evidence, max_summary_facts, detect_language(request))
    # The user's new words: when the last human message quotes history ("User: ..." lines), only
    # the lines outside it (an old question there is not asked now, an old name not greeted).
    quoted = any(role == "context" for role, _, _ in lines)
    own = [line for role, line, _ in lines if not quoted or role == "context"]
    asking = [line for line in own if any(is_question(s) for s in split_sentences(line))]
    language = instructed_language(messages)
    if asking:  # the last line that asks something: "What's my name? And where do I live?"
        return answer_question(asking[-1], evidence, max_quotes, min_overlap, language)
    said = " ".join(line.removeprefix("Question:") for line in own if not line.endswith(":"))  # no headers
    text = KO_TEXT if (language or detect_language(said)) == "ko" else EN_TEXT
    name = introduced_name(said)
    return text["greet"].format(name) if name else text["ack"]


class OfflineChatModel(BaseChatModel):
    """Offline stand-in: a transparent, rule-based program, NOT a language model. No network, no
    key, no state between calls; it answers only from the messages it is sent (``respond``)."""

    max_summary_facts: int = 60  # a summary keeps at most this many facts (the most recent)
    max_quotes: int = 3  # an answer quotes at most this many sentences
    min_overlap: float = 0.5  # share (0-1) of the question's words a sentence needs to answer it

    @property
    def _llm_type(self) -> str:
        return MODEL_NAME

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": MODEL_NAME, "max_summary_facts": self.max_summary_facts,
                "max_quotes": self.max_quotes, "min_overlap": self.min_overlap}

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        text = respond(messages, self.max_summary_facts, self.max_quotes, self.min_overlap)
        for marker in stop or []:
            text = text.split(marker)[0] if marker else text
        n_in, n_out = count_tokens(messages), count_text_tokens(text)
        usage = {"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out}
        message = AIMessage(content=text, usage_metadata=usage, response_metadata={"model_name": MODEL_NAME})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineChatModel:
        """Accept tools so ``create_agent`` works; this model never calls them. Returns self."""
        return self
