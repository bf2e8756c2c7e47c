"""Summarization memory: fold older messages into a running summary with one extra model call.

The stored history of a summarizing memory is ``[summary message?, *recent messages]``. When a
**trigger** fires after a turn, the messages before the **keep-recent** part are folded, together
with the previous summary, into a new summary by the chat model; the stored history becomes
``[new summary, *kept]``. The prompt for the next turn is::

    [system prompt, summary, *recent messages, new user message]

Rules this module keeps (each is tested in ``tests/test_summarization.py``):

* Two triggers, as in the article the course grew from: a **count** trigger (more than 6 stored
  messages: summarize all but the last 2) and a **token** trigger (over 200 tokens: keep the most
  recent ~80 tokens). Every message is either summarized or kept: the two parts are one split of
  the stored list, never two slices that can leave a gap.
* The kept part always starts on a human message (a turn is kept whole, an AI tool call stays with
  its results). The count trigger moves the boundary back to the start of its turn; the token
  trigger moves it forward to the next turn, so the kept part stays within ``keep_tokens`` (unless
  the newest turn alone is bigger: then exactly that turn is kept).
* A **running** summary: the previous summary goes into the summary call and its facts into the
  new summary; it is never dropped or restarted. The summary is capped (``max_summary_tokens``)
  and written in the conversation's language (the instruction is in that language).
* Placement: system prompt first, then the summary, then the recent messages. The article put the
  summary *after* the recent messages; lesson 05 shows why that misleads a model (old facts read
  as the newest thing said).
* Nothing is lost on failure: ``summarize_step`` is a pure function that returns a new list; if
  the model call raises or returns nothing, it raises ``SummarizationError`` and the caller's
  history is unchanged. With ``FileHistory.update`` the swap is a single atomic write.

How this differs from the library way, LangChain v1's ``SummarizationMiddleware``: the middleware
runs *before* the model call inside ``create_agent``, replaces the graph state with a
``HumanMessage`` "Here is a summary of the conversation to date: ..." plus the kept messages, and
summarizes only the messages being dropped (its prompt carries no previous summary, but the old
summary message is itself among the dropped messages, so facts are carried through it). Here the
summary is a clearly marked ``SystemMessage`` placed right after the system prompt, the previous
summary is passed explicitly, and the cost of every call is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    SystemMessage,
    get_buffer_string,
)

from helpers.memory import COVERS_KEY, SUMMARY_ID
from helpers.tokens import count_message_tokens, count_text_tokens, count_tokens

DEFAULT_MAX_SUMMARY_TOKENS = 300

_TEXT = {
    "en": {
        "header": "Summary of the earlier conversation:",
        "instruction": (
            "You maintain the running summary of a conversation between a user and an assistant. "
            "Fold the new messages into the previous summary. Keep every fact the user stated "
            "(names, places, preferences, plans, numbers); when a fact changed, keep the newer "
            "one and say it changed. Write in English, as short bullet points, at most "
            "{max_words} words. Output only the summary."
        ),
        "previous": "Previous summary:",
        "none": "(none yet)",
        "new": "New messages:",
        "ask": "Write the updated summary now.",
    },
    "ko": {
        "header": "이전 대화 요약:",
        "instruction": (
            "당신은 사용자와 도우미의 대화를 이어서 요약합니다. 새 메시지를 이전 요약에 합치세요. "
            "사용자가 말한 사실(이름, 장소, 취향, 계획, 숫자)을 모두 남기고, 바뀐 사실은 새 내용을 "
            "남기고 바뀌었다고 적으세요. 한국어로, 짧은 글머리표로, {max_words}단어 이내로 쓰세요. "
            "요약만 출력하세요."
        ),
        "previous": "이전 요약:",
        "none": "(아직 없음)",
        "new": "새 메시지:",
        "ask": "이제 업데이트된 요약을 작성하세요.",
    },
}


class SummarizationError(RuntimeError):
    """The summary call failed or returned nothing. The history was not changed."""


def conversation_language(messages: Sequence[BaseMessage]) -> str:
    """``"ko"`` if at least a fifth of the letters in the human messages are Hangul, else ``"en"``."""
    text = " ".join(m.text for m in messages if m.type == "human")
    letters = [c for c in text if c.isalpha()]
    hangul = sum("\uac00" <= c <= "\ud7a3" for c in letters)
    return "ko" if letters and hangul / len(letters) >= 0.2 else "en"


def is_summary(message: BaseMessage) -> bool:
    """True for the running-summary message this module writes."""
    return message.type == "system" and message.id == SUMMARY_ID


def summary_message(text: str, language: str = "en", covers: Sequence[str] = ()) -> SystemMessage:
    """The stored summary: a ``SystemMessage`` with id ``"running-summary"`` and a header line.

    Args:
        text: the summary (without header).
        language: ``"en"`` or ``"ko"`` (the header's language).
        covers: ids of the conversation messages folded into it so far, kept in
            ``additional_kwargs["covers"]`` (not sent to a provider) so a replay can mark them.
    """
    return SystemMessage(f"{_TEXT[language]['header']}\n{text.strip()}", id=SUMMARY_ID,
                         additional_kwargs={COVERS_KEY: list(covers)} if covers else {})


def summary_covers(message: BaseMessage | None) -> list[str]:
    """Ids of the messages a summary message has folded in (``[]`` for ``None``)."""
    return list(message.additional_kwargs.get(COVERS_KEY, ())) if message is not None else []


def summary_text(message: BaseMessage | None) -> str:
    """The summary's text without its header ("" for ``None``)."""
    if message is None:
        return ""
    first, _, rest = message.text.partition("\n")
    return rest if first in {t["header"] for t in _TEXT.values()} else message.text


def split_stored(stored: Sequence[BaseMessage]) -> tuple[SystemMessage | None, list[BaseMessage]]:
    """Split a stored history into ``(summary message or None, the other messages)``."""
    if stored and is_summary(stored[0]):
        return stored[0], list(stored[1:])
    return None, list(stored)


def _turn_start(messages: Sequence[BaseMessage], index: int) -> int:
    """Move ``index`` back to the human message that starts its turn (0 if none before it)."""
    while index > 0 and messages[index].type != "human":
        index -= 1
    return index


# --- triggers and keep rules ------------------------------------------------------------------


@dataclass(frozen=True)
class CountTrigger:
    """Summarize when more than ``max_messages`` messages are stored (the summary not counted),
    keeping the last ``keep_messages`` (moved back to the start of their turn).
    Article default: more than 6 messages, keep the last 2."""

    max_messages: int = 6
    keep_messages: int = 2

    def fires(self, messages: Sequence[BaseMessage], summary: BaseMessage | None,
              request_tokens: int = 0) -> bool:
        return len(messages) > self.max_messages

    def keep_from(self, messages: Sequence[BaseMessage]) -> int:
        if self.keep_messages <= 0:
            return len(messages)
        return _turn_start(messages, max(0, len(messages) - self.keep_messages))

    def describe(self) -> str:
        return f"> {self.max_messages} messages, keep last {self.keep_messages}"


@dataclass(frozen=True)
class TokenTrigger:
    """Summarize when the next request would be over ``max_tokens`` tokens: the stored history
    (summary included) plus ``request_tokens``, everything else the request carries (the system
    prompt; ``summarize_step`` passes it). Keeps the most recent whole turns that fit in
    ``keep_tokens`` tokens (the boundary moves forward to the start of the next turn, so the kept
    part is never over ``keep_tokens``); if the newest turn alone is over, exactly that turn is
    kept. Article default: over 200 tokens, keep ~80."""

    max_tokens: int = 200
    keep_tokens: int = 80

    def fires(self, messages: Sequence[BaseMessage], summary: BaseMessage | None,
              request_tokens: int = 0) -> bool:
        stored = ([summary] if summary is not None else []) + list(messages)
        return count_tokens(stored) + request_tokens > self.max_tokens

    def keep_from(self, messages: Sequence[BaseMessage]) -> int:
        used, index = 0, len(messages)
        while index > 0:
            cost = count_message_tokens(messages[index - 1])
            if used + cost > self.keep_tokens:
                break
            used, index = used + cost, index - 1
        while index < len(messages) and messages[index].type != "human":
            index += 1  # start on a human message: the turn cut in half is summarized
        if index == len(messages) and messages:  # the newest turn alone is over: keep it whole
            index = _turn_start(messages, len(messages) - 1)
        return index

    def describe(self) -> str:
        return f"> {self.max_tokens} tokens, keep ~{self.keep_tokens} tokens"


Trigger = CountTrigger | TokenTrigger


# --- the summary call ---------------------------------------------------------------------------


def summary_prompt(
    previous: str, messages: Sequence[BaseMessage], language: str, max_summary_tokens: int
) -> list[BaseMessage]:
    """The two messages of a summary call: the instruction (system) and the previous summary plus
    the new messages as text made by LangChain's ``get_buffer_string`` ("Human: ..." / "AI: ...")."""
    text = _TEXT[language]
    max_words = max(10, int(max_summary_tokens * 0.6))  # ~0.75 words per English token, with margin
    body = (
        f"{text['previous']}\n{previous.strip() or text['none']}\n\n"
        f"{text['new']}\n{get_buffer_string(list(messages))}\n\n{text['ask']}"
    )
    return [SystemMessage(text["instruction"].format(max_words=max_words)), HumanMessage(body)]


def cap_summary(text: str, max_tokens: int) -> str:
    """Cut ``text`` to at most ``max_tokens`` tokens at a line boundary, keeping the first line
    (a heading) and the newest lines (the end). If not even the newest line fits with the heading,
    the heading and the newest line are cut by tokens (the older lines are dropped, as always)."""
    if count_text_tokens(text) <= max_tokens:
        return text
    lines = text.strip().splitlines()
    head, body = lines[0], lines[1:]
    kept: list[str] = []
    for line in reversed(body):
        if count_text_tokens("\n".join([head, line, *kept])) > max_tokens:
            break
        kept.insert(0, line)
    if kept:
        return "\n".join([head, *kept])
    from helpers.tokens import get_encoding

    encoding = get_encoding()
    newest = "\n".join([head, body[-1]]) if body else head
    ids = encoding.encode(newest, disallowed_special=())[: max(0, max_tokens)]
    cut = encoding.decode_bytes(ids).decode("utf-8", errors="ignore")  # no half character
    while ids and count_text_tokens(cut) > max_tokens:  # re-encoding may merge differently
        ids = ids[:-1]
        cut = encoding.decode_bytes(ids).decode("utf-8", errors="ignore")
    return cut


@dataclass
class SummaryStep:
    """What one summarization did. Token counts as ``helpers.tokens`` counts them."""

    messages: list[BaseMessage]  # the new stored history: [summary, *kept]
    summary: str  # the new summary text (without header)
    folded: list[BaseMessage]  # the messages folded into it (previous summary not included)
    kept: list[BaseMessage]
    call_input_tokens: int  # prompt tokens of the summary call
    call_output_tokens: int  # tokens of the summary it returned
    capped: bool = False  # True when the summary was cut to max_summary_tokens
    prompt: list[BaseMessage] = field(default_factory=list)  # what the summary call was sent


def summarize_step(
    model: BaseChatModel,
    stored: Sequence[BaseMessage],
    trigger: Trigger,
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS,
    force: bool = False,
    system: BaseMessage | None = None,
) -> SummaryStep | None:
    """Fold the older stored messages into the running summary, if the trigger fires.

    Args:
        model: the chat model that writes the summary (one call).
        stored: the stored history, ``[summary?, *messages]`` (no system prompt). Not modified.
        trigger: a ``CountTrigger`` or ``TokenTrigger``: when to summarize and what to keep.
        max_summary_tokens: cap on the summary's size in tokens (asked for in the instruction and
            enforced on the result with ``cap_summary``).
        force: summarize even if the trigger does not fire (still keeps what it says to keep).
        system: the system prompt the answer calls carry. A token trigger counts what is sent, so
            its tokens (``count_message_tokens(system)``) are added to the stored history's: with
            a 3,500-token trigger and a 3,300-token system prompt, 300 tokens of history fire it.

    Returns:
        ``None`` when there is nothing to do (trigger not fired, or nothing before the kept part);
        else a ``SummaryStep`` whose ``messages`` is the new stored history. The invariant
        ``folded + kept == messages without the summary`` always holds: nothing falls in between.

    Raises:
        SummarizationError: the model call raised, or returned an empty summary. ``stored`` is
            unchanged (this function never modifies it), so the caller loses nothing.
    """
    summary, messages = split_stored(stored)
    request_tokens = count_message_tokens(system) if system is not None else 0
    if not force and not trigger.fires(messages, summary, request_tokens):
        return None
    boundary = trigger.keep_from(messages)
    folded, kept = messages[:boundary], messages[boundary:]
    if not folded:
        return None
    language = conversation_language(messages) if messages else "en"
    prompt = summary_prompt(summary_text(summary), folded, language, max_summary_tokens)
    try:
        reply = model.invoke(prompt)
    except Exception as exc:
        raise SummarizationError(
            f"The summary call failed ({type(exc).__name__}: {exc}); the history was not changed."
        ) from exc
    text = (reply.text or "").strip()
    if not text:
        raise SummarizationError("The model returned an empty summary; the history was not changed.")
    capped_text = cap_summary(text, max_summary_tokens)
    usage = getattr(reply, "usage_metadata", None) or {}
    return SummaryStep(
        messages=[summary_message(capped_text, language,
                                  summary_covers(summary) + [m.id for m in folded if m.id]), *kept],
        summary=capped_text,
        folded=folded,
        kept=kept,
        call_input_tokens=usage.get("input_tokens", count_tokens(prompt)),
        call_output_tokens=usage.get("output_tokens", count_text_tokens(text)),
        capped=capped_text != text,
        prompt=prompt,
    )


def build_prompt(
    system: SystemMessage | None,
    stored: Sequence[BaseMessage],
    new_message: BaseMessage,
    summary_last: bool = False,
) -> list[BaseMessage]:
    """The messages a summarizing memory sends for one turn.

    Args:
        system: the system prompt (or ``None``).
        stored: ``[summary?, *recent]`` as kept by ``summarize_step``.
        new_message: the user's new message.
        summary_last: place the summary after the recent messages, as the original article did
            (for lesson 05's comparison only; it misleads the model).

    Returns:
        ``[system, summary, *recent, new_message]`` (or with the summary moved after ``recent``).
    """
    summary, recent = split_stored(stored)
    head = [system] if system is not None else []
    middle = [summary] if summary is not None else []
    if summary_last:
        return [*head, *recent, *middle, new_message]
    return [*head, *middle, *recent, new_message]


def summarize_history(
    model: BaseChatModel,
    history,
    trigger: Trigger,
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS,
) -> SummaryStep | None:
    """Summarize a stored ``FileHistory`` in place, if the trigger fires: one locked
    read-summarize-write (``FileHistory.update``), so the old messages are replaced by the summary
    in a single atomic write, and only after the summary exists.

    Args:
        model: the chat model that writes the summary.
        history: a ``helpers.history.FileHistory`` (anything with ``update(change)``).
        trigger, max_summary_tokens: as in ``summarize_step``.

    Returns:
        The ``SummaryStep``, or ``None`` if the trigger did not fire (the file is rewritten with
        the same messages).

    Raises:
        SummarizationError: the summary call failed or returned nothing; the file is unchanged.
        helpers.history.HistoryFileError: the file is damaged; it is left untouched.
    """
    result: SummaryStep | None = None

    def change(current: list[BaseMessage]) -> list[BaseMessage]:
        nonlocal result
        result = summarize_step(model, current, trigger, max_summary_tokens)
        return result.messages if result else current

    history.update(change)
    return result
