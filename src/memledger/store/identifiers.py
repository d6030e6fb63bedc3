"""Checks for the identifiers that key the ledger: tenants, streams and event ids."""

from __future__ import annotations

import re

from memledger.errors import InvalidField, InvalidIdentifier

MAX_IDENTIFIER_LENGTH = 256
TENANT_ID_FIELD = "tenant_id"
# A tenant id names a whole ledger in logs, keys, commands and URLs, where an invisible
# (U+200B) or bidirectional (U+202E) character makes two ids look alike or one read
# backwards. So it is held to ASCII letters, digits and these five marks.
TENANT_ID_MARKS = "-_.:@"
_TENANT_ID_OUTSIDE = re.compile(r"[^A-Za-z0-9\-_.:@]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc, exactly
_SURROGATE = re.compile("[\ud800-\udfff]")  # Unicode category Cs


def check_identifier(field: str, value: object, *, max_length: int = MAX_IDENTIFIER_LENGTH) -> str:
    """``value`` if it is a usable identifier, else ``InvalidIdentifier`` naming ``field``.

    Usable: a non-blank string of at most ``max_length`` characters (256 unless a
    longer id is known to be usable) with no control characters and no lone
    surrogate (which UTF-8, and so PostgreSQL, cannot take). A tenant id (``field``
    ``"tenant_id"``) must also hold only ASCII letters, digits and ``-_.:@``.
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
    if field == TENANT_ID_FIELD:
        _check_tenant_characters(field, value)
    return value


def _check_tenant_characters(field: str, value: str) -> None:
    """Refuse a tenant id holding anything beyond ASCII letters, digits and ``-_.:@``,
    naming the first such character by its code point (it may be invisible)."""
    outside = _TENANT_ID_OUTSIDE.search(value)
    if outside is not None:
        shown = f"U+{ord(outside.group()):04X}"
        allowed = f"a tenant id may hold only ASCII letters, digits and {TENANT_ID_MARKS}"
        reason = f"holds {shown} at index {outside.start()}; {allowed}"
        raise InvalidIdentifier(field, value, reason)


def check_text(field: str, text: str) -> str:
    """``text`` if the ledger can store it and a tokenizer read it, else InvalidField
    naming ``field`` (the rule HTTP applies to every text: ``api.schemas.storable_text``):
    PostgreSQL cannot store NUL, and UTF-8 cannot encode a lone surrogate (as a command
    line's undecodable bytes become)."""
    if "\x00" in text:
        raise InvalidField(field, "holds a NUL character, which PostgreSQL cannot store")
    if _SURROGATE.search(text):
        raise InvalidField(field, "holds a lone surrogate, which UTF-8 cannot encode")
    return text
