"""Sample conversations under ``data/conversations`` (format: ``data/README.md``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage

from helpers.config import project_root
from helpers.memory import replay
from helpers.window import FullHistory


def data_dir() -> Path:
    """The course's ``data/`` folder (``<project root>/data``)."""
    return project_root() / "data"


@dataclass(frozen=True)
class Conversation:
    """A sample conversation: the user's side only; replies come from the active model."""

    id: str
    language: str
    user_id: str
    description: str
    system: str
    turns: tuple[str, ...]

    def system_message(self) -> SystemMessage:
        """The conversation's system prompt as a ``SystemMessage``."""
        return SystemMessage(self.system)


def list_conversations() -> list[str]:
    """Ids of the sample conversations, sorted."""
    return sorted(p.stem for p in (data_dir() / "conversations").glob("*.json"))


def load_conversation(conversation_id: str) -> Conversation:
    """Load ``data/conversations/<conversation_id>.json`` (the id is the file name without ``.json``,
    see ``list_conversations()``). FileNotFoundError: no such conversation (the message lists the
    ones there are). ValueError: the file is not valid JSON or lacks a field (the message names it)."""
    path = data_dir() / "conversations" / f"{conversation_id}.json"
    if not path.is_file() or "/" in conversation_id or "\\" in conversation_id:
        raise FileNotFoundError(f"No conversation {conversation_id!r}; there are: "
                                f"{', '.join(list_conversations())}")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Conversation(id=raw["id"], language=raw["language"], user_id=raw["user_id"],
                            description=raw["description"], system=raw["system"],
                            turns=tuple(str(t) for t in raw["turns"]))
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a valid conversation file: {exc!r}") from exc


def history_of(turns: Sequence[str], model: BaseChatModel,
               system: SystemMessage | str = "") -> list[BaseMessage]:
    """``[system, user, reply, ...]``: the full history after replaying ``turns`` (at least one) through
    ``model``."""
    kept = _Kept()
    last = replay(kept, turns, model, system)[-1]
    return [*last.prompt, kept.stored[-1]]  # the last reply as the model returned it (its metadata too)


class _Kept(FullHistory):
    """Full history that keeps what it stored, so ``history_of`` returns the model's own reply messages."""

    def after_turn(self, model, stored):
        self.stored = super().after_turn(model, stored)
        return self.stored
