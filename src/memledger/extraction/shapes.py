"""What a name looks like, by its letters alone: capitalised or oddly shaped (CamelCase,
versioned, dotted), and not a file path, ticket id, exception class or common word. Pure."""

from __future__ import annotations

import re

from memledger.extraction import gazetteer as gz


def common_word(low: str) -> bool:
    """A word that is no name, in the singular or plural: "Fridays", "Mondays"."""
    return low in gz.NOT_NAMES or (low.endswith("s") and low[:-1] in gz.NOT_NAMES)


def name_like(word: str) -> bool:
    first = word[0]
    if not first.isalpha() or not (first.isupper() or odd_shape(word)):
        return False  # most tokens: lower-case words, told apart before any pattern runs
    return not _not_a_name(word)


_FILE = re.compile(
    r"[\w.-]*/[\w./-]*|[\w-]+\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|ini|cfg|conf|md|txt|csv|log|sh|sql|xml|html?|lock)",
    re.IGNORECASE,
)
_TICKET_OR_EXCEPTION = re.compile(r"[A-Z]{2,}-\d{2,}|\w+(?:Error|Exception|Warning)|[A-Z0-9]+(?:_[A-Z0-9]+)+")


def _not_a_name(word: str) -> bool:
    """A file path, a file name, a ticket id, an exception class or a constant in capitals
    with underscores ("SYNC_CONFLICT_409"): text, not a name."""
    return _FILE.fullmatch(word) is not None or _TICKET_OR_EXCEPTION.fullmatch(word) is not None


def odd_shape(word: str) -> bool:
    """CamelCase (nRF52, macOS), versioned (GPT-4) or dotted (fly.io)."""
    if word.islower() and "." not in word:
        return False  # most words: no capital inside, none first (for a digit to count), no dot
    if word[-1] == "s" and word[:-1].isupper():
        return False  # a plural acronym: "SLAs", "APIs"
    inner_upper = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
    has_digit = any(c.isdigit() for c in word) and word[0].isupper()
    dotted = "." in word.strip(".") and word.rsplit(".", 1)[-1].isalpha()
    return inner_upper or has_digit or dotted
