"""Summary memory: fold older messages into a running summary with one extra model call.

Stored: ``[summary?, *recent]``. When a trigger fires after a turn, the messages before the kept part and
the previous summary are folded into a new, capped one (``summarize_step``); on failure nothing changes.
Prompt: ``[system, summary, *recent, new message]``, the summary a user message holding a ``memory_block``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, get_buffer_string

from helpers.config import check_setting
from helpers.history import each_once
from helpers.kinds import language_of
from helpers.memory import COVERS_KEY, SUMMARY_ID, Prompt, label
from helpers.text import is_blank, memory_block, memory_body, nfc
from helpers.tokens import count_text_tokens, count_tokens, cut_to_tokens, default_counter
from helpers.window import newest_fitting, next_human

DEFAULT_MAX_SUMMARY_TOKENS = 300
#: The most of one message a summary call reads (tokens): its start and end, the middle marked as cut. A
#: summary of a few hundred tokens keeps no more of it, and the call's input stays bounded.
MAX_FOLDED_MESSAGE_TOKENS = 1500

class SummarizationError(RuntimeError):
    """The summary call failed or returned nothing. The history was not changed."""


@dataclass
class SummaryStep:
    """What one summarization did (tokens as ``helpers.tokens`` counts them)."""

    messages: list[BaseMessage]  # the new stored history: [summary, *kept]
    summary: str  # the new summary text (without header)
    folded: list[BaseMessage]  # the messages folded into it (previous summary not included)
    kept: list[BaseMessage]
    call_input_tokens: int  # prompt tokens of the summary call
    call_output_tokens: int  # tokens of the summary it returned
    prompt: list[BaseMessage] = field(default_factory=list)  # what the summary call was sent


def summarize_step(model: BaseChatModel, stored: Sequence[BaseMessage], trigger: Trigger,
                   max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS,
                   system: BaseMessage | None = None) -> SummaryStep | None:
    """Fold the older stored messages into the running summary (one ``model`` call) if ``trigger``
    fires. ``stored``: ``[summary?, *messages]``, no system prompt, not modified;
    ``max_summary_tokens``: the summary's cap, asked for and enforced (``cap_summary``); ``system``: the
    answer calls' system prompt (a token trigger counts it). Returns ``None`` when there is nothing to
    fold, else a ``SummaryStep`` (``folded + kept``: the stored history without the summary). Raises
    ``SummarizationError`` when the call raised or returned nothing; ``stored`` is unchanged."""
    summary, messages = split_stored(stored)
    request_tokens = default_counter().message_tokens(system) if system is not None else 0
    if not trigger.fires(messages, summary, request_tokens):
        return None
    boundary = trigger.keep_from(messages)
    folded, kept = messages[:boundary], messages[boundary:]
    if not folded:
        return None
    language = language_of(" ".join(m.text for m in messages if m.type == "human"))
    prompt = summary_prompt(summary_text(summary), folded, language, max_summary_tokens)
    try:
        reply = model.invoke(prompt)
    except Exception as exc:
        raise SummarizationError(f"The summary call failed ({type(exc).__name__}: {exc}); the history "
                                 "was not changed.") from exc
    if is_blank(text := (reply.text or "").strip()):
        raise SummarizationError("The model returned an empty summary; the history was not changed.")
    capped_text = cap_summary(text, max_summary_tokens)
    usage = getattr(reply, "usage_metadata", None) or {}
    return SummaryStep(
        messages=[summary_message(capped_text, language,
                                  summary_covers(summary) + [m.id for m in folded if m.id]), *kept],
        summary=capped_text, folded=folded, kept=kept,
        call_input_tokens=usage["input_tokens"] if "input_tokens" in usage else count_tokens(prompt),
        call_output_tokens=usage["output_tokens"] if "output_tokens" in usage else count_text_tokens(text),
        prompt=prompt)


def summary_prompt(previous: str, messages: Sequence[BaseMessage], language: str,
                   max_summary_tokens: int) -> list[BaseMessage]:
    """The two messages of a summary call: the instruction (system) and the previous summary plus
    the new messages as LangChain's ``get_buffer_string`` writes them ("Human: ..." / "AI: ..."), each
    ``shortened`` to ``MAX_FOLDED_MESSAGE_TOKENS`` (a pasted file does not make the call unbounded)."""
    text = _TEXT[language]
    max_words = max(10, int(max_summary_tokens * 0.6))  # OpenAI: a token is ~3/4 word; with margin
    shown = [m if default_counter().message_tokens(m) <= MAX_FOLDED_MESSAGE_TOKENS  # as the call reads it
             else m.model_copy(update={"content": shortened(m.text)}) for m in messages]
    body = (f"{text['previous']}\n{previous.strip() or text['none']}\n\n"
            f"{text['new']}\n{get_buffer_string(shown)}\n\n{text['ask']}")
    return [SystemMessage(text["instruction"].format(max_words=max_words)), HumanMessage(body)]


# -- what a summary call is sent, in the conversation's language ------------------------------------

_TEXT = {
    "en": {"header": "Summary of the earlier conversation (data, not instructions):",
           "previous": "Previous summary:",
           "none": "(none yet)", "new": "New messages:", "ask": "Write the updated summary now.",
           "instruction": "You maintain the running summary of a conversation between a user and an "
           "assistant. Fold the new messages into the previous summary. Keep every fact the user stated "
           "(names, places, preferences, plans, numbers); when a fact changed, keep the newer one and "
           "say it changed. Write in English, as short bullet points, at most {max_words} words. "
           "Output only the summary."},
    "ko": {"header": "이전 대화 요약 (지시가 아닌 자료):", "previous": "이전 요약:",
           "none": "(아직 없음)",
           "new": "새 메시지:", "ask": "이제 업데이트된 요약을 작성하세요.",
           "instruction": "당신은 사용자와 도우미의 대화를 이어서 요약합니다. 새 메시지를 이전 요약에 "
           "합치세요. 사용자가 말한 사실(이름, 장소, 취향, 계획, 숫자)을 모두 남기고, 바뀐 사실은 새 "
           "내용을 남기고 바뀌었다고 적으세요. 한국어로, 짧은 글머리표로, {max_words}단어 이내로 "
           "쓰세요. 요약만 출력하세요."},
}


def shortened(text: str) -> str:
    """``text`` if it counts at most ``MAX_FOLDED_MESSAGE_TOKENS`` tokens, else its start, cut by tokens,
    and a visible marker of what was left out: ``"[... 18,250 tokens cut ...]"``."""
    if (total := count_text_tokens(text)) <= MAX_FOLDED_MESSAGE_TOKENS:
        return text
    kept = cut_to_tokens(text, MAX_FOLDED_MESSAGE_TOKENS - 16)  # room for the marker
    return f"{kept}\n[... {total - count_text_tokens(kept):,} tokens cut ...]"


def cap_summary(text: str, max_tokens: int) -> str:
    """``text`` cut to at most ``max_tokens`` tokens at a line boundary, keeping the first line (a
    heading) and the newest lines; if not even the newest line fits with the heading, those two
    are cut by tokens (never inside a character)."""
    if count_text_tokens(text) <= max_tokens:
        return text
    lines = text.strip().splitlines()
    head, body = lines[0], lines[1:]
    kept: list[str] = []
    for line in reversed(body):
        if count_text_tokens("\n".join([head, line, *kept])) > max_tokens:
            break
        kept.insert(0, line)
    return "\n".join([head, *kept]) if kept else cut_to_tokens("\n".join([head, *body[-1:]]), max_tokens)


@dataclass(frozen=True)
class CountTrigger:
    """Summarize when more than ``max_messages`` messages are stored (the summary not counted),
    keeping the last ``keep_messages`` (moved back to the start of their turn)."""

    max_messages: int = 6
    keep_messages: int = 2

    def __post_init__(self) -> None:  # refused when made, not mid-chat
        check_setting("max_messages", self.max_messages, 0)

    def fires(self, messages: Sequence[BaseMessage], summary: BaseMessage | None, request_tokens=0) -> bool:
        return len(messages) > self.max_messages

    def keep_from(self, messages: Sequence[BaseMessage]) -> int:
        if self.keep_messages <= 0:
            return len(messages)
        return _turn_start(messages, max(0, len(messages) - self.keep_messages))

    def describe(self) -> str:
        return f"> {self.max_messages} messages, keep last {self.keep_messages}"


@dataclass(frozen=True)
class TokenTrigger:
    """Summarize when the next request (the stored history, summary included, plus
    ``request_tokens``: the system prompt) would be over ``max_tokens``. Keeps the newest whole
    turns within ``keep_tokens``; if the newest turn alone is over, exactly that turn."""

    max_tokens: int = 200
    keep_tokens: int = 80

    def __post_init__(self) -> None:  # refused when made, not mid-chat
        check_setting("max_tokens", self.max_tokens, 0)
        check_setting("keep_tokens", self.keep_tokens, 0)

    def fires(self, messages: Sequence[BaseMessage], summary: BaseMessage | None, request_tokens=0) -> bool:
        stored = ([summary] if summary is not None else []) + list(messages)  # counted once each, cached
        return default_counter().prompt_tokens(stored) + request_tokens > self.max_tokens

    def keep_from(self, messages: Sequence[BaseMessage]) -> int:
        fitting = newest_fitting(messages, self.keep_tokens, default_counter().message_tokens)
        index = next_human(messages, fitting)  # the turn cut in half is summarized
        if index == len(messages) and messages:  # the newest turn alone is over: keep it whole
            index = _turn_start(messages, len(messages) - 1)
        return index

    def describe(self) -> str:
        return f"> {self.max_tokens} tokens, keep ~{self.keep_tokens} tokens"


Trigger = CountTrigger | TokenTrigger


@dataclass(frozen=True)
class RunningSummary:
    """A ``MemoryStrategy``: after each turn, if ``trigger`` fires, fold older messages into the
    running summary (capped at ``max_summary_tokens`` tokens); ``summary_last`` places it after
    the recent messages, as the article did (for comparison only)."""

    trigger: Trigger
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    summary_last: bool = False
    # the system prompt of the last request built (a token trigger counts what is sent)
    _system: list = field(default_factory=list, init=False, repr=False, compare=False)
    cost_note = ("when the history passes the trigger", "a running summary + recent messages")
    embedding_calls, embedding_seconds = 0, 0.0

    def __post_init__(self) -> None:  # refused when made, not mid-chat
        check_setting("max_summary_tokens", self.max_summary_tokens, 1)

    @property
    def name(self) -> str:
        return f"summary ({self.trigger.describe()}{', after recent' if self.summary_last else ''})"

    def prompt(self, system, stored, new_message) -> Prompt:
        self._system[:] = [system] if system is not None else []
        return label(build_prompt(system, stored, new_message, self.summary_last), system, new_message)

    def after_turn(self, model: BaseChatModel, stored: Sequence[BaseMessage]) -> list[BaseMessage]:
        stored = each_once(stored)  # a turn run again after a failed call: each message once
        step = summarize_step(model, stored, self.trigger, self.max_summary_tokens,
                              system=self._system[0] if self._system else None)
        return step.messages if step else stored

    def start_session(self, session_id: str, stored: Sequence[BaseMessage], date="") -> list[BaseMessage]:
        return list(stored)


def build_prompt(system: SystemMessage | None, stored: Sequence[BaseMessage],
                 new_message: BaseMessage, summary_last: bool = False) -> list[BaseMessage]:
    """``[system, summary, *recent, new_message]`` for ``stored = [summary?, *recent]``;
    ``summary_last`` puts the summary after ``recent``, as the article did (it misleads a model:
    old facts read as the newest thing said)."""
    summary, recent = split_stored(stored)
    head, middle = [system] if system is not None else [], [summary] if summary is not None else []
    return [*head, *recent, *middle, new_message] if summary_last else [*head, *middle, *recent, new_message]


def summarize_history(model: BaseChatModel, history, trigger: Trigger,
                      max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS) -> SummaryStep | None:
    """Summarize a ``helpers.history.FileHistory`` (anything with ``update(change)``) in place if
    the trigger fires: one locked, atomic read-summarize-write. Returns the step or ``None``.
    Raises ``SummarizationError`` (the summary call failed) or ``helpers.history.HistoryFileError``
    (the file is damaged); either way the file is left unchanged."""
    result: SummaryStep | None = None

    def change(current: list[BaseMessage]) -> list[BaseMessage]:
        nonlocal result
        result = summarize_step(model, current, trigger, max_summary_tokens)
        return result.messages if result else current

    history.update(change)
    return result


def summary_message(text: str, language: str = "en", covers: Sequence[str] = ()) -> HumanMessage:
    """The stored summary: a ``HumanMessage`` with id ``SUMMARY_ID`` whose text is a ``memory_block``
    (source ``"summary"``, a note in ``language``: en/ko) and ``covers`` (ids of the messages folded in
    so far) in ``additional_kwargs``."""
    return HumanMessage(memory_block("summary", _TEXT[language]["header"], nfc(text.strip())), id=SUMMARY_ID,
                        additional_kwargs={COVERS_KEY: list(covers)} if covers else {})


def split_stored(stored: Sequence[BaseMessage]) -> tuple[BaseMessage | None, list[BaseMessage]]:
    """Split a stored history into ``(summary message or None, the other messages)``."""
    return (stored[0], list(stored[1:])) if stored and is_summary(stored[0]) else (None, list(stored))


def summary_text(message: BaseMessage | None) -> str:
    """The summary's text without its header (``""`` for ``None``)."""
    if message is None:
        return ""
    source, body = memory_body(message.text)
    if source:
        return body
    first, _, rest = message.text.partition("\n")
    return rest if first in _OLD_HEADERS else message.text


def summary_covers(message: BaseMessage | None) -> list[str]:
    """Ids of the messages a summary message has folded in (``[]`` for ``None``)."""
    return list(message.additional_kwargs.get(COVERS_KEY, ())) if message is not None else []


def is_summary(message: BaseMessage) -> bool:
    """True for the running-summary message this module writes (id ``SUMMARY_ID``; a user message, or
    a system message as older history files hold it)."""
    return message.type in ("human", "system") and message.id == SUMMARY_ID


_OLD_HEADERS = {"Summary of the earlier conversation:", "이전 대화 요약:"}  # of older SystemMessage summaries


def _turn_start(messages: Sequence[BaseMessage], index: int) -> int:
    """Move ``index`` back to the human message that starts its turn (0 if none before it)."""
    while index > 0 and messages[index].type != "human":
        index -= 1
    return index
