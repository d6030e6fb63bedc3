"""A noun phrase set between commas after a name: "Mariam, our bookkeeper, reconciles
the accounts in Sage". The verb after it is the name's. Pure."""

from __future__ import annotations

from memledger.extraction.patterns import Mention
from memledger.extraction.triggers import APPOSITION_LEADS, DETERMINERS, POSSESSIVE_USER

_LONGEST = 4  # words of the apposed phrase, its article or possessive included


def apposition_opening(lows: list[str], comma: int) -> int | None:
    """The comma that opens a "the/our/my <noun phrase>" closed by the comma at
    ``comma``, or None; the name it describes ends right before the opening comma."""
    for opening in range(comma - 2, max(0, comma - 1 - _LONGEST), -1):
        if lows[opening] != ",":
            continue  # the nearest comma before opens the phrase, or nothing does
        phrase = lows[opening + 1 : comma]
        described = phrase[0] in DETERMINERS or phrase[0] in POSSESSIVE_USER
        plain = all(low.isalpha() or "-" in low for low in phrase)
        return opening if described and plain and opening >= 1 else None
    return None


_PHRASE_ENDS = frozenset((".", ";", ":", "!", "?", "(", ")", '"', "\u2014", "\u2013"))
_LONGEST_DESCRIBED = 14  # words of an apposition with a relative clause in it
_NOT_A_VERB = frozenset(("and", "or", "but", "so", "then", "which", "who", "that"))


def apposition_close(lows: list[str], comma: int) -> int | None:
    """The token after an apposition that opens at ``comma`` and closes at a second comma
    before a verb ("Tern, the design system that the mobile team owns, depends on ..."),
    or None: the verb the name before ``comma`` is the subject of."""
    if comma + 1 >= len(lows) or lows[comma] != "," or lows[comma + 1] not in APPOSITION_LEADS:
        return None
    for k in range(comma + 2, min(len(lows) - 1, comma + 2 + _LONGEST_DESCRIBED)):
        if lows[k] in _PHRASE_ENDS:
            return None
        if lows[k] == ",":
            following = lows[k + 1]
            return k + 1 if following.isalpha() and following not in _NOT_A_VERB else None
    return None


def name_before_apposition(words: list[str], lows: list[str], comma: int) -> int | None:
    """The opening comma of an apposition closed at ``comma`` whose phrase is in lower
    case and follows a capitalised name, or None."""
    opening = apposition_opening(lows, comma)
    if opening is None or any(w[:1].isupper() for w in words[opening + 2 : comma]):
        return None
    return opening if words[opening - 1][:1].isupper() else None


def apposed_name(lows: list[str], comma: int, by_end: dict[int, Mention]) -> Mention | None:
    """The name an apposition closed by the comma at ``comma`` describes ("Coinpurse, the
    billing module, ..."), or None when that token is no such comma."""
    if not 0 <= comma < len(lows) or lows[comma] != ",":
        return None
    opening = apposition_opening(lows, comma)
    return by_end.get(opening) if opening is not None else None
