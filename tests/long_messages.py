"""Long messages for the tests of every memory strategy: a pasted file of about 20,000 tokens, in
English and in Korean, each line numbered so that a test can ask for one part of it."""

from __future__ import annotations

from helpers.tokens import count_text_tokens

LINES = {
    "en": "line {n}: the deploy job {n} failed while the migration held a lock on the users table",
    "ko": "{n}번째 줄: 배포 작업 {n}이 실패했어요. 마이그레이션이 사용자 테이블을 잠그고 있었어요",
}


def pasted_file(language: str = "en", tokens: int = 20_000) -> str:
    """A user message that pastes a log of at least ``tokens`` tokens (cl100k_base) and asks about it."""
    lines, n = [], 0
    per_line = count_text_tokens(LINES[language].format(n=100)) + 1
    while len(lines) * per_line < tokens:
        n += 1
        lines.append(LINES[language].format(n=n))
    ask = "Why did it fail?" if language == "en" else "왜 실패했을까요?"
    text = "\n".join(["Here is my log:" if language == "en" else "제 로그예요:", *lines, ask])
    assert count_text_tokens(text) >= tokens
    return text
