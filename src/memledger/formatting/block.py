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
selection, style, budget and formatter version give the same text and ``sha256``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Final, Literal, Protocol

import msgspec

from memledger.formatting.entries import FORMATTER_VERSION, FORMATTER_VERSIONS, MIN_CUT_CHARS, Entry, cut, prepare
from memledger.formatting.layout import TEXT, Layout, XmlLayout, group_of, groups, measure
from memledger.formatting.names import names_for
from memledger.formatting.tokens import TokenCounter, estimate
from memledger.selection.types import Selection

Style = Literal["text", "xml"]

_LAYOUTS: Final[dict[tuple[str, str], Layout]] = {
    **{("text", version): TEXT for version in FORMATTER_VERSIONS},
    **{("xml", version): XmlLayout(version) for version in FORMATTER_VERSIONS},
}

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
    version: str = FORMATTER_VERSION,
) -> Block:
    """``selection`` as a read-only memory block of at most ``max_chars`` characters
    and, if given, ``max_tokens`` tokens counted by ``count_tokens`` (default: the
    estimate), as formatter ``version`` renders it (an earlier one: for replays).
    Raises ``ValueError`` for an unknown style or version, or a budget too small
    to hold the block's header and footer."""
    layout = _layout(style, version)
    budget = _budget(max_chars, max_tokens, count_tokens)
    if not selection.items:
        text = layout.empty(reason=selection.empty_reason, as_of=selection.as_of)
        _require(budget, text, max_chars, max_tokens)
        return _block(text, (), 0, style, budget.count, version)
    total = len(selection.items)

    def compose(chosen: Sequence[Entry]) -> str:
        return layout.document(chosen, omitted=total - len(chosen), as_of=selection.as_of)

    def fitting(within: _Budget) -> _Fitting:
        if within.tokens is None:  # characters alone: measured, not composed
            return _ByLength(layout, total, selection.as_of, within.chars)
        return _ByText(compose, within)

    skeleton = compose(())
    _require(budget, skeleton, max_chars, max_tokens)
    single = fitting(budget.share(skeleton, 1 if total == 1 else 2))  # asked of one entry at a time, never taken
    names = None if version == "2" else names_for(selection.scopes)
    whole = int(version) >= 7  # an item keeps at least half its text (or MIN_CUT_CHARS) when cut
    entries = [
        _fit_alone(prepare(i, item, names, version=version), single, whole=whole)
        for i, item in enumerate(selection.items)
    ]
    chosen = _fill(entries, fitting(budget))
    return _block(compose(chosen), chosen, total - len(chosen), style, budget.count, version)


def _layout(style: str, version: str) -> Layout:
    if style not in ("text", "xml"):
        raise ValueError(f"unknown style {style!r}; expected one of ['text', 'xml']")
    if version not in FORMATTER_VERSIONS:
        raise ValueError(
            f"formatter version {version!r} cannot be rendered by this memledger "
            f"(it renders versions {', '.join(FORMATTER_VERSIONS)})"
        )
    return _LAYOUTS[(style, version)]


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


class _Fitting(Protocol):
    """Entries taken one unit at a time, and whether the next unit still fits."""

    def fits(self, unit: Sequence[Entry]) -> bool: ...

    def take(self, unit: Sequence[Entry]) -> None: ...

    def fits_all(self, chosen: Sequence[Entry]) -> bool:
        """Whether a block of ``chosen`` fits."""
        ...


class _ByText:
    """Composes the block with the unit and checks it (needed for a token budget:
    tokenizers need not count additively)."""

    def __init__(self, compose: Compose, budget: _Budget) -> None:
        self.compose, self.budget = compose, budget
        self.chosen: list[Entry] = []

    def fits(self, unit: Sequence[Entry]) -> bool:
        return self.budget.fits(self.compose([*self.chosen, *unit]))

    def take(self, unit: Sequence[Entry]) -> None:
        self.chosen += unit

    def fits_all(self, chosen: Sequence[Entry]) -> bool:
        return self.budget.fits(self.compose(chosen))


class _ByLength:
    """Adds up the lines' lengths (``Layout``'s sizes): the same answers as composing
    for a character budget, at the cost of the unit's lines instead of the block's."""

    def __init__(self, layout: Layout, total: int, as_of: str | None, chars: int) -> None:
        self.layout, self.total, self.as_of, self.chars = layout, total, as_of, chars
        self.shown = self.body = 0
        self.groups: set[tuple[int, str, str]] = set()

    def _grown(self, unit: Sequence[Entry]) -> tuple[int, set[tuple[int, str, str]]]:
        body, groups = self.body, set(self.groups)
        for entry in unit:
            if (group := group_of(entry)) not in groups:
                groups.add(group)
                body += self.layout.heading_size(entry)
            body += self.layout.entry_size(entry)
        return body, groups

    def _length(self, shown: int, body: int) -> int:
        return self.layout.frame_size(shown, self.total - shown, self.as_of) + body - 1

    def fits(self, unit: Sequence[Entry]) -> bool:
        return self._length(self.shown + len(unit), self._grown(unit)[0]) <= self.chars

    def take(self, unit: Sequence[Entry]) -> None:
        self.body, self.groups = self._grown(unit)
        self.shown += len(unit)

    def fits_all(self, chosen: Sequence[Entry]) -> bool:
        return measure(self.layout, chosen, omitted=self.total - len(chosen), as_of=self.as_of) <= self.chars


def _fit_alone(entry: Entry, fitting: _Fitting, *, whole: bool = False) -> Entry:
    """``entry``, its text cut (longest prefix plus an ellipsis) if it does not fit
    its share of the budget on its own (``fitting``, nothing taken); unchanged when
    even an ellipsis would not fit. With ``whole`` (version 7 on), a text of up to twice
    ``MIN_CUT_CHARS`` is never cut, and a longer one keeps at least ``MIN_CUT_CHARS``: a cut
    sentence can say the opposite of what was said, so the item is shown whole if the budget
    holds it, else left out."""

    def fits(alone: Entry) -> bool:
        return fitting.fits((alone,))

    if fits(entry):
        return entry
    full = entry.text
    if whole and len(full) <= 2 * MIN_CUT_CHARS:
        return entry  # a sentence or two: any cut can drop what it turns on ("..., it is forbidden.")
    least = MIN_CUT_CHARS if whole else 0
    if not fits(cut(entry, least, full)):
        return entry
    low, high = least, len(full) - 1  # the longest fitting prefix length lies in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if fits(cut(entry, middle, full)):
            low = middle
        else:
            high = middle - 1
    return cut(entry, low, full)


def _fill(entries: Sequence[Entry], fitting: _Fitting) -> list[Entry]:
    """The entries that fit, taken by importance; each unit left out whole if it does not."""
    chosen: list[Entry] = []
    taken: list[list[Entry]] = []
    for unit in _units(entries):
        if fitting.fits(unit):
            fitting.take(unit)
            chosen += unit
            taken.append(unit)
    # Adding an item only shortens the note on omitted items, so the last check
    # covers the final text; this guards tokenizers that do not count additively.
    while taken and not fitting.fits_all(chosen):
        chosen = chosen[: len(chosen) - len(taken.pop())]
    return chosen


def _units(entries: Sequence[Entry]) -> list[list[Entry]]:
    """``entries`` most important first, the sides of one conflict together (a flag
    saying "both were said" must not be shown with one side only)."""
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


def _block(text: str, chosen: Sequence[Entry], omitted: int, style: Style, count: TokenCounter, version: str) -> Block:
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
        formatter_version=version,
    )
