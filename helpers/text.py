"""Text as it enters the course's code: one Unicode form, and blank text named as such.

The same Korean word typed on macOS arrives decomposed (NFD: 제 = ᄌ + ᅦ, three code points for a
syllable) and on Windows or Linux composed (NFC). Compared, counted, embedded or stored as they come,
the two forms differ: a fact ranks below its neighbour, a token count grows about fivefold, a history
file gives back what it was given. Rule: Unicode Standard Annex #15 (NFC, canonical composition);
the W3C "Character Model for the World Wide Web: String Matching" asks for NFC on input, as here."""

from __future__ import annotations

import unicodedata

from langchain_core.messages import BaseMessage


def nfc(text: str) -> str:
    """``text`` in Unicode NFC (composed): unchanged if already so (the common case, checked fast)."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def nfc_message(message: BaseMessage) -> BaseMessage:
    """``message`` itself if its text content is NFC, else a copy with NFC content (string content and
    the text of text blocks; other blocks as they are). The id and every other field are kept."""
    content = message.content
    if isinstance(content, str):
        fixed = nfc(content)
    else:
        fixed = [({**b, "text": nfc(b["text"])} if isinstance(b, dict) and isinstance(b.get("text"), str)
                  else nfc(b) if isinstance(b, str) else b) for b in content]
    return message if fixed == content else message.model_copy(update={"content": fixed})


def is_blank(text: str) -> bool:
    """True for text with nothing to find by meaning: empty, or only whitespace (any Unicode space,
    zero-width space and byte-order mark included)."""
    return not text.replace("\u200b", "").replace("\ufeff", "").strip()
