"""Layered memory (lesson 07): lessons 04-06 as layers of one prompt, each with its own token budget::

    [system prompt,
     retrieved section, any session       <- retrieval budget    (budget.py, store.py)
     running summary of this session      <- max_summary_tokens  (summary.py)
     *newest messages, the new message]   <- window_tokens       (window.py)

Newest last: retrieved lines are old messages as said (an old value among them), the running summary holds
this session's folded messages (a changed fact at its newest), and the window continues it, where lesson 05
put the summary: a model reads the line it saw last as the newest.

Summary and retrieved section are user messages holding a ``memory_block``: data, never the system prompt's
instructions. Each message is a Milvus row with its kind (kinds.py), speaker and date. LangChain has each
layer (``trim_messages``, ``SummarizationMiddleware``, a Milvus retriever), not budgets per section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from helpers.budget import fill_budget
from helpers.config import check_setting
from helpers.history import RowSources, each_once
from helpers.kinds import (
    SEARCHED_KINDS,
    OtherSpeaker,
    asks,
    named_speaker,
    normalized,
    stored_kind,
)
from helpers.memory import COVERS_KEY, RETRIEVED_ID, Prompt, label
from helpers.retrieval import EMBED_CHUNKS, step_messages
from helpers.store import FIELDS, MAX_TOP_K, MemoryStore, Row, split_utf8, utf8_len, validate_id
from helpers.summary import TokenTrigger, split_stored, summarize_step
from helpers.text import is_blank, nfc, nfc_message
from helpers.tokens import count_message_tokens, count_text_tokens, default_counter
from helpers.window import token_window

MAX_RETRIEVAL_TOKENS = 4000  # the most a question's retrieved section grows to with retrieval_share
#: Chunks of a long assistant reply embedded: its first; the later ones are stored without (most of a replay's
#: e5 work; a user's paste keeps every chunk findable: docs/design-notes.md, "Where a replay's time goes").
EMBED_REPLY_CHUNKS = 1
#: A search asks for a candidate per this many tokens of its budget, at least ``MIN_CANDIDATES`` (hits that do
#: not fit, or that the window holds, are passed over: the budget needs more candidates than it keeps).
TOKENS_PER_CANDIDATE, MIN_CANDIDATES = 20, 30
#: A summary folds past this many tokens at least (or twice the window): fewer, larger summary calls.
MIN_SUMMARIZE_OVER = 800


@dataclass
class LayeredTurn:
    """One turn of ``LayeredMemory``: each section's size (tokens), the rows retrieved (hits, neighbours)."""

    round: int  # of the turn's first row
    window_section_tokens: int = 0
    summary_section_tokens: int = 0
    retrieved_section_tokens: int = 0
    retrieved: list[Row] = field(default_factory=list)
    supplied: str = ""  # the summary and hits sent: a reply that only repeats them is an echo
    skipped: list[str] = field(default_factory=list)  # why a message of the turn was not stored


class LayeredMemory:
    """Window + running summary + retrieval within a token budget, as a ``MemoryStrategy``. Args (budgets in
    tokens): ``store``, ``user_id``, ``session_id`` (the first session's); ``window_tokens`` the newest
    messages and the new one; ``max_summary_tokens`` the summary's cap; ``summarize_over`` fold recent
    messages into it past this, keeping ``window_tokens`` (default ``max(800, 2 * window_tokens)``: fewer,
    larger calls); ``retrieval_tokens`` the retrieved section for a message that asks, grown to
    ``retrieval_share`` of the tokens in Milvus (``0``: fixed; ``retrieval_budget``);
    ``statement_retrieval_tokens`` for any other; ``neighbours_of`` the top this-many hits bring their
    speaker's nearest message before and after (two rounds at most); ``session_date`` ISO; ``names`` the
    speakers' (role -> name), shown with each row (a question naming one gets their rows first:
    ``prefer``). ``log``: a ``LayeredTurn`` a turn; ``last_retrieved``: the latest rows retrieved;
    ``embed_reply_chunks``: chunks of a long reply embedded (``EMBED_REPLY_CHUNKS``; ``None``: all).
    ValueError (a setting out of range; a budget a Milvus search cannot serve) or InvalidIdError when made."""

    cost_note = ("every turn; summary calls now and then",
                 "window + running summary + statements retrieved within a token budget")

    def __init__(self, store: MemoryStore, user_id: str, session_id: str = "default", *,
                 window_tokens: int = 150, max_summary_tokens: int = 200,
                 summarize_over: int | None = None, retrieval_tokens: int = 500,
                 retrieval_share: float = 0.1, statement_retrieval_tokens: int = 0,
                 neighbours_of: int = 3, session_date: str = "",
                 names: Mapping[str, str] | None = None) -> None:
        # each setting refused now, not as a Milvus error at the first question
        # the largest budget whose candidates (one per TOKENS_PER_CANDIDATE) a search serves
        most = TOKENS_PER_CANDIDATE * (MAX_TOP_K + 1) - 1
        check_setting("window_tokens", window_tokens, 1)
        check_setting("max_summary_tokens", max_summary_tokens, 1)
        check_setting("retrieval_tokens", retrieval_tokens, 1, most)
        check_setting("neighbours_of", neighbours_of, 0, MAX_TOP_K)
        check_setting("statement_retrieval_tokens", statement_retrieval_tokens, 0, most)
        if summarize_over:  # None: the default below
            check_setting("summarize_over", summarize_over, 1)
        if not 0 <= retrieval_share <= 1 or any(utf8_len(n) > FIELDS["name"] for n in (names or {}).values()):
            raise ValueError(f"need retrieval_share in [0, 1], names of at most {FIELDS['name']} bytes "
                             f"(the name column), got {retrieval_share!r}, {names!r}")
        self.store, self.names, self.user_id = store, names, validate_id(user_id, "user id")
        self.start_session(session_id, date=session_date)  # checks the id and the date; round 1
        self.window_tokens, self.max_summary_tokens = window_tokens, max_summary_tokens
        fold_over = summarize_over or max(MIN_SUMMARIZE_OVER, 2 * window_tokens)
        self.trigger = TokenTrigger(fold_over, window_tokens)
        self.retrieval_tokens, self.retrieval_share = retrieval_tokens, retrieval_share
        self.statement_retrieval_tokens, self.neighbours_of = statement_retrieval_tokens, neighbours_of
        self.stored_tokens, self.other_speaker = 0, OtherSpeaker()
        self.embed_reply_chunks = EMBED_REPLY_CHUNKS
        self.log, self.last_retrieved = [], []  # list[LayeredTurn], list[Row]
        self._sources, self._turn = RowSources(), None  # the turn being written: a LayeredTurn

    name = property(lambda self: f"layered (window {self.window_tokens} + summary {self.max_summary_tokens}"
                    f" + retrieval {self.retrieval_tokens} tokens)")
    embedding_calls = property(lambda self: self.store.embedding_calls)
    embedding_seconds = property(lambda self: self.store.embedding_seconds)

    def start_session(self, session_id: str, stored: Sequence[BaseMessage] = (),
                      date: str = "") -> list[BaseMessage]:
        """A new session (on ``date``, ISO, else ValueError): window and summary start empty; returns []."""
        if date:
            datetime.fromisoformat(date)  # a ValueError now, not at the first write
        self.session_id, self.round, self.session_date = validate_id(session_id, "session id"), 1, date
        return []

    def retrieval_budget(self, message: str) -> int:
        """Tokens the retrieved section may take for ``message``: if it asks (``kinds.asks``: "I prefer
        examples. Can you ...?" too) ``max(retrieval_tokens, retrieval_share * stored tokens)`` (at most
        ``MAX_RETRIEVAL_TOKENS``), else ``statement_retrieval_tokens``."""
        if not asks(message):
            return self.statement_retrieval_tokens
        grown = min(MAX_RETRIEVAL_TOKENS, int(self.retrieval_share * self.stored_tokens))
        return max(self.retrieval_tokens, grown)

    def prompt(self, system: SystemMessage, stored: Sequence[BaseMessage],
               new_message: HumanMessage) -> Prompt:
        """``[system, retrieved?, summary?, *window]`` for this turn. A new message over ``window_tokens``
        is sent whole, alone in the window; the summary and retrieved sections keep their own budgets."""
        summary, recent = split_stored(stored)
        new_message = nfc_message(new_message)  # one Unicode form for the window, the search, the model
        window = token_window([*recent, new_message], self.window_tokens, strict=False)
        turn = self._turn = LayeredTurn(round=self.round)
        turn.window_section_tokens = sum(map(default_counter().message_tokens, window))
        turn.summary_section_tokens = count_message_tokens(summary) if summary is not None else 0
        retrieved = self._retrieve(new_message.text, window)
        turn.retrieved_section_tokens = count_message_tokens(retrieved) if retrieved is not None else 0
        sections = [m for m in (retrieved, summary) if m is not None]  # newest last
        turn.supplied = "\n".join(m.text for m in sections)
        return label([system, *sections, *window], system, new_message)

    def prefer(self, question: str):
        """``hit -> bool``: the hits to put first for ``question``, the lines of the one person it names
        (``kinds.named_speaker``: "What did Mel say ...?"), or ``None``."""
        named = named_speaker(question, self.names)
        return None if named is None else lambda hit: hit.name == named

    def _retrieve(self, question: str, window: Sequence[BaseMessage]) -> HumanMessage | None:
        budget = self.retrieval_budget(question)
        self._turn.retrieved = self.last_retrieved = []
        if budget < 1 or is_blank(question):  # nothing to read: nothing to search by
            return None
        in_window = {normalized(m.text) for m in window}
        window_ids = {m.id: normalized(m.text) for m in window if m.id}  # a hit's message: its id and words

        def in_the_window(hit) -> bool:  # the same words, or the message it was written from
            words = normalized(hit.content)
            sources = self._sources.sources([hit])
            return words in in_window or any(i in window_ids and words in window_ids[i] for i in sources)

        candidates = max(MIN_CANDIDATES, budget // TOKENS_PER_CANDIDATE)
        rows, text = fill_budget(self.store, self.user_id, question, budget, candidates=candidates,
                                 neighbours_of=self.neighbours_of, words=True, skip=in_the_window,
                                 prefer=self.prefer(question))
        self._turn.retrieved = self.last_retrieved = list(rows)
        covers = {COVERS_KEY: list(dict.fromkeys(self._sources.sources(rows)))}  # chunks: their message once
        return HumanMessage(text, id=RETRIEVED_ID, additional_kwargs=covers) if text else None

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Write the step's messages (``step_messages``) to Milvus, fold old ones into the running summary
        past ``summarize_over``; return ``[summary?, *recent]``. ``SummarizationError``: the call failed."""
        turn, messages = self._turn or LayeredTurn(round=self.round), step_messages(stored)
        new = [m for i, m in enumerate(messages) if not self._sources.has(self.session_id, self.round + i, m)]
        recorded = any(m.response_metadata.get("recorded") for m in new)
        write_messages(self.store, self._sources, self.user_id, self.session_id, self.round, messages,
                       date=self.session_date, supplied="" if recorded else turn.supplied,  # never an echo
                       other=self.other_speaker, names=self.names, embed_reply_chunks=self.embed_reply_chunks,
                       skipped=turn.skipped)
        self.stored_tokens += sum(count_text_tokens(m.text) for m in new)
        stored = each_once(stored)  # a turn run again: each message once
        step = summarize_step(model, stored, self.trigger, self.max_summary_tokens)
        if step is not None:
            stored = step.messages
        self.log.append(turn)
        self._turn, self.round = None, self.round + len(messages)
        return list(stored)


@dataclass
class _ToStore:
    """One message of a step, as ``write_messages`` stores it."""

    round: int
    message: BaseMessage
    text: str  # NFC
    speaker: str  # "user" or "assistant"
    kind: str
    long: bool  # more than one chunk (``MemoryStore.max_chunk_bytes``)
    embed: bool  # embedded now (its kind is searched)


def write_messages(store: MemoryStore, sources: RowSources, user_id: str, session_id: str,
                   first_round: int, messages: Sequence[BaseMessage], *, date: str = "",
                   supplied: str = "", other: OtherSpeaker | None = None,
                   names: Mapping[str, str] | None = None, embed_chunks: int | None = EMBED_CHUNKS,
                   embed_reply_chunks: int | None = EMBED_REPLY_CHUNKS,
                   skipped: list[str] | None = None) -> list[str]:
    """Store ``messages`` (human: the user's, else the assistant's) in one insert, a row each, rounds
    ``first_round``, ``+ 1`` ..., with its speaker, its name in ``names`` (role -> name), ``date`` and kind
    (``kinds.stored_kind``; ``supplied``: what the prompt carried, ``other``: counts the reply side's turns).
    Only rows of ``kinds.SEARCHED_KINDS`` are embedded, the others stored without (listed,
    neighbours, never searched by meaning); at most ``embed_chunks`` texts embedded in all (``None``: no
    bound; a long message's first chunk now, the rest wait for room left over), of an assistant's message
    only its first ``embed_reply_chunks`` chunks. A blank message keeps its round, is not stored, why
    appended to ``skipped``; one already in ``sources`` (a turn run again) is not stored twice, another
    text in its round replaces the first try's (``delete_round``). Returns the ids of the stored chunks."""
    calls = store.embedding_calls
    to_store: list[_ToStore] = []
    for number, message in enumerate(messages, start=first_round):
        if is_blank(message.text):
            why = "blank text, not stored (nothing to find by meaning)"
            if skipped is not None:
                skipped.append(f"{message.id or message.type}: {why}")
            continue
        if sources.has(session_id, number, message):  # a turn run again: stored the first time
            continue
        if (session_id, number) in sources:  # its first try wrote another text here: this one replaces it
            store.delete_round(user_id, session_id, number)
        text, speaker = nfc(message.text), "user" if message.type == "human" else "assistant"
        if speaker == "assistant" and other is not None:
            other.add(text)  # is the other side a person? counted before its turn is classified
        long = len(split_utf8(text, store.max_chunk_bytes)) > 1
        kind = stored_kind(text, speaker, other is not None and other.is_person, long, supplied)
        embed = kind in SEARCHED_KINDS
        to_store.append(_ToStore(number, message, text, speaker, kind, long, embed))

    def room() -> int:  # texts this step may still embed
        return embed_chunks - (store.embedding_calls - calls)

    short = [m.text for m in to_store if m.embed and not m.long]
    vectors = iter(store.embed(short) if short else [])  # the short ones in one call
    ids = []
    with store.one_insert():
        for m in to_store:
            in_chunks = m.embed and m.long and embed_chunks is not None  # the first chunk now, then what fits
            ids += store.add(user_id, session_id, m.round, m.text, kind=m.kind, speaker=m.speaker,
                             name=(names or {}).get(m.speaker, ""), date=date, embed=m.embed,
                             vector=next(vectors) if m.embed and not m.long else None,
                             embed_chunks=max(1, room()) if in_chunks else None,
                             embedded_chunks=embed_reply_chunks if m.speaker == "assistant" else None)
            sources.add(session_id, m.round, m.message)
        if store.waiting and embed_chunks is not None and room() > 0:
            store.catch_up(room())
    return ids
