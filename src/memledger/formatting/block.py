"""Render a selection as a read-only memory block that fits a character and token budget.

Fitting, in order:

1. The contract (header) and the end marker (footer) always fit: a budget too
   small to hold them, with the note on omitted items, is a ``ValueError``.
2. An item too long for its share of the room left (all of it when the selection
   has one item, half of it otherwise, so one huge memory cannot crowd out the
   rest) has its text cut at that size and ended with an ellipsis. This is the
   only case where text is cut.
3. Items are then taken most important first (highest score, then selection
   order); an item that no longer fits is left out whole, and less important,
   smaller ones may still fill the room. The conflicting items of one conflict
   (same ``conflict_id``) are taken or left out together, at the rank of the
   most important. What is left out is counted in ``omitted``.

If no item fits, the block still states the contract and says how many items
were left out. An empty selection gives a short block saying that no memory
applies, with the selector's reason. Rendering is deterministic: the same
selection, style and budget give the same text and ``sha256``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Final, Literal

import msgspec

from memledger.formatting.layout import FORMATTER_VERSION, TEXT, XML, Entry, Layout, cut, groups, prepare
from memledger.formatting.tokens import TokenCounter, estimate
from memledger.selection.types import Selection

Style = Literal["text", "xml"]

_LAYOUTS: Final[dict[str, Layout]] = {"text": TEXT, "xml": XML}

Compose = Callable[[Sequence[Entry]], str]


class Block(msgspec.Struct, frozen=True, kw_only=True):
    """A rendered memory block and what it holds.

    ``item_ids`` are the ids of the items shown, in the order shown (the stored
    ids, not their cleaned rendering); ``truncated`` those whose text was cut;
    ``omitted`` how many items were left out for the budget; ``tokens`` the text's
    size by the counter given to :func:`render` (the estimate if none);
    ``sha256`` the hex digest of the UTF-8 text.
    """

    text: str
    item_ids: tuple[str, ...]
    omitted: int
    truncated: tuple[str, ...]
    chars: int
    tokens: int
    sha256: str
    style: Style
    formatter_version: str = FORMATTER_VERSION


class _Budget(msgspec.Struct, frozen=True):
    chars: int
    tokens: int | None
    count: TokenCounter

    def fits(self, text: str) -> bool:
        if len(text) > self.chars:
            return False
        return self.tokens is None or self.count(text) <= self.tokens

    def share(self, skeleton: str, divisor: int) -> _Budget:
        """The budget of a block holding ``skeleton`` plus 1/``divisor`` of the room left."""
        chars = len(skeleton) + (self.chars - len(skeleton)) // divisor
        if self.tokens is None:
            return _Budget(chars, None, self.count)
        used = self.count(skeleton)
        return _Budget(chars, used + (self.tokens - used) // divisor, self.count)


def render(
    selection: Selection,
    *,
    style: Style = "text",
    max_chars: int = 5000,
    max_tokens: int | None = None,
    count_tokens: TokenCounter | None = None,
) -> Block:
    """``selection`` as a read-only memory block of at most ``max_chars`` characters
    and, if given, ``max_tokens`` tokens counted by ``count_tokens`` (default: the
    estimate). Raises ``ValueError`` for an unknown style or a budget too small
    to hold the block's header and footer."""
    layout = _layout(style)
    budget = _budget(max_chars, max_tokens, count_tokens)
    if not selection.items:
        text = layout.empty(reason=selection.empty_reason, as_of=selection.as_of)
        _require(budget, text, max_chars, max_tokens)
        return _block(text, (), 0, style, budget.count)
    total = len(selection.items)

    def compose(chosen: Sequence[Entry]) -> str:
        return layout.document(chosen, omitted=total - len(chosen), as_of=selection.as_of)

    skeleton = compose(())
    _require(budget, skeleton, max_chars, max_tokens)
    single = budget.share(skeleton, 1 if total == 1 else 2)
    entries = [_fit_alone(prepare(i, item), compose, single) for i, item in enumerate(selection.items)]
    chosen = _fill(entries, compose, budget)
    return _block(compose(chosen), chosen, total - len(chosen), style, budget.count)


def _layout(style: str) -> Layout:
    try:
        return _LAYOUTS[style]
    except KeyError:
        raise ValueError(f"unknown style {style!r}; expected one of {sorted(_LAYOUTS)}") from None


def _budget(max_chars: int, max_tokens: int | None, count_tokens: TokenCounter | None) -> _Budget:
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be positive or None, got {max_tokens}")
    return _Budget(max_chars, max_tokens, count_tokens or estimate)


def _require(budget: _Budget, text: str, max_chars: int, max_tokens: int | None) -> None:
    if not budget.fits(text):
        raise ValueError(
            f"the memory block's header and footer alone take {len(text)} chars and "
            f"{budget.count(text)} tokens, more than the budget (max_chars={max_chars}, max_tokens={max_tokens})"
        )


def _fit_alone(entry: Entry, compose: Compose, budget: _Budget) -> Entry:
    """``entry``, its text cut (longest prefix plus an ellipsis) if it does not fit
    ``budget`` on its own; unchanged when even an ellipsis would not fit."""
    if budget.fits(compose((entry,))):
        return entry
    full = entry.text
    if not budget.fits(compose((cut(entry, 0, full),))):
        return entry
    low, high = 0, len(full) - 1  # the longest fitting prefix length lies in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if budget.fits(compose((cut(entry, middle, full),))):
            low = middle
        else:
            high = middle - 1
    return cut(entry, low, full)


def _fill(entries: Sequence[Entry], compose: Compose, budget: _Budget) -> list[Entry]:
    """The entries that fit, taken by importance; each unit left out whole if it does not."""
    chosen: list[Entry] = []
    taken: list[list[Entry]] = []
    for unit in _units(entries):
        if budget.fits(compose([*chosen, *unit])):
            chosen += unit
            taken.append(unit)
    # Adding an item only shortens the note on omitted items, so the last check
    # covers the final text; this guards tokenizers that do not count additively.
    while taken and not budget.fits(compose(chosen)):
        chosen = chosen[: len(chosen) - len(taken.pop())]
    return chosen


def _units(entries: Sequence[Entry]) -> list[list[Entry]]:
    """``entries`` most important first, the sides of one conflict together (a flag
    saying "the user has said both" must not be shown with one side only)."""
    units: list[list[Entry]] = []
    conflicts: dict[str, list[Entry]] = {}
    for entry in sorted(entries, key=_importance):
        conflict = entry.item.conflict_id if entry.item.conflicted else None
        if conflict is None:
            units.append([entry])
        elif conflict in conflicts:
            conflicts[conflict].append(entry)
        else:
            conflicts[conflict] = [entry]
            units.append(conflicts[conflict])
    return units


def _importance(entry: Entry) -> tuple[float, int]:
    score = entry.item.score
    return (math.inf if math.isnan(score) else -score, entry.index)


def _block(text: str, chosen: Sequence[Entry], omitted: int, style: Style, count: TokenCounter) -> Block:
    shown = [entry for group in groups(chosen) for entry in group]
    return Block(
        text=text,
        item_ids=tuple(entry.item.item_id for entry in shown),
        omitted=omitted,
        truncated=tuple(entry.item.item_id for entry in shown if entry.cut),
        chars=len(text),
        tokens=count(text),
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        style=style,
    )
