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
