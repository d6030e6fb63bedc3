"""Preferences and choices said without "prefer" or "decide": "I'd take X over Y", "we
went for X" (the name right after it: "went for a run with X" is no choice), and a
comparison the speaker makes ("I'm more comfortable in X than Y"). What someone "wants
everything in" is no preference of theirs: the older sets label it nothing, the newer
ones a preference. Pure."""

from __future__ import annotations

from itertools import pairwise
from typing import Final

from memledger.extraction.clefts import BETTER, HEARSAY
from memledger.extraction.noun_types import common_noun
from memledger.extraction.patterns import Edge, Mention, Party, Sentence, word_set
from memledger.extraction.polarity import NEGATORS
from memledger.extraction.triggers import PREPOSITIONS, SUBJECT_PRONOUNS, is_filler

_WOULD: Final = word_set("i'd i'll we'd we'll")
_SPEAKERS: Final = word_set("i we")
_NOT_THINGS: Final = word_set("there here to at for from")  # "I'll take Figma over there", "take X over from N"
_CHOSEN: Final = word_set("tool organization concept")
_CONFIDENCE: Final = 0.75
_LONGEST_COMPARISON: Final = 12  # words of the clause before "than"
_CLAUSE_BREAKS: Final = word_set(", ; : . ! ? and but because though although while")
_SPEAKERS_WORDS: Final = frozenset(w for w in SUBJECT_PRONOUNS if w.startswith("i"))  # and "for me", "to me"
_LIKING: Final = word_set("like likes liking enjoy enjoying comfortable confident fonder fun")
_HEARSAY: Final = HEARSAY | word_set("told think thinks reckon reckons swear swears claim claims")
_RATED_ELSEWHERE: Final = word_set("prefer prefers over rather")  # "I prefer X over Y for anything bigger than"
_NEGATING: Final = NEGATORS | {"less"}


def wished(speaker: Party, sentence: Sentence) -> list[Edge]:
    """The preferences and choices such phrases state."""
    if sentence.question:
        return []
    lows, by_start = sentence.lows, {m.start: m for m in sentence.mentions}
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low == "than" and (preferred := _compared_better(lows, sentence.mentions, i)) is not None:
            edges.append(Edge(speaker, "PREFERS", Party.of(preferred), _CONFIDENCE))
        taker = _taker(speaker, lows, sentence.mentions, i) if low == "take" else None
        if taker is not None:
            at = i + 1 + (lows[i + 1 : i + 2] in (["a"], ["an"], ["the"]))  # "I'd take a Zebra scanner over ..."
            if _over_another(lows, by_start, at):
                edges.append(Edge(taker, "PREFERS", Party.of(by_start[at]), _CONFIDENCE))
        elif low == "went" and lows[i + 1 : i + 2] == ["for"] and _subject_we(lows, i):
            determined = lows[i + 2 : i + 3] in (["a"], ["an"], ["the"])
            chosen = by_start.get(i + 3 if determined else i + 2)
            # "went for a Weber Spirit grill"; not "went for a Starbucks before work": an outing
            kind = chosen is not None and (not determined or _kind_noun(lows, chosen.end))
            if chosen is not None and kind and chosen.entity_type in _CHOSEN:
                edges.append(Edge(speaker, "DECIDED", Party.of(chosen), _CONFIDENCE))
    return edges


def _compared_better(lows: list[str], mentions: list[Mention], than: int) -> Mention | None:
    """The thing the speaker rates above another in a comparison ending at ``than``: "I'm
    more comfortable in Sage than Xero", "OGS feels nicer to me than KGS", "I like X better
    than Y": the last name of the clause before "than", when the speaker is in it and
    nothing negates it; not "more than 3 hours"."""
    start = than
    while start > 0 and than - start < _LONGEST_COMPARISON and lows[start - 1] not in _CLAUSE_BREAKS:
        start -= 1
    window = lows[start:than]
    following = lows[than + 1] if than + 1 < len(lows) else ""
    if following[:1].isdigit() or not _NEGATING.isdisjoint(window) or not _RATED_ELSEWHERE.isdisjoint(window):
        return None
    told = not _HEARSAY.isdisjoint(window)  # "I've been told by Youssef that X is faster than Y"
    mine = not _SPEAKERS_WORDS.isdisjoint(window) or not {("for", "me"), ("to", "me")}.isdisjoint(pairwise(window))
    mine = mine and not told
    liked = "more" in window and not _LIKING.isdisjoint(window)  # not "I spend more time on X than ..."
    if not mine or not (liked or not BETTER.isdisjoint(window)):  # not "slower than", "harder for me than"
        return None
    named = [m for m in mentions if start <= m.start and m.end <= than and m.entity_type in _CHOSEN]
    return named[-1] if named else None


def _kind_noun(lows: list[str], k: int) -> bool:
    """Whether the word at ``k`` is a noun naming the kind of thing chosen ("grill")."""
    word = lows[k] if k < len(lows) else ""
    return common_noun(word) and word not in PREPOSITIONS and not is_filler(word)


def _over_another(lows: list[str], by_start: dict[int, Mention], at: int) -> bool:
    """Whether a name at ``at`` is set "over" another thing right after it."""
    named = by_start.get(at)
    if named is None or named.entity_type not in _CHOSEN:
        return False
    end = named.end
    if lows[end : end + 1] != ["over"] and lows[end : end + 1] != [] and lows[end].isalpha():
        end += 1  # "a Zebra scanner over ...": the name's noun
    if lows[end : end + 1] != ["over"]:
        return False
    return end + 1 < len(lows) and lows[end + 1] not in _NOT_THINGS


def _taker(speaker: Party, lows: list[str], mentions: list[Mention], i: int) -> Party | None:
    """Who "would take" at ``i``: the speaker ("I'd take", "we'll always take", "I would
    take"), a person named right before ("Thabo would take"); not "she would take"."""
    j = i - 1
    while j > 0 and lows[j] in _ALWAYS:
        j -= 1  # "I'll always take"
    if j < 0:
        return None
    if lows[j] in _WOULD:
        return speaker
    if lows[j] not in ("would", "will", "'d") or j == 0:
        return None
    if lows[j - 1] in _SPEAKERS:
        return speaker
    named = next((m for m in mentions if m.end == j and m.entity_type == "person"), None)
    return None if named is None else Party.of(named)


_ALWAYS: Final = word_set("always usually still definitely honestly")


def _subject_we(lows: list[str], i: int) -> bool:
    """Whether "went" is the speaker's: "we went", "I finally went", "Eventually went"."""
    if i > 0 and lows[i - 1] in _SPEAKERS:
        return True
    adverb = i > 0 and lows[i - 1] in ("finally", "eventually", "ultimately")
    return adverb and (i == 1 or lows[i - 2] in _SPEAKERS)
