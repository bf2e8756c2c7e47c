"""Retrieval that survives real conversations (issue 10, part 3): pure functions, no Milvus.

Plain top-k retrieval fails on long two-person conversations in measurable ways
(``benchmarks/bench_recall.py`` has the numbers): earlier *questions* look more like a new question
than the statement that answers it, a fixed k wastes the budget or drops a memory that does not fit
without trying the next one, the fact is often in the turn *next to* the hit, and the assistant's
words get flattened into the user's. This module holds the pieces that fix that, as functions a
strategy (``RetrievalMemory``, ``LayeredMemory``) can call on whatever its store returns:

* ``classify_turn``: the ``kind`` a turn is stored with (``statement``, ``question``, ``request``,
  ``reply``, ``dont_know``), so a search can *filter* questions out in Milvus
  (``MemoryStore.search(..., kinds=FACT_KINDS)``) instead of re-ranking a handful of candidates.
* ``lexical_text``: the text given to Milvus' BM25 analyzer (Korean/CJK as character bigrams);
  ``rrf_fuse`` / ``weighted_fuse``: merge the dense and the BM25 ranking (hybrid search). Both
  live in ``helpers.hybrid`` and are re-exported here.
* ``select_memories``: fill a token budget best-first, skipping a memory that does not fit and
  trying the next; optionally bring each hit's neighbouring turns, within the same budget.
* ``format_memories``: the retrieved memories as the model sees them, grouped by session with the
  session's date, each line marked with its speaker (the assistant's words stay the assistant's).

Items are duck-typed: anything with the attributes of ``helpers.milvus_store.Memory``
(``turn_id``, ``content``, ``session_id``, ``round``, and optionally ``date``, ``speaker``,
``kind``, ``timestamp``) works, so the functions work on any store that returns such items.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from datetime import date as _date
from typing import Any

from helpers.hybrid import (  # noqa: F401 - re-exported: recall is the one module to import
    RRF_K,
    STOP_WORDS,
    lexical_text,
    rrf_fuse,
    weighted_fuse,
)

#: Kinds worth retrieving as evidence: what was *stated* (by the user or, with ``reply``, the
#: assistant). Questions, requests and "I don't know" answers are stored but not searched.
FACT_KINDS = ("statement", "fact")
#: Kinds never brought as the context of a hit: small talk, "I don't know", answers that repeat
#: their memories, and the speaker's own questions and requests, which state no fact (on the easy
#: conversation they took 0.5% of full history's tokens; leaving them out also reached 3 more
#: probes of the hard conversation, ``bench_layered.py``).
NEVER_NEIGHBOURS = ("chat", "dont_know", "echo", "question", "request")
#: Every kind ``classify_turn`` returns, plus ``fact`` (an extracted first-person sentence) and
#: ``summary`` (a stored summary).
KINDS = ("statement", "question", "request", "chat", "reply", "dont_know", "echo", "fact",
         "summary")

_REQUEST_START = re.compile(
    r"^(please\s+)?(explain|give|write|tell|suggest|list|translate|help|recommend|summari[sz]e|"
    r"draft|make|show|plan|describe|compare|name|find|create|convert|define|outline|proofread|"
    r"rewrite|fix|check|can you|could you|would you)\b", re.IGNORECASE)
_REQUEST_END_KO = re.compile(r"(주세요|주실래요|줘|줄래|알려 줘|부탁해요|부탁드려요)[.!?~]*\s*$")
_DONT_KNOW = re.compile(
    r"\b(i\s+(do not|don't|dont)\s+know|i'm not sure|i am not sure|i don't have (that|any)|"
    r"you (haven't|have not|never) (told|mentioned|said)|no idea|i can't (recall|remember)|"
    r"i do not have (that|any))\b|모르겠|알 수 없|말씀하신 적이 없", re.IGNORECASE)


_SENTENCE = re.compile(r"[^.!?。！？…]+(?:[.!?。！？…]+[\"')\]]*|$)")
_WORD = re.compile(r"\w+")
#: A question turn may open with a few words of its own ("Wow, nice! How did it go?"); a turn
#: whose non-question sentences hold at least this many content words states something and is a
#: ``statement`` ("I love painting. Do you?").
STATEMENT_WORDS = 2
#: Words of small talk that state nothing ("Hey Mel! Good to see you! How have you been?").
CHAT_WORDS = frozenset("""hey hi hello oh wow yeah yes yep ok okay nice great awesome cool
amazing wonderful fantastic lovely thanks thank congratulations congrats glad good see hear
sounds sound really sure haha lol omg well hmm ah aw awww dear sorry happy fun interesting
helpful makes sense go got right exactly agreed bye""".split())
#: Korean small talk, matched at the start of a word (particles and endings follow): 네, 고마워요,
#: 감사합니다, 이해했어요, 알겠어요, 그렇군요, 도움이 됐어요 ...
CHAT_PREFIXES_KO = ("네", "응", "와", "우와", "고마", "감사", "이해했", "알겠", "그렇", "맞아", "맞네",
                    "도움", "됐어", "좋네", "대박", "ㅋ", "ㅎ")
_STOP = frozenset(STOP_WORDS)


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content: lower-cased, not in ``hybrid.STOP_WORDS`` or
    ``CHAT_WORDS`` (nor a Korean word starting with one of ``CHAT_PREFIXES_KO``), two characters
    or more (a Korean word of two syllables counts)."""
    return [w for w in _WORD.findall(text.lower())
            if len(w) > 1 and w not in _STOP and w not in CHAT_WORDS
            and not (w[0] >= "\u3131" and w.startswith(CHAT_PREFIXES_KO))]


def split_sentences(text: str) -> list[str]:
    """``text`` cut after ``. ! ? 。 ！ ？ …`` (closing quotes and brackets stay with their
    sentence); empty pieces dropped."""
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]


_FIRST_PERSON = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|im|ive|me|my|mine|myself|we|we're|we've|our|ours|us)\b|"
    r"(저는|제가|저도|나는|내가|나도|저희|우리)", re.IGNORECASE)
#: What an assistant says of itself while helping ("I can help", "I hope", "let me know"): not a
#: fact about a person.
_HELPER_TALK = re.compile(
    r"\b(i\s+(can|could|can't|cannot|hope|think|suggest|recommend|understand|see|mean|guess|"
    r"would|'d|will|'ll|am\s+(glad|sorry|happy|not sure)|'m\s+(glad|sorry|happy|not sure|here))|"
    r"let\s+(me|us)|(help|tell|ask|from|for)\s+me|you\s+told\s+me|(can|may)\s+i)\b",
    re.IGNORECASE)


_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|「[^」]*」')


def speaks_of_self(text: str) -> bool:
    """Does ``text`` say something about its speaker ("I painted that lake sunrise last year",
    "my kids", "저는 ...")? First-person words count once quoted speech ('You told me: "I'm
    Mina"') and an assistant's helper phrases ("I can help", "I hope", "let me know", "you told
    me") are taken out."""
    said = _QUOTED.sub(" ", text)  # 'You told me: "I'm Mina"' quotes someone else
    return bool(_FIRST_PERSON.search(_HELPER_TALK.sub(" ", said)))


class OtherSpeaker:
    """Is the other side of the conversation a person or an AI assistant? Counted from its turns:
    an assistant rarely speaks of itself (none of the hard conversation's 270 replies, once
    helper talk like "I can help" is taken out), a friend often does (the friends conversation:
    75 of 208 turns, 36%). After ``min_turns`` turns, the other side is a person when at least
    ``share`` of its turns ``speaks_of_self``; turns stored before that keep the assistant's
    kinds.

    Attributes:
        turns: the other side's turns seen. self_talk: how many of them spoke of the speaker.
    """

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


def classify_turn(text: str, speaker: str = "user", person: bool = False) -> str:
    """The ``kind`` to store a turn with (rules, no model; measured in ``bench_recall.py``).

    Args:
        text: the turn's text.
        speaker: ``"user"`` or ``"assistant"`` (anything else is treated as the user).
        person: the assistant's side is a person (a friend in a conversation between two
            people, ``OtherSpeaker.is_person``): their turns are classified like the user's
            (statement, question, chat), since "Teddy. The kids chose it." is a fact about
            them even without "I".

    Returns:
        * ``"dont_know"``: the assistant says it does not know ("I don't know", "you haven't told
          me", "모르겠어요").
        * ``"question"``: every sentence that carries content asks something: the sentences
          that do not end with ``?`` hold fewer than ``STATEMENT_WORDS`` content words ("Wow,
          nice! How did it go?"). A turn that states something and then asks ("I went to a
          pottery class yesterday. What about you?", common in conversations between people) is
          a statement: ending with ``?`` alone does not make a question.
        * ``"request"``: the user's turn starts like an instruction ("Explain ...", "Can you
          ...") or ends like a Korean request (``주세요``).
        * ``"chat"``: no content word at all (``content_words``: "Thanks, that is helpful.",
          "Okay, makes sense."): small talk, stored but never searched.
        * else ``"statement"``: the user's turn, or the other speaker's when it speaks of
          itself (``speaks_of_self``: in a conversation between two people, "I painted that
          lake sunrise last year" is a fact about the second person); ``"reply"``: the
          assistant's other turns (explanations, acknowledgements: "Powder has its own acid").
        On the hard conversation no evidence turn is a question or a request by these rules (the
        benchmark checks it).

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    stripped = text.strip()
    if speaker == "assistant" and _DONT_KNOW.search(stripped):
        return "dont_know"
    sentences = split_sentences(stripped)
    asks = [s for s in sentences if re.search(r"[?？][\"')\]]*$", s)]
    if asks:
        said = " ".join(s for s in sentences if s not in asks)
        if len(content_words(said)) < STATEMENT_WORDS:
            return "question"
    elif speaker != "assistant" and (_REQUEST_START.match(stripped)
                                     or _REQUEST_END_KO.search(stripped)):
        return "request"
    if speaker == "assistant" and not person and not speaks_of_self(stripped):
        return "reply"
    if not content_words(stripped):
        return "chat"
    return "statement"


def is_echo(reply: str, supplied: str, share: float = 0.6) -> bool:
    """Does ``reply`` only repeat what memory supplied (``supplied``: the retrieved memories and
    the summary the reply's prompt carried)? True when at least ``share`` of its content words
    (``content_words``, at least 3) are words of ``supplied``.

    Such an answer adds no fact of its own; stored as kind ``"echo"`` it is never searched, so a
    model's answers that quote memories are not retrieved as if they were new facts, and
    re-quoted (the self-quoting loop measured on real conversations in issue 10)."""
    words = content_words(reply)
    if len(words) < 3 or not supplied:
        return False
    known = set(content_words(supplied))
    return sum(w in known for w in words) >= share * len(words)


# --- selection ------------------------------------------------------------------------------------


def fill_budget(ranked: Iterable[Any], budget_tokens: int, cost: Callable[[Any], int],
                max_items: int | None = None) -> tuple[list[Any], list[Any]]:
    """Take ``ranked`` items best-first while they fit in ``budget_tokens``; an item that does
    not fit is skipped and the *next* one is tried (never stop at the first that overflows).

    Args:
        ranked: items, best first.
        budget_tokens: tokens available (int >= 0).
        cost: tokens one item costs as sent (e.g. ``memory_cost``).
        max_items: stop after this many (``None``: only the budget limits).

    Returns:
        ``(selected, skipped)``: selected in rank order; skipped = items that did not fit.

    Raises:
        ValueError: ``budget_tokens`` < 0.
    """
    if budget_tokens < 0:
        raise ValueError(f"budget_tokens must be >= 0, got {budget_tokens}")
    selected, skipped, used = [], [], 0
    for item in ranked:
        if max_items is not None and len(selected) >= max_items:
            break
        need = cost(item)
        if used + need <= budget_tokens:
            selected.append(item)
            used += need
        else:
            skipped.append(item)
    return selected, skipped


def _key(item: Any) -> Hashable:
    return getattr(item, "turn_id", None) or id(item)


def select_memories(ranked: Sequence[Any], budget_tokens: int, cost: Callable[[Any], int], *,
                    neighbours: Mapping[Hashable, Sequence[Any]] | None = None,
                    max_hits: int | None = None,
                    group_cost: Callable[[Any], tuple[Hashable, int]] | None = None,
                    neighbour_hits: int | None = None) -> list[Any]:
    """Best-first budget fill with neighbouring turns.

    For each hit in rank order: take it if it fits (else skip it and go on), then take its
    neighbours (``neighbours[hit.turn_id]``, nearest first, e.g. the turn before and the one
    after) that fit and are not already taken. A neighbour that does not fit is skipped too.

    Args:
        ranked: hits, best first (``Memory``-like: ``turn_id`` identifies an item).
        budget_tokens: tokens for all selected memories together (>= 0).
        cost: tokens of one memory as sent (``memory_cost``).
        neighbours: turn id -> its neighbouring memories (``MemoryStore.neighbours``);
            ``None``: no neighbours.
        max_hits: at most this many *hits* (neighbours not counted); ``None``: budget only.
        group_cost: ``item -> (group, tokens)``: the first item taken from a group also pays
            ``tokens`` (e.g. the session header line of ``format_memories``, ``header_cost``),
            so the formatted text stays within the budget.
        neighbour_hits: only the first this many hits taken bring their neighbours (``None``:
            every hit). Neighbours cost budget that later hits could use.

    Returns:
        The selected memories in the order they were taken (hit, its neighbours, next hit ...);
        ``format_memories`` puts them in conversation order.

    Raises:
        ValueError: ``budget_tokens`` < 0.
    """
    if budget_tokens < 0:
        raise ValueError(f"budget_tokens must be >= 0, got {budget_tokens}")
    taken: dict[Hashable, Any] = {}
    groups: set[Hashable] = set()
    used, hits = 0, 0

    def take(item: Any) -> bool:
        nonlocal used
        need, group = cost(item), None
        if group_cost is not None:
            group, extra = group_cost(item)
            if group not in groups:
                need += extra
        if used + need > budget_tokens:
            return False
        taken[_key(item)] = item
        used += need
        if group_cost is not None:
            groups.add(group)
        return True

    for hit in ranked:
        if max_hits is not None and hits >= max_hits:
            break
        if _key(hit) in taken or not take(hit):
            continue
        hits += 1
        if neighbour_hits is not None and hits > neighbour_hits:
            continue
        for near in (neighbours or {}).get(_key(hit), ()):
            if _key(near) not in taken:
                take(near)
    return list(taken.values())


def nearest_same_speaker(hit: Any, around: Sequence[Any], each_side: int = 1) -> list[Any]:
    """Of ``around`` (``MemoryStore.neighbours(..., before=2, after=2)[hit.turn_id]``), the
    ``each_side`` nearest turns of the hit's own speaker before it and after it, nearest first.

    In a two-person conversation the turn right after a user's statement is the assistant's reply;
    the user's next turn ("A she! We named her Luna.") is two rounds on. Measured on the hard
    conversation (budget 300): neighbours of the top hit, same speaker, 0.90 / 0.74 any / all;
    +-1 any speaker 0.89 / 0.73; +-2 any speaker 0.84 / 0.69 (``bench_recall.py``)."""
    speaker = getattr(hit, "speaker", "")
    same = [m for m in around if getattr(m, "speaker", "") == speaker]
    before = sorted((m for m in same if m.round < hit.round), key=lambda m: -m.round)[:each_side]
    after = sorted((m for m in same if m.round > hit.round), key=lambda m: m.round)[:each_side]
    out = []
    for i in range(each_side):
        out += [side[i] for side in (before, after) if i < len(side)]
    return out


# --- formatting -----------------------------------------------------------------------------------

DEFAULT_SPEAKERS = {"user": "User", "assistant": "Assistant"}


def _weekday(iso: str) -> str:
    try:
        return _date.fromisoformat(iso[:10]).strftime("%a")
    except ValueError:
        return ""


def memory_line(memory: Any, speakers: Mapping[str, str] = DEFAULT_SPEAKERS) -> str:
    """One memory as one line: ``"User: <text>"`` or ``"Assistant: <text>"`` (speaker from
    ``memory.speaker``; a memory without one, e.g. an old ``"User: ...\\nAI: ..."`` row, is shown
    as stored). Line breaks inside become spaces, so one line is one speaker."""
    text = " ".join(str(memory.content).split())
    speaker = getattr(memory, "speaker", "") or ""
    if not speaker:
        return text
    return f"{speakers.get(speaker, speaker)}: {text}"


def format_memories(memories: Sequence[Any], *, show_dates: bool = True,
                    speakers: Mapping[str, str] = DEFAULT_SPEAKERS,
                    header: str = "Relevant memories (oldest first):") -> str:
    """The retrieved memories as the model is sent them, in conversation order.

    Memories are sorted by (date, session, round); consecutive memories of one session share a
    header line with the session's date and weekday (so "last Tuesday" can be resolved), and
    each memory is its own line marked with its speaker::

        Relevant memories (oldest first):
        [2025-02-22 Sat, session-3]
        User: I finally did it: I adopted a dog from the shelter last Tuesday!
        Assistant: Congratulations, that's huge! Is it a he or a she?

    Args:
        memories: ``Memory``-like items (``content``, ``session_id``, ``round``, optional
            ``date``, ``speaker``).
        show_dates: put the date in the session header (``False``: session id only).
        speakers: display names per stored speaker.
        header: first line.

    Returns:
        The text; ``""`` for no memories.
    """
    if not memories:
        return ""
    ordered = sorted(memories, key=lambda m: (getattr(m, "date", "") or getattr(m, "timestamp", ""),
                                              m.session_id, m.round))
    lines, current = [header], None
    for memory in ordered:
        group = (memory.session_id, getattr(memory, "date", "") or "")
        if group != current:
            current = group
            lines.append(session_header(memory, show_dates))
        lines.append(memory_line(memory, speakers))
    return "\n".join(lines)


def session_header(memory: Any, show_dates: bool = True) -> str:
    """The header line ``format_memories`` writes before a session's memories."""
    date = getattr(memory, "date", "") or ""
    if show_dates and date:
        day = _weekday(date)
        return f"[{date}{' ' + day if day else ''}, {memory.session_id}]"
    return f"[{memory.session_id}]"


def header_cost(show_dates: bool = True, count: Callable[[str], int] | None = None
                ) -> Callable[[Any], tuple[Hashable, int]]:
    """A ``group_cost`` for ``select_memories``: group = (session, date), tokens = its header
    line plus the line break."""
    if count is None:
        from helpers.tokens import count_text_tokens as count

    def group_cost(memory: Any) -> tuple[Hashable, int]:
        return ((memory.session_id, getattr(memory, "date", "") or ""),
                count(session_header(memory, show_dates)) + 1)

    return group_cost


def memory_cost(memory: Any, count: Callable[[str], int] | None = None,
                speakers: Mapping[str, str] = DEFAULT_SPEAKERS) -> int:
    """Tokens one memory costs in ``format_memories`` (its line plus the line break), counted
    with ``count`` (default ``helpers.tokens.count_text_tokens``, tiktoken cl100k_base). Session
    header lines (~10 tokens per session shown) are not included: measure the formatted text for
    the exact total."""
    if count is None:
        from helpers.tokens import count_text_tokens as count
    return count(memory_line(memory, speakers)) + 1


# --- the whole step, for a strategy ---------------------------------------------------------------

HEADER = "Relevant memories (oldest first):"


def recall_within_budget(store: Any, user_id: str, question: str, budget_tokens: int = 300, *,
                         kinds: Sequence[str] | None = (*FACT_KINDS, "summary"),
                         hybrid: bool = False, candidates: int = 30, neighbours_of: int = 1,
                         show_dates: bool = True, skip: Callable[[Any], bool] | None = None,
                         count: Callable[[str], int] | None = None) -> tuple[list[Any], str]:
    """One retrieval step as ``bench_recall.py`` row 7 measured it: search the user's statements,
    fill ``budget_tokens`` best-first, the top hit brings the same speaker's turn before and after,
    format with session dates and speakers.

    Args:
        store: a ``MemoryStore`` opened with ``memory_fields=True`` (``full_text=True`` for
            ``hybrid``); any object with its ``search`` and ``neighbours`` works.
        user_id: whose memories.
        question: the new question (embedded once by ``store.search``).
        budget_tokens: tokens for the whole formatted text, header lines included (>= 0).
        kinds: kinds searched (default: statements, extracted facts, stored summaries);
            ``None`` searches every row.
        hybrid: add BM25 (RRF, BM25 weight 0.5); measured no gain on the course's conversations.
        candidates: hits fetched before the budget fill (30 covers 300 tokens of ~13-token
            statements twice over).
        neighbours_of: how many of the top hits bring neighbours (0: none); a neighbour of a
            kind in ``NEVER_NEIGHBOURS`` (small talk, "I don't know", echoes, questions,
            requests) is never brought.
        show_dates: session dates in the headers.
        skip: drop a hit for which this is true (e.g. already in the verbatim window).
        count: token counter (default tiktoken cl100k_base, ``helpers.tokens.count_text_tokens``).

    Returns:
        ``(memories, text)``: the selected memories in selection order, and the formatted text
        (``""`` when nothing fits or nothing is found). ``count(text) <= budget_tokens``.

    Raises:
        whatever ``store.search`` raises (e.g. ``MilvusStoreError`` without memory fields).
    """
    if count is None:
        from helpers.tokens import count_text_tokens as count
    hits = store.search(user_id, question, candidates, kinds=kinds, hybrid=hybrid,
                        lexical_weight=0.5)
    if skip is not None:
        hits = [h for h in hits if not skip(h)]
    unique: dict[str, Any] = {}  # the same words said twice take the budget once
    for hit in hits:
        unique.setdefault(" ".join(hit.content.lower().split()), hit)
    hits = list(unique.values())
    near: dict[Hashable, list[Any]] = {}
    if neighbours_of > 0 and hits:
        around = store.neighbours(user_id, hits[:neighbours_of], before=2, after=2)
        near = {h.turn_id: nearest_same_speaker(
                    h, [m for m in around.get(h.turn_id, []) if getattr(m, "kind", "")
                        not in NEVER_NEIGHBOURS], 1)
                for h in hits[:neighbours_of]}
    head = count(HEADER) + 1
    if budget_tokens < head:
        return [], ""
    chosen = select_memories(hits, budget_tokens - head, lambda m: memory_cost(m, count),
                             neighbours=near, neighbour_hits=neighbours_of,
                             group_cost=header_cost(show_dates, count))
    return chosen, format_memories(chosen, show_dates=show_dates, header=HEADER)
