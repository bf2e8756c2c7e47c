"""Generate the long evaluation conversation (lesson 08) from a seed.

    python scripts/make_long_conversation.py                 # writes data/evaluation/long_conversation.json
    python scripts/make_long_conversation.py --lang ko       # the Korean twin, ..._ko.json
    python scripts/make_long_conversation.py --seed 11 --turns 400 --out /tmp/other.json
    python scripts/make_long_conversation.py --check         # exit 1 if a committed file differs

The conversation: one user over several sessions. The user states facts about themselves (each
fact once, spread over the first sessions), changes some of them later (a move, a new job, ...),
chats about other things in between (filler turns that state no fact), and asks probe questions
whose answers are in earlier turns. Each probe lists the ids of its evidence turns and the words
that must reach the model for it to be answerable. The format is documented in data/README.md.
Same seed, same file.

``--lang ko`` writes the Korean twin: the same facts, fillers and probes at the same turns (every
Korean value list has as many entries, in the same order, as the English one, so the same seed makes
the same choices), written as natural Korean sentences ("제 이름은 민수예요.", "제 이름이 뭐였죠?")
with the particles fitted to each value (이에요/예요, 을/를, 으로/로).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

# key: (statement, question, values, change statement or None)
FACTS = {
    "name": ("My name is {v}.", "What is my name?",
             ["Jordan", "Priya", "Mateo", "Lena", "Tomasz", "Aiko", "Noor", "Elias"], None),
    "job": ("I work as a {v}.", "What do I do for work?",
            ["nurse", "civil engineer", "baker", "librarian", "pilot", "pharmacist"],
            "I changed jobs: I now work as a {v}."),
    "city": ("I live in {v}.", "Where do I live?",
             ["Lisbon", "Oslo", "Toronto", "Kyoto", "Dublin", "Santiago", "Tallinn"],
             "Big change: I just moved to {v}."),
    "dog": ("I have a dog named {v}.", "What is my dog's name?",
            ["Biscuit", "Pepper", "Mango", "Rolo", "Juniper"], None),
    "sister": ("My sister is called {v}.", "What is my sister's name?",
               ["Clara", "Ingrid", "Yara", "Sofia", "Mei"], None),
    "food": ("My favourite food is {v}.", "What is my favourite food?",
             ["ramen", "paella", "dumplings", "lasagne", "falafel", "pho"],
             "These days my favourite food is {v}."),
    "allergy": ("I'm allergic to {v}.", "What am I allergic to?",
                ["peanuts", "shellfish", "penicillin", "pollen", "cats"], None),
    "colour": ("My favourite colour is {v}.", "What is my favourite colour?",
               ["teal", "mustard yellow", "burgundy", "forest green", "lilac"], None),
    "car": ("I drive a {v}.", "What car do I drive?",
            ["Fiat Panda", "Volvo estate", "Toyota Yaris", "Skoda Octavia", "Renault Zoe"],
            "I sold my old car and now drive a {v}."),
    "hometown": ("I grew up in {v}.", "Where did I grow up?",
                 ["Porto", "Bergen", "Cork", "Gdansk", "Valparaiso", "Nara"], None),
    "birthday": ("My birthday is in {v}.", "When is my birthday?",
                 ["March", "July", "October", "December", "February"], None),
    "language": ("I'm learning {v} in the evenings.", "Which language am I learning?",
                 ["Korean", "Portuguese", "Finnish", "Arabic", "Japanese"], None),
    "instrument": ("I play the {v}.", "Which instrument do I play?",
                   ["cello", "trumpet", "ukulele", "piano", "drums"], None),
    "sport": ("On weekends I play {v}.", "Which sport do I play?",
              ["volleyball", "badminton", "rugby", "table tennis", "padel"], None),
    "book": ("My favourite book is {v}.", "What is my favourite book?",
             ["Dune", "Middlemarch", "The Hobbit", "Beloved", "Solaris"], None),
    "partner": ("My partner's name is {v}.", "What is my partner's name?",
                ["Samir", "Hannah", "Diego", "Freya", "Kenji"], None),
    "coffee": ("I take my coffee {v}.", "How do I take my coffee?",
               ["black", "with oat milk", "with two sugars", "as a flat white"], None),
    "phone": ("My phone is a {v}.", "What phone do I have?",
              ["Pixel", "Fairphone", "iPhone", "Galaxy"], None),
    "band": ("My favourite band is {v}.", "What is my favourite band?",
             ["Radiohead", "ABBA", "Khruangbin", "Daft Punk", "Fleetwood Mac"], None),
    "trip": ("Next summer I'm travelling to {v}.", "Where am I travelling next summer?",
             ["Iceland", "Vietnam", "Morocco", "Peru", "New Zealand"],
             "Change of plan: next summer I'm travelling to {v} instead."),
    "gym": ("I go to the gym on {v}.", "Which day do I go to the gym?",
            ["Mondays", "Wednesdays", "Saturdays", "Thursdays"], None),
    "code": ("My favourite programming language is {v}.",
             "What is my favourite programming language?",
             ["Python", "Rust", "Haskell", "Go", "Kotlin"], None),
    "team": ("I support {v} in football.", "Which football team do I support?",
             ["Benfica", "Celtic", "Ajax", "Boca Juniors", "Napoli"], None),
    "diet": ("I follow a {v} diet.", "What diet do I follow?",
             ["vegetarian", "pescatarian", "vegan", "low-sodium"], None),
    "plant": ("I keep a {v} on my desk.", "What plant is on my desk?",
              ["cactus", "bonsai", "fern", "monstera"], None),
    "brother": ("My brother works as a {v}.", "What does my brother do?",
                ["firefighter", "dentist", "carpenter", "journalist"], None),
    "age": ("I am {v} years old.", "How old am I?", ["29", "34", "41", "52", "38"], None),
    "bike": ("I ride a {v} to the office.", "What bike do I ride?",
             ["folding Brompton", "red road bike", "cargo bike", "fixie"], None),
    "film": ("My favourite film is {v}.", "What is my favourite film?",
             ["Spirited Away", "Casablanca", "Amelie", "Parasite", "Arrival"], None),
    "mother": ("My mother lives in {v}.", "Where does my mother live?",
               ["Seville", "Aarhus", "Lyon", "Krakow", "Busan"], None),
    "hobby": ("My hobby is {v}.", "What is my hobby?",
              ["pottery", "birdwatching", "rock climbing", "knitting", "astronomy"], None),
    "floor": ("My flat is on the {v} floor.", "Which floor is my flat on?",
              ["third", "seventh", "second", "eleventh"], None),
    "shoe": ("My shoe size is {v}.", "What is my shoe size?", ["38", "42", "44", "40"], None),
    "podcast": ("My favourite podcast is {v}.", "What is my favourite podcast?",
                ["Radiolab", "99% Invisible", "Hardcore History", "Planet Money"], None),
}

# Turns that state no fact about the user: requests and chit-chat.
FILLER = [
    "Can you suggest a quick recipe for dinner tonight?",
    "Tell me a fun fact about octopuses.",
    "How do I center a div in CSS?",
    "What is a good way to learn touch typing?",
    "Explain the difference between weather and climate.",
    "Give me three ideas for a rainy afternoon.",
    "How long should pasta rest after cooking?",
    "What does a product manager usually do?",
    "Recommend a board game for four players.",
    "Why is the sky blue?",
    "Summarise the plot of Hamlet in two sentences.",
    "How do solar panels work?",
    "Thanks, that is helpful.",
    "Interesting, go on.",
    "Can you write a haiku about autumn?",
    "What is the capital of Australia?",
    "How many minutes should a soft-boiled egg cook?",
    "What are good stretches after running?",
    "Explain recursion with a simple example.",
    "Which houseplants need little light?",
    "How do I make cold brew coffee?",
    "What is the difference between a list and a tuple in Python?",
    "Give me a tip for public speaking.",
    "What causes jet lag?",
    "Tell me a joke about computers.",
    "How do vaccines train the immune system?",
    "What is a good name for a sourdough starter?",
    "Suggest a podcast episode about space.",
    "What should be in a basic first-aid kit?",
    "How does compound interest work?",
    "Okay, makes sense.",
    "What is the tallest mountain in Africa?",
    "How do I remove a coffee stain from a shirt?",
    "Can you explain what an API is?",
    "Give me a packing list for a weekend hike.",
    "What is the best way to store fresh herbs?",
]


# The Korean twin: same keys, same number of values in the same order as FACTS (so one seed makes
# the same choices). {은} {이} {을} {이에요} {으로} are particles fitted to the value (see _josa).
KO_FACTS = {
    "name": ("제 이름은 {v}{이에요}.", "제 이름이 뭐였죠?",
             ["민수", "지영", "서준", "하은", "도윤", "수아", "현우", "유진"], None),
    "job": ("저는 {v}{으로} 일해요.", "제 직업이 뭐예요?",
            ["간호사", "토목 기술자", "제빵사", "사서", "조종사", "약사"],
            "저 이직했어요. 이제 {v}{으로} 일해요."),
    "city": ("저는 {v}에 살아요.", "제가 어디에 살아요?",
             ["리스본", "오슬로", "토론토", "교토", "더블린", "산티아고", "탈린"],
             "큰 변화가 있어요. 얼마 전에 {v}{으로} 이사했어요."),
    "dog": ("제 강아지 이름은 {v}{이에요}.", "제 강아지 이름이 뭐예요?",
            ["초코", "보리", "망고", "콩이", "두부"], None),
    "sister": ("제 여동생 이름은 {v}{이에요}.", "제 여동생 이름이 뭐예요?",
               ["지수", "은지", "하나", "소연", "미나"], None),
    "food": ("제가 제일 좋아하는 음식은 {v}{이에요}.", "제가 제일 좋아하는 음식이 뭐예요?",
             ["라멘", "파에야", "만두", "라자냐", "팔라펠", "쌀국수"],
             "요즘 제가 제일 좋아하는 음식은 {v}{이에요}."),
    "allergy": ("저는 {v} 알레르기가 있어요.", "제가 무슨 알레르기가 있죠?",
                ["땅콩", "갑각류", "페니실린", "꽃가루", "고양이"], None),
    "colour": ("제가 좋아하는 색은 {v}{이에요}.", "제가 좋아하는 색이 뭐예요?",
               ["청록색", "겨자색", "버건디", "진초록색", "연보라색"], None),
    "car": ("저는 {v}{을} 타요.", "제가 무슨 차를 타요?",
            ["피아트 판다", "볼보 왜건", "토요타 야리스", "스코다 옥타비아", "르노 조에"],
            "예전 차를 팔고 이제 {v}{을} 타요."),
    "hometown": ("제 고향은 {v}{이에요}.", "제 고향이 어디예요?",
                 ["포르투", "베르겐", "코크", "그단스크", "발파라이소", "나라"], None),
    "birthday": ("제 생일은 {v}{이에요}.", "제 생일이 언제예요?",
                 ["3월", "7월", "10월", "12월", "2월"], None),
    "language": ("저는 저녁마다 {v}{을} 배우고 있어요.", "제가 무슨 언어를 배우고 있죠?",
                 ["한국어", "포르투갈어", "핀란드어", "아랍어", "일본어"], None),
    "instrument": ("저는 {v}{을} 연주해요.", "제가 무슨 악기를 연주해요?",
                   ["첼로", "트럼펫", "우쿨렐레", "피아노", "드럼"], None),
    "sport": ("제가 주말마다 하는 운동은 {v}{이에요}.", "제가 무슨 운동을 해요?",
              ["배구", "배드민턴", "럭비", "탁구", "파델"], None),
    "book": ("제가 제일 좋아하는 책은 {v}{이에요}.", "제가 제일 좋아하는 책이 뭐예요?",
             ["듄", "미들마치", "호빗", "빌러비드", "솔라리스"], None),
    "partner": ("제 애인 이름은 {v}{이에요}.", "제 애인 이름이 뭐예요?",
                ["준호", "서연", "지훈", "예린", "태오"], None),
    "coffee": ("커피는 늘 {v}{으로} 마셔요.", "저는 커피를 어떻게 마셔요?",
               ["블랙", "오트 라테", "믹스커피", "플랫화이트"], None),
    "phone": ("제 휴대폰은 {v}{이에요}.", "제 휴대폰이 뭐예요?",
              ["픽셀", "페어폰", "아이폰", "갤럭시"], None),
    "band": ("제가 제일 좋아하는 밴드는 {v}{이에요}.", "제가 제일 좋아하는 밴드가 뭐예요?",
             ["라디오헤드", "아바", "크루앙빈", "다프트 펑크", "플리트우드 맥"], None),
    "trip": ("내년 여름에 {v}{으로} 여행 가요.", "내년 여름에 어디로 여행 가요?",
             ["아이슬란드", "베트남", "모로코", "페루", "뉴질랜드"],
             "계획이 바뀌었어요. 내년 여름에는 {v}{으로} 여행 가요."),
    "gym": ("저는 {v}마다 헬스장에 가요.", "제가 무슨 요일에 헬스장에 가요?",
            ["월요일", "수요일", "토요일", "목요일"], None),
    "code": ("제가 제일 좋아하는 프로그래밍 언어는 {v}{이에요}.",
             "제가 제일 좋아하는 프로그래밍 언어가 뭐예요?",
             ["파이썬", "러스트", "하스켈", "고", "코틀린"], None),
    "team": ("저는 축구에서 {v}{을} 응원해요.", "제가 응원하는 축구팀이 어디예요?",
             ["벤피카", "셀틱", "아약스", "보카 주니어스", "나폴리"], None),
    "diet": ("저는 {v} 식단을 지켜요.", "제가 지키는 식단이 뭐예요?",
             ["채식", "페스코 채식", "비건", "저염식"], None),
    "plant": ("제 책상 위에 {v}{을} 키워요.", "제 책상 위에 있는 식물이 뭐예요?",
              ["선인장", "분재", "고사리", "몬스테라"], None),
    "brother": ("제 남동생은 {v}{으로} 일해요.", "제 남동생은 무슨 일을 해요?",
                ["소방관", "치과의사", "목수", "기자"], None),
    "age": ("저는 {v}살이에요.", "제가 몇 살이에요?", ["29", "34", "41", "52", "38"], None),
    "bike": ("저는 {v} 자전거를 타고 출근해요.", "제가 타는 자전거가 뭐예요?",
             ["브롬톤 접이식", "빨간 로드", "카고", "픽시"], None),
    "film": ("제가 제일 좋아하는 영화는 {v}{이에요}.", "제가 제일 좋아하는 영화가 뭐예요?",
             ["센과 치히로의 행방불명", "카사블랑카", "아멜리에", "기생충", "컨택트"], None),
    "mother": ("저희 어머니는 {v}에 사세요.", "저희 어머니는 어디에 사세요?",
               ["세비야", "오르후스", "리옹", "크라쿠프", "부산"], None),
    "hobby": ("제 취미는 {v}{이에요}.", "제 취미가 뭐예요?",
              ["도예", "탐조", "암벽 등반", "뜨개질", "천체 관측"], None),
    "floor": ("저희 집은 {v}{이에요}.", "저희 집은 몇 층이에요?",
              ["3층", "7층", "2층", "11층"], None),
    "shoe": ("제 신발 사이즈는 {v}{이에요}.", "제 신발 사이즈가 뭐예요?",
             ["240", "260", "275", "250"], None),
    "podcast": ("제가 제일 좋아하는 팟캐스트는 {v}{이에요}.", "제가 제일 좋아하는 팟캐스트가 뭐예요?",
                ["라디오랩", "99% 인비저블", "하드코어 히스토리", "플래닛 머니"], None),
}

KO_FILLER = [
    "오늘 저녁으로 간단한 요리 하나 추천해 줄래요?",
    "문어에 대한 재미있는 사실 하나 알려 주세요.",
    "CSS에서 div를 가운데 정렬하려면 어떻게 해요?",
    "타자 연습은 어떻게 하는 게 좋아요?",
    "날씨와 기후의 차이를 설명해 주세요.",
    "비 오는 오후에 할 만한 일 세 가지만 알려 주세요.",
    "파스타는 삶은 뒤에 얼마나 두는 게 좋아요?",
    "프로덕트 매니저는 보통 무슨 일을 해요?",
    "네 명이 할 만한 보드게임 추천해 주세요.",
    "하늘은 왜 파란색이에요?",
    "햄릿 줄거리를 두 문장으로 요약해 주세요.",
    "태양광 패널은 어떻게 작동해요?",
    "고마워요, 도움이 됐어요.",
    "흥미롭네요, 계속해 주세요.",
    "가을에 관한 하이쿠 하나 써 줄래요?",
    "호주의 수도가 어디예요?",
    "반숙 달걀은 몇 분 삶아야 해요?",
    "달리기 후에 하면 좋은 스트레칭이 뭐예요?",
    "재귀를 간단한 예로 설명해 주세요.",
    "빛이 적어도 잘 자라는 실내 식물이 뭐예요?",
    "콜드브루 커피는 어떻게 만들어요?",
    "파이썬에서 리스트와 튜플의 차이가 뭐예요?",
    "발표를 잘하는 팁 하나 알려 주세요.",
    "시차 적응은 왜 힘들어요?",
    "컴퓨터에 관한 농담 하나 해 주세요.",
    "백신은 어떻게 면역 체계를 훈련시켜요?",
    "사워도우 스타터 이름으로 뭐가 좋을까요?",
    "우주에 관한 팟캐스트 에피소드 하나 추천해 주세요.",
    "기본 구급상자에는 뭐가 들어가야 해요?",
    "복리는 어떻게 작동해요?",
    "네, 이해했어요.",
    "아프리카에서 제일 높은 산이 뭐예요?",
    "셔츠에 묻은 커피 얼룩은 어떻게 지워요?",
    "API가 뭔지 설명해 주세요.",
    "주말 등산 준비물 목록 좀 만들어 주세요.",
    "신선한 허브는 어떻게 보관하는 게 제일 좋아요?",
]

# Korean particles that depend on whether the value ends in a consonant (받침):
# key: (after a consonant, after a vowel). 으로 after ㄹ is 로 (서울로).
_JOSA = {"은": ("은", "는"), "이": ("이", "가"), "을": ("을", "를"), "이에요": ("이에요", "예요"),
         "으로": ("으로", "로")}
_DIGIT_FINAL = {"0": "ㅇ", "1": "ㄹ", "2": "", "3": "ㅁ", "4": "", "5": "", "6": "ㄱ", "7": "ㄹ",
                "8": "ㄹ", "9": ""}  # the final consonant of the digit read in Sino-Korean


def _final_consonant(word: str) -> str:
    """The final consonant of the word's last syllable as read aloud ("" after a vowel)."""
    last = word.rstrip()[-1]
    if "가" <= last <= "힣":
        index = (ord(last) - 0xAC00) % 28
        return "" if index == 0 else ("ㄹ" if index == 8 else "ㄱ")  # only "" and ㄹ matter
    return _DIGIT_FINAL.get(last, "")


def _josa(template: str, value: str) -> str:
    """Fill ``{v}`` and fit the particles that follow it ({이에요} -> 이에요 or 예요, ...)."""
    final = _final_consonant(value)
    for key, (consonant, vowel) in _JOSA.items():
        if key == "으로":
            choice = vowel if final in ("", "ㄹ") else consonant
        else:
            choice = consonant if final else vowel
        template = template.replace("{" + key + "}", choice)
    return template.format(v=value)


# language -> (facts, filler, id, user id, system prompt, format a template with a value)
LANGUAGES = {
    "en": (FACTS, FILLER, "long_conversation", "river",
           "You are a friendly assistant. Answer briefly.", lambda t, v: t.format(v=v)),
    "ko": (KO_FACTS, KO_FILLER, "long_conversation_ko", "river-ko",
           "당신은 친절한 어시스턴트입니다. 짧게 답하세요.", _josa),
}
for _facts, _filler, *_ in LANGUAGES.values():  # the twin makes the same choices from one seed
    assert [(k, len(v[2]), bool(v[3])) for k, v in _facts.items()] == \
        [(k, len(v[2]), bool(v[3])) for k, v in FACTS.items()] and len(_filler) == len(FILLER)


def generate(seed: int = 7, turns: int = 300, sessions: int = 5, lang: str = "en") -> dict:
    """Build the conversation dict (see data/README.md for the format); ``lang``: "en" or "ko"."""
    facts, filler, conversation_id, user_id, system, fmt = LANGUAGES[lang]
    rng = random.Random(seed)
    keys = list(facts)
    values = {k: rng.choice(facts[k][2]) for k in keys}
    changes = {k: rng.choice([v for v in facts[k][2] if v != values[k]])
               for k in keys if facts[k][3]}
    per_session = turns // sessions
    slots: list[dict | None] = [None] * turns

    # facts: the name first, the rest spread over the first 60% of the conversation
    fact_turns = sorted(rng.sample(range(1, int(turns * 0.6)), len(keys) - 1))
    order = ["name"] + rng.sample([k for k in keys if k != "name"], len(keys) - 1)
    for key, index in zip(order, [0, *fact_turns], strict=True):
        slots[index] = {"kind": "fact", "fact": key, "text": fmt(facts[key][0], values[key])}
    # changes: in the fourth fifth of the conversation
    free = [i for i in range(int(turns * 0.6), int(turns * 0.8)) if slots[i] is None]
    for key, index in zip(changes, sorted(rng.sample(free, len(changes))), strict=True):
        slots[index] = {"kind": "change", "fact": key,
                        "text": fmt(facts[key][3], changes[key])}
    # probes: every fact once in the last fifth (the changed ones ask for the new value), and a
    # few early probes soon after the fact was stated
    free = [i for i in range(int(turns * 0.8), turns) if slots[i] is None]
    for key, index in zip(rng.sample(keys, len(keys)), sorted(rng.sample(free, len(keys))),
                          strict=True):
        slots[index] = {"kind": "probe", "fact": key, "text": facts[key][1]}
    for key in rng.sample(keys, 6):
        stated = next(i for i, s in enumerate(slots) if s and s["fact"] == key)
        later = [i for i in range(stated + 5, int(turns * 0.6)) if slots[i] is None]
        if later:
            slots[rng.choice(later[:30])] = {"kind": "probe", "fact": key, "text": facts[key][1]}
    for i, slot in enumerate(slots):
        if slot is None:
            slots[i] = {"kind": "filler", "fact": None, "text": rng.choice(filler)}

    out_turns, probes, latest = [], [], {}
    for i, slot in enumerate(slots):
        turn_id = f"t{i + 1:03d}"
        session = f"session-{min(i // per_session, sessions - 1) + 1}"
        out_turns.append({"id": turn_id, "session_id": session, "text": slot["text"],
                          "kind": slot["kind"]})
        if slot["kind"] in ("fact", "change"):
            latest[slot["fact"]] = (turn_id, slot["kind"])
        elif slot["kind"] == "probe":
            evidence_id, how = latest[slot["fact"]]
            key = slot["fact"]
            expected = changes[key] if how == "change" else values[key]
            probes.append({"turn_id": turn_id, "question": slot["text"], "fact": key,
                           "evidence": [evidence_id], "expects": [expected],
                           "changed": how == "change"})
    in_korean = " (the Korean twin of long_conversation)" if lang == "ko" else ""
    return {
        "id": conversation_id,
        "seed": seed,
        "language": lang,
        "user_id": user_id,
        "description": (f"{turns} turns over {sessions} sessions: {len(keys)} facts the user "
                        f"states, {len(changes)} of them changed later, {len(probes)} probe "
                        f"questions with the ids of their evidence turns{in_korean}."),
        "system": system,
        "facts": {k: {"value": values[k], "changed_to": changes.get(k)} for k in keys},
        "turns": out_turns,
        "probes": probes,
    }


def render(data: dict) -> str:
    """The file's exact text: UTF-8 JSON, one-space indent, a final newline."""
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--lang", choices=sorted(LANGUAGES), default="en",
                        help="en (default) or ko, the Korean twin")
    parser.add_argument("--out", type=Path, default=None,
                        help="default data/evaluation/long_conversation.json (en), "
                        "long_conversation_ko.json (ko)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory; exit 1 if --out differs")
    args = parser.parse_args(argv)
    name = "long_conversation.json" if args.lang == "en" else f"long_conversation_{args.lang}.json"
    out = args.out or Path(__file__).resolve().parent.parent / "data/evaluation" / name
    data = generate(args.seed, args.turns, args.sessions, args.lang)
    text = render(data)
    if args.check:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            print(f"{out} differs from what seed {args.seed} generates; run: python "
                  f"scripts/make_long_conversation.py --lang {args.lang} --seed {args.seed}")
            return 1
        print(f"{out} is up to date")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}: {data['description']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
