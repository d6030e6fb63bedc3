"""Roles that relate a named person to the speaker: "my manager Dave", "Ana, my
sister", "my old school friends". Pure."""

from __future__ import annotations

from memledger.extraction import gazetteer as gz
from memledger.extraction.patterns import HONORIFICS, POSSESSIVES, ROLE_ADJECTIVES


def role_words(lows: list[str], j: int) -> tuple[str | None, int]:
    """The role ending at token ``j`` ("manager", "tech lead") and where it starts."""
    if j >= len(lows):
        return None, j
    if j >= 1 and f"{lows[j - 1]} {lows[j]}" in gz.ROLES:
        return f"{lows[j - 1]} {lows[j]}", j - 1
    if j >= 0 and lows[j] in gz.ROLES:
        return lows[j], j
    if j >= 0 and lows[j].endswith("s") and lows[j][:-1] in gz.ROLES:
        return lows[j][:-1], j  # "my cousins Ana and Bo"
    return None, j


def _owner_before(lows: list[str], j: int) -> bool:
    while j >= 0 and lows[j] in ROLE_ADJECTIVES:
        j -= 1
    return j >= 0 and lows[j] in POSSESSIVES


def role_before(lows: list[str], start: int) -> tuple[str | None, bool]:
    """The role named right before a name ("my manager Dave", "Dr." and commas skipped),
    and whether it is the speaker's."""
    j = start - 1
    while j >= 0 and (lows[j] in HONORIFICS or lows[j] in (",", ".")):
        j -= 1
    role, role_start = role_words(lows, j)
    if role is None:
        return None, False
    return role, _owner_before(lows, role_start - 1)


def role_after(words: list[str], lows: list[str], end: int) -> tuple[str | None, bool]:
    """The role said of a name right after it ("Ana, my sister", "Bo is our CTO"), and
    whether it is the speaker's."""
    j = end
    if j < len(lows) and lows[j] in (",", "is", "are", "was", "-", "("):
        j += 1
    if j >= len(lows) or lows[j] not in POSSESSIVES:
        return None, False
    j += 1
    while j < len(lows) and lows[j] in ROLE_ADJECTIVES:
        j += 1
    for skip in range(3):  # past up to two modifiers: "my old school friends"
        k = j + skip
        if k >= len(lows) or (k > j and not (lows[k - 1].isalpha() and lows[k - 1] not in gz.NOT_NAMES)):
            break
        for width in (2, 1):
            phrase = " ".join(lows[k : k + width])
            if phrase in gz.ROLES or phrase.rstrip("s") in gz.ROLES:
                if not _role_ends_here(words, lows, k + width):
                    return None, False
                return phrase.rstrip("s") if phrase not in gz.ROLES else phrase, True
    return None, False


def _role_ends_here(words: list[str], lows: list[str], after: int) -> bool:
    """Whether a role word closes the phrase: not "my daughter's teacher" (the daughter's)
    nor "Tallyfin, my partner Graciela" (Graciela's: a role names the name that follows)."""
    if after >= len(words):
        return True
    return lows[after] != "'s" and not words[after][:1].isupper()
