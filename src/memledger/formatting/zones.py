"""Token budget zones: how a model's context window is shared out.

A window is split into zones, each with a share of the window it must get
(``min_share``), should get (``preferred_share``) and may get at most
(``max_share``), and an absolute minimum in tokens (``min_tokens``). The
defaults follow the usual split of an agent's prompt:

=========  =========  ===============  =========  ==========
zone       min_share  preferred_share  max_share  min_tokens
=========  =========  ===============  =========  ==========
system     0.10       0.10             0.15       256
tools      0.15       0.15             0.20       0
memory     0.30       0.35             0.40       256
history    0.20       0.25             0.30       512
reserve    0.10       0.15             0.15       256
=========  =========  ===============  =========  ==========

so a 128,000-token window gives system 12,800, tools 19,200, memory 44,800,
history 32,000 and reserve 19,200 tokens, and the smallest window the defaults
accept is 1,859 tokens.

:func:`allocate` rules, in order:

1. Every zone gets its minimum: the larger of ``min_tokens`` and
   ``min_share`` times the window. If the window cannot hold every minimum, it raises
   ``ValueError`` naming the window and the sum of the minimums.
2. Zones then grow toward their preferred share (never past their maximum
   share, never below their minimum). When the window cannot give every zone
   its preferred share, what is left is shared in proportion to what each zone
   still lacks.
3. Whatever is left goes to ``history``, then ``reserve``, each up to its
   maximum share. Tokens beyond every cap stay unallocated (impossible with the
   defaults, whose maximum shares add up to more than the window).

Shares are fractions in [0, 1] with ``min_share <= preferred_share <= max_share``;
minimum shares and preferred shares must each add up to at most 1. Budgets are
whole tokens, shares are rounded down, and the total never exceeds the window.
Zones may be named freely; only ``history`` and ``reserve`` have a role in rule 3.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Final

import msgspec

# Shares are read as the decimal fractions they were written as (0.35 is 7/20),
# so rounding down never loses a token to binary floating point.
_SHARE_PRECISION: Final = 1_000_000
LEFTOVER_ORDER: Final = ("history", "reserve")


class ZoneSpec(msgspec.Struct, frozen=True, kw_only=True):
    """How much of the window one zone must, should and may take."""

    min_share: float
    preferred_share: float
    max_share: float
    min_tokens: int = 0

    def __post_init__(self) -> None:
        shares = (self.min_share, self.preferred_share, self.max_share)
        if not all(0.0 <= share <= 1.0 for share in shares):
            raise ValueError(f"zone shares must lie in [0, 1], got {shares}")
        if not self.min_share <= self.preferred_share <= self.max_share:
            raise ValueError(f"zone shares must satisfy min <= preferred <= max, got {shares}")
        if self.min_tokens < 0:
            raise ValueError(f"min_tokens must not be negative, got {self.min_tokens}")


DEFAULT_ZONES: Final[Mapping[str, ZoneSpec]] = {
    "system": ZoneSpec(min_share=0.10, preferred_share=0.10, max_share=0.15, min_tokens=256),
    "tools": ZoneSpec(min_share=0.15, preferred_share=0.15, max_share=0.20),
    "memory": ZoneSpec(min_share=0.30, preferred_share=0.35, max_share=0.40, min_tokens=256),
    "history": ZoneSpec(min_share=0.20, preferred_share=0.25, max_share=0.30, min_tokens=512),
    "reserve": ZoneSpec(min_share=0.10, preferred_share=0.15, max_share=0.15, min_tokens=256),
}


def allocate(window_tokens: int, zones: Mapping[str, ZoneSpec] | None = None) -> dict[str, int]:
    """Tokens for each zone of a ``window_tokens`` window, by the rules of the module doc.

    The result has the zones' keys in their order; its values add up to at most
    ``window_tokens``. Raises ``ValueError`` for a negative window, no zones,
    shares adding up to more than 1, or a window too small for the minimums.
    """
    specs = DEFAULT_ZONES if zones is None else zones
    _check(window_tokens, specs)
    floors = {name: max(spec.min_tokens, _part(spec.min_share, window_tokens)) for name, spec in specs.items()}
    needed = sum(floors.values())
    if needed > window_tokens:
        detail = ", ".join(f"{name} {tokens}" for name, tokens in floors.items())
        raise ValueError(
            f"a window of {window_tokens} tokens cannot hold the zones' minimums, "
            f"which add up to {needed} tokens ({detail})"
        )
    caps = {name: max(floors[name], _part(spec.max_share, window_tokens)) for name, spec in specs.items()}
    targets = {
        name: min(caps[name], max(floors[name], _part(spec.preferred_share, window_tokens)))
        for name, spec in specs.items()
    }
    budgets = _grow(floors, targets, window_tokens - needed)
    left = window_tokens - sum(budgets.values())
    for name in LEFTOVER_ORDER:
        if name in budgets:
            extra = min(left, caps[name] - budgets[name])
            budgets[name] += extra
            left -= extra
    return budgets


def memory_budget(window_tokens: int, zones: Mapping[str, ZoneSpec] | None = None) -> int:
    """The memory zone's tokens in a ``window_tokens`` window (see :func:`allocate`)."""
    budgets = allocate(window_tokens, zones)
    if "memory" not in budgets:
        raise ValueError(f"no 'memory' zone among {sorted(budgets)}")
    return budgets["memory"]


def _check(window_tokens: int, specs: Mapping[str, ZoneSpec]) -> None:
    if window_tokens < 0:
        raise ValueError(f"window_tokens must not be negative, got {window_tokens}")
    if not specs:
        raise ValueError("at least one zone is needed")
    for label, total in (
        ("minimum", sum(_share(spec.min_share) for spec in specs.values())),
        ("preferred", sum(_share(spec.preferred_share) for spec in specs.values())),
    ):
        if total > 1:
            raise ValueError(f"the zones' {label} shares add up to {float(total):g}, more than the whole window")


def _share(share: float) -> Fraction:
    return Fraction(share).limit_denominator(_SHARE_PRECISION)


def _part(share: float, window_tokens: int) -> int:
    return math.floor(_share(share) * window_tokens)


def _grow(floors: dict[str, int], targets: dict[str, int], room: int) -> dict[str, int]:
    """``floors`` raised toward ``targets`` using at most ``room`` tokens; when the
    room is short, in proportion to each zone's shortfall (largest remainders
    get the odd tokens, ties to the earlier zone)."""
    lacking = {name: targets[name] - floors[name] for name in floors}
    total = sum(lacking.values())
    if total <= room:
        return dict(targets)
    shares = {name: divmod(room * lack, total) for name, lack in lacking.items()}
    budgets = {name: floors[name] + whole for name, (whole, _) in shares.items()}
    odd = room - sum(whole for whole, _ in shares.values())
    order = list(floors)
    by_remainder = sorted(order, key=lambda name: (-shares[name][1], order.index(name)))
    for name in by_remainder[:odd]:
        budgets[name] += 1
    return budgets
