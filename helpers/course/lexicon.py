"""The first offline stand-in's word lexicon, kept for the written-memory rules of lesson 09
(``helpers.course.written_rules``): synonym groups (``CONCEPTS``), stop words, light English stemming
and Korean particle stripping. ``tokenize(text)``: the content words of ``text`` as ``Token``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from helpers.kinds import HANGUL_SYLLABLES

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

KO_SHORT_STEM_OK = set("은 는 이 가 을 를 에 의 도 로 와 과 만".split())  # "집은" -> "집"

_HANGUL = re.compile(f"[{HANGUL_SYLLABLES}]")

_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|\d+|[가-힣]+")

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
