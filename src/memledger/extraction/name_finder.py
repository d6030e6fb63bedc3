"""The state of finding one sentence's names: its tokens, which are taken, and the
mentions found so far. Pure."""

from __future__ import annotations

from memledger.extraction.patterns import Mention


class NameFinder:
    """The mentions of one sentence as they are found, and which tokens they take; one
    instance per sentence."""

    def __init__(self, words: list[str], lows: list[str]) -> None:
        self.words = words
        self.lows = lows
        self.taken = [False] * len(words)
        self.found: list[Mention] = []
        self.initial = _initials(lows)

    def add(self, mention: Mention) -> None:
        for i in range(mention.start, mention.end):
            self.taken[i] = True
        self.found.append(mention)

    def prev(self, i: int, back: int = 1) -> str:
        return self.lows[i - back] if i - back >= 0 else ""

    def next(self, i: int, ahead: int = 0) -> str:
        return self.lows[i + ahead] if i + ahead < len(self.lows) else ""


def _initials(lows: list[str]) -> set[int]:
    """The tokens that open the sentence (after bullets, quotes, a label's colon).

    One pass: looking back from each token would be quadratic in a long run of
    punctuation, which a hostile turn can be."""
    found: set[int] = set()
    opening = True
    for i, low in enumerate(lows):
        if opening:
            found.add(i)
        if low == ":":
            opening = True
        elif low[:1].isalnum():
            opening = False
    return found
