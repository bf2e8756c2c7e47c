"""Tests for the offline stand-in chat model (helpers/course/offline_model.py).

Every fact and phrasing here is held out: none of it appears in the lessons or in the model's
code. The model must answer from what the user said in the messages it is sent, and from
nothing else. The one exception is the last section: a newcomer's phrasings against a
lesson-style history, kept as regression cases.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, get_buffer_string

from helpers.course.offline_model import (
    OfflineChatModel,
    Statement,
    corrects,
    detect_language,
    find_answers,
    find_evidence,
    introduced_name,
    is_question,
    is_summary_request,
    score,
    split_question,
    split_sentences,
    summarize_facts,
    tokenize,
)
from helpers.tokens import count_text_tokens, count_tokens

UNKNOWN_EN = "I don't know"
UNKNOWN_KO = "모르겠어요"


@pytest.fixture(scope="module")
def model() -> OfflineChatModel:
    return OfflineChatModel()


def chat(*turns: str) -> list:
    """Alternate user and assistant turns; the assistant only says "Okay." (no facts)."""
    messages = []
    for turn in turns[:-1]:
        messages += [HumanMessage(turn), AIMessage("Okay.")]
    return messages + [HumanMessage(turns[-1])]


def ask(model: OfflineChatModel, *turns: str) -> str:
    return model.invoke(chat(*turns)).content


# --- building blocks -------------------------------------------------------------------------


def test_split_sentences_splits_lines_and_sentence_ends():
    text = "I keep bees. They live on the roof!\nDr. Park visits monthly. 저는 수원에 살아요?네"
    assert split_sentences(text) == [
        "I keep bees.",
        "They live on the roof!",
        "Dr. Park visits monthly.",
        "저는 수원에 살아요?",
        "네",
    ]


@pytest.mark.parametrize(
    "sentence",
    ["Which city was I born in?", "where do I work", "Tell me my sister's name.",
     "제 고양이 이름이 뭐예요?", "어디 사는지 알려 주세요.", "제가 몇 살이죠?", "제가 학생인가요"],
)
def test_is_question_true(sentence):
    assert is_question(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["I keep bees.", "What I love most is sailing.", "Where I grew up, it snowed a lot.",
     "저는 수원에 살아요.", "제 동생은 학생이에요."],
)
def test_is_question_false(sentence):
    assert not is_question(sentence)


def test_detect_language():
    assert detect_language("저는 요가를 해요") == "ko"
    assert detect_language("I practice yoga") == "en"
    assert detect_language("What does 사랑 mean in English?") == "en"


def test_summary_request_detection_ignores_a_summary_that_is_only_provided():
    assert is_summary_request("Please summarise our chat so far.")
    assert is_summary_request("Write a short summary of the dialogue below.")
    assert is_summary_request("지금까지 대화를 요약해 줘.")
    assert not is_summary_request("Here is a summary of the conversation to date:")
    assert not is_summary_request("대화 요약:\n- 저는 요가를 해요.")


def test_tokenize_strips_korean_particles_and_stems_english():
    (with_topic,) = tokenize("이름은")
    (with_subject,) = tokenize("이름이")
    assert with_topic.concept == with_subject.concept == "NAME"
    assert {t.forms for t in tokenize("lives living lived")} == {("liv",)}
    assert tokenize("What do you remember about me?") == ()


def test_score_uses_synonyms_and_rejects_other_topics():
    assert score("What do I do for a living?", "I'm employed as an electrician.") == 1.0
    assert score("Where is my home?", "I moved to Tromsø in May.") == 1.0
    assert score("What is my favorite color?", "My favorite drink is mint tea.") == 0.0
    assert score("What is my brother's name?", "My name is Oskar.") == 0.0
    assert score("What car do I drive?", "I keep bees on the roof.") == 0.0


def test_find_evidence_keeps_user_and_system_statements_only():
    messages = [
        SystemMessage("Memories:\n- I keep bees."),
        HumanMessage("I sail on weekends. Do you sail?"),
        AIMessage("I sail too, and I live on a boat."),
        HumanMessage("Notes:\nUser: I fix old radios.\nAI: I repair clocks.\n\nWhat do I fix?"),
    ]
    evidence = find_evidence(messages)
    assert [s.text for s in evidence] == ["I keep bees.", "I sail on weekends.",
                                          "I fix old radios."]
    assert [s.role for s in evidence] == ["system", "human", "human"]
    assert [s.position for s in evidence] == [0, 1, 2]


# --- answering questions (English) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "question", "key"),
    [
        ("My parrot is called Kiwi.", "What's my parrot's name?", "Kiwi"),
        ("I grew up in Porto.", "Where did I grow up?", "Porto"),
        ("I'm allergic to penicillin.", "What am I allergic to?", "penicillin"),
        ("My older sister is named Ingrid.", "What is my sister called?", "Ingrid"),
        ("I drive a green Fiat.", "What kind of car do I have?", "Fiat"),
        ("I've been studying Portuguese for a year.", "Which language am I learning?",
         "Portuguese"),
        ("I'm employed as an electrician.", "What do I do for a living?", "electrician"),
        ("My favorite snack is dried mango.", "What food do I love most?", "mango"),
        ("I turned 41 in March; my birthday is March 3.", "When is my birthday?", "March 3"),
    ],
)
def test_answers_a_fact_it_was_sent(model, fact, question, key):
    answer = ask(model, "Hello!", fact, "The weather is grey today.", question)
    assert key in answer
    assert answer.startswith("You told me:")


def test_says_it_does_not_know_with_no_history(model):
    assert ask(model, "What is my blood type?").startswith(UNKNOWN_EN)


def test_says_it_does_not_know_when_only_unrelated_facts_are_present(model):
    facts = ("I keep bees.", "My favorite color is teal.", "I have a cat named Pixel.")
    assert ask(model, *facts, "What car do I drive?").startswith(UNKNOWN_EN)
    assert ask(model, *facts, "What's my favorite movie?").startswith(UNKNOWN_EN)
    assert ask(model, *facts, "What is my brother's name?").startswith(UNKNOWN_EN)


def test_a_fact_only_in_an_ai_message_is_not_evidence(model):
    messages = [
        HumanMessage("Guess something about me."),
        AIMessage("Your hometown is Porto and your cat is Pixel."),
        HumanMessage("Where is my hometown?"),
    ]
    assert model.invoke(messages).content.startswith(UNKNOWN_EN)


def test_prefers_the_later_of_two_conflicting_facts(model):
    answer = ask(model, "I work at a bakery.", "Nice weather.",
                 "I started a new job at a library.", "Where do I work?")
    assert "library" in answer
    assert answer.index("library") < answer.find("bakery") or "bakery" not in answer


def test_where_i_live_is_not_where_i_grew_up(model):
    turns = ("I grew up in Gdansk.", "These days I live in Leeds.")
    assert ask(model, *turns, "Where do I live?") == 'You told me: "These days I live in Leeds."'
    assert ask(model, *turns, "Where am I from?") == 'You told me: "I grew up in Gdansk."'


def test_a_relative_or_pet_mentioned_in_passing(model):
    assert "Ghent" in ask(model, "I live in Ghent with my brother.", "Where do I live?")
    assert "Bruno" in ask(model, "I walk my dog, Bruno, every morning.", "What's my dog's name?")
    # ... but a sentence about the brother does not answer a question about me
    assert ask(model, "My brother is called Jonas.", "What is my name?").startswith(UNKNOWN_EN)


def test_answers_from_a_system_message(model):
    messages = [
        SystemMessage("Known facts about the user:\n- I play the oboe in a band."),
        HumanMessage("What instrument do I play?"),
    ]
    assert "oboe" in model.invoke(messages).content


def test_answers_from_relevant_history_inside_one_human_message(model):
    history = ("Relevant history:\n- [turn 2] User: My daughter is named Lucia.\n"
               "- [turn 2] AI: Lovely name!\n\nQuestion: What is my daughter's name?")
    assert "Lucia" in model.invoke([HumanMessage(history)]).content
    ai_only = ("Relevant history:\n- [turn 2] AI: Your daughter is named Lucia.\n\n"
               "Question: What is my daughter's name?")
    assert model.invoke([HumanMessage(ai_only)]).content.startswith(UNKNOWN_EN)


def test_named_lines_keep_their_role(model):
    """"Marta (assistant): ..." is read as an assistant line (ignored, as in full history), "Hannah
    (user): ..." as the user's; the name is a label, not a word to match."""
    memories = ("Relevant memories (oldest first):\n[2025-03-01 Sat, session-2]\n"
                "Hannah (user): My cat is called Miso.\nMarta (assistant): I play the trumpet.\n\n")
    assert "Miso" in model.invoke([HumanMessage(memories + "Question: What is my cat called?")]).content
    reply = model.invoke([HumanMessage(memories + "Question: What do I play?")]).content
    assert reply.startswith(UNKNOWN_EN), reply
    korean = ("Relevant memories (oldest first):\n[day-1]\nUser: 제 이름은 민수예요.\n\n"
              "Question: 부산에 살아요.")
    assert model.invoke([HumanMessage(korean)]).content == "알겠어요."  # not the header's language


def test_a_question_about_me_with_no_topic_quotes_recent_facts(model):
    answer = ask(model, "I keep bees.", "I fix old radios.", "What do you know about me?")
    assert "bees" in answer and "radios" in answer


# --- natural phrasings: synonyms, "who am I", compound questions, corrections ------------------

ABOUT_TOBIAS = ("Hello, my name is Tobias.", "I repair pipe organs for a living.",
                "I live in Tartu with two parrots.", "I'm training for a marathon in June.")


@pytest.mark.parametrize(
    "question", ["Where am I based?", "Where do I stay?", "Where am I located?", "Where do I reside?"]
)
def test_based_stay_located_reside_ask_where_i_live(model, question):
    assert ask(model, *ABOUT_TOBIAS, question) == 'You told me: "I live in Tartu with two parrots."'


def test_a_home_stated_as_based_or_staying_answers_where_i_live(model):
    assert "Tromsø" in ask(model, "I'm based in Tromsø these days.", "Where do I live?")
    assert "hostel" in ask(model, "I'm staying at a hostel near the port.", "Where do I live now?")


@pytest.mark.parametrize(
    "question", ["Who am I?", "Do you remember me?", "What do you know about me?",
                 "Tell me everything you know about me."]
)
def test_who_am_i_quotes_the_name_first_then_recent_facts(model, question):
    answer = ask(model, *ABOUT_TOBIAS, question)
    assert answer.startswith('You told me: "Hello, my name is Tobias."')
    assert 'You also said: "I\'m training for a marathon in June."' in answer


@pytest.mark.parametrize(
    "question", ["나에 대해 아는 거 다 말해줘", "저에 대해 알고 있는 거 전부 말해 주세요.", "제가 누구예요?",
                 "저 기억나요?"]
)
def test_tell_me_about_me_in_korean(model, question):
    answer = ask(model, "저는 지호예요.", "저는 목수로 일해요.", "요즘 기타를 배우고 있어요.", question)
    assert answer.startswith('전에 이렇게 말씀하셨어요: "저는 지호예요."')
    assert "기타" in answer


def test_what_do_i_do_asks_for_a_job_unless_a_more_specific_phrase_follows(model):
    turns = ("I go sailing on Sundays.", "I'm employed at a brewery.")
    assert ask(model, *turns, "What do I do?") == 'You told me: "I\'m employed at a brewery."'
    assert ask(model, *turns, "What do I do again?") == 'You told me: "I\'m employed at a brewery."'
    assert ask(model, *turns, "What do I do on Sundays?") == 'You told me: "I go sailing on Sundays."'
    assert "brewery" in ask(model, "My brother works at a brewery.", "What does my brother do?")
    assert "목수" in ask(model, "저는 목수로 일해요.", "제가 뭐 하는 사람이에요?")


def test_split_question_splits_only_where_each_part_asks_something():
    assert split_question("What's my name, and where do I live?") == [
        "What's my name", "where do I live?"]
    assert split_question("Hi! What is my job? And what car do I drive?") == [
        "What is my job?", "And what car do I drive?"]
    assert split_question("제 이름이 뭔지랑 어디 사는지 알려줘.") == ["제 이름이 뭔지", "어디 사는지 알려줘."]
    assert split_question("이름이 뭐고 어디 살아요?") == ["이름이 뭐", "어디 살아요?"]
    for one in ["Where do my sister and brother live?", "누가 강아지랑 살아요?",
                "제 이름이랑 직업이 뭐예요?"]:
        assert split_question(one) == [one]


@pytest.mark.parametrize(
    "question", ["What's my name, and where do I live?", "What is my name and where do I live?",
                 "What's my name? And where do I live?"]
)
def test_a_compound_question_is_answered_part_by_part(model, question):
    assert ask(model, *ABOUT_TOBIAS, question) == (
        'You told me: "Hello, my name is Tobias." You told me: "I live in Tartu with two parrots."')


def test_a_compound_question_says_which_part_it_does_not_know(model):
    answer = ask(model, *ABOUT_TOBIAS, "What's my name and what car do I drive?")
    assert answer == ('You told me: "Hello, my name is Tobias." '
                      "I don't know: nothing in the messages I was sent says that.")
    assert ask(model, "I keep bees.", "What is my job and where do I live?").count(UNKNOWN_EN) == 1


@pytest.mark.parametrize(
    "question",
    ["제 이름이 뭐예요 그리고 어디 살아요?", "제 이름이 뭔지랑 어디 사는지 알려줘.",
     "이름이 뭐고 어디 살아요?"],
)
def test_a_korean_compound_question_is_answered_part_by_part(model, question):
    answer = ask(model, "제 이름은 하린이에요.", "저는 춘천에 살아요.", question)
    assert answer.index("하린") < answer.index("춘천")


def test_hometown_and_current_home_are_different_facts(model):
    assert ask(model, "저는 광주에 살아요.", "제 고향이 어디예요?").startswith(UNKNOWN_KO)
    assert ask(model, "저는 광주에 살아요.", "제가 어디 출신이에요?").startswith(UNKNOWN_KO)
    assert ask(model, "I live in Utrecht.", "What city am I from?").startswith(UNKNOWN_EN)
    assert ask(model, "I grew up in Tampere.", "Where do I live?").startswith(UNKNOWN_EN)
    both = ("I grew up in Tampere.", "I live in Utrecht.")
    assert ask(model, *both, "What city am I from?") == 'You told me: "I grew up in Tampere."'
    assert ask(model, "저는 전주 출신이에요.", "저는 광주에 살아요.", "고향이 어디예요?") == (
        '전에 이렇게 말씀하셨어요: "저는 전주 출신이에요."')


def test_corrects():
    assert corrects("Actually, I live in Kotor.", "I live in Budva.", on_topic=True)
    assert not corrects("Actually, I live in Kotor.", "I live in Budva.", on_topic=False)
    assert corrects("No, sorry, it's Saga, not Oona.", "My name is Oona.", on_topic=False)
    assert corrects("다은이 아니라 하린이에요.", "제 이름은 다은이에요.", on_topic=False)
    assert not corrects("I'm not sure, really.", "I'm really into chess.", on_topic=True)


def test_a_later_correction_is_quoted_first(model):
    answer = ask(model, "My name is Oona.", "I keep bees.", "Actually, my name is Saga, not Oona.",
                 "What's my name?")
    assert answer == ('You told me: "Actually, my name is Saga, not Oona." '
                      'Earlier you said: "My name is Oona."')
    # the correction does not repeat "name", yet takes back the word "Oona"
    answer = ask(model, "My name is Oona.", "No, sorry, it's Saga, not Oona.", "What's my name?")
    assert answer.startswith('You told me: "No, sorry, it\'s Saga, not Oona."')
    # it wins though it matches the question less well than the old fact
    answer = ask(model, "My favourite fruit is mango.", "Actually, I prefer figs now.",
                 "What's my favourite fruit?")
    assert answer.startswith('You told me: "Actually, I prefer figs now."') and "mango" in answer
    # ... but a later change beats an earlier correction
    answer = ask(model, "Actually, I rent a flat in Kotor.", "Last month I moved to Budva.",
                 "Where do I live?")
    assert answer.startswith('You told me: "Last month I moved to Budva."')


@pytest.mark.parametrize("fact", ["정정할게요, 제 이름은 하린이에요.", "다은이 아니라 하린이에요."])
def test_a_korean_correction_is_quoted_first(model, fact):
    answer = ask(model, "제 이름은 다은이에요.", fact, "제 이름이 뭐예요?")
    assert answer.startswith(f'전에 이렇게 말씀하셨어요: "{fact}"') and "다은" in answer


def test_find_answers_returns_statements_in_quoting_order():
    evidence = [Statement(text, "human", i) for i, text in enumerate(
        ["I live in Lyon.", "I keep bees.", "I moved to Nantes.", "I live in Lyon."])]
    assert [s.text for s in find_answers("Where do I live?", evidence)] == [
        "I live in Lyon.", "I moved to Nantes."]  # latest first on ties, each sentence once
    assert find_answers("What car do I drive?", evidence) == []


# --- answering questions (Korean) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "question", "key"),
    [
        ("저는 인천에 살고 있어요.", "제가 사는 곳이 어디예요?", "인천"),
        ("저희 집 고양이 이름은 나비예요.", "고양이 이름이 뭐예요?", "나비"),
        ("저는 새우 알레르기가 있어요.", "제가 어떤 음식에 알레르기가 있죠?", "새우"),
        ("요즘 스페인어를 배우고 있어요.", "제가 무슨 언어를 배우고 있어요?", "스페인어"),
        ("저는 치과의사예요.", "제 직업이 뭐예요?", "치과의사"),
        ("제 여동생 이름은 수아예요.", "여동생 이름이 뭐였죠?", "수아"),
    ],
)
def test_answers_a_korean_fact_in_korean(model, fact, question, key):
    answer = ask(model, "안녕하세요!", fact, "오늘 날씨가 흐리네요.", question)
    assert key in answer
    assert answer.startswith("전에 이렇게 말씀하셨어요:")


def test_korean_unknown_and_ai_only(model):
    assert ask(model, "제 동생은 대학생이에요.", "제 차는 무슨 색이에요?").startswith(UNKNOWN_KO)
    messages = [AIMessage("고객님 이름은 하준이에요."), HumanMessage("제 이름이 뭐예요?")]
    assert model.invoke(messages).content.startswith(UNKNOWN_KO)


def test_korean_prefers_the_later_fact(model):
    answer = ask(model, "저는 수원에 살아요.", "지난달에 전주로 이사했어요.", "지금 어디 살아요?")
    assert answer.index("전주") < answer.find("수원") or "수원" not in answer


# --- statements and names -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("Call me Priya.", "Nice to meet you, Priya!"),
        ("Hey there, I'm Oskar and I repair bikes.", "Nice to meet you, Oskar!"),
        ("I'm hungry.", "Got it."),
        ("I'm Canadian.", "Got it."),
        ("제 이름은 하준이에요.", "반가워요, 하준 님!"),
        ("저는 도윤입니다.", "반가워요, 도윤 님!"),
        ("저는 간호사예요.", "알겠어요."),
    ],
)
def test_statements_are_acknowledged_and_names_greeted(model, text, reply):
    assert model.invoke([HumanMessage(text)]).content == reply


def test_introduced_name_patterns():
    assert introduced_name("hi, my name is ravi") == "Ravi"
    assert introduced_name("서윤이라고 불러 주세요.") == "서윤"
    assert introduced_name("I'm tired of rain.") is None


def test_a_name_introduced_with_im_answers_the_name_question(model):
    assert "Tobias" in ask(model, "Hi, I'm Tobias.", "What's my name?")


# --- summaries --------------------------------------------------------------------------------


def test_summary_lists_the_users_facts_not_the_ais_words(model):
    conversation = [
        HumanMessage("Hi!"),
        AIMessage("Hello! I am an assistant and I love helping."),
        HumanMessage("I keep bees on my roof."),
        AIMessage("You must have a big garden."),
        HumanMessage("Do you like honey?"),
        AIMessage("I do."),
        HumanMessage("Thanks! My neighbour is allergic to stings."),
    ]
    prompt = "Summarize the conversation below.\n\n" + get_buffer_string(conversation)
    summary = model.invoke(prompt).content
    assert summary == ("Facts the user stated:\n- I keep bees on my roof.\n"
                       "- My neighbour is allergic to stings.")


def test_summary_folds_in_the_previous_summary(model):
    previous = "Facts the user stated:\n- I keep bees on my roof.\n- I live in Tromsø."
    new_lines = get_buffer_string([
        HumanMessage("I moved to Bergen last week."),
        AIMessage("Bergen is rainy."),
    ])
    prompt = (f"Update the summary with the new lines.\n\nCurrent summary:\n{previous}\n\n"
              f"New lines of conversation:\n{new_lines}\n\nNew summary:")
    lines = model.invoke(prompt).content.splitlines()
    assert lines == ["Facts the user stated:", "- I keep bees on my roof.",
                     "- I live in Tromsø.", "- I moved to Bergen last week."]


def test_summary_folds_in_langchain_classic_summary_prompt(model):
    prompt_module = pytest.importorskip("langchain_classic.memory.prompt")
    new_lines = get_buffer_string([HumanMessage("My dog Biscuit is nine."), AIMessage("Cute!")])
    prompt = prompt_module.SUMMARY_PROMPT.format(
        summary="Facts the user stated:\n- I fix old radios.", new_lines=new_lines
    )
    assert model.invoke(prompt).content == (
        "Facts the user stated:\n- I fix old radios.\n- My dog Biscuit is nine."
    )


def test_korean_conversation_gets_a_korean_summary(model):
    conversation = get_buffer_string([
        HumanMessage("안녕하세요!"),
        AIMessage("안녕하세요! 저는 도우미예요."),
        HumanMessage("저는 주말마다 등산을 해요."),
        HumanMessage("제 고양이는 세 살이에요."),
    ])
    summary = model.invoke(f"Summarize this conversation:\n{conversation}").content
    assert summary == "사용자가 말한 사실:\n- 저는 주말마다 등산을 해요.\n- 제 고양이는 세 살이에요."


def test_summary_keeps_changed_facts_in_order_and_drops_repeats():
    statements = [Statement(text, "human", i) for i, text in enumerate(
        ["I live in Lyon.", "I keep bees.", "I moved to Nantes.", "I keep bees."])]
    assert summarize_facts(statements).splitlines()[1:] == [
        "- I live in Lyon.", "- I moved to Nantes.", "- I keep bees."]


def test_summary_is_capped_to_the_most_recent_facts():
    model = OfflineChatModel(max_summary_facts=3)
    facts = [f"I own {n} vintage cameras." for n in range(2, 9)]
    summary = model.invoke(chat(*facts, "Please summarize what I told you.")).content
    assert summary.splitlines()[1:] == [f"- I own {n} vintage cameras." for n in (6, 7, 8)]
    with pytest.raises(ValueError):
        summarize_facts([], max_facts=0)


def test_summary_with_no_facts_is_still_a_summary(model):
    assert model.invoke("Summarize our chat.").content == (
        "Facts the user stated:\nNo facts stated yet.")
    assert model.invoke("요약해 주세요.").content == "사용자가 말한 사실:\n아직 말한 사실이 없어요."


def test_a_system_summary_does_not_turn_a_question_into_a_summary_request(model):
    messages = [
        SystemMessage("Summary of the conversation so far:\n- I fix old radios."),
        HumanMessage("What do I fix?"),
    ]
    assert model.invoke(messages).content == 'You told me: "I fix old radios."'


# --- model contract ---------------------------------------------------------------------------


def test_usage_metadata_uses_the_course_token_counter(model):
    messages = chat("I keep bees.", "What do I keep?")
    reply = model.invoke(messages)
    usage = reply.usage_metadata
    assert usage["input_tokens"] == count_tokens(messages)
    assert usage["output_tokens"] == count_text_tokens(reply.content)
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert reply.response_metadata["model_name"] == "offline-stand-in"


def test_invoke_with_a_bare_string(model):
    reply = model.invoke("My name is Ottilie.")
    assert isinstance(reply, AIMessage)
    assert reply.content == "Nice to meet you, Ottilie!"
    assert reply.usage_metadata["input_tokens"] == count_tokens([HumanMessage("My name is Ottilie.")])


def test_stateless_between_calls(model):
    model.invoke([HumanMessage("My tortoise is called Sheldon.")])
    assert model.invoke([HumanMessage("What is my tortoise called?")]).content.startswith(
        UNKNOWN_EN)


def test_deterministic_in_process_and_across_hash_seeds(model):
    messages = chat("I keep bees.", "저는 수원에 살아요.", "I moved to Nantes.", "Where do I live?")
    assert model.invoke(messages).content == model.invoke(messages).content
    code = ("from helpers.course.offline_model import respond\n"
            "from langchain_core.messages import HumanMessage as H\n"
            "print(respond([H('I keep bees.'), H('My sister Mia lives in Oslo.'),"
            " H('I moved to Nantes.'), H('Where do I live?')]))")
    root = Path(__file__).resolve().parent.parent
    outputs = {
        subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                       check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert outputs == {'You told me: "I moved to Nantes."\n'}


def test_identity_says_it_is_a_rule_based_stand_in(model):
    assert model._llm_type == "offline-stand-in"
    assert "not a language model" in OfflineChatModel.__doc__.lower()
    assert model._identifying_params["model_name"] == "offline-stand-in"
    assert model.bind_tools([]) is model
    assert "stand-in" not in ask(model, "I keep bees.", "What do I keep?")


def test_works_inside_create_agent_with_tools(model):
    agents = pytest.importorskip("langchain.agents")
    from langchain_core.tools import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    agent = agents.create_agent(model, tools=[add])
    result = agent.invoke({"messages": [HumanMessage("I collect stamps. What do I collect?")]})
    assert "stamps" in result["messages"][-1].content


def test_facts_survive_langchain_summarization_middleware(model):
    agents = pytest.importorskip("langchain.agents")
    middleware = pytest.importorskip("langchain.agents.middleware")
    from langgraph.checkpoint.memory import InMemorySaver

    agent = agents.create_agent(
        model,
        tools=[],
        middleware=[middleware.SummarizationMiddleware(model, trigger=("messages", 6),
                                                       keep=("messages", 2))],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "held-out"}}
    for turn in ["Hi, I'm Marisol.", "I repair bikes.", "My cat is named Pixel.",
                 "I'm learning Greek.", "I live in Faro."]:
        agent.invoke({"messages": [HumanMessage(turn)]}, config)
    result = agent.invoke({"messages": [HumanMessage("What is my name?")]}, config)
    assert any("summary" in str(m.content) for m in result["messages"])
    assert "Marisol" in result["messages"][-1].content


# --- regression: a newcomer's phrasings against a lesson-style history ------------------------

NEWCOMER_HISTORY = [
    HumanMessage("Hi! My name is Alice."), AIMessage("Nice to meet you, Alice!"),
    HumanMessage("I work as a data engineer at a shipping company."), AIMessage("Got it."),
    HumanMessage("I live in Lisbon with my cat, Miso."), AIMessage("Got it."),
    HumanMessage("My favourite programming language is Python."), AIMessage("Got it."),
    HumanMessage("I'm learning Korean for a trip to Seoul next spring."), AIMessage("Got it."),
]
NAME = '"My name is Alice."'
LISBON = '"I live in Lisbon with my cat, Miso."'


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("What is my name?", f"You told me: {NAME}"),
        ("Where do I live?", f"You told me: {LISBON}"),
        ("Where am I based?", f"You told me: {LISBON}"),
        ("Who am I?", f"You told me: {NAME} You also said: \"I'm learning Korean"),
        ("Do you remember me?", f"You told me: {NAME} You also said: \"I'm learning Korean"),
        ("Tell me everything you know about me.", f"You told me: {NAME}"),
        ("What do I do?", 'You told me: "I work as a data engineer at a shipping company."'),
        ("What is my name and where do I live?", f"You told me: {NAME} You told me: {LISBON}"),
        ("나에 대해 아는 거 다 말해줘", f"전에 이렇게 말씀하셨어요: {NAME}"),
    ],
)
def test_newcomer_phrasings(model, question, start):
    answer = model.invoke([*NEWCOMER_HISTORY, HumanMessage(question)]).content
    assert answer.startswith(start)
    if question in ("What is my name?", "Where do I live?", "What do I do?"):
        assert answer == start


def test_newcomer_hometown_and_correction(model):
    messages = [HumanMessage("저는 부산에 살아요"), AIMessage("알겠어요."),
                HumanMessage("제 고향이 어디예요?")]
    assert model.invoke(messages).content.startswith(UNKNOWN_KO)
    messages = [HumanMessage("My name is Alice."), AIMessage("Nice to meet you, Alice!"),
                HumanMessage("Actually, my name is Bea, not Alice"), AIMessage("Got it."),
                HumanMessage("What is my name?")]
    assert model.invoke(messages).content == (
        'You told me: "Actually, my name is Bea, not Alice" Earlier you said: "My name is Alice."')


def test_quoted_history_does_not_greet_an_old_name():
    """Retrieved memories put old turns in front of the new message; a name in them was
    introduced long ago and must not be greeted again (only the user's new words count)."""
    model = OfflineChatModel()
    retrieved = (
        "Relevant history:\n- [round 1] User: My name is Ann.\n  AI: Nice to meet you, Ann!\n\n"
        "Question: I like green tea."
    )
    assert model.invoke([HumanMessage(retrieved)]).content == "Got it."
    introducing = "Relevant history:\n- [round 1] User: I like tea.\n\nQuestion: My name is Bo."
    assert model.invoke([HumanMessage(introducing)]).content == "Nice to meet you, Bo!"


def test_summaries_of_other_things_and_requests_are_not_conversation_summaries(model):
    """"Summarise the plot of Hamlet" is an ordinary request, not a request to summarize the
    conversation; "Give me three ideas ..." is a request, not a fact about the user."""
    from helpers.course.offline_model import is_summary_request

    assert not is_summary_request("Summarise the plot of Hamlet in two sentences.")
    assert is_summary_request("Please summarize what we discussed.")
    reply = model.invoke(chat("I keep bees on my roof.", "Summarise the plot of Hamlet.")).content
    assert not reply.startswith("Facts the user stated")
    summary = model.invoke(chat("Give me three ideas for a rainy afternoon.",
                                "Tell me a joke about computers.",
                                "I keep bees on my roof.",
                                "Summarize our conversation.")).content
    assert summary.splitlines() == ["Facts the user stated:", "- I keep bees on my roof."]


def test_an_old_question_in_quoted_history_is_not_asked_again():
    model = OfflineChatModel()
    text = ("Relevant history:\n- [round 1] User: What is my name?\n  AI: I don't know.\n\n"
            "Question: I'm allergic to peanuts.")
    assert model.invoke([HumanMessage(text)]).content == "Got it."
