"""How confidence moves when an item is mentioned again. Pure."""

from __future__ import annotations

REINFORCEMENT_STEP = 0.2


def reinforce(current: float, observed: float | None = None) -> float:
    """Confidence after one more mention: never lower, always closer to 1, never above it.

    Takes the better of the two estimates, then closes a fifth of the remaining
    distance to certainty. Rounded so that rebuilds compare equal byte for byte.
    """
    base = current if observed is None else max(current, observed)
    return round(min(1.0, base + (1.0 - base) * REINFORCEMENT_STEP), 6)


def merge_ordered(existing: list[str], new: tuple[str, ...] | list[str]) -> list[str]:
    """``existing`` followed by the items of ``new`` it lacks, in order."""
    seen = set(existing)
    out = list(existing)
    for item in new:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
