"""Layered memory (lesson 07): a recent window, a running summary and Milvus recall in one prompt.

The three strategies of lessons 04-06 are layers, not rivals, as the article concludes:

* **window** for this turn: the newest messages of the current session, verbatim, cut to
  ``window_tokens`` by ``helpers.truncation.token_window``;
* **summary** for compression: what falls out of the window is folded into a running summary of
  the session (``helpers.summarization``), capped at ``max_summary_tokens``;
* **vector store** across sessions: every turn is written to Milvus (``helpers.milvus_store``).
  Without recall (an older collection), every ``summary_every`` turns (the article's plan: 20) a
  summary of those turns is written too, and before each answer the ``top_k`` most relevant
  memories are retrieved, cut to ``retrieval_tokens``. With recall (below), memories fill a token
  budget, and summaries are archived only when ``recall_kinds`` includes ``"summary"``.

The prompt, with each section marked and budgeted::

    [system prompt,
     SystemMessage("Summary of the earlier conversation: ...")     <- max_summary_tokens
     SystemMessage("Relevant memories from earlier turns: ...")     <- retrieval_tokens
     *recent messages, new question]                                 <- window_tokens

Memories already in the window are not retrieved twice. A new session (``start_session``)
starts with an empty window and summary: only Milvus carries over.

**Recall** (issue 10, part 3; on when the store has the ``kind`` / ``speaker`` / ``date`` columns,
``MemoryStore(..., memory_fields=True)``): each message is its own row, with its kind
(``recall.classify_turn``: statement, question, request, reply, dont_know; ``echo`` for an answer
that only repeats the memories it was sent, ``recall.is_echo``), speaker and the session's date
(``start_session(..., date=...)``). When the new message asks something (a question or a
request), ``recall.recall_within_budget`` searches only statements (either speaker's: in a
conversation between two people the other one's "I painted a sunrise last year" is a fact too),
so past questions, "I don't know" answers and echoes never crowd facts out; it fills the budget
(``retrieval_budget``: ``retrieval_tokens``, growing with the history by ``retrieval_share``)
best-first (a memory that does not fit is skipped, the next one tried), brings the top hit's
neighbouring lines of the same speaker, and shows each session's date and each line's speaker
(``User:`` / ``Assistant:``). A statement gets ``statement_retrieval_tokens`` (default none).
Without those columns (an older collection) it retrieves the top-k turns as before.

How this differs from the library way: LangChain has each layer (``trim_messages``,
``SummarizationMiddleware``, ``langchain_milvus.Milvus`` as a retriever) but no combined memory
with per-section budgets; LangGraph's store (``BaseStore``) with semantic search is its nearest
equivalent for the cross-session layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from helpers.memory import COVERS_KEY, RETRIEVED_ID, Prompt, label
from helpers.milvus_common import DEFAULT_MIN_SCORE, Memory, validate_id
from helpers.milvus_store import MemoryStore
from helpers.recall import FACT_KINDS, OtherSpeaker, classify_turn, recall_within_budget
from helpers.retrieval import StoreCounters, WrittenTurns, chronological, write_messages
from helpers.summarization import (
    TokenTrigger,
    conversation_language,
    split_stored,
    summarize_step,
    summary_prompt,
)
from helpers.tokens import count_message_tokens, count_text_tokens
from helpers.truncation import TokenBudgetError, token_window

_RETRIEVED_HEADER = "Relevant memories from earlier turns (retrieved by meaning, may be outdated):"


class WindowBudgetError(ValueError):
    """The new message alone does not fit ``window_tokens``: no prompt could hold the question."""


OVERFETCH = 4  # search top_k * 4, then rank_memories picks top_k
#: The most a question's retrieved section grows to with ``retrieval_share`` (tokens).
MAX_RETRIEVAL_TOKENS = 4000


def rank_memories(memories: Sequence[Memory]) -> list[Memory]:
    """Order retrieved memories for the prompt: drop repeats of the same user message (a user
    who asked "What is my name?" five times has five near-identical rows that would fill the
    top-k), then put statements before questions (a stored question carries no fact of its own,
    only its answer might), keeping the similarity order within each group.

    Args:
        memories: ``MemoryStore.search`` results, best first.

    Returns:
        A new list, same ``Memory`` objects.
    """
    seen, unique = set(), []
    for memory in memories:
        key = " ".join(memory.content.splitlines()[0].lower().split())
        if key not in seen:
            seen.add(key)
            unique.append(memory)
    return sorted(unique, key=lambda m: m.content.splitlines()[0].rstrip().endswith("?"))


@dataclass
class LayeredTurn:
    """What the layers did in one turn: the size of each prompt section (tokens as
    ``helpers.tokens`` counts them), what was retrieved, and the calls made."""

    round: int
    window_section_tokens: int = 0
    summary_section_tokens: int = 0
    retrieved_section_tokens: int = 0
    retrieved: list[Memory] = field(default_factory=list)
    summary_calls: int = 0
    archive_calls: int = 0
    embedding_calls: int = 0
    supplied: str = ""  # the summary and memories sent: a reply that only repeats them is an echo


class LayeredMemory(StoreCounters):
    """Window + running summary + Milvus recall, as a ``helpers.memory.MemoryStrategy``.

    Args:
        store: a ``helpers.milvus_store.MemoryStore``.
        user_id: whose memory (``validate_id``).
        session_id: the first session's id (``start_session`` changes it).
        window_tokens: budget of the recent messages plus the new question (tokens, >= the size of
            the question; see ``token_window``).
        max_summary_tokens: cap of the running summary (tokens).
        summarize_over: the stored recent messages are summarized when they pass this many tokens
            (keeping ``window_tokens``); default ``max(800, 2 * window_tokens)``: fewer, larger
            summary calls (each call re-sends the summary and its instructions; on the Korean
            easy conversation folding at 400 spent 3.0% of full history's tokens on summary
            calls, at 800 1.1%). Messages between the window and the next fold are in Milvus.
        top_k: memories retrieved per question (only without ``recall``).
        retrieval_tokens: budget of the retrieved section when the new message asks something
            (a question or a request, ``recall.classify_turn``); lower-ranked memories that do not
            fit are left out. With recall the budget is at least this, and grows with what is
            stored (``retrieval_share``); ``max(30, budget // 20)`` candidates are fetched (enough
            for ~20-token memories; more only fill the budget with short, weaker hits).
            ``benchmarks/bench_layered.py`` measures each change on four conversations (offline
            models): 150 on every turn (round 1's budgets) reached 0.53 of the hard
            conversation's evidence, today's defaults 0.85 (0.80 on the friends conversation),
            with the easy ones at 1.00 within 10% of full history's tokens, summary calls
            included.
        retrieval_share: with recall, a question's budget is ``max(retrieval_tokens,
            retrieval_share * tokens written to Milvus so far)``, at most
            ``MAX_RETRIEVAL_TOKENS``: the longer the history, the more there is to find (a
            conversation five times as long as the hard one spreads its evidence over five
            times as many memories). ``0`` keeps the budget fixed.
        statement_retrieval_tokens: the budget when the new message states something (recall
            only; default 0: memory is searched when the user asks or requests, a statement is
            answered from the window and summary). On the hard conversation, 150 here cost 0.7%
            more of full history's tokens and bought no recall.
        neighbours_of: with recall, the top this-many hits each bring their speaker's nearest
            statement before and after (a fact split over two turns: "I adopted a dog" ... "We
            named her Luna"; ``recall.NEVER_NEIGHBOURS`` are skipped). Measured: 1 -> 3 reached
            one more probe on the hard and on the friends conversation at no token cost; 6, or
            neighbours of either speaker, fewer (``benchmarks/bench_layered.py``).
        min_score: ignore memories below this cosine similarity (``None``: keep top-k).
        summary_every: every this many turns, a summary of those turns is written to Milvus (the
            article's plan: 20); ``0`` turns it off.
        embed: ``"user"`` (default: embed the user's words, store the whole turn) or ``"turn"``
            (the article's way); see ``MemoryStore.add_turn``. Only without ``recall``.
        recall: one row per message and ``recall.recall_within_budget`` (see the module
            docstring); ``None`` (default): on when ``store.has_memory_fields``. ``top_k`` and
            ``min_score`` apply only without it (the budget decides how many memories).
        recall_kinds: the kinds recall searches (default ``recall.FACT_KINDS``: statements and
            extracted facts). Add ``"summary"`` to search the archived summaries too; without it,
            with recall on, no archive summaries are written (nothing would find them).
            Measured on the easy conversation (window 250, recall 150): statements only 1.00
            evidence recall at 9.9% of full history's prompt tokens, with summaries 0.975 at
            10.2% (the summaries are long and take the budget of several statements).
        session_date: the first session's ISO date (``""``: none; ``start_session`` sets it).

    Attributes:
        log: one ``LayeredTurn`` per turn.
        embedding_calls: embedding calls made so far (queries + stored texts).
    """

    cost_note = ("every turn; summary calls now and then",
                 "window + running summary + top-k from Milvus")

    def __init__(
        self,
        store: MemoryStore,
        user_id: str,
        session_id: str = "default",
        *,
        window_tokens: int = 150,
        max_summary_tokens: int = 200,
        summarize_over: int | None = None,
        top_k: int = 3,
        retrieval_tokens: int = 500,
        min_score: float | None = DEFAULT_MIN_SCORE,
        summary_every: int = 20,
        embed: str = "user",
        recall: bool | None = None,
        recall_kinds: Sequence[str] = FACT_KINDS,
        session_date: str = "",
        statement_retrieval_tokens: int = 0,
        retrieval_share: float = 0.05,
        neighbours_of: int = 3,
    ) -> None:
        if window_tokens < 1 or max_summary_tokens < 1 or retrieval_tokens < 1 or top_k < 1:
            raise ValueError("window_tokens, max_summary_tokens, retrieval_tokens and top_k must be "
                             f">= 1, got {window_tokens}, {max_summary_tokens}, {retrieval_tokens}, "
                             f"{top_k}")
        self.store = store
        self.user_id = validate_id(user_id, "user id")
        self.session_id = validate_id(session_id, "session id")
        self.window_tokens, self.max_summary_tokens = window_tokens, max_summary_tokens
        self.trigger = TokenTrigger(summarize_over or max(800, 2 * window_tokens), window_tokens)
        self.top_k, self.retrieval_tokens, self.min_score = top_k, retrieval_tokens, min_score
        self.summary_every = summary_every
        self.embed = embed
        self.recall = store.has_memory_fields if recall is None else recall
        if self.recall and not store.has_memory_fields:
            raise ValueError("recall=True needs a store with memory fields: "
                             "MemoryStore(..., memory_fields=True) on a new collection")
        self.session_date = session_date
        self.recall_kinds = tuple(recall_kinds)
        if statement_retrieval_tokens < 0 or neighbours_of < 0 or not 0 <= retrieval_share <= 1:
            raise ValueError("statement_retrieval_tokens and neighbours_of must be >= 0 and "
                             f"retrieval_share in [0, 1], got {statement_retrieval_tokens}, "
                             f"{neighbours_of}, {retrieval_share}")
        self.statement_retrieval_tokens = statement_retrieval_tokens
        self.retrieval_share = retrieval_share
        self.neighbours_of = neighbours_of
        self.stored_tokens = 0  # tokens of the messages written to Milvus so far
        self.other_speaker = OtherSpeaker()  # is the reply side a person? (recall.OtherSpeaker)
        self.round = 1
        self.log: list[LayeredTurn] = []
        self.last_retrieved: list[Memory] = []  # what the latest prompt() retrieved
        self._since_archive: list[BaseMessage] = []
        self._written = WrittenTurns()
        self._turn: LayeredTurn | None = None

    @property
    def name(self) -> str:
        if self.recall:
            return (f"layered (window {self.window_tokens} + summary {self.max_summary_tokens} + "
                    f"recall {self.retrieval_tokens} tokens)")
        return (f"layered (window {self.window_tokens} + summary {self.max_summary_tokens} + "
                f"top-{self.top_k} recall)")

    def start_session(self, session_id: str, stored: Sequence[BaseMessage] = (),
                      date: str = "") -> list[BaseMessage]:
        """A new conversation (on ``date``, ISO, stored with its messages and shown with them when
        retrieved): the window and summary start empty; Milvus keeps everything.

        Returns:
            The stored messages to carry into the new session: none.
        """
        self.session_id = validate_id(session_id, "session id")
        self.round = 1
        self.session_date = date
        self._since_archive = []
        return []

    # -- the prompt ---------------------------------------------------------------------------

    def prompt(self, system: SystemMessage, stored: Sequence[BaseMessage],
               new_message: HumanMessage) -> Prompt:
        """``[system, summary?, retrieved?, *window]`` for this turn (see the module docstring).

        Raises:
            WindowBudgetError: the question alone is over ``window_tokens``.
        """
        summary, recent = split_stored(stored)
        try:
            window = token_window([*recent, new_message], self.window_tokens)
        except TokenBudgetError as exc:
            raise WindowBudgetError(
                f"window_tokens={self.window_tokens} cannot hold the new message "
                f"({exc.newest_tokens} tokens with its framing): raise window_tokens to at least "
                f"{exc.required_tokens}, or send a shorter message. Nothing was stored."
            ) from exc
        turn = self._turn = LayeredTurn(round=self.round)
        turn.window_section_tokens = sum(count_message_tokens(m) for m in window)
        sections: list[BaseMessage] = [system]
        if summary is not None:
            sections.append(summary)
            turn.summary_section_tokens = count_message_tokens(summary)
        retrieved = self._retrieve(new_message.text, window)
        if retrieved is not None:
            sections.append(retrieved)
            turn.retrieved_section_tokens = count_message_tokens(retrieved)
        turn.supplied = "\n".join(m.text for m in sections[1:])
        return label([*sections, *window], system, new_message)

    def _retrieve(self, question: str, window: Sequence[BaseMessage]) -> SystemMessage | None:
        if self.recall:
            return self._recall(question, window)
        calls = self.store.embedding_calls
        found = self.store.search(self.user_id, question, self.top_k * OVERFETCH, self.min_score)
        self._turn.embedding_calls += self.store.embedding_calls - calls
        in_window = " ".join(m.text for m in window)
        lines, used = [], count_text_tokens(_RETRIEVED_HEADER)
        for memory in rank_memories(found)[: self.top_k]:
            first_line = memory.content.splitlines()[0].removeprefix("User: ")
            if first_line and first_line in in_window:
                continue  # already sent verbatim
            line = f"- [{memory.session_id}, round {memory.round}] " + " ".join(
                memory.content.split())
            cost = count_text_tokens(line) + 1
            if used + cost > self.retrieval_tokens:
                continue
            lines.append((memory, line))
            used += cost
            self._turn.retrieved.append(memory)
        self.last_retrieved = [m for m, _ in lines]
        if not lines:
            return None
        # chosen by rank, shown oldest first: a later correction comes after what it corrects
        order = {id(m): i for i, m in enumerate(chronological([m for m, _ in lines]))}
        lines.sort(key=lambda pair: order[id(pair[0])])
        return SystemMessage("\n".join([_RETRIEVED_HEADER, *(line for _, line in lines)]),
                             id=RETRIEVED_ID,
                             additional_kwargs={COVERS_KEY: list(self._written.sources(
                                 [m for m, _ in lines]))})

    def retrieval_budget(self, message: str) -> int:
        """Tokens the retrieved section may take for ``message`` (recall on): for a question or
        request (``recall.classify_turn``) ``retrieval_tokens`` or, when more,
        ``retrieval_share`` of the tokens written to Milvus so far (at most
        ``MAX_RETRIEVAL_TOKENS``); for a statement ``statement_retrieval_tokens``."""
        if classify_turn(message) not in ("question", "request"):
            return self.statement_retrieval_tokens
        grown = min(MAX_RETRIEVAL_TOKENS, int(self.retrieval_share * self.stored_tokens))
        return max(self.retrieval_tokens, grown)

    def _recall(self, question: str, window: Sequence[BaseMessage]) -> SystemMessage | None:
        budget = self.retrieval_budget(question)
        if budget < 1:
            self._turn.retrieved = self.last_retrieved = []
            return None
        calls = self.store.embedding_calls
        in_window = {" ".join(m.text.split()) for m in window}
        memories, text = recall_within_budget(
            self.store, self.user_id, question, budget, candidates=max(30, budget // 20),
            neighbours_of=self.neighbours_of,
            kinds=self.recall_kinds, skip=lambda m: " ".join(m.content.split()) in in_window)
        self._turn.embedding_calls += self.store.embedding_calls - calls
        self._turn.retrieved = self.last_retrieved = list(memories)
        if not text:
            return None
        return SystemMessage(text, id=RETRIEVED_ID, additional_kwargs={
            COVERS_KEY: list(self._written.sources(memories))})

    # -- after the answer ----------------------------------------------------------------------

    def after_turn(self, model: BaseChatModel,
                   stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Write the turn to Milvus, fold old messages into the summary if the window overflows,
        and every ``summary_every`` turns archive a summary of those turns in Milvus.

        Returns:
            The new stored messages (``[summary?, *recent]``). The summary and archive calls,
            when made, are counted in ``log[-1]`` (the replay loop counts every model call).

        Raises:
            helpers.summarization.SummarizationError: a summary call failed; nothing was replaced.
        """
        turn = self._turn or LayeredTurn(round=self.round)
        user, reply = stored[-2], stored[-1]
        calls = self.store.embedding_calls
        if self.recall:
            write_messages(self.store, self._written, self.user_id, self.session_id, self.round,
                           user, reply, self.session_date, supplied=turn.supplied,
                           other=self.other_speaker)
            self.stored_tokens += count_text_tokens(user.text) + count_text_tokens(reply.text)
        else:
            self.store.add_turn(self.user_id, self.session_id, self.round, user.text, reply.text,
                                embed=self.embed)
            self._written.add(self.session_id, self.round, user, reply)
        archive = self.summary_every and (not self.recall or "summary" in self.recall_kinds)
        if archive:
            self._since_archive += [user, reply]
        step = summarize_step(model, stored, self.trigger, self.max_summary_tokens)
        if step is not None:
            turn.summary_calls += 1
            stored = step.messages
        if archive and len(self._since_archive) >= 2 * self.summary_every:
            self._archive(model)
            turn.archive_calls += 1
        turn.embedding_calls += self.store.embedding_calls - calls
        self.log.append(turn)
        self._turn = None
        self.round += 1
        return list(stored)

    def _archive(self, model: BaseChatModel) -> None:
        messages = self._since_archive
        first = self.round - len(messages) // 2 + 1
        language = conversation_language(messages)
        reply = model.invoke(summary_prompt("", messages, language, self.max_summary_tokens))
        text = " ".join((reply.text or "").split())
        if text and self.recall:  # round 0: never a neighbour of a message
            self.store.add_memory(self.user_id, self.session_id, 0,
                                  f"Summary of rounds {first}-{self.round}: {text}",
                                  kind="summary", speaker="", date=self.session_date)
        elif text:
            self.store.add_text(self.user_id, self.session_id, self.round,
                                f"Summary of rounds {first}-{self.round}: {text}")
        self._since_archive = []
