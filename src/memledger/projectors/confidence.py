"""How confidence moves when an item is mentioned again. Pure."""

from __future__ import annotations

from typing import Protocol

REINFORCEMENT_STEP = 0.2


class Mentioned(Protocol):
    """A read-model row that counts its mentions (an entity, a relationship)."""

    mention_count: int
    confidence: float
    source_turns: list[str]


def reinforce(current: float, observed: float | None = None) -> float:
    """Confidence after one more mention: never lower, always closer to 1, never above it.

    Takes the better of the two estimates, then closes a fifth of the remaining
    distance to certainty. Rounded so that rebuilds compare equal byte for byte.
    """
    base = current if observed is None else max(current, observed)
    return round(min(1.0, base + (1.0 - base) * REINFORCEMENT_STEP), 6)


def merge_ordered(existing: list[str], new: tuple[str, ...] | list[str]) -> list[str]:
    """``existing`` followed by the items of ``new`` it lacks, in order.

    Returns ``existing`` itself when nothing is new (callers never mutate these
    lists in place); the one-item case is the usual one of a rebuild, which runs
    this for every mention it replays."""
    if not new:
        return existing
    if len(new) == 1:
        return existing if new[0] in existing else [*existing, new[0]]
    seen = set(existing)
    out = list(existing)
    for item in new:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def mention_again(row: Mentioned, observed: float | None, source_turns: tuple[str, ...] | list[str]) -> None:
    """One more mention of ``row``: counted, its confidence reinforced, its turns merged."""
    row.mention_count += 1
    row.confidence = reinforce(row.confidence, observed)
    row.source_turns = merge_ordered(row.source_turns, source_turns)
