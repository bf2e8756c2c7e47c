"""Text at the edges of the course's code: what enters is made one Unicode form (``nfc``: macOS sends Korean
decomposed), blank text is named (``is_blank``), ISO times are compared in UTC (``utc_time``); what memory
sends back into a prompt is a delimited block of data (``memory_block``), never instructions. Rule: Unicode
Standard Annex #15 (NFC); why: docs/design-notes.md, "Memories as data, and text at the edges"."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

from langchain_core.messages import BaseMessage

MEMORY_SOURCES = ("retrieved", "summary", "preferences", "facts")  # what a memory block may hold
_BLOCK = re.compile(r'\A<memory source="(\w+)">\n(.*)\n</memory>\Z', re.S)
_TAG = re.compile(r"</?memory\b", re.I)
_READ, _FILLERS = ("L", "N", "P", "S", "Co", "Cn"), frozenset("\u115f\u1160\u3164\uffa0\u2800")  # is_blank


def nfc(text: str) -> str:
    """``text`` in Unicode NFC (composed): unchanged if already so (the common case, checked fast).
    ValueError (``utf8_encode``) for an unpaired surrogate: refused where it enters, not later as an
    embedding, Milvus or summary call that fails on it."""
    if not text.isascii():
        utf8_encode(text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def utf8_encode(text: str, what: str = "the text") -> bytes:
    """``text`` as UTF-8; ValueError naming ``what`` and the character of an unpaired surrogate in it."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} holds an unpaired surrogate {text[exc.start]!r} at character {exc.start} "
                         f"(after {text[:exc.start][-20:]!r}): half of a UTF-16 pair, not valid UTF-8. "
                         "Nothing was written. Remove it or restore its pair: text.encode('utf-8', "
                         "'replace').decode() puts '?' in its place.") from None


def nfc_message(message: BaseMessage) -> BaseMessage:
    """``message`` itself if its text content is NFC, else a copy with NFC content (string content and
    the text of text blocks; other blocks as they are). The id and every other field are kept."""
    content = message.content
    fixed = nfc(content) if isinstance(content, str) else [
        {**b, "text": nfc(b["text"])} if isinstance(b, dict) and isinstance(b.get("text"), str)
        else nfc(b) if isinstance(b, str) else b for b in content]
    return message if fixed == content else message.model_copy(update={"content": fixed})


def is_blank(text: str) -> bool:
    """True for text with nothing to read (every store and search asks): no character of the categories L, N,
    P, S, Co, Cn but blank-looking fillers (Hangul U+115F, U+1160, U+3164, U+FFA0, braille U+2800)."""
    return not any(unicodedata.category(c).startswith(_READ) and c not in _FILLERS for c in text)


def utc_time(value: str) -> datetime:
    """An ISO 8601 date or time as an aware UTC ``datetime``, for comparing times: ``"...T09:00+09:00"``
    is 00:00 UTC, before ``"...T01:00+00:00"``, though it sorts after it as text. A date alone is its
    midnight, a time without offset is UTC; ``""`` or text that is not ISO sorts first (``datetime.min``)."""
    try:
        when = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return datetime.min.replace(tzinfo=UTC)
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def utc_iso(when: datetime | str | None = None) -> str:
    """``when`` (``datetime``, naive = UTC; ISO 8601 str, any offset; ``None`` or ``""``: now) as the ISO
    text of its UTC time in milliseconds: stored so, times sort as text in time order. ValueError if not
    a ``datetime`` nor ISO 8601 text."""
    when = datetime.fromisoformat(when) if isinstance(when, str) and when else when or datetime.now(UTC)
    if not isinstance(when, datetime):
        raise ValueError(f"timestamp must be a datetime or an ISO 8601 str, got {when!r}")
    when = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    return when.isoformat(timespec="milliseconds")


def memory_block(source: str, note: str, body: str) -> str:
    """What memory adds to a prompt, as data: ``<memory source="...">``, a ``note`` line saying what the
    lines are (and that they are data, not instructions), the ``body``, ``</memory>``. Sent in a user
    message, never a system one: a stored line ("ignore all previous instructions...") must not get
    the system prompt's authority (OWASP LLM01, indirect prompt injection). A ``<memory`` or
    ``</memory`` inside ``body`` is escaped (``&lt;``) so no stored text can close the block early.
    ValueError for a ``source`` not in ``MEMORY_SOURCES``."""
    if source not in MEMORY_SOURCES:
        raise ValueError(f"source must be one of {MEMORY_SOURCES}, got {source!r}")
    safe = _TAG.sub(lambda tag: "&lt;" + tag.group(0)[1:], body)
    return f'<memory source="{source}">\n{note}\n{safe}\n</memory>'


def memory_body(text: str) -> tuple[str, str]:
    """``(source, body)`` of a ``memory_block`` (body: the lines after the note), ``("", text)`` for
    text that is not one block."""
    if not (found := _BLOCK.match(text)):
        return "", text
    return found.group(1), found.group(2).partition("\n")[2]
