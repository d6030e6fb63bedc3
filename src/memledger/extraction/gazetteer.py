"""Word lists for the heuristic extractor: general knowledge, not tuned to any corpus.

The lists live in ``lexicon/*.txt`` beside this module (one entry a line, ``#``
comments), so they are edited as data, not as Python literals. They are read once,
at import, with importlib.resources: the package's own files, read like its code,
so the parsers stay free of run-time I/O. Lookups are by lower-cased surface form.

Each tool carries a *kind* ("database", "editor", ...; a ``[kind]`` header in
``tools.txt``): facts about "I use X" are keyed by the kind, so "I use Vim" and
later "I use Emacs" compete for one slot ("editor").

A leading ``~`` (tools, organizations, concepts) marks a name that is also an
ordinary English word ("go", "black", "slack"): it counts only when written with a
capital letter.

``known_lengths`` matches known multi-word names (tools, organizations, concepts)
at a token with a token trie built once, longest first.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from memledger.events.keys import stream_safe
from memledger.extraction import lexicon

LEXICON: Final = lexicon.LEXICON

# Every data file the module reads; a test checks each ships with the package.
LEXICON_FILES: Final[tuple[str, ...]] = (
    "tools.txt",
    "organizations.txt",
    "primarily_organizations.txt",
    "concepts.txt",
    "given_names.txt",
    "org_suffixes.txt",
    "trade_nouns.txt",
    "not_names.txt",
    "places.txt",
    "work_roles.txt",
    "personal_roles.txt",
    "service_roles.txt",
)


def read_entries(name: str) -> list[str]:
    """The entries of one lexicon file, in order: each non-blank line not starting with ``#``."""
    return lexicon.entries(name)


def _marks(entries: Iterable[str]) -> dict[str, bool]:
    """Each name, without its ``~``, mapped to whether it needs a capital."""
    return {entry.lstrip("~"): entry.startswith("~") for entry in entries}


def read_tool_kinds(name: str = "tools.txt") -> dict[str, list[str]]:
    """The ``[kind]`` sections of the tools file: kind -> its entries, ``~`` kept."""
    return lexicon.sections(name)


def _tool_table() -> tuple[dict[str, str], frozenset[str]]:
    kinds: dict[str, str] = {}
    needs_capital: set[str] = set()
    for kind, entries in read_tool_kinds().items():
        for name, marked in _marks(entries).items():
            kinds.setdefault(name, kind)
            if marked:
                needs_capital.add(name)
    return kinds, frozenset(needs_capital)


def _places() -> frozenset[str]:
    # Each word of "new york" counts too: callers test the first word of a capitalised run.
    places = read_entries("places.txt")
    return frozenset(places) | frozenset(word for place in places for word in place.split())


_TOOL_TABLE = _tool_table()
TOOL_KIND: Final[Mapping[str, str]] = _TOOL_TABLE[0]
_ORG_MARKS = _marks(read_entries("organizations.txt"))
_CONCEPT_MARKS = _marks(read_entries("concepts.txt"))

ORGANIZATIONS: Final[frozenset[str]] = frozenset(_ORG_MARKS)
CONCEPTS: Final[frozenset[str]] = frozenset(_CONCEPT_MARKS)
NEEDS_CAPITAL: Final[frozenset[str]] = (
    _TOOL_TABLE[1]
    | frozenset(name for name, marked in _ORG_MARKS.items() if marked)
    | frozenset(name for name, marked in _CONCEPT_MARKS.items() if marked)
)
# Names that are first of all a company even though people also "use" them.
PRIMARILY_ORGANIZATIONS: Final[frozenset[str]] = frozenset(read_entries("primarily_organizations.txt"))
GIVEN_NAMES: Final[frozenset[str]] = frozenset(read_entries("given_names.txt"))
TRADE_NOUNS: Final[frozenset[str]] = frozenset(read_entries("trade_nouns.txt"))
ORG_SUFFIXES: Final[frozenset[str]] = frozenset(read_entries("org_suffixes.txt")) | TRADE_NOUNS
# Capitalised words that are not names: sentence openers, calendar words, greetings,
# acronyms of business life, languages and nationalities.
NOT_NAMES: Final[frozenset[str]] = frozenset(read_entries("not_names.txt"))
PLACES: Final[frozenset[str]] = _places()
WORK_ROLES: Final[frozenset[str]] = frozenset(read_entries("work_roles.txt"))
FAMILIAR_ROLES: Final[frozenset[str]] = frozenset(read_entries("personal_roles.txt"))
"""Relatives, friends and neighbours: the roles a name can take as a title ("Aunt Rosa")."""
SERVICE_ROLES: Final[frozenset[str]] = frozenset(read_entries("service_roles.txt"))
"""People who serve the speaker (a doctor, a tutor, an accountant): known, or colleagues when "ours"."""
PERSONAL_ROLES: Final[frozenset[str]] = FAMILIAR_ROLES | SERVICE_ROLES
ROLES: Final[frozenset[str]] = WORK_ROLES | PERSONAL_ROLES
KNOWN_NAMES: Final[frozenset[str]] = frozenset(TOOL_KIND) | ORGANIZATIONS | CONCEPTS
# The nouns the tool table's kinds end in ("tracker", "editor", "platform"), less a
# business's ("shop"): a noun that calls what it follows a tool ("my preferred tracker").
TOOL_KIND_NOUNS: Final[frozenset[str]] = (
    frozenset(kind.lstrip("+").split()[-1] for kind in TOOL_KIND.values() if kind) - ORG_SUFFIXES
)


# Known names by their first word, with the most words a name starting so has: a quick
# "could a known name start here" test (known_lengths does the matching).
def _first_words() -> dict[str, int]:
    longest: dict[str, int] = {}
    for name in (*TOOL_KIND, *ORGANIZATIONS, *CONCEPTS):
        words = name.split()
        longest[words[0]] = max(longest.get(words[0], 0), len(words))
    return longest


FIRST_WORDS: Final[Mapping[str, int]] = _first_words()


class _Node:
    """A trie node: the next token's nodes, and whether a known name ends here."""

    __slots__ = ("ends", "next")

    def __init__(self) -> None:
        self.next: dict[str, _Node] = {}
        self.ends = False


def _trie(names: Iterable[str]) -> _Node:
    root = _Node()
    for name in names:
        node = root
        for token in name.split():
            node = node.next.setdefault(token, _Node())
        node.ends = True
    return root


_TRIE: Final = _trie(KNOWN_NAMES)
KNOWN_FIRST_TOKENS: Final = frozenset(_TRIE.next)
"""The tokens a known name can start with."""


def known_lengths(lows: Sequence[str], i: int) -> tuple[int, ...]:
    """The token lengths of the known names (tools, organizations, concepts) starting at
    token ``i`` of lower-cased tokens, longest first; empty if none.

    Whole tokens only: "google cloud platform" matches 3 tokens, "googles" none.
    """
    if i >= len(lows) or lows[i] not in _TRIE.next:
        return ()  # most tokens start no known name
    node, found = _TRIE, []
    for j in range(i, len(lows)):
        child = node.next.get(lows[j])
        if child is None:
            break
        node = child
        if node.ends:
            found.append(j - i + 1)
    return tuple(reversed(found))


def longest_known(lows: Sequence[str], i: int) -> int:
    """The token length of the longest known name starting at token ``i``, or 0."""
    lengths = known_lengths(lows, i)
    return lengths[0] if lengths else 0


# Letters that carry no accent to strip but have a plain spelling ("Ragnheiður").
_PLAIN: Final = str.maketrans({"ð": "d", "þ": "th", "æ": "ae", "ø": "o", "ß": "ss", "ł": "l", "đ": "d", "\u0131": "i"})


def fold(text: str) -> str:
    """``text`` without its accents ("sofía" is "sofia", "ragnheiður" "ragnheidur")."""
    if text.isascii():
        return text  # nothing to fold, and most words are plain
    decomposed = unicodedata.normalize("NFKD", stream_safe(text.translate(_PLAIN)))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def is_given_name(low: str) -> bool:
    """Whether a lower-cased word is a common given name, accents aside ("sofía")."""
    return low in GIVEN_NAMES or (not low.isascii() and fold(low) in GIVEN_NAMES)


def tool_kind(name: str) -> str | None:
    """The kind of a known tool ("database") whose tools compete for one slot, or None:
    a kind opening with "+" is a family used side by side ("+online shop")."""
    kind = TOOL_KIND.get(name.casefold())
    return None if kind is None or kind.startswith("+") else kind
