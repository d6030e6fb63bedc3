"""Checks for the identifiers that key the ledger: tenants, streams and event ids."""

from __future__ import annotations

import re

from memledger.errors import InvalidCommand, InvalidIdentifier

MAX_IDENTIFIER_LENGTH = 256
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc, exactly
_SURROGATE = re.compile("[\ud800-\udfff]")  # Unicode category Cs


def check_identifier(field: str, value: object, *, max_length: int = MAX_IDENTIFIER_LENGTH) -> str:
    """``value`` if it is a usable identifier, else ``InvalidIdentifier`` naming ``field``.

    Usable: a non-blank string of at most ``max_length`` characters (256 unless a
    longer id is known to be usable) with no control characters and no lone
    surrogate (which UTF-8, and so PostgreSQL, cannot take).
    """
    if not isinstance(value, str):
        raise InvalidIdentifier(field, repr(value), f"must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidIdentifier(field, value, "must not be empty or blank")
    if len(value) > max_length:
        raise InvalidIdentifier(field, value, f"is {len(value)} characters long, above {max_length}")
    control = _CONTROL.search(value)
    if control is not None:
        raise InvalidIdentifier(field, value, f"holds the control character {control.group()!r}")
    surrogate = _SURROGATE.search(value)
    if surrogate is not None:
        reason = f"holds the lone surrogate {surrogate.group()!r}, which UTF-8 cannot encode"
        raise InvalidIdentifier(field, value, reason)
    return value


def check_text(field: str, text: str) -> str:
    """``text`` if the ledger can store it and a tokenizer read it, else InvalidCommand
    naming ``field``: PostgreSQL cannot store NUL, and UTF-8 cannot encode a lone
    surrogate (as a command line's undecodable bytes become)."""
    if "\x00" in text:
        raise InvalidCommand(f"{field} holds a NUL character, which PostgreSQL cannot store")
    if _SURROGATE.search(text):
        raise InvalidCommand(f"{field} holds a lone surrogate, which UTF-8 cannot encode")
    return text
