"""Show what the model is sent: a table of messages with roles, token counts and marks.

Lessons call ``render_messages(messages)``; later lessons pass ``marks`` such as ``"kept"``,
``"dropped"``, ``"summarized"``, ``"summary"``, ``"retrieved"`` to show what a memory strategy did.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from helpers.tokens import REPLY_PRIMING_TOKENS, count_message_tokens

_ROLE = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
_MARK_COLOURS = {
    "kept": "#e6f4ea",
    "sent": "#e6f4ea",
    "dropped": "#fce8e6",
    "summarized": "#fef7e0",
    "summary": "#e8f0fe",
    "retrieved": "#f3e8fd",
}


def message_rows(
    messages: Sequence[BaseMessage], marks: Sequence[str] | None = None, width: int = 100
) -> list[dict]:
    """One dict per message: ``index``, ``role``, ``tokens`` (this message's share of the prompt,
    framing included, see ``helpers.tokens``), ``mark`` and ``content`` (cut to ``width``
    characters with an ellipsis).

    Raises:
        ValueError: ``marks`` is given with a length different from ``messages``.
    """
    if marks is not None and len(marks) != len(messages):
        raise ValueError(f"{len(marks)} marks for {len(messages)} messages")
    rows = []
    for i, message in enumerate(messages):
        text = message.content if isinstance(message.content, str) else str(message.content)
        text = " ".join(text.split())
        rows.append(
            {
                "index": i,
                "role": _ROLE.get(message.type, message.type),
                "tokens": count_message_tokens(message),
                "mark": marks[i] if marks is not None else "",
                "content": text if len(text) <= width else text[: width - 1] + "…",
            }
        )
    return rows


def messages_html(
    messages: Sequence[BaseMessage], marks: Sequence[str] | None = None, title: str | None = None
) -> str:
    """HTML table of ``message_rows`` with a total line: the prompt tokens of the marked
    ``kept``/``sent``/``summary``/``retrieved`` messages (all messages when there are no marks)
    plus the 3 reply-priming tokens."""
    rows = message_rows(messages, marks)
    sent = [r for r in rows if not r["mark"] or r["mark"] in ("kept", "sent", "summary", "retrieved")]
    total = sum(r["tokens"] for r in sent) + (REPLY_PRIMING_TOKENS if sent else 0)
    show_marks = marks is not None
    head = "<th>#</th><th>role</th><th>tokens</th>" + ("<th>mark</th>" if show_marks else "")
    body = []
    for r in rows:
        colour = _MARK_COLOURS.get(r["mark"], "transparent")
        mark = f"<td>{html.escape(r['mark'])}</td>" if show_marks else ""
        body.append(
            f'<tr style="background:{colour}"><td>{r["index"]}</td><td>{r["role"]}</td>'
            f'<td style="text-align:right">{r["tokens"]}</td>{mark}'
            f'<td style="text-align:left">{html.escape(r["content"])}</td></tr>'
        )
    caption = f"<caption style='text-align:left'><b>{html.escape(title)}</b></caption>" if title else ""
    return (
        f"<table>{caption}<tr>{head}<th style='text-align:left'>content</th></tr>"
        + "".join(body)
        + f"<tr><td></td><td><b>prompt</b></td><td style='text-align:right'><b>{total}</b></td>"
        + ("<td></td>" if show_marks else "")
        + f"<td style='text-align:left'>tokens of the {len(sent)} messages "
        + ("marked kept / summary / retrieved" if show_marks else "")
        + " + 3 reply priming</td></tr>"
        + "</table>"
    )


class MessagesView:
    """Displays as an HTML table in Jupyter and as plain text elsewhere."""

    def __init__(self, messages, marks=None, title=None):
        self.rows = message_rows(messages, marks)
        self._html = messages_html(messages, marks, title)
        self.title = title

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        lines = [self.title] if self.title else []
        for r in self.rows:
            mark = f" [{r['mark']}]" if r["mark"] else ""
            lines.append(f"{r['index']:>3} {r['role']:<9} {r['tokens']:>5}{mark} {r['content']}")
        return "\n".join(lines)


def render_messages(
    messages: Sequence[BaseMessage], marks: Sequence[str] | None = None, title: str | None = None
) -> MessagesView:
    """What the model is sent, as a table (role, tokens, optional mark, content).

    Args:
        messages: the list of LangChain messages.
        marks: optional label per message (``kept``, ``dropped``, ``summarized``, ``summary``,
            ``retrieved``); same length as ``messages``.
        title: optional caption.

    Returns:
        An object Jupyter shows as an HTML table (the last expression of a cell); ``.rows`` holds
        the same data as ``message_rows``.
    """
    return MessagesView(messages, marks, title)
