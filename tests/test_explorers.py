"""The explorers as a learner meets them: controls that do nothing are disabled, the window
comes first with dropped messages collapsed, the view fits a screen, a "replaying…" state, whole
labels, theme colours (light and dark), a Korean conversation; lessons 06-07's explorers survive
their lesson's clean-up; a closed store says so; each lesson has its own Lite folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hash_embeddings import HashEmbeddings
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from helpers.config import load_settings
from helpers.course.data import load_conversation
from helpers.course.display import collapsed_line, message_rows, messages_html
from helpers.course.milvus import LESSON_LITE_FOLDERS, lesson_milvus_uri, open_store
from helpers.course.widgets import (
    BUSY_TEXT,
    CONVERSATIONS,
    LayeredExplorer,
    RetrievalExplorer,
    SummaryExplorer,
    TruncationExplorer,
)
from helpers.layered import LayeredMemory
from helpers.retrieval import format_turn
from helpers.store import StoreClosedError

ROOT = Path(__file__).resolve().parent.parent
HEX_OR_NAMED_LIGHT = re.compile(r"background(-color)?:\s*(#[0-9a-fA-F]{3,8}|white|rgb\(2[0-9]{2})")


def controls(explorer):
    return [w for w in vars(explorer).values() if hasattr(w, "disabled") and hasattr(w, "style")]


# --- which controls apply ----------------------------------------------------------------------


def test_truncation_explorer_disables_what_the_mode_ignores():
    explorer = TruncationExplorer()
    assert explorer.kind.value == "count window"
    assert (explorer.max_messages.disabled, explorer.max_tokens.disabled) == (False, True)
    explorer.kind.value = "last N (slice)"
    assert (explorer.max_messages.disabled, explorer.max_tokens.disabled) == (False, True)
    explorer.kind.value = "token window"
    assert (explorer.max_messages.disabled, explorer.max_tokens.disabled) == (True, False)
    before = explorer.view.value
    explorer.max_tokens.value = 120  # the enabled slider changes the view
    assert explorer.view.value != before and "token window (120 tokens)" in explorer.view.value


def test_summary_explorer_disables_the_other_trigger():
    explorer = SummaryExplorer()
    assert explorer.trigger_kind.value == "messages"
    assert [explorer.max_messages.disabled, explorer.keep_messages.disabled,
            explorer.max_tokens.disabled, explorer.keep_tokens.disabled] == [False, False, True, True]
    explorer.trigger_kind.value = "tokens"
    assert [explorer.max_messages.disabled, explorer.keep_messages.disabled,
            explorer.max_tokens.disabled, explorer.keep_tokens.disabled] == [True, True, False, False]


# --- the view --------------------------------------------------------------------------------


def test_dropped_messages_are_one_line_and_the_view_is_short():
    explorer = TruncationExplorer()
    view = explorer.view.value
    assert "… 30 earlier messages dropped" in view
    # header, system, the collapsed line, 3 kept (user, assistant, user), total: 7 rows of 35
    assert view.count("<tr") == 7
    explorer.max_messages.value = 6
    assert "… 28 earlier messages dropped" in explorer.view.value
    summary = SummaryExplorer()
    assert "… 30 earlier messages summarized" in summary.view.value
    assert summary.view.value.count("<tr") <= 8
    assert explorer.view.layout.max_height == summary.view.layout.max_height == "520px"
    assert explorer.cost_box.selected_index is None  # the cost table is one click away


def test_collapsed_line_wording_and_the_system_prompt_stays_visible():
    assert collapsed_line(23, "dropped") == "… 23 earlier messages dropped"
    assert collapsed_line(1, "summarized") == "… 1 earlier message summarized"
    messages = [SystemMessage("sys"), HumanMessage("a"), AIMessage("b"), HumanMessage("c")]
    view = messages_html(messages, ["dropped", "dropped", "dropped", "kept"], collapse=True)
    assert "… 2 earlier messages dropped" in view and ">sys<" in view


def test_summary_and_retrieved_rows_are_never_cut():
    memories = "Relevant memories:\n" + "\n".join(f"- memory number {i} " + "x" * 60 for i in range(4))
    rows = message_rows([SystemMessage(memories), HumanMessage("y" * 300)], ["retrieved", "kept"])
    assert rows[0]["content"].count("memory number") == 4 and "…" not in rows[0]["content"]
    assert len(rows[1]["content"]) == 100 and rows[1]["content"].endswith("…")


@pytest.mark.parametrize("make", [TruncationExplorer, SummaryExplorer])
def test_colours_come_from_the_theme(make):
    explorer = make()
    view = explorer.view.value
    assert "var(--jp-content-font-color1)" in view
    assert "color-mix(in srgb, var(--jp-error-color1)" in view or \
           "color-mix(in srgb, var(--jp-warn-color1)" in view
    assert "color-mix(in srgb, var(--jp-success-color1)" in view
    assert not HEX_OR_NAMED_LIGHT.search(view), HEX_OR_NAMED_LIGHT.search(view)
    assert not HEX_OR_NAMED_LIGHT.search(explorer.costs.value)


@pytest.mark.parametrize("make", [TruncationExplorer, SummaryExplorer])
def test_labels_are_whole(make):
    explorer = make()
    sliders = [w for w in controls(explorer) if hasattr(w.style, "description_width")]
    assert len(sliders) >= 3
    assert {w.style.description_width for w in sliders} == {"initial"}
    buttons = explorer.kind if make is TruncationExplorer else explorer.trigger_kind
    assert buttons.style.button_width == "130px"  # "count window" whole (110 px cut it)
    if make is SummaryExplorer:
        assert explorer.summary_last.description.endswith("(the article's placement)")
        assert explorer.max_tokens.description == "trigger > tokens"


def test_replaying_is_shown_while_a_slider_recomputes():
    explorer = TruncationExplorer()
    seen = []
    run = explorer._run
    explorer._run = lambda strategy: (seen.append(explorer.status.value), run(strategy))[1]
    explorer.max_messages.value = 7
    assert len(seen) == 1 and BUSY_TEXT in seen[0]
    assert explorer.status.value == ""  # and gone afterwards


def test_the_korean_month_is_selectable():
    explorer = SummaryExplorer()
    assert explorer.conversation_choice.options == CONVERSATIONS
    explorer.conversation_choice.value = "minsu_month_ko"
    assert explorer.turn.value == explorer.turn.max == 17 and explorer.error is None
    assert explorer.records[0].user == "안녕하세요! 제 이름은 김민수예요."
    assert "대전" in explorer.view.value or "summary" in explorer.view.value


def test_minsu_month_ko_is_the_twin_of_alice_month_en():
    en = json.loads((ROOT / "data/conversations/alice_month_en.json").read_text(encoding="utf-8"))
    ko = json.loads((ROOT / "data/conversations/minsu_month_ko.json").read_text(encoding="utf-8"))
    assert set(ko) == set(en) and ko["language"] == "ko" and ko["id"] == "minsu_month_ko"
    assert len(ko["turns"]) == len(en["turns"]) == 17
    questions = [i for i, t in enumerate(en["turns"]) if t.endswith("?")]
    assert [i for i, t in enumerate(ko["turns"]) if t.endswith("?")] == questions
    assert "이사" in ko["turns"][9]  # the move, at the same place
    assert load_conversation("minsu_month_ko").turns == tuple(ko["turns"])


def test_static_readers_get_the_default_view():
    explorer = TruncationExplorer()
    html = explorer.snapshot().data
    assert explorer.view.value in html and "Cost per turn" in html and "<table" in html


# --- Milvus: clean-up, closed stores, Lite folders ---------------------------------------------


def test_each_lesson_has_its_own_lite_folder(tmp_path):
    settings = load_settings({"COURSE_RUNTIME_DIR": str(tmp_path), "COURSE_DOTENV": "none"})
    assert settings.milvus_uri_is_default
    uris = {lesson: lesson_milvus_uri(lesson, settings) for lesson in ("06", "07", "08")}
    assert uris == {n: str(tmp_path / "milvus" / name) for n, name in LESSON_LITE_FOLDERS.items()}
    assert uris["06"].endswith("06_retrieval.db")
    assert lesson_milvus_uri(None, settings) == str(tmp_path / "milvus" / "course.db")
    server = load_settings({"MILVUS_URI": "http://localhost:19530", "COURSE_DOTENV": "none"})
    assert lesson_milvus_uri("06", server) == "http://localhost:19530"  # a server is shared
    mine = load_settings({"MILVUS_URI": str(tmp_path / "mine.db"), "COURSE_DOTENV": "none"})
    assert lesson_milvus_uri("07", mine) == str(tmp_path / "mine.db")  # a path you set is kept


@pytest.fixture
def lesson06_store(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_RUNTIME_DIR", str(tmp_path))
    store = open_store("lesson06", lesson="06", embeddings=HashEmbeddings(), drop_existing=True)
    for number, text in enumerate(load_conversation("alice_month_en").turns, start=1):
        store.add("alice", "month", number, format_turn(text, "ok"), kind="turn")
    yield store
    store.close()


def test_the_lesson_picks_its_lite_folder(lesson06_store, tmp_path):
    assert lesson06_store.uri == str(tmp_path / "milvus" / "06_retrieval.db")


def test_a_closed_store_says_so_and_how_to_reopen(lesson06_store):
    lesson06_store.close()
    with pytest.raises(StoreClosedError) as error:
        lesson06_store.search("alice", "What is my job?")
    message = str(error.value)
    assert "was closed by store.close()" in message and "Reopen it" in message
    assert "open_store(collection='lesson06'" in message
    assert "Cannot reach" not in message and "docker" not in message


def test_retrieval_explorer_survives_lesson_06s_clean_up(lesson06_store):
    store = lesson06_store
    explorer = RetrievalExplorer(store, "alice", "Where do I live?")
    assert len(explorer.memories) == 3
    # the clean-up cell of lesson 06, as committed
    cells = json.loads((ROOT / "notebooks/06_retrieval_milvus.ipynb").read_text(encoding="utf-8"))
    clean_up = next("".join(c["source"]) for c in cells["cells"] if c.get("id") == "c41")
    store.client.create_collection("lesson06_langchain", dimension=16)
    exec(clean_up, {"store": store})
    explorer.top_k.value = 5
    assert len(explorer.memories) == 5 and explorer.error is None
    store.drop()  # what the commented-out last line does: the view says so, no traceback
    explorer.top_k.value = 4
    assert "was closed by store.drop()" in explorer.view.value and explorer.memories == []


def test_retrieval_explorer_stores_the_korean_month_on_first_choice(lesson06_store):
    explorer = RetrievalExplorer(lesson06_store, "alice")
    explorer.conversation_choice.value = "minsu_month_ko"
    assert explorer.question.value == "제 직업이 뭐예요?"
    rows = lesson06_store.rows("minsu_month_ko")
    assert len(rows) == 17 and {row.kind for row in rows} == {"turn"}
    assert rows[0].content == format_turn(load_conversation("minsu_month_ko").turns[0])
    assert {m.user_id for m in explorer.memories} == {"minsu_month_ko"}


def test_min_score_range_is_one_constant():
    from helpers.course import widgets

    source = Path(widgets.__file__).read_text(encoding="utf-8")
    assert source.count("MIN_SCORE_RANGE = ") == 1
    assert "max=1.0, step=0.05" not in source


def test_layered_explorer(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_RUNTIME_DIR", str(tmp_path))
    store = open_store("lesson07", lesson="07", embeddings=HashEmbeddings(), drop_existing=True)
    explorer = LayeredExplorer(store)
    assert explorer.store.uri == str(tmp_path / "milvus" / "07_layered.db")
    assert explorer.store.collection == "lesson07_explorer"
    assert explorer.error is None and len(explorer.records) == 17
    assert [w.description for w in (explorer.window_tokens, explorer.summary_tokens,
                                     explorer.retrieval_tokens, explorer.statement_tokens)] == [
        "window tokens", "summary tokens", "retrieval tokens", "statement tokens"]
    view = explorer.view.value
    assert ("budgets: window 150, summary 200, retrieval 500 for a message that asks, 0 for one that does not"
            in view)
    assert "earlier messages are outside the window" in view
    last = explorer.records[-1]
    assert all(r.prompt_tokens < 150 + 200 + 500 + 60 for r in explorer.records)
    before = view
    explorer.window_tokens.value = 300
    assert explorer.view.value != before and explorer.records[-1].prompt_tokens > last.prompt_tokens
    store.close()  # the lesson's clean-up may close its store: the explorer has its own
    explorer.retrieval_tokens.value = 200
    assert explorer.error is None and "retrieval 200 for a message that asks" in explorer.view.value
    assert not HEX_OR_NAMED_LIGHT.search(explorer.view.value)
    explorer.conversation_choice.value = "minsu_month_ko"
    assert explorer.records[0].user.startswith("안녕하세요")
    explorer.store.close()  # its own store closed: the view says so, no traceback
    explorer.window_tokens.value = 175
    assert explorer.records == [] and "was closed by store.close()" in explorer.error
    assert "Milvus:" in explorer.view.value and explorer.costs.value == ""


def test_layered_explorer_shows_kinds_budgets_and_speakers(tmp_path, monkeypatch):
    """The explorer's rows are one per message, shown with their speaker; a statement gets the
    statement budget (default 0: nothing retrieved); a budget slider replaces top-k."""
    monkeypatch.setenv("COURSE_RUNTIME_DIR", str(tmp_path))
    store = open_store("lesson07", lesson="07", embeddings=HashEmbeddings(), drop_existing=True)
    explorer = LayeredExplorer(store)
    assert "retrieval 500 for a message that asks, 0 for one that does not" in explorer.view.value

    def shown(widget):
        yield widget
        for child in getattr(widget, "children", ()):
            yield from shown(child)

    assert explorer.statement_tokens in list(shown(explorer.widget))
    assert not hasattr(explorer, "top_k")  # retrieval fills a budget, not a k
    memory = explorer.strategy()[1]
    assert memory.name == LayeredMemory(store, "x").name  # opens on the lesson's budgets
    assert (memory.retrieval_tokens, memory.statement_retrieval_tokens) == (500, 0)
    rows = explorer.store.rows(memory.user_id)
    assert {m.kind for m in rows} >= {"statement", "question"}
    assert {m.speaker for m in rows} == {"user", "assistant"}
    retrieved = [p.text for r in explorer.records for p in r.prompt.of_kind("retrieved")]
    assert retrieved and all("AI:" not in text for text in retrieved)
    assert any("\nUser: " in text for text in retrieved)
    # the stand-in's answers quote the user ('You told me: "I live in Lisbon"'): quoting is not
    # speaking of oneself, so the assistant stays an assistant and its replies are never hits
    assert not any("Assistant:" in text for text in retrieved)
    explorer.statement_tokens.value = 100
    assert "100 for one that does not" in explorer.view.value
    store.close()
    explorer.store.close()
