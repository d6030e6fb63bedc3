"""Relative dates in a quoted turn, resolved against the day it was said. Pure.

"I went to the support group yesterday", said on 8 May 2023, answers "when did
they go?" only with the date it was said beside it: the block shows the turn's day
and, for each relative phrase it can resolve, the day (or week, month, year) meant
("yesterday" = 2023-05-07). Phrases it cannot pin down ("recently", "soon") are left.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Final

_NUMBERS: Final = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
}
_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNT: Final = rf"(?P<count>\d{{1,2}}|{'|'.join(sorted(_NUMBERS, key=len, reverse=True))})"
_DAY: Final = "|".join(_WEEKDAYS)
_PHRASE: Final = re.compile(
    r"\b(?:"
    r"(?P<before>the day before yesterday)|(?P<after>the day after tomorrow)|"
    r"(?P<yesterday>yesterday)|(?P<last_night>last night)|(?P<tomorrow>tomorrow)|"
    r"(?P<today>today|tonight|this (?:morning|afternoon|evening))|"
    rf"(?P<ago>{_COUNT} (?P<unit>days?|weeks?|months?|years?) ago)|"
    rf"(?P<weekday>(?P<which>last|this past|next|this coming) (?P<day>{_DAY}))|"
    r"(?P<period>(?P<rel>last|next|this) (?P<span>weekend|week|month|year))"
    r")\b",
    re.IGNORECASE,
)
MAX_SHOWN: Final = 3


def resolve(text: str, said_on: date) -> list[tuple[str, str]]:
    """Each relative date phrase of ``text`` that ``said_on`` pins down, with what it
    means: ("yesterday", "2023-05-07"), ("last week", "the week of 2023-05-01").
    At most ``MAX_SHOWN``, first first, each phrase once."""
    found: list[tuple[str, str]] = []
    for match in _PHRASE.finditer(text):
        meant = _meaning(match, said_on)
        phrase = match.group(0)
        if meant is not None and all(phrase.lower() != p.lower() for p, _ in found):
            found.append((phrase, meant))
        if len(found) == MAX_SHOWN:
            break
    return found


def _meaning(match: re.Match[str], day: date) -> str | None:
    fixed = {"before": -2, "after": 2, "yesterday": -1, "last_night": -1, "tomorrow": 1, "today": 0}
    for group, shift in fixed.items():
        if match.group(group):
            return (day + timedelta(days=shift)).isoformat()
    if match.group("ago"):
        count = match.group("count").lower()
        return _ago(_NUMBERS[count] if count in _NUMBERS else int(count), match.group("unit").lower(), day)
    if match.group("weekday"):
        return _weekday(match.group("which").lower(), _WEEKDAYS.index(match.group("day").lower()), day)
    return _period(match.group("rel").lower(), match.group("span").lower(), day)


def _ago(count: int, unit: str, day: date) -> str:
    if unit.startswith("day"):
        return (day - timedelta(days=count)).isoformat()
    if unit.startswith("week"):
        return f"about {(day - timedelta(weeks=count)).isoformat()}"
    if unit.startswith("month"):
        return _month(day, -count)
    return str(day.year - count)


def _weekday(which: str, weekday: int, day: date) -> str:
    if which in ("last", "this past"):
        back = (day.weekday() - weekday) % 7 or 7
        return (day - timedelta(days=back)).isoformat()
    ahead = (weekday - day.weekday()) % 7 or 7
    return (day + timedelta(days=ahead)).isoformat()


def _period(rel: str, span: str, day: date) -> str:
    step = {"last": -1, "next": 1, "this": 0}[rel]
    if span == "year":
        return str(day.year + step)
    if span == "month":
        return _month(day, step)
    monday = day - timedelta(days=day.weekday()) + timedelta(weeks=step)
    if span == "week":
        return f"the week of {monday.isoformat()}"
    return f"the weekend of {(monday + timedelta(days=5)).isoformat()}"


def _month(day: date, shift: int) -> str:
    index = day.year * 12 + day.month - 1 + shift
    return f"{index // 12:04d}-{index % 12 + 1:02d}"
