"""How the CLI prints: JSON lines for scripts, readable lines for people, in which a
stored (hashed) scope id reads as "the user" or "another user (1234abcd)"."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from sqlalchemy.engine import Engine

from memledger.service.reader_names import Names, names_of_caller
from memledger.service.types import Scopes

_encoder = msgspec.json.Encoder()


def json_line(value: Any) -> str:
    """One compact JSON line."""
    return _encoder.encode(value).decode()


def names_of(engine: Engine, tenant_id: str, scopes: Scopes, texts: Iterable[str]) -> Names:
    """How the caller of ``scopes`` reads stored ids, as a block names them. The tenant's
    key is read only when one of ``texts`` holds a stored id: a tenant that has one exists."""
    if not any("hid." in text for text in texts):
        return Names()
    return names_of_caller(engine, tenant_id, scopes)


def edge_text(names: Names, source: str, relation: str, target: str) -> str:
    """``SOURCE RELATION TARGET`` with the ends' stored ids in words."""
    return names.endpoints("relationship", f"{source} {relation} {target}")
