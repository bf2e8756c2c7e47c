"""Values made safe before they reach Milvus: ids (checked: they go into filters and file names), filter
literals (quoted and escaped, so ``a" or user_id != "x`` stays one literal; Milvus "Boolean expression
rules") and UTF-8 byte limits (a server counts VARCHAR limits in bytes): long text is cut at characters."""

from collections.abc import Sequence

from helpers.history import InvalidSessionIdError, validate_session_id
from helpers.text import utf8_encode

CONTENT_MAX_BYTES = 5000  # the article's VARCHAR(5000)
MAX_TOP_K = 4096  # a search's top-k: it asks Milvus for 4 chunks a row, at most 16384 (Milvus docs, "Limits")
_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


class InvalidIdError(InvalidSessionIdError):
    """A user or session id that ``validate_id`` refuses (a ``ValueError``)."""


def validate_id(value: str, what: str = "user id") -> str:
    """``value`` if ``history.validate_session_id`` allows it (a safe file name and filter value)."""
    try:
        return validate_session_id(value)
    except InvalidSessionIdError as exc:
        raise InvalidIdError(str(exc).replace("session id", what, 1)) from None


def filter_literal(value: str) -> str:
    """``value`` quoted as a Milvus literal, ``\\ " \\n \\r \\t`` escaped; TypeError for a non-str."""
    if not isinstance(value, str):
        raise TypeError(f"filter values must be str, got {type(value).__name__}")
    return f'"{value.translate(_ESCAPES)}"'


def _field(name: str) -> str:
    if not (name.isascii() and name.isidentifier()):  # letters, digits and _, no digit first
        raise ValueError(f"not a field name: {name!r}")
    return name


def eq_filter(**fields: str | int) -> str:
    """``user_id == "ann" and round == 3``, values escaped; ValueError for a bad field name."""
    return " and ".join(f"{_field(k)} == {int(v) if isinstance(v, int) else filter_literal(v)}"
                        for k, v in fields.items())


def in_filter(name: str, values: Sequence[str]) -> str:
    """``name in ["a", "b"]``, values escaped."""
    return f"{_field(name)} in [{', '.join(filter_literal(v) for v in values)}]"


def utf8_len(text: str, what: str = "the text") -> int:
    """``text``'s length in UTF-8 bytes (a server's VARCHAR unit); ValueError naming ``what``: not UTF-8."""
    return len(utf8_encode(text, what))


def split_utf8(text: str, max_bytes: int = CONTENT_MAX_BYTES) -> list[str]:
    """``text`` in pieces of at most ``max_bytes`` (>= 4) UTF-8 bytes, cut between characters, at a
    space or line break in a piece's last quarter if any; ``"".join(pieces) == text``."""
    if max_bytes < 4:
        raise ValueError(f"max_bytes must be at least 4 (one UTF-8 character), got {max_bytes}")
    data, pieces, start = utf8_encode(text), [], 0
    while len(data) - start > max_bytes:
        end = start + max_bytes
        while data[end] & 0xC0 == 0x80:  # a continuation byte: step back to a character start
            end -= 1
        floor = start + (3 * max_bytes) // 4
        space = max(data.rfind(b" ", floor, end), data.rfind(b"\n", floor, end))
        end = space + 1 if space >= floor else end
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    return [*pieces, data[start:].decode("utf-8")]


def bounded_text(text: str, max_bytes: int) -> str:
    """``text`` if at most ``max_bytes`` (>= 8, else ValueError) UTF-8 bytes, else the first third and last
    two thirds of that many around ``" … "``, cut between characters (a long message's question opens or
    closes it: "Here is my log: ... Why does it fail?")."""
    if max_bytes < 8:
        raise ValueError(f"max_bytes must be at least 8, got {max_bytes}")
    if len(data := utf8_encode(text)) <= max_bytes:
        return text
    head = split_utf8(text, max_bytes // 3)[0]
    start = len(data) - (max_bytes - utf8_len(head) - len(" … ".encode()))
    while data[start] & 0xC0 == 0x80:  # a continuation byte: step forward to a character start
        start += 1
    return f"{head} … {data[start:].decode('utf-8')}"
