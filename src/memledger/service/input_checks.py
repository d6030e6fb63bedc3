"""The checks on what a caller sends (identifiers, free text) that the use cases apply, for a
surface that refuses bad input with the field it came from before calling one (a schema's
validator)."""

from __future__ import annotations

from memledger.store.identifiers import MAX_IDENTIFIER_LENGTH, check_identifier, check_text

__all__ = ["MAX_IDENTIFIER_LENGTH", "check_identifier", "check_text"]
