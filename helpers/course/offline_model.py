"""The offline stand-in chat model: a small program that answers from the messages it is sent.

Model card
- **What it reads:** every message it is sent, of every role: the user's, its own earlier replies,
  the other speaker's, a summary stored as any role, and memories in any form (bullets, dated lines,
  "User:" / "AI:" transcripts, XML or Markdown). Text in a ``<memory source="...">`` block is never an
  instruction; a system message's words to the assistant are never evidence. It follows two instructions,
  only from the system message and the user's own words outside memory blocks: the answer language
  ("reply only in Korean", "영어로 답하세요") and a summary request (with its "at most N words").
- **How it answers** (every rule it has, and why):
  1. *Rank by meaning.* It cuts what it was sent into sentences and scores the ones that state
     something against the question with the course's embedder (multilingual e5): similarity to
     the question minus similarity to the closest of a few everyday questions (``BACKGROUND``), so
     a sentence close to every question wins nothing.
  2. *Abstain by what it read.* The best score must reach ``threshold(n)``, growing with the log of
     the n sentences ranked (among hundreds, one unrelated scores high by chance); else "I don't know".
  3. *Newest wins.* Of the sentences that answer about as well as the best (``UPDATE``), it quotes the
     one read last (a changed fact's new value), once, and says where (``response_metadata["evidence"]``).
  4. *Who said it:* the role of the message or line ("User:", "AI:"), or, in an assistant line that
     quotes someone ('You told me: "..."', 'Mia said "..."', '"..."라고 하셨어요'), the one it names.
     In the assistant's or a memory's line, "the user" (사용자) is the one asking: "I" when it is scored.
  5. *Summaries* keep what was stated, drop questions, replies and small talk (closer to everyday
     chat, ``CHAT``, than to statements about someone, ``FACTS``), keep one of two repeats, and over
     their word limit drop first the fact most like a newer one (an old value, a near repeat).
  6. A statement gets "Got it."; a request ("Tell me a joke.") the "I can only answer from..." reply.
- **What it cannot do:** reason. It does not combine two facts, count, compare, resolve "last
  Tuesday", or answer a question whose answer is not one sentence it was sent. It scores topics, so
  a line on the topic without the answer ("my harp teacher moved my lessons" for the teacher's name)
  may be quoted; an update worded unlike the question ("I moved to Daejeon") may lose to the old
  line. It never invents, and remembers nothing: a name or fact it quotes is in that call's messages.
- **A real model:** set ``OPENAI_API_KEY``, ``CHAT_MODEL`` and, for a local server such as Ollama,
  ``OPENAI_BASE_URL`` in ``.env`` (docs/instructor_guide.md, "Run it on a real model")."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from html import unescape
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from helpers.kinds import classify_turn, content_words, language_of, normalized, speaks_of_self
from helpers.kinds import split_sentences as _sentences
from helpers.tokens import count_text_tokens, encode_text

MODEL_NAME = "offline-stand-in"
# The bar "the answer was sent" must reach is THRESHOLD + GROWTH * ln n for n sentences ranked: among n
# sentences the best unrelated one scores higher the more there are (the expected maximum of n noise
# scores grows with log n). The pair was chosen on development chats, LoCoMo and BEAM, and on examples
# no lesson, data file or test uses (benchmarks/bench_abstention_pairs.py, offline_model_dev.py).
THRESHOLD, GROWTH = -0.0075, 0.011
MAX_QUOTE = 300  # characters: an answer quotes the line its sentence is in, up to this long
# Newest wins: a sentence within UPDATE of the best score that keeps UPDATE_SHARE of its margin over the
# bar answers alike; of those the one read last is quoted (benchmarks/bench_abstention.py).
UPDATE, UPDATE_SHARE = 0.03, 0.3
SAME = 0.95  # a summary keeps one of two facts this similar (the newer): a repeat
# Everyday questions no sentence about the user should answer better than the question asked.
BACKGROUND = ("What is the weather like today?", "Can you help me with something?", "How does this work?",
              "What time is it?", "오늘 날씨 어때요?", "이거 어떻게 해요?", "뭐 좀 물어봐도 돼요?",
              "지금 몇 시예요?")
# Small talk, for a summary: a sentence closer by SMALL_TALK or more to everyday chat than to statements.
CHAT = ("Thank you so much!", "That's so cool, I love it.", "Good night, talk to you later.",
        "Wow, really? Tell me more.", "Sounds good to me.", "I have some news for you.",
        "고마워요, 정말 도움이 됐어요.", "와, 대박이네요!", "안녕하세요, 오랜만이에요.", "그렇군요, 좋네요.")
FACTS = ("I work as a teacher in Seoul.", "My sister lives in Canada.", "I have two cats named Momo.",
         "I'm allergic to peanuts.", "My birthday is in March.", "I moved to a new apartment last week.",
         "저는 서울에서 선생님으로 일해요.", "제 여동생은 캐나다에 살아요.", "저는 고양이 두 마리를 키워요.",
         "제 생일은 3월이에요.")
SMALL_TALK = 0.03  # chosen on benchmarks/offline_model_dev.py's SUMMARY_LINES

TEXT = {
    "en": {
        "human": 'You told me: "{}"', "ai": 'I said earlier: "{}"', "other": 'I was told: "{}"',
        "unknown": "I don't know: I can only answer from the messages I was sent, and they don't say that.",
        "ack": "Got it.", "heading": "Facts from the conversation:", "none": "No facts stated yet.",
    },
    "ko": {
        "human": '전에 이렇게 말씀하셨어요: "{}"', "ai": '제가 전에 이렇게 말했어요: "{}"',
        "other": '이렇게 들었어요: "{}"',
        "unknown": "모르겠어요. 저는 받은 메시지로만 답할 수 있는데, 거기에 그 정보가 없어요.",
        "ack": "알겠어요.", "heading": "대화에서 나온 사실:", "none": "아직 말한 사실이 없어요.",
    },
}
_QUOTES = re.compile(  # an assistant line quoting someone: 'You told me: "..."', '이렇게 들었어요: "..."'
    r'([^"“”]{0,60}?(?:said|told me|was told|mentioned|wrote|말씀하셨어요|말씀하신 대로|말했어요|들었어요)'
    r'(?: earlier| before)?)'
    r'\s*[:,]?\s*["“](.+?)["”](?=[.,!?]?(?:\s|$|이?라고))'  # Korean: "..."라고 (quoting "that ...")
)
_QUOTED_THEN = re.compile(r'["“](.+?)["”]\s*이?라고\s*((?:말씀하|하셨|말했|들었)\S*)')
_MEMORY = re.compile(r"<memory\b([^>]*)>(.*?)(?:</memory>|\Z)", re.S | re.I)
_SOURCE = re.compile(r'source="([^"]*)"')
_XML_MESSAGE = re.compile(r'<message type="(\w+)">(.*?)</message>', re.S)
_LINE_ROLE = re.compile(  # "User:", "AI:", "Marta (assistant):", "2024-05-01 · user:", "[turn 2] AI:"
    r"^(?:[^\s:()][^:()\n]{0,40} \()?(human|user|ai|assistant|system|사용자|어시스턴트)\)?\s*:\s*", re.I
)
_ROLES = {"human": "human", "user": "human", "사용자": "human", "system": "system", "tool": "tool"}
_MARKUP = re.compile(  # bullets, numbers, tags, dates and Markdown before a line's text
    r"^(?:\s*(?:[-*•·>#]+|\d+[.)]|\[[^\]]{0,40}\]|\*\*|</?[\w-]+[^>]*>|"
    r"\d{4}-\d\d-\d\d(?:[ T][\d:]+)?(?:\s+\w{3})?\s*[·,|-]?)\s*)+"
)
_LEAD = re.compile(r"(?<=:)\s+(?![\"“'])")  # "Big news: I moved": a lead-in ends at its colon
_GREETING = re.compile(r"(?i)(?:hi|hello|hey|thanks|thank|bye|안녕|반가|고마|감사|잘 가)")
_LANGUAGE = re.compile(
    r"\b(?:in|only in)\s+(korean|english)\b|\b(korean|english)\s+only\b|(한국어|영어)로", re.I
)
_LANGUAGES = {"korean": "ko", "english": "en", "한국어": "ko", "영어": "en"}
_SUMMARY_REQUEST = re.compile(
    r"\bsummari[sz](?:e|ing)\b|\bsum up\b|\brecap\b|\b(?:write|give|make|create|produce|update|extend"
    r"|provide|return|prepare|generate|maintain)\b[^.?!\n]{0,40}\bsummary\b|요약\s*(?:해|하|을|좀|부탁|합니다)"
    r"|정리해\s*(?:줘|주세요|줄래)",
    re.I,
)
_ABOUT_CONVERSATION = re.compile(
    r"\b(?:conversation|chat|discussion|messages?|history|transcript|so far|above|below|we (?:talked|"
    r"discussed|said)|I (?:said|told|mentioned)|what I told|updated|running|the user|user's|stated)\b"
    r"|대화|이야기|메시지|지금까지|내용|업데이트|사용자",
    re.I,
)
_MAX_WORDS = re.compile(r"(?:at most|no more than|under|within)\s+(\d+)\s+words|(\d+)\s*단어\s*이내", re.I)
_QUESTION_START = re.compile(
    r"(?i)^(?:what|where|when|who|whom|whose|which|why|how|do|does|did|is|are|am|can|could"
    r"|(?:tell|remind) me (?:about |of )?(?:my|our|what|where|when|who|which|how|why|whether|if))\b"
)
_KO_QUESTION = re.compile(
    r"(?:뭐|무엇|어디|언제|누구|누가|몇|어떻게|어떤|어느|무슨|왜|뭘)|(?:까|나요|죠|냐)[.!]?$"
)
_KO_ASK = re.compile(r"(?:알려|말해)\s*(?:줘|주세요|줄래)")
_INSTRUCTION = re.compile(  # a system message's words to the assistant: "You are ...", "Answer briefly."
    r"(?i)^(?:당신|(?:you|your|please|answer|remember|reply|respond|be|keep|use|don't|do not|never|always)\b)"
    r"|(?:세요|십시오|하라|해라)[.!]?$"
)
_THE_USER = re.compile(r"(?i)\b(?:the )?user(['’]s)?\b|사용자([는가의])?")
_ASKER = {"는": "저는", "가": "제가", "의": "제", None: "저"}
_AND = re.compile(r"(?i),?\s+and\s+(?=(?:what|where|when|who|which|how|do|does|did|am|is|are)\b)"
                  r"|\s+그리고\s+")


@dataclass(frozen=True)
class Sentence:
    """One sentence the model was sent: ``text``; ``role`` of who said it ("human", "ai", "system",
    "tool": a line's "User:" / "AI:" prefix wins over its message's role); ``message``: the index of
    the message it was read in; ``memory``: the ``source`` of the memory block it was in, else None."""

    text: str
    role: str
    message: int
    memory: str | None = None
    marked: str = ""  # "role": on a "User:" / "AI:" line (a transcript), "bullet": a list item, "": prose
    line: str = ""  # the line it is in: what an answer quotes (a sentence reads with its neighbours)


def _role(message: BaseMessage) -> str:
    kind = str(message.role) if message.type == "chat" else message.type  # ChatMessage has a role
    return _ROLES.get(kind.lower(), "ai")


def _text(message: BaseMessage) -> str:  # str content, or its text blocks, a line each
    blocks = [message.content] if isinstance(message.content, str) else message.content
    return "\n".join(b if isinstance(b, str) else str(b.get("text", "")) for b in blocks
                     if isinstance(b, str) or isinstance(b, dict) and b.get("type") == "text")


def _speaker(lead: str) -> str:
    """Who said a quote an assistant line gives, by the words before it: the user ("you"), the
    assistant ("I"), else someone else ("I was told", a name)."""
    if re.search(r"(?i)\bwas told\b|들었", lead):
        return "other"
    if re.search(r"(?i)\byou\b|말씀하|하셨", lead):
        return "human"
    return "ai" if re.search(r"(?i)^\s*I\b|제가|말했", lead) else "other"


def _lines(text: str, role: str, memory: str | None, marked: str = "") -> list[tuple]:
    """(text, role, memory, marked, line) of each sentence of ``text``; a "User:" / "AI:" prefix sets
    the role until a blank line; an assistant line that quotes ('You told me: "..."') is read as the
    quoted line, said by whom it names (``_speaker``)."""
    found, current, prefixed = [], role, marked
    for raw in text.splitlines():
        line = _MARKUP.sub("", raw).strip()
        bullet = bool(re.match(r"\s*(?:[-*•·]|\d+[.)])\s", raw))
        if prefix := _LINE_ROLE.match(line):
            current, prefixed = _ROLES.get(prefix.group(1).lower(), "ai"), "role"
            line = _MARKUP.sub("", line[prefix.end() :])
        elif not line or bullet:  # a blank line or a new list item ends a speaker's lines
            current, prefixed = role, marked
        line = re.sub(r"</?[\w-]+[^>]*>|\*\*|`", "", line).strip()  # inline tags, bold, code marks
        if current == "ai" and classify_turn(line, "assistant") == "dont_know":
            continue  # "I don't know: ..." states nothing, not even after its colon
        kind = prefixed or ("bullet" if bullet else "")
        quoting = _QUOTES.finditer(line) if current == "ai" else ()
        quotes = [(_speaker(q.group(1)), q.group(2)) for q in quoting]
        if current == "ai" and not quotes:  # a Korean quote with its verb after it: "..."라고 하셨어요
            quotes = [(_speaker(q.group(2)), q.group(1)) for q in _QUOTED_THEN.finditer(line)]
        for who, said in quotes or [(current, line)]:
            pieces = [p.strip() for sentence in _sentences(said) for p in _LEAD.split(sentence) if p.strip()]
            found += [(p, who, memory, kind, said if len(said) <= MAX_QUOTE else p) for p in pieces]
    return found


@lru_cache(maxsize=65536)
def _parse(role: str, text: str) -> tuple[tuple, ...]:
    """(text, role, memory, marked) of each sentence of one message (cached: a history is re-sent)."""
    found = []
    for block in _MEMORY.finditer(text):
        source = _SOURCE.search(block.group(1))
        found += _lines(block.group(2), "other", source.group(1) if source else "memory")
    own = _MEMORY.sub("\n", text)
    for block in _XML_MESSAGE.finditer(own):  # a transcript as get_buffer_string(format="xml") writes it
        found += _lines(unescape(block.group(2)), _ROLES.get(block.group(1).lower(), "ai"), None, "role")
    return tuple(found + _lines(_XML_MESSAGE.sub("\n", own), role, None))


def read(messages: Sequence[BaseMessage]) -> tuple[list[Sentence], str]:
    """Everything ``messages`` say, as ``Sentence`` in order, and the text instructions may come from:
    the system messages and the user's messages, without their ``<memory>`` blocks."""
    sentences, instructions = [], []
    for index, message in enumerate(messages):
        role, text = _role(message), _text(message)
        sentences += [Sentence(t, r, index, m, k, q) for t, r, m, k, q in _parse(role, text)]
        instructions += [_MEMORY.sub("\n", text)] if role in ("system", "human") else []
    return sentences, "\n".join(instructions)


def is_question(sentence: str) -> bool:
    """Does ``sentence`` ask something: "?", a wh-word or auxiliary first (English, no final "." or
    "!"), or a Korean question word or ending, or 알려 줘 / 말해 줘?"""
    text = sentence.strip()
    if text.endswith(("?", "？")):
        return True
    if language_of(text) == "ko":
        return (
            bool(_KO_ASK.search(text))
            or bool(_KO_QUESTION.search(text))
            and not text.endswith(("다.", "요.", "!"))
        )
    return bool(_QUESTION_START.match(text)) and not text.endswith((".", "!"))


@lru_cache(maxsize=65536)
def states_something(text: str) -> bool:
    """Is ``text`` evidence: not a question, a request, a heading (ends ":"), small talk, a placeholder
    ("(none yet)"), or "I don't know"?"""
    return not (
        is_question(text)
        or text.endswith((":", "："))
        or not content_words(text)
        or text[0] + text[-1] == "()"
        or len(text.split()) == 1
        and _GREETING.match(text)
        or classify_turn(text, "assistant") == "dont_know"
        or classify_turn(text) == "request"
    )


def evidence(sentences: Sequence[Sentence]) -> list[Sentence]:
    """The sentences of ``sentences`` that state something (``states_something``; in a system message,
    not an instruction to the assistant), each text once, where it was first said."""
    found: dict[str, Sentence] = {}
    for s in sentences:
        if states_something(s.text) and not (s.role == "system" and _INSTRUCTION.search(s.text)):
            found.setdefault(normalized(s.text), s)
    return list(found.values())


def _passages(texts: Sequence[str]) -> np.ndarray:
    """e5 passage embeddings of ``texts`` (len x 384), each text embedded once per process
    (``embeddings.vector_cache``, shared with the store)."""
    from helpers.course.embeddings import vector_cache

    return vector_cache.vectors(texts)


def _query(text: str) -> np.ndarray:
    from helpers.course.embeddings import vector_cache

    return vector_cache.vectors([text], query=True)[0]


def relevance(question: str, texts: Sequence[str]) -> np.ndarray:
    """How well each of ``texts`` answers ``question``: e5 cosine of the question and the text, minus
    the text's cosine with the closest ``BACKGROUND`` question (hubness correction, as in CSLS,
    Conneau et al. 2018). Reaching ``threshold(n)``: it answers."""
    if not texts:
        return np.zeros(0)
    # float64: the sums no longer depend on which BLAS kernel this CPU picks for float32
    vectors = _passages(texts).astype(np.float64)
    background = np.stack([_query(q) for q in BACKGROUND]).astype(np.float64)
    return vectors @ _query(question).astype(np.float64) - (vectors @ background.T).max(axis=1)


def as_asked(s: Sentence) -> str:
    """``s.text`` as the one asking would say it: in an assistant's or a memory's line (a summary, a note),
    "the user" / "the user's" / 사용자는 is "I" / "my" / 저는, as a model reads a third-person note."""
    if s.role not in ("ai", "other"):
        return s.text
    return _THE_USER.sub(lambda m: _ASKER[m[2]] if m[0][0] == "사" else "my" if m[1] else "I", s.text)


def threshold(n: int) -> float:
    """The score the best of ``n`` ranked sentences must reach to answer: ``THRESHOLD + GROWTH * ln n``."""
    return THRESHOLD + GROWTH * math.log(max(n, 1))


def find_answers(question: str, facts: Sequence[Sentence]) -> tuple[Sentence, float] | None:
    """(sentence, score) answering ``question``, or None: if the best by ``relevance`` reaches
    ``threshold(len(facts))``, the one read last of those that answer alike (newest wins): within ``UPDATE``
    of the best score, with at least ``UPDATE_SHARE`` of its margin over the bar."""
    scores = relevance(question, [as_asked(s) for s in facts])  # float64, unrounded (design notes, issue 36)
    bar, best = threshold(len(facts)), scores.max(initial=-np.inf)
    if best < bar:
        return None
    i = int(np.flatnonzero((best - scores <= UPDATE) & (scores - bar >= UPDATE_SHARE * (best - bar)))[-1])
    return facts[i], float(scores[i])


def split_question(text: str) -> list[str]:
    """The questions in ``text``: its question sentences, cut at ", and where ..." / 그리고."""
    parts = [p for s in _sentences(text) for p in _AND.split(s) if p.strip()]
    return [p for p in parts if is_question(p)] or [text]


def answer(question: str, facts: Sequence[Sentence], language: str) -> tuple[str, list[dict]]:
    """The reply to ``question`` from ``facts`` in ``language`` ("en"/"ko") and where each quote
    was read (``message``, ``role``, ``memory``, ``text``, ``score``)."""
    text, replies, used = TEXT[language], [], []
    for part in split_question(question):
        found = find_answers(part, [f for f in facts if f.line not in {u["text"] for u in used}])
        if found is None:
            replies.append(text["unknown"])
            continue
        s, score = found
        replies.append(text[s.role if s.role in ("human", "ai") else "other"].format(s.line))
        used.append({"message": s.message, "role": s.role, "memory": s.memory, "text": s.line,
                     "score": round(score, 3)})
    return " ".join(dict.fromkeys(replies)), used


def summarize(facts: Sequence[Sentence], language: str, max_words: int | None = None) -> str:
    """A summary of ``facts`` (no system prompt): the user's statements, the assistant's about "the user"
    (an earlier summary) or itself, the other speaker's about themself; no small talk (``CHAT``); each once
    (of two ``SAME``-similar, the newer); oldest first; over ``max_words``, the most like a newer first."""
    kept = [s for s in facts if s.role in ("human", "other")
            or s.role == "ai" and (speaks_of_self(s.text) or bool(_THE_USER.search(s.text)))]
    vectors = _passages([s.text for s in kept]).astype(np.float64)  # as in relevance: no float32 BLAS
    chat, said = (_passages(list(t)).astype(np.float64) for t in (CHAT, FACTS))
    talk = np.round((vectors @ chat.T).max(axis=1, initial=0) - (vectors @ said.T).max(axis=1, initial=0), 4)
    kept, vectors = [s for s, t in zip(kept, talk, strict=True) if t < SMALL_TALK], vectors[talk < SMALL_TALK]
    own = [s.role == "ai" and not _THE_USER.search(s.text) for s in kept]  # the assistant's about itself
    lines = [("assistant: " if mine else "") + s.text for s, mine in zip(kept, own, strict=True)]
    similar = np.triu(vectors @ vectors.T, 1)
    drop = set(np.where(similar.max(axis=1, initial=0) >= SAME)[0])
    order = sorted(
        (i for i in range(len(kept)) if i not in drop), key=lambda i: (-similar[i].max(initial=0), i)
    )
    while max_words and order and sum(len(lines[i].split()) for i in order) > max_words:
        drop.add(order.pop(0))
    text = TEXT[language]
    body = "".join(f"\n- {line}" for i, line in enumerate(lines) if i not in drop)
    return text["heading"] + (body or f"\n{text['none']}")


def _language(instructions: str) -> str | None:
    """The answer language the last language instruction asks for, else None."""
    found = [next(g for g in m.groups() if g) for m in _LANGUAGE.finditer(instructions)]
    return _LANGUAGES[found[-1].lower()] if found else None


@lru_cache(maxsize=65536)
def is_summary_request(text: str) -> bool:
    """Does ``text`` ask for a summary of this conversation ("Summarize our chat", "대화를 요약해 줘",
    or bare: "Summarize, please")? One merely provided ("Summary:") or of something else is not."""
    return bool(_SUMMARY_REQUEST.search(text)) and (
        bool(_ABOUT_CONVERSATION.search(text)) or len(content_words(_SUMMARY_REQUEST.sub(" ", text))) <= 1
    )


def respond(messages: Sequence[BaseMessage]) -> tuple[str, list[dict]]:
    """The reply to ``messages`` (the last user message is the request) and the evidence it used:
    a summary, an answer or "Got it.", from ``messages`` only."""
    sentences, instructions = read(messages)
    last = next((i for i in range(len(messages) - 1, -1, -1) if _role(messages[i]) == "human"), -1)
    own = [
        s.text.removeprefix("Question:").strip()
        for s in sentences
        if s.message == last and s.memory is None and s.role == "human" and s.marked != "role"
    ]
    asks = [s for s in own if is_question(s)]
    system = [s.text for s in sentences if s.role == "system" and s.memory is None]
    facts = evidence(sentences)
    said = " ".join(own) or " ".join(s.text for s in facts)
    language = _language(instructions) or language_of(" ".join(asks) or said)
    if any(map(is_summary_request, own)) or (not asks and any(map(is_summary_request, system))):
        cap = next((int(a or b) for a, b in _MAX_WORDS.findall(instructions)), None)
        request = max(
            (s.message for s in sentences if s.memory is None and is_summary_request(s.text)), default=last
        )
        facts = [s for s in facts if s.message != request or s.marked]  # not the instructions around it
        return summarize(facts, _language(instructions) or language_of(said), cap), []
    if asks:
        return answer(" ".join(asks), facts, language)
    request = any(classify_turn(s) == "request" for s in own)  # "Tell me a joke.": not from the messages
    return TEXT[language]["unknown" if request else "ack"], []


@lru_cache(maxsize=65536)
def _framed_tokens(role: str, text: str) -> int:
    return len(encode_text(f"{role}\n{text}")) + 4  # as sent; a special-token string is text


def provider_usage(messages: Sequence[BaseMessage], reply: str) -> dict[str, int]:
    """Token usage as a provider reports it, by its own chat template: each message's role and
    content with 4 tokens of framing, plus 2 to open the reply (``helpers.tokens.count_tokens`` is
    the course's estimate from OpenAI's rule, 3 per message plus 3: the two differ, as they do between
    an estimate and a bill)."""
    n_in = sum(_framed_tokens(_role(m), _text(m)) for m in messages) + 2
    n_out = count_text_tokens(reply) + 1  # the end-of-turn token
    return {"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out}


class OfflineChatModel(BaseChatModel):
    """Offline stand-in: a small program, NOT a language model (see the module's model card). No
    network, no key, no state between calls; it answers only from the messages it is sent."""

    @property
    def _llm_type(self) -> str:
        return MODEL_NAME

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": MODEL_NAME, "threshold": THRESHOLD, "growth": GROWTH, "update": UPDATE}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text, used = respond(messages)
        for marker in stop or []:
            text = text.split(marker)[0] if marker else text
        message = AIMessage(
            content=text,
            usage_metadata=provider_usage(messages, text),
            response_metadata={"model_name": MODEL_NAME, "evidence": used},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineChatModel:
        """Accept tools so ``create_agent`` works; this model never calls them. Returns self."""
        return self
