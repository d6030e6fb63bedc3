"""One selected item made ready to render: its text neutralised and quoted, its
metadata (id, kind, scope, source turns, who said it, when, a conflict) cleaned once.

Which formatter versions render what: each version is kept, so a replay renders a
served block again byte for byte (CHANGELOG.md says what each changed).
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from typing import Final

import msgspec

from memledger.formatting.dates import resolve as resolve_dates
from memledger.formatting.names import Names
from memledger.formatting.neutralise import ELLIPSIS, cite, clean, neutralise, shorten
from memledger.selection.types import SelectedItem

FORMATTER_VERSION: Final = "8"
"""Bumped whenever the same selection would render differently. Blocks served by
any version in ``FORMATTER_VERSIONS`` are rendered by it again (a replay must give
the hash that was recorded)."""

FORMATTER_VERSIONS: Final = ("2", "3", "4", "5", "6", "7", "8")
"""The versions this module still renders, each as ``prepare`` and the layouts
describe; what each one changed: CHANGELOG.md."""

MIN_CUT_CHARS: Final = 80
"""Version 7 on: the least a cut item keeps; a text of up to twice this is never cut."""

CONFLICT_FLAG: Final = "CONFLICT: both were said; ask the user if unsure."
"""Version 4 on. Two members of a project may be the ones who disagree, and the block
says who said which (``said_by``): the flag no longer says the user said both."""

CONFLICT_FLAG_V2: Final = "CONFLICT: the user has said both; ask if unsure."
"""Versions 2 and 3."""

_SPEAKERS_SHOWN: Final = 3

_ID_LIMIT: Final = 64

_SHOWN_TURNS: Final = 5

ROUND_BRACKETS: Final = str.maketrans("[]", "()")


class Meta(msgspec.Struct, frozen=True, kw_only=True):
    """An item's metadata, cleaned once (ids and keys are stored strings too)."""

    item_id: str
    kind: str
    scope: str
    scope_key: str | None
    category: str | None
    conflict_id: str | None
    since: str | None
    turns: tuple[str, ...]
    more_turns: int
    said_by: str | None = None
    flag: str = ""  # the conflict flag and a space, or nothing
    said_on: str | None = None  # a quoted turn's day
    dates: str | None = None  # what its relative dates meant that day


class Entry(msgspec.Struct, frozen=True):
    """One item ready to render: its cleaned text (maybe cut) and whether it was flagged."""

    index: int
    item: SelectedItem
    meta: Meta
    text: str
    suspicious: bool
    cut: bool = False


def prepare(index: int, item: SelectedItem, names: Names | None = None, *, version: str = FORMATTER_VERSION) -> Entry:
    """The item at ``index`` of a selection, its text neutralised and metadata cleaned,
    as formatter ``version`` renders it, so a replay gives the hash that was recorded:
    stored ids put in words (``names``), who said it, its id and turns cited exactly,
    the ids and keys of its metadata percent-encoded (``Names.endpoints``,
    ``Names.label``), each from the version that brought it (CHANGELOG.md)."""
    before_4 = version in ("2", "3")
    exact = version not in ("2", "3", "4")
    labelled = exact and version != "5"
    named = int(version) >= 8
    cited = cite if exact else _ident
    safe = neutralise(_named_text(item, names, labelled))
    scope_key = names.scope_key(item.scope_key) if names else item.scope_key
    own = item.kind == "turn" and item.source_turns == (item.item_id,)  # a turn cites itself
    shown = () if own and named else tuple(cited(turn) for turn in item.source_turns[:_SHOWN_TURNS])
    said_on = _said_on(item) if named else None
    meta = Meta(
        item_id=cited(item.item_id),
        kind=_ident(item.kind),
        scope=_ident(str(item.scope)) if item.scope is not None else "none",
        scope_key=(_labels(names).label if labelled else _ident)(scope_key) if scope_key else None,
        category=(cite if labelled else _ident)(item.category) if item.category else None,
        conflict_id=_conflict(item.conflict_id, names, version) if item.conflict_id else None,
        since=item.valid_from.date().isoformat() if item.valid_from is not None else None,
        turns=shown,
        more_turns=0 if own and named else len(item.source_turns) - len(shown),
        said_by=_said_by(item, names, labelled, named) if names and not before_4 else None,
        flag=(f"{CONFLICT_FLAG_V2 if before_4 else CONFLICT_FLAG} " if item.conflicted else ""),
        said_on=said_on.isoformat() if said_on else None,
        dates=_dates(item.text, said_on) if said_on and item.kind == "turn" else None,
    )
    return Entry(index, item, meta, safe.text, safe.suspicious)


def _named_text(item: SelectedItem, names: Names | None, labelled: bool) -> str:
    """``item``'s text with its stored ids in words: when ``labelled``, only those naming
    a graph item's ends (another user's statement may hold the request's user's id: it
    must not read as "the user"), else every one."""
    if names is None:
        return item.text
    return names.endpoints(item.kind, item.text) if labelled else names.text(item.text)


def _labels(names: Names | None) -> Names:
    return names if names is not None else Names()


def _said_by(item: SelectedItem, names: Names, labelled: bool, named: bool = False) -> str | None:
    """Who said ``item``, in words, unless the request's user is among them (their
    own words need no name) or nobody is known; when ``named``, by their names if
    every speaker has one."""
    if not item.said_by or (names.user is not None and names.user in item.said_by):
        return None
    if named and item.speakers and len(item.speakers) == len(item.said_by):
        shown = [_person(name) for name in item.speakers[:_SPEAKERS_SHOWN]]
        more = len(item.speakers) - len(shown)
        return " and ".join(shown) + (f" and {more} more" if more else "")
    speakers = item.said_by[:_SPEAKERS_SHOWN]
    if labelled:  # a raw user id is the caller's choice: encoded, it cannot close the metadata
        shown = [names.label(speaker) for speaker in speakers]
    else:  # brackets become round ones, as in a cited id: a raw user id cannot forge a citation
        shown = [_ident(names.text(speaker)).translate(ROUND_BRACKETS) for speaker in speakers]
    more = len(item.said_by) - len(shown)
    # "not the user": the statement is in its speaker's words, and its "I" is them
    # (said only when the request names its user: else nobody knows)
    return " and ".join(shown) + (f" and {more} more" if more else "") + (", not the user" if names.user else "")


def _person(name: str) -> str:
    """A speaker's name as shown: letters, digits, spaces, apostrophes, hyphens and
    dots only, so a name can neither close the metadata nor forge a citation."""
    return _NAME_SHOWN.sub("", clean(name))[:_ID_LIMIT] or "someone"


_NAME_SHOWN: Final = re.compile(r"[^\w '\u2019.-]|_")


def _said_on(item: SelectedItem) -> date | None:
    """The day a quoted turn was said (the first cited turn's), for a turn item."""
    if item.kind != "turn" or not item.cited or item.cited[0].said_at is None:
        return None
    return item.cited[0].said_at.date()


def _dates(text: str, said_on: date) -> str | None:
    """What the relative dates of a quoted turn meant the day it was said."""
    found = resolve_dates(text, said_on)
    return "; ".join(f"{phrase} = {meant}" for phrase, meant in found) or None


def _conflict(conflict_id: str, names: Names | None, version: str) -> str:
    """A conflict's id as shown: a label pairing its sides, not a citation (the sides'
    ids are). Its slot holds a stored scope id ("project:hid.project.1684…:editor"), put
    in words with brackets made round so that it cannot forge a citation, or, in the
    current versions, with the rest (a raw scope key, a fact's key) percent-encoded."""
    if version in ("2", "3", "4") or (version == "5" and names is None):
        return _ident(conflict_id)
    if version == "5":
        return _ident(_labels(names).text(conflict_id)).translate(ROUND_BRACKETS)
    return _labels(names).label(conflict_id)


def cut(entry: Entry, length: int, full: str) -> Entry:
    """``entry`` with only the first ``length`` characters of its cleaned text ``full``."""
    return msgspec.structs.replace(entry, text=full[:length].rstrip() + ELLIPSIS, cut=True)


@lru_cache(maxsize=8192)  # pure; ids, kinds, scopes and categories repeat across items and blocks
def _ident(value: str) -> str:
    return shorten(clean(value), _ID_LIMIT)
