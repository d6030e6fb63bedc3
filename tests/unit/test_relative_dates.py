"""Relative dates in a quoted turn, resolved against the day it was said (issue 23):
"yesterday" said on Monday 8 May 2023 is Sunday 7 May."""

from __future__ import annotations

from datetime import date

import pytest

from memledger.formatting.dates import MAX_SHOWN, resolve

MONDAY = date(2023, 5, 8)
SUNDAY = date(2023, 5, 7)


@pytest.mark.parametrize(
    ("text", "said_on", "meant"),
    [
        ("I went to the support group yesterday.", MONDAY, "2023-05-07"),
        ("We met the day before yesterday", MONDAY, "2023-05-06"),
        ("Had a blast last night!", MONDAY, "2023-05-07"),
        ("Baking this morning, smells great", MONDAY, "2023-05-08"),
        ("Tomorrow is the big race", MONDAY, "2023-05-09"),
        ("It happened two days ago", MONDAY, "2023-05-06"),
        ("12 days ago I started", MONDAY, "2023-04-26"),
        ("3 weeks ago we moved", MONDAY, "about 2023-04-17"),
        ("a couple of months ago I quit", MONDAY, "2023-03"),
        ("a year ago I was in Lima", MONDAY, "2022"),
        ("Last Saturday was fun", MONDAY, "2023-05-06"),
        ("last Monday I was ill", MONDAY, "2023-05-01"),  # never the day it was said
        ("this past Sunday", SUNDAY, "2023-04-30"),
        ("See you next Friday", MONDAY, "2023-05-12"),
        ("next Monday then", MONDAY, "2023-05-15"),
        ("last week was busy", MONDAY, "the week of 2023-05-01"),
        ("last week was busy", SUNDAY, "the week of 2023-04-24"),
        ("last weekend we hiked", MONDAY, "the weekend of 2023-05-06"),
        ("last month I got a cat", date(2023, 1, 15), "2022-12"),
        ("next month", date(2023, 12, 3), "2024-01"),
        ("LAST YEAR I ran a marathon", MONDAY, "2022"),
    ],
)
def test_a_relative_phrase_means_a_date_counted_from_the_day_it_was_said(text: str, said_on: date, meant: str) -> None:
    [(phrase, found)] = resolve(text, said_on)
    assert phrase.lower() in text.lower()
    assert found == meant


@pytest.mark.parametrize("text", ["I went recently", "soon, I hope", "We'll see some day", "yesterdays are gone", ""])
def test_what_no_day_pins_down_is_left_alone(text: str) -> None:
    assert resolve(text, MONDAY) == []


def test_each_phrase_is_resolved_once_and_at_most_a_few_are_shown() -> None:
    text = "Yesterday and yesterday again; two days ago, last week, last month and last year too."
    found = resolve(text, MONDAY)
    assert [phrase.lower() for phrase, _ in found] == ["yesterday", "two days ago", "last week"]
    assert len(found) == MAX_SHOWN
