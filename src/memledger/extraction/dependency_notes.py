"""Dependencies a note lists under a label: "Tattlergrove deps: Postgres, RabbitMQ",
"Deps: Ledgerwise → Adyen, Twilio", and the bullets under "Project Honeycomb deps:". Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction.note_lines import ITEM_BREAKS
from memledger.extraction.patterns import BULLETS, KNOWN_CONFIDENCE, Edge, Mention, Party, Sentence, word_set
from memledger.extraction.triggers import ARROWS, NEGATIONS, find_triggers

_CONFIDENCE: Final = 0.75
_LABELS: Final = frozenset((("deps",), ("dependencies",), ("depends", "on")))


def dependency_label(lows: list[str]) -> int | None:
    """Where the colon of a dependency label stands ("Petrel deps:", "- depends on:"), or None."""
    for colon, low in enumerate(lows[:8]):
        if low == ":":
            words = lows[max(0, colon - 2) : colon]
            return colon if tuple(words[-1:]) in _LABELS or tuple(words) in _LABELS or _for_whom(lows, colon) else None
    return None


def _for_whom(lows: list[str], colon: int) -> bool:
    """Whether a line opens with "Deps for <name>:" or "Dependencies of <name>:", nothing
    else before the colon ("Removed deps for P:", "Deps for P we dropped:" are not lists of
    what P depends on)."""
    start = 1 if lows[:1] and lows[0] in BULLETS else 0
    opens = lows[start : start + 1] in (["deps"], ["dependencies"]) and lows[start + 1 : start + 2] in (["for"], ["of"])
    name = lows[start + 2 : colon]
    plain = all((w.isalnum() or "-" in w) and w not in _OPEN for w in name)
    return opens and 1 <= len(name) <= 3 and plain


def listed_dependencies(sentence: Sentence, owner: Party | None) -> list[Edge]:
    """The DEPENDS_ON edges of a line with a dependency label: the name before the label
    (or before each arrow after it, or else ``owner``, the project a heading names)
    depends on each tool listed after it."""
    lows = sentence.lows
    colon = dependency_label(lows)
    if colon is None or sentence.question or not NEGATIONS.isdisjoint(lows):
        return []
    before = [m for m in sentence.mentions if m.end <= colon and _dependent(m)]
    dependent: Party | None = Party.of(before[-1]) if before else owner
    arrows = [k for k in range(colon + 1, len(lows)) if lows[k] in ARROWS]
    edges: list[Edge] = []
    for start, stop in zip([colon, *arrows], [*arrows, len(lows)], strict=True):
        items = [m for m in sentence.mentions if start < m.start and m.end <= stop]
        if stop in arrows:  # "Deps: Ledgerwise → Adyen, Kestrel → Postgres": each arrow its own
            named = [m for m in items if _dependent(m)]
            items = items[:-1] if named and named[-1] is items[-1] else items
            after = Party.of(named[-1]) if named else None
        if dependent is not None:
            edges += [
                Edge(dependent, "DEPENDS_ON", Party.of(m), _CONFIDENCE) for m in items if _listed(lows, m, dependent)
            ]
        dependent = after if stop in arrows else dependent
    return edges


def bullet_dependencies(sentence: Sentence, owner: Party) -> list[Edge]:
    """The tools a bullet lists under a dependency heading ("Project Honeycomb deps:")."""
    lows = sentence.lows
    if lows[:1] == [] or lows[0] not in BULLETS or not NEGATIONS.isdisjoint(lows):
        return []
    return [Edge(owner, "DEPENDS_ON", Party.of(m), _CONFIDENCE) for m in sentence.mentions if _listed(lows, m, owner)]


def _dependent(mention: Mention) -> bool:
    """A name that can depend on what a label lists: a project, an organization or a tool
    no list knows ("Quillfen deps:"), not a known product ("npm deps:" lists a project's)."""
    unknown_tool = mention.entity_type == "tool" and mention.confidence < KNOWN_CONFIDENCE
    return mention.entity_type in ("project", "organization") or unknown_tool


def _listed(lows: list[str], mention: Mention, dependent: Party) -> bool:
    """Whether a tool is a bare item of the list: not the dependent, opening its item
    (between commas), which neither weighs nor plans it ("Stripe vs Adyen still
    undecided", "talk to Sam about Kafka")."""
    if mention.entity_type != "tool" or mention.name == dependent.name:
        return False
    start = mention.start
    while start > 0 and lows[start - 1] not in _ITEM_BREAKS:
        start -= 1
    end = mention.end
    while end < len(lows) and lows[end] not in _ITEM_BREAKS:
        end += 1
    opens = all(w in ("a", "an", "the") for w in lows[start : mention.start])  # not "talk to Sam about X"
    return opens and _OPEN.isdisjoint(lows[mention.end : end]) and not find_triggers(lows[mention.end : end])


_ITEM_BREAKS: Final = ITEM_BREAKS | frozenset((":", ".", *ARROWS, *BULLETS))
_OPEN: Final = word_set("vs vs. versus undecided tbd maybe probably perhaps confirm evaluate should might ?")
