"""Show what the model is sent: ``render_messages(messages)``, a table of messages with roles, token
counts and, from lesson 04, ``marks`` (``helpers.memory.MARKS``) that show what a memory strategy did;
then the cost tables of replays, as lessons 04-08 show them (from ``helpers.memory.totals``)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage

from helpers.course.offline_model import MODEL_NAME as STAND_IN
from helpers.course.offline_model import OfflineChatModel
from helpers.evaluate import recall_totals
from helpers.memory import DROPPED, KEPT, RETRIEVED, SUMMARIZED, SUMMARY, TurnRecord, totals
from helpers.tokens import REPLY_PRIMING_TOKENS, ROLE_NAMES, count_message_tokens


def _tint(variable: str, percent: int = 18) -> str:
    """A see-through tint of a JupyterLab theme colour: it reads on the light and the dark theme."""
    return f"color-mix(in srgb, var({variable}) {percent}%, transparent)"


_MARK_COLOURS = {"kept": _tint("--jp-success-color1"), "sent": _tint("--jp-success-color1"),
                 "dropped": _tint("--jp-error-color1", 12), "summarized": _tint("--jp-warn-color1"),
                 "summary": _tint("--jp-brand-color1"), "retrieved": _tint("--jp-info-color1", 22)}
TEXT_COLOUR = "var(--jp-content-font-color1)"
MUTED_COLOUR = "var(--jp-content-font-color2)"
ERROR_COLOUR = "var(--jp-error-color1)"
_FULL_TEXT_MARKS = ("summary", "retrieved")  # what a memory put in the prompt: never cut
_COLLAPSED_MARKS = ("dropped", "summarized")  # one line each run with ``messages_html(collapse=True)``


def message_rows(messages: Sequence[BaseMessage], marks: Sequence[str] | None = None,
                 width: int = 100) -> list[dict]:
    """One dict per message: ``index``, ``role`` ("assistant (stand-in)" for a reply the offline stand-in
    wrote), ``tokens`` (this message's share of the prompt, framing included, see ``helpers.tokens``),
    ``mark`` and ``content`` (cut to ``width`` characters with an ellipsis). ValueError: ``marks`` of
    another length than ``messages``."""
    if marks is not None and len(marks) != len(messages):
        raise ValueError(f"{len(marks)} marks for {len(messages)} messages")
    rows = []
    for i, message in enumerate(messages):
        text = message.content if isinstance(message.content, str) else str(message.content)
        mark = marks[i] if marks is not None else ""
        if mark in _FULL_TEXT_MARKS:
            text = "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
        else:
            text = " ".join(text.split())
            text = text if len(text) <= width else text[: width - 1] + "…"
        role = ROLE_NAMES.get(message.type, message.type)
        if message.response_metadata.get("model_name") == STAND_IN:  # an earlier reply of the stand-in
            role += " (stand-in)"
        rows.append({"index": i, "role": role, "tokens": count_message_tokens(message), "mark": mark,
                     "content": text})
    return rows


def collapsed_line(count: int, mark: str) -> str:
    """The line for ``count`` consecutive messages marked ``mark``: "… 23 earlier messages dropped"."""
    return f"… {count} earlier message{'s' if count != 1 else ''} {mark}"


def read_from(reply: BaseMessage | None) -> str:
    """Where the offline stand-in read its answer (``response_metadata["evidence"]``), as one line:
    "answer read in message 3 (user)", "... in message 1 (memory 'summary')"; the stand-in's reply that
    quoted nothing says so (a miss is its reading, not the memory's); "" for a real model's."""
    used = (reply.response_metadata.get("evidence") or []) if reply is not None else []
    where = [f"{u['message']} ({_source(u)})" for u in used]
    if where:
        return f"answer read in message {', '.join(dict.fromkeys(where))}"
    if reply is not None and reply.response_metadata.get("model_name") == STAND_IN:  # it quoted nothing
        return "the stand-in quoted no line: none it was sent came close enough (it can miss one)"
    return ""


STAND_IN_REPLY_LABEL = "the stand-in's reply"  # its reading of what was sent, never a model's answer


def reply_label(reply: BaseMessage) -> str:
    """``STAND_IN_REPLY_LABEL`` for a reply the offline stand-in wrote, else "reply"."""
    return STAND_IN_REPLY_LABEL if reply.response_metadata.get("model_name") == STAND_IN else "reply"


def reply_column(model: BaseChatModel) -> str:
    """The same label for a table of ``model``'s replies: ``STAND_IN_REPLY_LABEL`` or "reply"."""
    return STAND_IN_REPLY_LABEL if isinstance(model, OfflineChatModel) else "reply"


def _source(evidence: dict) -> str:  # a memory block by its source ("memory 'summary'"), else the role
    if evidence["memory"]:
        return f"memory {evidence['memory']!r}"
    return ROLE_NAMES.get(evidence["role"], "memory" if evidence["role"] == "other" else evidence["role"])


def messages_html(messages: Sequence[BaseMessage], marks: Sequence[str] | None = None,
                  title: str | None = None, collapse: bool = False, reply: BaseMessage | None = None) -> str:
    """HTML table of ``message_rows`` with a total line: the prompt tokens of the marked
    ``kept``/``sent``/``summary``/``retrieved`` messages (all messages when there are no marks)
    plus the 3 reply-priming tokens. With ``collapse``, each run of ``dropped`` (or ``summarized``)
    messages other than system messages is one ``collapsed_line``, so what the model is sent comes
    first on the screen. Colours are JupyterLab theme variables; summary and retrieved rows are whole.
    ``reply``: the model's reply, shown under the table with ``read_from`` (a teaching aid)."""
    rows = message_rows(messages, marks)
    sent = [r for r in rows if not r["mark"] or r["mark"] in ("kept", "sent", "summary", "retrieved")]
    total = sum(r["tokens"] for r in sent) + (REPLY_PRIMING_TOKENS if sent else 0)
    show_marks = marks is not None
    cell = f"padding:2px 6px;line-height:1.4;color:{TEXT_COLOUR};"
    head = "".join(f"<th style='{cell}'>{h}</th>" for h in ("#", "role", "tokens")) + (
        f"<th style='{cell}'>mark</th>" if show_marks else "")
    body, i = [], 0
    while i < len(rows):
        r = rows[i]
        colour = _MARK_COLOURS.get(r["mark"], "transparent")
        mark = f"<td style='{cell}'>{html.escape(r['mark'])}</td>" if show_marks else ""
        if collapse and r["mark"] in _COLLAPSED_MARKS and r["role"] != "system":
            j = i  # a run of messages with this mark (a system prompt is always shown)
            while j < len(rows) and rows[j]["mark"] == r["mark"] and rows[j]["role"] != "system":
                j += 1
            tokens = sum(x["tokens"] for x in rows[i:j])
            span = f'{rows[i]["index"]}–{rows[j - 1]["index"]}'
            body.append(
                f'<tr class="course-collapsed" style="background:{colour}">'
                f'<td style="{cell}text-align:left" colspan="2">{span}</td>'
                f'<td style="{cell}text-align:right">{tokens}</td>{mark}'
                f'<td style="{cell}text-align:left;font-style:italic">'
                f'{html.escape(collapsed_line(j - i, r["mark"]))}</td></tr>')
            i = j
            continue
        body.append(
            f'<tr style="background:{colour}"><td style="{cell}">{r["index"]}</td>'
            f'<td style="{cell}white-space:nowrap">{r["role"]}</td>'
            f'<td style="{cell}text-align:right">{r["tokens"]}</td>{mark}'
            f'<td style="{cell}text-align:left;white-space:pre-wrap">{html.escape(r["content"])}</td></tr>')
        i += 1
    caption = (f"<caption style='text-align:left;color:{TEXT_COLOUR}'><b>{html.escape(title)}</b>"
               "</caption>" if title else "")
    blank, marked = ((f"<td style='{cell}'></td>", "marked kept / summary / retrieved") if show_marks
                     else ("", ""))
    return (f"<table class='course-messages' style='border-collapse:collapse;color:{TEXT_COLOUR};"
            f"background:transparent'>{caption}<tr>{head}<th style='{cell}text-align:left'>content</th></tr>"
            + "".join(body) + f"<tr><td style='{cell}'></td><td style='{cell}'><b>prompt</b></td>"
            f"<td style='{cell}text-align:right'><b>{total}</b></td>{blank}<td style='{cell}text-align:left'>"
            f"tokens of the {len(sent)} messages {marked} + 3 reply priming</td></tr>"
            + (f"<tr><td style='{cell}'></td><td style='{cell}'><b>{reply_label(reply)}</b></td>"
               f"<td style='{cell}'></td>{blank}"
               f"<td style='{cell}text-align:left;white-space:pre-wrap'>{html.escape(str(reply.content))}"
               f"<br><i style='color:{MUTED_COLOUR}'>{html.escape(read_from(reply))}</i></td></tr>"
               if reply is not None else "") + "</table>")


class render_messages:  # noqa: N801 - a lesson calls it like a function: ``render_messages(prompt)``
    """What the model is sent, as a table (role, tokens, optional mark, content): ``marks``, one per
    message (kept, dropped, summarized, summary, retrieved); ``title``, a caption; ``reply``, the
    model's reply, shown last with the message the offline stand-in read its answer in. Jupyter shows
    it as HTML, elsewhere as text; ``.rows`` holds ``message_rows``. ValueError: marks of another length."""

    def __init__(self, messages: Sequence[BaseMessage], marks: Sequence[str] | None = None,
                 title: str | None = None, reply: BaseMessage | None = None) -> None:
        self.rows = message_rows(messages, marks)
        self._html = messages_html(messages, marks, title, reply=reply)
        self.title, self.reply = title, reply

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        lines = [self.title] if self.title else []
        for r in self.rows:
            mark = f" [{r['mark']}]" if r["mark"] else ""
            lines.append(f"{r['index']:>3} {r['role']:<9} {r['tokens']:>5}{mark} {r['content']}")
        if self.reply is not None:
            lines += [f"{reply_label(self.reply)}: {self.reply.content}", read_from(self.reply)]
        return "\n".join(line for line in lines if line)


def window_marks(messages: Sequence[BaseMessage], window: Sequence[BaseMessage]) -> list[str]:
    """``"kept"`` or ``"dropped"`` for each message of the history: the messages of ``window`` are
    matched by identity, else by equality, from the newest backwards. Raises ``ValueError`` when a
    message of ``window`` is not in ``messages`` (in that order)."""
    marks = ["dropped"] * len(messages)
    i = len(messages) - 1
    for w in reversed(window):
        j = next((j for j in range(i, -1, -1) if messages[j] is w), None)
        if j is None:  # not the same object (e.g. a copy): fall back to equality
            j = next((j for j in range(i, -1, -1) if messages[j] == w), None)
        if j is None:
            raise ValueError(f"window message {w.type!r} {str(w.content)[:40]!r} is not in messages "
                             "(or not in the same order)")
        marks[j], i = "kept", j - 1
    return marks

COST_SUMMARY_KEYS = ("turns", "prompt tokens (total)", "prompt tokens (last turn)", "extra calls",
                     "summary tokens", "all tokens")


def cost_summary(records: Sequence[TurnRecord]) -> dict:
    """The token and call totals of ``totals`` that lessons 04-05 show (``COST_SUMMARY_KEYS``)."""
    everything = totals(records)
    return {key: everything[key] for key in COST_SUMMARY_KEYS}


def cost_table(records: Sequence[TurnRecord]) -> pd.DataFrame:
    """Per-turn costs of a replay (``TurnRecord.as_row``) indexed by turn, with the user's message
    and the start of the reply."""
    rows = [{**r.as_row(), "user": r.user, "reply": r.reply if len(r.reply) <= 60 else r.reply[:59] + "…"}
            for r in records]
    return pd.DataFrame(rows).set_index("turn")


def what_is_kept(record: TurnRecord) -> str:
    """In words: which earlier messages (neither the system prompt nor the new message) a turn's
    prompt carried, e.g. ``"6 of 32 earlier messages (26 dropped)"``."""
    earlier = [mark for mark in record.marks[1:-1] if mark != SUMMARY]
    kept = earlier.count(KEPT)
    retrieved = earlier.count(RETRIEVED)
    text = f"{kept} of {len(earlier)} earlier messages"
    if SUMMARY in record.marks:
        text += f" + a summary of {earlier.count(SUMMARIZED)}"
    elif retrieved:
        text += f" + {retrieved} retrieved"
    elif kept < len(earlier):
        text += f" ({len(earlier) - kept} dropped)"
    if record.marks[0] == DROPPED:
        text += "; system prompt dropped"
    return text


def article_cost_table(runs: dict[str, Sequence[TurnRecord]]) -> list[dict]:
    """The article's cost table (trigger, cost, what is kept) with measured numbers, one row per
    strategy of ``runs`` (name -> its replay's records); "evidence recall" (``evaluate.recall_totals``)
    is ``None`` without probe records such as ``evaluate.ScoredTurn``."""
    rows = []
    for name, records in runs.items():
        n = max(len(records), 1)
        total = totals(records)
        when, sends = records[0].cost_note if records else ("", "")
        rows.append({
            "strategy": name,
            "trigger": when,
            "prompt tokens / turn": round(total["prompt tokens (total)"] / n),
            "prompt tokens (last turn)": total["prompt tokens (last turn)"],
            "extra calls / 100 turns": round(100 * total["extra calls"] / n, 1),
            "summary tokens": total["summary tokens"],
            "embeddings / 100 turns": round(100 * total["extra embeddings"] / n, 1),
            "what is kept": sends,
            "kept at the last turn": what_is_kept(records[-1]) if records else "",
            "evidence recall": recall_totals(records)["evidence recall"],
        })
    return rows
