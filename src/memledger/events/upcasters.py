"""Upcasters: pure functions from an old payload to the next version's.

Keyed by ``(tag, from_version)``. Never delete one: stored events never change,
so every historical version must stay readable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Payload = dict[str, Any]
Upcaster = Callable[[Payload], Payload]


def turn_recorded_v1_to_v2(data: Payload) -> Payload:
    """v1 held the scope keys as flat ``*_id`` fields; v2 groups them in ``scopes``."""
    out = {k: v for k, v in data.items() if not k.endswith("_id") or k == "turn_id"}
    scopes = {
        scope: data[f"{scope}_id"]
        for scope in ("session", "project", "user", "org")
        if data.get(f"{scope}_id") is not None
    }
    out["scopes"] = scopes
    return out


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("turn.recorded", 1): turn_recorded_v1_to_v2,
}


def upcast(tag: str, version: int, current: int, data: Payload) -> Payload:
    """Apply the chain of upcasters from ``version`` to ``current``.

    Raises ``KeyError`` naming the missing step if the chain is broken.
    """
    while version < current:
        data = UPCASTERS[(tag, version)](data)
        version += 1
    return data
