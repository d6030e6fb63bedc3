"""Checks for the identifiers that key the ledger: tenants, streams and event ids."""

from __future__ import annotations

import re

from memledger.errors import InvalidIdentifier

MAX_IDENTIFIER_LENGTH = 256
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc, exactly
_SURROGATE = re.compile("[\ud800-\udfff]")  # Unicode category Cs


def check_identifier(field: str, value: object) -> str:
    """``value`` if it is a usable identifier, else ``InvalidIdentifier`` naming ``field``.

    Usable: a non-blank string of at most 256 characters with no control characters
    and no lone surrogate (which UTF-8, and so PostgreSQL, cannot take).
    """
    if not isinstance(value, str):
        raise InvalidIdentifier(field, repr(value), f"must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidIdentifier(field, value, "must not be empty or blank")
    if len(value) > MAX_IDENTIFIER_LENGTH:
        raise InvalidIdentifier(field, value, f"is {len(value)} characters long, above {MAX_IDENTIFIER_LENGTH}")
    control = _CONTROL.search(value)
    if control is not None:
        raise InvalidIdentifier(field, value, f"holds the control character {control.group()!r}")
    surrogate = _SURROGATE.search(value)
    if surrogate is not None:
        reason = f"holds the lone surrogate {surrogate.group()!r}, which UTF-8 cannot encode"
        raise InvalidIdentifier(field, value, reason)
    return value
