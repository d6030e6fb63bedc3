"""Dependencies said as what cannot work without a thing: "The Sundew app can't build
without Expo", "Without PyTorch Lightning the ML side of Sablewood wouldn't run at all".
The named project, organization or tool that is the subject of "can't <work>" depends on
the tool; not a person, not the speaker, not a name inside another phrase. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import polarity
from memledger.extraction.patterns import Edge, Mention, Party, Sentence, word_set
from memledger.extraction.triggers import CONDITIONAL_LEADS

_CANNOT: Final = word_set("can't cannot couldn't wouldn't won't")
_WORKING: Final = word_set("work run function build operate start cope survive")
_DEPENDENTS: Final = frozenset(("project", "organization", "tool"))  # a project its slot typed as a tool
# What may stand before the dependent's name as it opens its clause ("The Sundew app ...").
_OPENERS: Final = word_set(", ; : - the our and but so now even that of")  # "the ML side of Sablewood"
# What may stand between the dependent's name and "can't": its head nouns ("app", "side of").
_HEAD_WORDS: Final = word_set(
    "app apps service site website team side of the mobile web backend frontend system project"
)
_CONFIDENCE: Final = 0.75
_LONGEST_DOING: Final = 6  # words between "can't" and "without": "dispatch a single van"
_NOT_DOING: Final = word_set("and but or so because if when which that who i we you they")
_VERBS_AFTER: Final = (["is"], ["are"], ["was"], ["'s"], ["would"], ["will"], ["can"], ["does"])


def needed(sentence: Sentence) -> list[Edge]:
    """The DEPENDS_ON edges of "P can't <work> without X" and "Without X, P can't <work>"."""
    lows = sentence.lows
    if "without" not in lows or sentence.question or not CONDITIONAL_LEADS.isdisjoint(lows):
        return []  # most sentences; "If Kestrel can't run without Redis, ...": a supposition
    by_start = {m.start: m for m in sentence.mentions}
    unsaid = polarity.unasserted(lows)
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low != "without" or i + 1 >= len(lows):
            continue
        determined = lows[i + 1] in ("the", "a", "an", "our", "its", "their")  # "without its Garmin units"
        tool = by_start.get(i + 1) or (by_start.get(i + 2) if determined else None)
        if tool is None or tool.entity_type != "tool" or unsaid.get(tool.start) not in (None, "negated"):
            continue  # "It's a myth that P can't run without X"
        neg = _cannot_before(lows, i)
        dependent = _subject(lows, sentence.mentions, neg) if neg is not None else None
        if dependent is None and (i == 0 or lows[i - 1] in (",", ";", ":")):  # "Without X, P can't ..."
            neg = _cannot_after(lows, tool.end)
            dependent = _subject(lows, sentence.mentions, neg) if neg is not None else None
        if dependent is not None:
            for needed_tool in (tool, *_listed_tools(lows, tool, by_start)):  # "without X, Y and Z"
                edges.append(Edge(Party.of(dependent), "DEPENDS_ON", Party.of(needed_tool), _CONFIDENCE))
    return edges


def _listed_tools(lows: list[str], first: Mention, by_start: dict[int, Mention]) -> list[Mention]:
    """The tools listed after the first ("X, Y and Z", "X sensors, Y trackers and Z"), each
    after at most one lower-case noun of the one before and a comma or "and"."""
    listed: list[Mention] = []
    k = first.end
    while k < len(lows):
        k += 1 if lows[k].isalpha() and lows[k] not in ("and", "or") and k not in by_start else 0  # "X sensors"
        if k >= len(lows) or lows[k] not in (",", "and"):
            break
        k += 2 if lows[k] == "," and lows[k + 1 : k + 2] == ["and"] else 1
        following = by_start.get(k)
        if following is None or following.entity_type != "tool":
            break
        if lows[following.end : following.end + 1] in _VERBS_AFTER:
            break  # ", and Mapbox is nice to have": a clause of its own
        listed.append(following)
        k = following.end
    return listed


def _cannot_before(lows: list[str], without: int) -> int | None:
    """Where "can't" stands in "can't <work> (at all) without" or "can't <do> <a thing>
    without" ("can't dispatch a single van without X", "won't even start without X"): its
    index, or None; only plain words between."""
    k = without - 1
    if lows[k - 1 : k + 1] == ["at", "all"]:
        k -= 2
    if k >= 1 and lows[k] in _WORKING and lows[k - 1] in _CANNOT:
        return k - 1
    for j in range(without - 1, max(0, without - _LONGEST_DOING - 1), -1):
        if lows[j] in _CANNOT:
            return j if j + 1 < without else None
        if not lows[j].isalpha() or lows[j] in _NOT_DOING:
            return None
    return None


def _cannot_after(lows: list[str], end: int) -> int | None:
    """Where "can't <work>" stands in "Without X(,) the ... of P can't <work>", with only
    the dependent's noun phrase between."""
    for k in range(end, min(end + 8, len(lows) - 1)):
        if lows[k] in _CANNOT:
            return k if lows[k + 1] in _WORKING else None
        if lows[k] in ("and", "but", "we", "i", "is", "are", "runs", "was", ";"):
            return None
    return None


def _subject(lows: list[str], mentions: list[Mention], neg: int) -> Mention | None:
    """The dependent: the name that opens the noun phrase right before "can't" at ``neg``
    ("The Sundew mobile app can't ..."), a project, organization or tool; not one inside
    another phrase ("Dana from Kestrel can't ...", "Tom uses Kestrel and can't ...")."""
    named = [m for m in mentions if m.end <= neg and all(w in _HEAD_WORDS for w in lows[m.end : neg])]
    if not named or named[-1].entity_type not in _DEPENDENTS:
        return None
    last = named[-1]
    before = lows[last.start - 1] if last.start else ""
    people = any(m.entity_type == "person" and m.end <= last.start and last.start - m.end <= 3 for m in mentions)
    return last if (not before or before in _OPENERS) and not people else None
