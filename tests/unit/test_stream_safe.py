"""Text is made stream-safe before it is normalised: a hostile run of thousands of
combining marks would cost its square in Unicode normalisation."""

from __future__ import annotations

import unicodedata

from memledger.events.keys import MAX_MARKS_IN_A_ROW, normalise_name, stream_safe


def _longest_run_of_marks(text: str) -> int:
    longest = run = 0
    for character in text:
        run = run + 1 if unicodedata.combining(character) else 0
        longest = max(longest, run)
    return longest


def test_a_run_of_marks_is_cut_to_the_stream_safe_limit() -> None:
    hostile = "a" + "\u0317" * 3_000 + "\u0610" * 3_000 + "b"
    safe = stream_safe(hostile)
    assert _longest_run_of_marks(safe) == MAX_MARKS_IN_A_ROW
    assert safe.startswith("a") and safe.endswith("b")
    assert _longest_run_of_marks(normalise_name(hostile)) <= MAX_MARKS_IN_A_ROW


def test_ordinary_text_is_left_as_it_is() -> None:
    for text in ("Zoë Ragnheiður Nguyễn Thị Hương", "plain ascii " * 50, "e\u0301" * 40, "Ω" * 100):
        assert stream_safe(text) == text
