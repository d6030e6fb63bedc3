"""Checks for the identifiers that key the ledger: tenants, streams and event ids."""

from __future__ import annotations

import re

from memledger.errors import InvalidIdentifier

MAX_IDENTIFIER_LENGTH = 256
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc, exactly


def check_identifier(field: str, value: object) -> str:
    """``value`` if it is a usable identifier, else ``InvalidIdentifier`` naming ``field``.

    Usable: a non-blank string of at most 256 characters with no control characters.
    """
    if not isinstance(value, str):
        raise InvalidIdentifier(field, repr(value), f"must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidIdentifier(field, value, "must not be empty or blank")
    if len(value) > MAX_IDENTIFIER_LENGTH:
        raise InvalidIdentifier(
            field, value, f"is {len(value)} characters long, above {MAX_IDENTIFIER_LENGTH}"
        )
    control = _CONTROL.search(value)
    if control is not None:
        raise InvalidIdentifier(field, value, f"holds the control character {control.group()!r}")
    return value
