"""Token counts against known tiktoken values and LangChain's own counter, offline."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
import warnings

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from helpers import count_message_tokens, count_text_tokens, count_tokens
from helpers.tokens import get_encoding

CONVERSATION = [
    SystemMessage("You are a friendly assistant. Answer briefly."),
    HumanMessage("Hi! My name is Alice."),
    AIMessage("Nice to meet you, Alice!"),
    HumanMessage("제 이름은 김민수예요. 부산에 살아요."),
    HumanMessage("What is my name?", name="alice"),
]


def test_known_cl100k_values():
    # Values from OpenAI's cookbook "How to count tokens with tiktoken" (cl100k_base).
    assert get_encoding().encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert count_text_tokens("tiktoken is great!") == 6
    assert count_text_tokens("") == 0


def test_per_message_rule():
    # 3 framing + "user" (1 token) + content; +3 reply priming for the whole request
    assert count_message_tokens(HumanMessage("")) == 4
    assert count_tokens([HumanMessage("")]) == 7
    assert count_message_tokens(HumanMessage("tiktoken is great!")) == 4 + 6
    assert count_tokens([]) == 0
    assert count_tokens(CONVERSATION) == sum(count_message_tokens(m) for m in CONVERSATION) + 3


def test_matches_langchain_openai_counter():
    from langchain_openai import ChatOpenAI

    reference = ChatOpenAI(model="gpt-4", api_key="unused")
    for end in range(1, len(CONVERSATION) + 1):
        messages = CONVERSATION[:end]
        assert count_tokens(messages) == reference.get_num_tokens_from_messages(messages)


def test_accepts_tuples_and_strings():
    assert count_tokens([("user", "tiktoken is great!")]) == count_tokens(
        [HumanMessage("tiktoken is great!")]
    )
    # a bare string is one user message, as model.invoke("...") sends it
    assert count_tokens("tiktoken is great!") == count_tokens([HumanMessage("tiktoken is great!")]) == 13
    with pytest.raises(TypeError):
        count_tokens(None)


def test_korean_costs_more_tokens_per_character_than_english():
    english, korean = "My name is Alice.", "제 이름은 김민수예요."
    assert count_text_tokens(korean) / len(korean) > count_text_tokens(english) / len(english)


def test_unknown_model_falls_back_with_one_warning():
    with pytest.warns(UserWarning, match="cl100k_base"):
        n = count_tokens(CONVERSATION, model="some-provider-model-x1")
    assert n == count_tokens(CONVERSATION)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert count_tokens(CONVERSATION, model="some-provider-model-x1") == n


def test_encoding_loads_with_no_network(tmp_path):
    """In a new process with an empty tiktoken cache and every proxy pointing at a closed port,
    the encoding still loads: it comes from the shipped file."""
    code = (
        "from helpers.tokens import count_text_tokens;"
        "print(count_text_tokens('tiktoken is great!'))"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "COURSE_DOTENV": "none",
        "COURSE_RUNTIME_DIR": str(tmp_path / "runtime"),
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6"
    assert (tmp_path / "runtime" / "tiktoken" / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").is_file()


def test_non_text_blocks_are_estimated_not_zero():
    from helpers.tokens import IMAGE_LOW_DETAIL_TOKENS, NON_TEXT_BLOCK_TOKENS

    text_only = HumanMessage(content=[{"type": "text", "text": "What is in this picture?"}])
    base = count_message_tokens(text_only)
    url = "data:image/png;base64," + "A" * 4000  # the data itself is never encoded as text
    high = HumanMessage(content=[*text_only.content, {"type": "image_url", "image_url": {"url": url}}])
    low = HumanMessage(content=[*text_only.content,
                                {"type": "image_url", "image_url": {"url": url, "detail": "low"}}])
    v1 = HumanMessage(content=[*text_only.content, {"type": "image", "source_type": "base64",
                                                    "data": "AAAA", "mime_type": "image/png"}])
    assert (NON_TEXT_BLOCK_TOKENS, IMAGE_LOW_DETAIL_TOKENS) == (765, 85)
    assert count_message_tokens(high) == base + 765
    assert count_message_tokens(low) == base + 85
    assert count_message_tokens(v1) == base + 765
    assert count_tokens([high]) - count_tokens([text_only]) == 765


def test_cut_to_tokens_keeps_whole_characters_within_the_budget():
    from helpers.tokens import cut_to_tokens

    text = "제 이름은 김민수예요. 부산에 살아요. 🙂 tiktoken is great!"
    assert cut_to_tokens(text, count_text_tokens(text)) == text  # fits: unchanged
    assert cut_to_tokens("", 0) == "" and cut_to_tokens(text, 0) == ""
    assert cut_to_tokens(text, -3) == ""
    for budget in range(1, count_text_tokens(text)):
        cut = cut_to_tokens(text, budget)
        assert text.startswith(cut)  # a start of the text, no half character (no U+FFFD)
        assert count_text_tokens(cut) <= budget
        assert "\ufffd" not in cut
    assert cut_to_tokens("tiktoken is great!", 4) == "tiktoken is"  # ids [83, 1609, 5963, 374]


def test_korean_typed_on_macos_counts_as_the_same_text_typed_elsewhere():
    from helpers.tokens import cut_to_tokens

    composed = "제 고향은 전주예요. 부산에서 일해요."
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert count_text_tokens(decomposed) == count_text_tokens(composed)
    assert count_message_tokens(HumanMessage(decomposed)) == count_message_tokens(HumanMessage(composed))
    assert count_tokens([HumanMessage(decomposed)]) == count_tokens([HumanMessage(composed)])
    assert cut_to_tokens(decomposed, 5) == cut_to_tokens(composed, 5)
    assert len(get_encoding().encode(decomposed)) > 2 * count_text_tokens(composed)  # what NFD costs raw


def test_counter_text_tokens_are_cached_and_equal_the_uncached_count():
    from helpers.tokens import TokenCounter

    counter = TokenCounter(maxsize=2)
    line = "- 민수 (user): 부산에 살아요. I moved in March."
    assert counter.text_tokens(line) == count_text_tokens(line) == 22
    assert (counter.hits, counter.misses) == (0, 1)
    assert counter.text_tokens(line) == 22
    assert (counter.hits, counter.misses) == (1, 1)
    # a message whose content is the same text is counted with its framing, never as the bare line
    assert counter.message_tokens(HumanMessage(line)) == count_message_tokens(HumanMessage(line)) == 26
    assert counter.text_tokens("a third text") == 3  # maxsize 2: the oldest entry (the line) goes
    assert len(counter) == 2 and counter.text_tokens(line) == 22 and counter.misses == 4


def test_counter_keys_a_message_on_its_non_text_blocks_too():
    from helpers.tokens import NON_TEXT_BLOCK_TOKENS, TokenCounter

    counter = TokenCounter()
    plain = HumanMessage("look")
    image = HumanMessage(content=[{"type": "text", "text": "look"},
                                  {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}])
    assert counter.message_tokens(plain) == count_message_tokens(plain) == 5
    assert counter.message_tokens(image) == count_message_tokens(image) == 5 + NON_TEXT_BLOCK_TOKENS
    assert (counter.hits, counter.misses) == (0, 2)
