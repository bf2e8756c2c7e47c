"""Development examples for the offline stand-in's answer threshold (benchmarks/bench_offline_model.py).

Invented people and facts that no lesson, data file or test uses. Each example: the sentences a
conversation holds (user statements, the assistant's replies, small talk), a question, and the word
a right answer contains, or ``None`` when the conversation does not say (the answer is "I don't know")."""

EXAMPLES = [
    # (conversation lines, question, expected word or None)
    (
        ["Hey, I'm Rosalind.", "Nice to meet you, Rosalind!", "I restore antique clocks in my shop."],
        "What's my name again?",
        "Rosalind",
    ),
    (
        ["I restore antique clocks in my shop.", "That sounds fascinating.", "It rained all day here."],
        "What do I do for work?",
        "clocks",
    ),
    (["I restore antique clocks in my shop.", "It rained all day here."], "Which city do I live in?", None),
    (
        ["My husband Teodor teaches chemistry.", "Great!", "We have two goats."],
        "What does my husband teach?",
        "chemistry",
    ),
    (
        ["My husband Teodor teaches chemistry.", "We have two goats."],
        "What is my husband's favourite sport?",
        None,
    ),
    (
        ["We have two goats and a donkey.", "Lovely animals.", "I bake bread on Fridays."],
        "What animals do we keep?",
        "goats",
    ),
    (["I bake bread on Fridays.", "Yum!", "I was born in Valparaíso."], "Where was I born?", "Valparaíso"),
    (["I bake bread on Fridays.", "I was born in Valparaíso."], "How old am I?", None),
    (
        ["I can't eat shellfish, it makes me ill.", "Noted.", "My car is a blue Volvo."],
        "Do I have any food allergies?",
        "shellfish",
    ),
    (["My car is a blue Volvo.", "Nice car."], "What do I drive?", "Volvo"),
    (["My car is a blue Volvo.", "Nice car."], "What is my daughter's name?", None),
    (["Thanks for the tips!", "You're welcome.", "Ok, see you."], "Where do I work?", None),
    (
        ["I moved to Hobart last spring.", "How do you like it?", "I play cello in an orchestra."],
        "Which instrument do I play?",
        "cello",
    ),
    (
        ["I moved to Hobart last spring.", "I play cello in an orchestra."],
        "Where am I living these days?",
        "Hobart",
    ),
    (["I moved to Hobart last spring.", "I play cello in an orchestra."], "What is my email address?", None),
    (["Assistant: Welcome back, Ignatius!", "I feel tired today."], "Who am I?", "Ignatius"),
    (["저는 지우예요.", "반가워요, 지우 님!", "저는 제주도에서 귤 농장을 해요."], "제 이름이 뭐죠?", "지우"),
    (
        ["저는 지우예요.", "저는 제주도에서 귤 농장을 해요.", "오늘은 좀 피곤하네요."],
        "제가 하는 일이 뭐예요?",
        "귤",
    ),
    (["저는 지우예요.", "저는 제주도에서 귤 농장을 해요."], "제가 좋아하는 영화가 뭐예요?", None),
    (
        ["제 남동생은 부산에서 요리사로 일해요.", "멋지네요.", "저는 고양이 두 마리를 키워요."],
        "동생 직업이 뭐예요?",
        "요리사",
    ),
    (
        ["제 남동생은 부산에서 요리사로 일해요.", "저는 고양이 두 마리를 키워요."],
        "반려동물 있어요?",
        "고양이",
    ),
    (["제 남동생은 부산에서 요리사로 일해요.", "저는 고양이 두 마리를 키워요."], "제 생일이 언제예요?", None),
    (
        ["저는 매주 토요일에 배드민턴을 쳐요.", "좋은 운동이네요.", "땅콩 알레르기가 있어요."],
        "주말에 무슨 운동 해요?",
        "배드민턴",
    ),
    (["저는 매주 토요일에 배드민턴을 쳐요.", "땅콩 알레르기가 있어요."], "못 먹는 음식 있어요?", "땅콩"),
    (["저는 매주 토요일에 배드민턴을 쳐요.", "땅콩 알레르기가 있어요."], "제 차는 무슨 색이에요?", None),
    (["고마워요!", "천만에요.", "그럼 또 봐요."], "제가 어디 살아요?", None),
    (
        ["작년에 대전으로 이사 왔어요.", "대전 좋죠.", "회사는 세종에 있어요."],
        "지금 어느 도시에 살아요?",
        "대전",
    ),
    (["작년에 대전으로 이사 왔어요.", "회사는 세종에 있어요."], "직장이 어디에 있어요?", "세종"),
    (["작년에 대전으로 이사 왔어요.", "회사는 세종에 있어요."], "제 취미가 뭐예요?", None),
    (["어시스턴트: 다시 오셨네요, 서준 님!", "오늘 날씨 좋네요."], "제가 누구예요?", "서준"),
]

# Changed facts: the newer statement answers (newest wins, ``UPDATE``); the old value is not the answer.
UPDATES = [
    (
        ["I live in Tromsø.", "I write software for a shipping firm.", "We moved from Tromsø to Bergen."],
        "Which town am I in now?",
        "Bergen",
    ),
    (
        ["My car is a green Škoda.", "I bake bread on Fridays.", "I sold the Škoda; now I ride an e-bike."],
        "What do I get around in?",
        "e-bike",
    ),
    (
        ["I teach geography at a school.", "My aunt lives in Perth.", "I left teaching to run a café."],
        "What is my job these days?",
        "café",
    ),
    (
        ["My favourite author is Le Guin.", "I have a tortoise.", "Lately my favourite author is Ishiguro."],
        "Who is my favourite writer?",
        "Ishiguro",
    ),
    (
        ["I'm vegan.", "My cousin flies planes.", "This year I started eating eggs again."],
        "Do I eat eggs?",
        "eggs again",
    ),
    (
        ["저는 광주에 살아요.", "저는 간호사예요.", "지난달에 광주에서 인천으로 이사했어요."],
        "요즘 어디 살아요?",
        "인천",
    ),
    (
        ["제 차는 은색 모닝이에요.", "주말마다 낚시를 가요.", "모닝을 팔고 이제 스쿠터를 타요."],
        "제가 뭘 타고 다녀요?",
        "스쿠터",
    ),
    (
        ["저는 은행에서 일해요.", "제 동생은 대구에 살아요.", "은행을 그만두고 빵집을 열었어요."],
        "지금 무슨 일 해요?",
        "빵집",
    ),
    (
        ["제가 제일 좋아하는 가수는 아이유예요.", "고양이를 키워요.", "요즘은 성시경을 제일 좋아해요."],
        "제가 좋아하는 가수가 누구예요?",
        "성시경",
    ),
    (
        ["My sister's name is Ines.", "My sister works as a vet.", "She changed jobs: she's a pilot now."],
        "What does my sister do for work?",
        "pilot",
    ),
]

# A summary keeps the statements about someone and drops small talk (``SMALL_TALK``): (line, kept?).
SUMMARY_LINES = [
    ("Haha, that's funny.", False),
    ("Anyway, thanks a lot!", False),
    ("That sounds great!", False),
    ("Good morning!", False),
    ("See you tomorrow!", False),
    ("You're welcome.", False),
    ("Sounds good, talk soon.", False),
    ("Lol yes exactly.", False),
    ("I guess so.", False),
    ("큰 소식이 있어요.", False),
    ("그렇군요, 재밌네요!", False),
    ("정말 고마워요!", False),
    ("네, 맞아요.", False),
    ("I live in a flat above a bakery.", True),
    ("My daughter is learning the violin.", True),
    ("I work night shifts at the port.", True),
    ("I'm allergic to cats.", True),
    ("We adopted a greyhound called Pip.", True),
    ("저는 부산에서 간호사로 일해요.", True),
    ("제 남편은 요리사예요.", True),
    ("작년에 대전으로 이사 왔어요.", True),
    ("주말에는 등산을 가요.", True),
    ("땅콩 알레르기가 있어요.", True),
]
