"""Memory strategies behind one interface, a replay harness, and per-turn cost accounting.

A *strategy* decides, for each turn, which messages the model is sent (``prompt``) and what is
stored afterwards (``after_turn``). ``replay`` runs a sample conversation through a strategy and
records, per turn, what was sent and what it cost:

* ``prompt_tokens``: tokens of the answer call's prompt (``helpers.tokens.count_tokens``);
* ``extra_calls``: model calls made for memory (summaries), beyond the one answer per turn;
* ``summary_tokens``: prompt + output tokens of those extra calls.

The strategies here are the lessons' subjects: full history (lesson 02), the article's
``slice(-4)``, a pair-safe count window and a token window (lesson 04), and a running summary with
a count or token trigger (lesson 05). Retrieval from Milvus (lesson 06) is
``helpers.milvus_store.RetrievalMemory``; ``replay`` marks the turns it retrieved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from helpers.summarization import (
    DEFAULT_MAX_SUMMARY_TOKENS,
    SummaryStep,
    Trigger,
    build_prompt,
    split_stored,
    summarize_step,
)
from helpers.tokens import count_tokens
from helpers.truncation import count_window, last_n_messages, token_window, window_marks


class _StoresEverything:
    """Truncation stores every message and only chooses what to send: nothing to do after a turn."""

    def after_turn(self, model, stored):
        return stored, None


class FullHistory(_StoresEverything):
    """Send everything: system prompt + the whole history + the new message (lesson 02)."""

    name = "full history"

    def prompt(self, system, stored, new_message):
        return [system, *stored, new_message]


@dataclass(frozen=True)
class LastN(_StoresEverything):
    """The article's ``slice(-4)``: the last ``n`` messages of the whole request, system included."""

    n: int = 4

    @property
    def name(self) -> str:
        return f"last {self.n} messages (slice)"

    def prompt(self, system, stored, new_message):
        return last_n_messages([system, *stored, new_message], self.n)


@dataclass(frozen=True)
class CountWindow(_StoresEverything):
    """System prompt + at most ``max_messages`` newest messages, starting on a user message."""

    max_messages: int = 4

    @property
    def name(self) -> str:
        return f"count window ({self.max_messages} messages)"

    def prompt(self, system, stored, new_message):
        return count_window([system, *stored, new_message], self.max_messages)


@dataclass(frozen=True)
class TokenWindow(_StoresEverything):
    """The longest newest part that fits ``max_tokens`` (whole prompt), via ``trim_messages``."""

    max_tokens: int = 200

    @property
    def name(self) -> str:
        return f"token window ({self.max_tokens} tokens)"

    def prompt(self, system, stored, new_message):
        return token_window([system, *stored, new_message], self.max_tokens)


@dataclass(frozen=True)
class RunningSummary:
    """A running summary: after each turn, if ``trigger`` fires, fold older messages into it."""

    trigger: Trigger
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    summary_last: bool = False  # the article's placement, for comparison only

    @property
    def name(self) -> str:
        placement = ", after recent" if self.summary_last else ""
        return f"summary ({self.trigger.describe()}{placement})"

    def prompt(self, system, stored, new_message):
        return build_prompt(system, stored, new_message, self.summary_last)

    def after_turn(self, model, stored):
        step = summarize_step(model, stored, self.trigger, self.max_summary_tokens)
        return (step.messages if step else stored), step


Strategy = FullHistory | LastN | CountWindow | TokenWindow | RunningSummary


@dataclass
class TurnRecord:
    """One replayed turn. Tokens as ``helpers.tokens`` counts them."""

    turn: int
    user: str
    reply: str
    prompt: list[BaseMessage]  # what the answer call was sent
    timeline: list[BaseMessage]  # the whole conversation so far (+ the summary), for display
    marks: list[str]  # per timeline message: kept / dropped / summarized / summary / retrieved
    prompt_tokens: int
    reply_tokens: int
    extra_calls: int = 0
    summary_tokens: int = 0
    summary_step: SummaryStep | None = field(default=None, repr=False)

    def as_row(self) -> dict:
        """The cost columns of this turn, for a table."""
        return {
            "turn": self.turn,
            "messages sent": len(self.prompt),
            "prompt tokens": self.prompt_tokens,
            "extra calls": self.extra_calls,
            "summary tokens": self.summary_tokens,
            "total tokens": self.prompt_tokens + self.reply_tokens + self.summary_tokens,
        }


def retrieval_marks(strategy, everything: Sequence[BaseMessage]) -> list[str]:
    """Marks for the earlier messages of a ``RetrievalMemory`` replay (``everything`` without its
    last item, the new question): ``"retrieved"`` for both messages of a turn the latest search
    returned (``strategy.last_retrieved``), ``"dropped"`` for the rest.

    A turn (user message + reply) counts as retrieved when its stored text
    (``format_turn(user, reply)``) equals a retrieved memory's content, and, for a memory of the
    strategy's own session, its round is the turn's round too, so an identical question asked
    twice ("What is my name?") is marked only where it was found.
    """
    from helpers.milvus_store import format_turn

    earlier = list(everything[:-1])
    marks = ["dropped"] * len(earlier)
    found = [(m.content, m.session_id, m.round) for m in strategy.last_retrieved]
    pairs = len(earlier) // 2
    for k in range(pairs):
        user, reply = earlier[2 * k], earlier[2 * k + 1]
        content = format_turn(_plain_text(user), _plain_text(reply))
        turn_round = strategy.round - (pairs - k)  # ``strategy.round`` is the new question's
        if any(text == content and (session != strategy.session_id or number == turn_round)
               for text, session, number in found):
            marks[2 * k] = marks[2 * k + 1] = "retrieved"
    return marks


def _plain_text(message: BaseMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


def _marks(strategy, system, everything, stored, prompt) -> tuple[list[BaseMessage], list[str]]:
    """Timeline and marks. ``everything`` is every message of the conversation so far, the new
    one included; ``stored`` what the strategy keeps (with its summary, if any)."""
    from helpers.milvus_store import RetrievalMemory  # lazy: no pymilvus, no import cycle

    if isinstance(strategy, RetrievalMemory):
        return [system, *everything], ["kept", *retrieval_marks(strategy, everything), "kept"]
    if isinstance(strategy, RunningSummary):
        summary, _ = split_stored(stored)
        kept_ids = {id(m) for m in prompt}
        timeline = [system, *([summary] if summary else []), *everything]
        marks = ["kept", *(["summary"] if summary else [])]
        marks += ["kept" if id(m) in kept_ids else "summarized" for m in everything]
        return timeline, marks
    timeline = [system, *everything]
    return timeline, window_marks(timeline, prompt)


def replay(
    strategy: Strategy,
    turns: Sequence[str],
    model: BaseChatModel,
    system: SystemMessage | str = "",
) -> list[TurnRecord]:
    """Run the user ``turns`` through ``model`` with ``strategy`` deciding what is sent and kept.

    Args:
        strategy: one of ``FullHistory``, ``LastN``, ``CountWindow``, ``TokenWindow``,
            ``RunningSummary``, or ``helpers.milvus_store.RetrievalMemory`` (its records mark
            the earlier turns the search returned ``"retrieved"``, the others ``"dropped"``).
        turns: the user's messages, in order (e.g. ``load_conversation(...).turns``).
        model: the chat model (answers, and writes the summaries of ``RunningSummary``).
        system: the system prompt.

    Returns:
        One ``TurnRecord`` per turn.

    Raises:
        helpers.truncation.TokenBudgetError / MessageBudgetError: a window cannot hold the
            newest message.
        helpers.summarization.SummarizationError: a summary call failed; the records so far are
            lost with the exception, the stored history of the turn before is what was kept.
    """
    system = system if isinstance(system, SystemMessage) else SystemMessage(system)
    stored: list[BaseMessage] = []
    everything: list[BaseMessage] = []
    records = []
    for number, text in enumerate(turns, start=1):
        new_message = HumanMessage(text)
        prompt = strategy.prompt(system, stored, new_message)
        reply = model.invoke(prompt)
        usage = reply.usage_metadata or {}
        timeline, marks = _marks(strategy, system, [*everything, new_message], stored, prompt)
        everything += [new_message, reply]
        stored, step = strategy.after_turn(model, [*stored, new_message, reply])
        records.append(
            TurnRecord(
                turn=number,
                user=text,
                reply=reply.text,
                prompt=prompt,
                timeline=timeline,
                marks=marks,
                prompt_tokens=count_tokens(prompt),
                reply_tokens=usage.get("output_tokens", 0),
                extra_calls=1 if step else 0,
                summary_tokens=(step.call_input_tokens + step.call_output_tokens) if step else 0,
                summary_step=step,
            )
        )
    return records


def history_of(turns: Sequence[str], model: BaseChatModel, system: SystemMessage | str = "") -> list[
    BaseMessage
]:
    """``[system, user, reply, user, reply, ...]``: the full history after running ``turns``
    through ``model`` with nothing dropped (lesson 02's loop)."""
    records = replay(FullHistory(), turns, model, system)
    if not records:
        return [system if isinstance(system, SystemMessage) else SystemMessage(system)]
    last = records[-1]
    return [*last.prompt, AIMessage(last.reply)]


def cost_summary(records: Sequence[TurnRecord]) -> dict:
    """Totals over a replay: prompt tokens sent, extra calls, summary tokens, all tokens, and the
    prompt size of the last turn (tokens)."""
    return {
        "turns": len(records),
        "prompt tokens (total)": sum(r.prompt_tokens for r in records),
        "prompt tokens (last turn)": records[-1].prompt_tokens if records else 0,
        "extra calls": sum(r.extra_calls for r in records),
        "summary tokens": sum(r.summary_tokens for r in records),
        "all tokens": sum(r.prompt_tokens + r.reply_tokens + r.summary_tokens for r in records),
    }


# --- the library way: LangChain v1's SummarizationMiddleware -------------------------------------


def replay_middleware(
    turns: Sequence[str],
    model: BaseChatModel,
    system: SystemMessage | str = "",
    trigger: tuple[str, int] = ("messages", 6),
    keep: tuple[str, int] = ("messages", 2),
) -> list[TurnRecord]:
    """Replay ``turns`` through ``create_agent`` + ``SummarizationMiddleware`` + ``InMemorySaver``
    (the library way of 2026) and record the same costs as ``replay``.

    Every model call is captured with a callback handler: per turn, the last call is the answer,
    any before it are the middleware's summary calls. Token counts use ``helpers.tokens`` (the
    middleware's own trigger counts with our counter too, so ``("tokens", n)`` means the same).

    Args:
        turns: the user's messages.
        model: the chat model (answers and summaries).
        system: the system prompt (``create_agent(system_prompt=...)``).
        trigger, keep: passed to ``SummarizationMiddleware``.

    Returns:
        One ``TurnRecord`` per turn; ``timeline`` is the answer call's prompt, with the
        middleware's summary message marked ``"summary"``.
    """
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.callbacks import BaseCallbackHandler
    from langgraph.checkpoint.memory import InMemorySaver

    class _Recorder(BaseCallbackHandler):
        def __init__(self):
            self.prompts: list[list[BaseMessage]] = []
            self.outputs: list[int] = []

        def on_chat_model_start(self, serialized, messages, **kwargs):
            self.prompts.append(list(messages[0]))

        def on_llm_end(self, response, **kwargs):
            message = getattr(response.generations[0][0], "message", None)
            usage = getattr(message, "usage_metadata", None) or {}
            self.outputs.append(usage.get("output_tokens", 0))

    system_text = system.text if isinstance(system, SystemMessage) else system
    middleware = SummarizationMiddleware(model=model, trigger=trigger, keep=keep,
                                         token_counter=count_tokens)
    agent = create_agent(model, tools=[], system_prompt=system_text or None,
                         middleware=[middleware], checkpointer=InMemorySaver())
    recorder = _Recorder()
    config = {"configurable": {"thread_id": "replay"}, "callbacks": [recorder]}
    records = []
    for number, text in enumerate(turns, start=1):
        first = len(recorder.prompts)
        state = agent.invoke({"messages": [HumanMessage(text)]}, config)
        prompts, outputs = recorder.prompts[first:], recorder.outputs[first:]
        answer_prompt, reply = prompts[-1], state["messages"][-1]
        marks = ["summary" if m.type == "human" and m.text.startswith("Here is a summary")
                 else "kept" for m in answer_prompt]
        records.append(
            TurnRecord(
                turn=number,
                user=text,
                reply=reply.text,
                prompt=answer_prompt,
                timeline=answer_prompt,
                marks=marks,
                prompt_tokens=count_tokens(answer_prompt),
                reply_tokens=outputs[-1] if outputs else 0,
                extra_calls=len(prompts) - 1,
                summary_tokens=sum(count_tokens(p) for p in prompts[:-1]) + sum(outputs[:-1]),
            )
        )
    return records
