"""The offline stand-in's rules for written memory (``helpers.written``): what a real model is asked
to do with structured output (``written.model_writer``), done by rule so lesson 09 runs without a key.

- ``extract``: the sentences of a user message that state something about the user (first person,
  not a question, not a request; Korean drops the subject, so a Korean statement with two content
  words counts too).
- ``decide``: NOOP if the fact is already stored word for word; else, among the similar stored facts,
  one *about the same thing* (``same_thing``: a topic of ``TOPICS`` in common and no other person's
  fact; without topics, two content words in common) is UPDATEd, or DELETEd when the new fact takes
  it back ("no longer", "더 이상"); else ADD. A rule, not understanding: it misses changes said in
  other words, and merges facts that share a topic.
"""

from __future__ import annotations

import re
from functools import cache

from helpers.kinds import CHAT_WORDS, HANGUL_SYLLABLES, STOP_WORDS
from helpers.written import ADD, DELETE, NOOP, UPDATE, Decision, Fact

# Words of one topic are about the same thing. English words match by their stem (``_stem``); a
# Korean entry matches a word that starts with it (two syllables or more) or is it (one syllable).
TOPICS = {
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
    # whose fact it is (``PEOPLE``: another person's fact never updates the user's)
    "PET": "pet dog cat puppy kitten hamster parrot rabbit bunny "
    "반려 애완 강아지 개 고양이 햄스터 토끼 앵무새 키우 키워",
    "SISTER": "sister 언니 누나 여동생", "BROTHER": "brother 형 오빠 남동생", "SIBLING": "sibling 동생",
    "MOTHER": "mother mom mum 엄마 어머니", "FATHER": "father dad 아빠 아버지", "PARENT": "parent 부모",
    "SPOUSE": "wife husband spouse partner 아내 남편 부인 와이프",
    "CHILD": "son daughter kid child children 아들 딸 아이 자녀", "FRIEND": "friend 친구",
    "COLLEAGUE": "coworker colleague boss manager 동료 상사 팀장",
    # what kind of thing the fact is about
    "FOOD": "food dish meal cuisine eat dinner lunch breakfast snack 음식 요리 먹 먹고 먹는 먹었 먹어 식사 "
    "메뉴", "DRINK": "drink beverage 음료 마시 마셔", "COLOR": "color colour 색 색깔 색상",
    "MOVIE": "movie film cinema 영화", "BOOK": "book novel author 책 소설 작가",
    "MUSIC": "music song band singer 음악 노래 가수 밴드", "SPORT": "sport 운동 스포츠", "GAME": "game 게임",
    "LANGUAGE": "language 언어", "CAR": "car drive vehicle 차 자동차 운전", "HOBBY": "hobby 취미",
    "SEASON": "season 계절",
}
PEOPLE = {"SISTER", "BROTHER", "SIBLING", "MOTHER", "FATHER", "PARENT", "SPOUSE", "CHILD", "FRIEND"}
NOT_TOPICS = {"LIKE", "NAME"}  # "favourite" alone does not make two facts about one thing

EN_STOP = set(STOP_WORDS) | CHAT_WORDS
KO_STOP = set(
    "저 제 나 내 저희 우리 전 난 당신 너 뭐 무엇 어디 어디서 언제 누구 누가 몇 어떻게 어떤 어느 무슨 왜 뭘 "
    "뭔가 뭔지 뭐였 기억 기억해 기억하 기억나 알아 알고 아는 알려 알려줘 알려주세요 말해 말해줘 말씀 말했 있 "
    "있어 있어요 있나요 있는 있습니다 없 없어요 이 그 저것 이것 그것 것 거 게 요 네 예 아니 아니요 좀 혹시 "
    "정말 진짜 너무 아주 지금 그리고 하지만 그래서 그런데 또 다시 해 해요 했어요 합니다 하고 하는 하세요 "
    "이에요 예요 입니다 이야 안녕 안녕하세요 감사 감사합니다 고마워 고마워요 고맙습니다 반가워 반가워요 "
    "반갑습니다 질문 대답 답 사용자 대화 요약 정보 사실 메시지 기록 관련 다음 이전 주세요 줘 수 때 등 씨 님 "
    "대해 대한 관해 맞아 다 전부 모두 모든".split())
KO_STOP_PREFIXES = ("있", "없", "알겠", "그렇")  # 있어요, 없나요, 알겠습니다, 그렇군요 ...
# Korean particles and endings cut to find a word's stem ("이름은" -> "이름"), longest first; a
# one-syllable stem is kept only before a particle of ``KO_SHORT_STEM_OK`` ("집은" -> "집").
KO_ENDINGS = sorted(
    "에서는 에게서 으로는 이라고 라고 에서 에게 한테 으로 까지 부터 처럼 보다 이랑 이나 이에요 이예요 예요 "
    "에요 입니다 이었어요 였어요 이었다 였다 이야 이다 인가요 인데요 인데 이죠 이고 했었어요 했어요 해요 "
    "합니다 했습니다 하고 하는 하세요 하나요 했나요 하지 해서 아요 어요 나요 까요 습니다 세요 었어요 았어요 "
    "은 는 이 가 을 를 에 의 도 로 와 과 랑 만 요 야 서 고 죠".split(), key=len, reverse=True)
KO_SHORT_STEM_OK = set("은 는 이 가 을 를 에 의 도 로 와 과 만".split())

_HANGUL = re.compile(f"[{HANGUL_SYLLABLES}]")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|\d+|[가-힣]+")
_PHRASES = [  # phrases that name a topic in other words: "38 years old", "I'm a nurse"
    (re.compile(r"\bhow old\b|\byears? old\b", re.I), " age "),
    (re.compile(r"\bI(?:'m|’m| am) (?:a|an) ", re.I), " job "),
]
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|mine)\b|(?:^|\s)(?:저는|제가|제|저도|저한테|저의|"
                           r"나는|내가|내|전|저희)(?=\s|$)", re.I)
_SENTENCE = re.compile(r"(?<=[.!?。])\s+|(?<=요\.)\s*|(?<=다\.)\s*")
_REQUEST = re.compile(r"^\s*(?:please\s+)?(?:can|could|would|will)\s+you\b"
                      r"|^\s*(?:tell|give|show|remind)\s+me\b", re.I)
_TAKEN_BACK = re.compile(r"\b(?:no longer|not any ?more|anymore|stopped|quit)\b|더\s*이상|그만", re.I)


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


def _topic_of_word() -> dict[str, str]:
    """Each word of ``TOPICS`` (English ones stemmed) -> its topic."""
    topic_of = {}
    for topic, words in TOPICS.items():
        for word in words.split():
            topic_of[word if _HANGUL.search(word) else _stem(word)] = topic
    return topic_of


_TOPIC_OF = _topic_of_word()
_KO_PREFIXES = sorted((w for w in _TOPIC_OF if _HANGUL.search(w) and len(w) >= 2), key=len, reverse=True)


def _korean_topic(word: str) -> tuple[str | None, set[str]]:
    """The topic of a Korean word (of the word or of a stem, else of their longest prefix in
    ``TOPICS``) and its forms: the word and its stems without each of ``KO_ENDINGS``."""
    forms = {word}
    for ending in KO_ENDINGS:
        short_ok = len(ending) > 1 or len(word) - len(ending) >= 2 or ending in KO_SHORT_STEM_OK
        if word.endswith(ending) and len(word) > len(ending) and short_ok:
            forms.add(word[: -len(ending)])
    for form in sorted(forms, key=lambda f: (-len(f), f)):
        for key in (form, *_KO_PREFIXES):
            if key in _TOPIC_OF and form.startswith(key):
                return _TOPIC_OF[key], forms
    return None, forms


@cache
def words(text: str) -> tuple[tuple[str, str | None], ...]:
    """``text``'s content words, each ``(word, topic or None)``: no stop words, English stemmed."""
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    found = []
    for raw in _WORD.findall(text):
        if _HANGUL.match(raw):
            topic, forms = _korean_topic(raw)
            if topic or not (raw.startswith(KO_STOP_PREFIXES) or KO_STOP & forms):
                found.append((raw, topic))
            continue
        word = raw.lower().replace("’", "'").split("'")[0]  # "What's" -> "what"
        if word not in EN_STOP and (len(word) >= 2 or word.isdigit()):
            found.append((_stem(word), _TOPIC_OF.get(_stem(word))))
    return tuple(found)


def extract(message: str) -> list[str]:
    """The sentences of ``message`` that state a fact about the user, in order."""
    facts = []
    for sentence in _SENTENCE.split(message):
        sentence = sentence.strip() if sentence else ""
        if not sentence or sentence.endswith("?") or _REQUEST.match(sentence):
            continue
        if _FIRST_PERSON.search(sentence) or (_HANGUL.search(sentence) and len(words(sentence)) >= 2):
            facts.append(sentence)
    return facts


def _about(text: str) -> tuple[set[str], set[str], set[str]]:
    """(topics, people, other content words) of a sentence."""
    found = words(text)
    topics = {topic for _, topic in found if topic}
    plain = {word for word, topic in found if not topic}
    return topics - PEOPLE - NOT_TOPICS, topics & PEOPLE, plain


def same_thing(new: str, stored: str) -> bool:
    """True if the fact ``new`` is about what ``stored`` is about (the rule in the module's docstring)."""
    (topics, people, plain), (old_topics, old_people, old_plain) = _about(new), _about(stored)
    if people != old_people:
        return False
    if topics or old_topics:
        return bool(topics & old_topics)
    return len(plain & old_plain) >= 2


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def decide(fact: str, similar: list[tuple[Fact, float]]) -> Decision:
    """One decision for ``fact`` against ``similar`` (stored facts, most similar first)."""
    for stored, _ in similar:
        if _plain(stored.text) == _plain(fact):
            return Decision(NOOP, fact, stored.id)
    for stored, _ in similar:
        if same_thing(fact, stored.text):
            return Decision(DELETE if _TAKEN_BACK.search(fact) else UPDATE, fact, stored.id)
    return Decision(ADD, fact)
