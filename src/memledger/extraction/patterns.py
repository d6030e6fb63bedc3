"""Sentences, tokens and named mentions for the heuristic extractor. Pure.

A turn is cut into sentences, each sentence into tokens, and the tokens are
searched for explicitly named entities: first multi-word team names ("the
backend team"), then the gazetteer (longest match first), then capitalised or
oddly shaped words classified by the words around them (a role word before a
name, "project X", "X Labs", "at X", CamelCase, "X said"). A word that no cue
explains is left out: precision first, as DESIGN.md asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memledger.events.catalogue import EntityType
from memledger.extraction import gazetteer as gz

_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[*•-])|\s*\n+\s*|;\s+")
_TOKEN = re.compile(r"[^\W_](?:[\w'.+#&/-]*[\w+#])?|->|=>|→|\S")
_ABBREVIATIONS: Final = frozenset("mr mrs ms dr prof st vs etc inc ltd jr sr no e.g i.e".split())
_CONTRACTED: Final = frozenset("it he she that what there here who let where how".split())
_QUESTION_START: Final = frozenset(
    "how what why which who whom whose where when should shall can could would will do does "
    "did is are was were have has any anyone anybody is there isn't aren't doesn't don't "
    "won't wouldn't shouldn't can't couldn't".split()
)
_REQUEST_LEADS: Final = ("remember that", "keep in mind that", "note that", "make a note that")
_HEDGES: Final = re.compile(
    r"\b(?:i think|i guess|i believe|i suppose|i assume|maybe|perhaps|probably|possibly|"
    r"might|not sure|unsure|could be|likely|iirc|i reckon|seems like)\b"
)

HONORIFICS: Final = frozenset("mr mrs ms miss dr prof sir".split())
POSSESSIVES: Final = frozenset("my our".split())
_ROLE_ADJECTIVES: Final = frozenset(
    "old new former ex current best dear little older younger big twin main favourite "
    "favorite lovely amazing great awesome wonderful long-time longtime".split()
)
PROJECT_NOUNS: Final = frozenset(
    "project projects repo repository codebase service app application frontend backend api "
    "sdk platform program programme initiative launch roadmap timeline migration dashboard "
    "release firmware pipeline website site module library plugin package rewrite monorepo "
    "microservice bot cli milestone epic workstream beta mvp prototype pilot".split()
)
_PROJECT_CUES: Final = frozenset(
    "project codename repo repository program programme initiative".split()
)
_PROJECT_VERBS: Final = frozenset("depends relies ships launched launches".split())
_CALLED_PROJECT: Final = frozenset(
    "project app bot cli tool library service repo package script game site website "
    "plugin product extension framework".split()
)
_CALLED_ORG: Final = frozenset(
    "startup company firm agency business studio nonprofit bank employer client customer "
    "vendor shop lab".split()
)
_TEAM_NOUNS: Final = frozenset("team squad guild tribe department crew".split())
_TEAM_SKIP: Final = frozenset(
    "whole entire same other small big large new old full rest my our your their his her the "
    "a an this that every each one two three".split()
)
_TEAM_OWNERS: Final = frozenset("the our my their his her 's on".split())
_HYPHEN_SUFFIXES: Final = frozenset(
    "related based powered native backed compatible specific like style friendly heavy "
    "only first centric".split()
)
PERSON_NEXT: Final = frozenset(
    "said says told tells asked asks thinks thought suggested suggests mentioned reviewed "
    "wrote owns maintains manages leads reports introduced joined left insists swears wants "
    "prefers recommended recommends approved agreed emailed texted pinged replied explained "
    "noticed handles signs".split()
)
_PERSON_PREV: Final = frozenset(
    "met meet meeting told tell asked ask emailed email pinged ping called texted text thanks "
    "thank introduced hired cc messaged invited visited visiting hey hi hello dear".split()
)
_TO_PERSON: Final = frozenset(
    "me reports report reporting talked spoke talking speaking emailed wrote sent married".split()
)
_COMMON_GIVEN: Final = frozenset(
    "mark bill frank jack dev grace will may june max sam ray lee ren rin lin li ming yang jun "
    "hana can ali ana eli sara sunny chase drew".split()
)
_ORG_PREV: Final = frozenset("at joined join joining".split())
_WORK_FOR: Final = frozenset("work works working worked".split())
_CLIENT_NOUNS: Final = frozenset("client customer vendor investor competitor".split())
TOOL_PREV: Final = frozenset(
    "use uses using adopt adopted adopting install installed prefer prefers".split()
)
_SWITCH_VERBS: Final = frozenset(
    "switched switching switch moved moving move migrated migrating migrate".split()
)
_BUILT: Final = frozenset(
    "written built coded code developed made trained implemented write writing".split()
)
_INITIAL_OK: Final = frozenset(
    "is was has had does did can could will would should and or , 's uses runs keeps "
    "supports handles seems works feels makes lets gives just still also now vs + / - -> : "
    "for with on".split()
)
_LIST_JOINERS: Final = frozenset(", and or & + /".split())


@dataclass(slots=True)
class Mention:
    """One named entity found in a sentence, over tokens ``start`` to ``end``."""

    name: str
    entity_type: EntityType
    confidence: float
    start: int
    end: int
    role: str | None = None
    mine: bool = False  # the role is the speaker's: "my manager", "our CTO"
    kind: str | None = None  # a tool's kind, from the gazetteer


@dataclass(slots=True)
class Sentence:
    """A sentence's text and tokens, with its mentions in token order."""

    text: str
    words: list[str]
    lows: list[str]
    mentions: list[Mention]
    question: bool
    hedged: bool


def split_sentences(text: str) -> list[str]:
    """Prose sentences of ``text``; fenced code is dropped (it is code, not a statement)."""
    prose = _CODE_FENCE.sub("\n", text.replace("\u2019", "'"))
    parts: list[str] = []
    for part in _SENTENCE_END.split(prose):
        piece = part.strip()
        if not piece:
            continue
        if parts and _ends_with_abbreviation(parts[-1]):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts


def _ends_with_abbreviation(text: str) -> bool:
    last = text.rsplit(" ", 1)[-1].lower().rstrip(".")
    return text.endswith(".") and last in _ABBREVIATIONS


def tokenize(sentence: str) -> list[str]:
    """Words and punctuation; a possessive "'s" becomes a token of its own."""
    tokens: list[str] = []
    for token in _TOKEN.findall(sentence):
        if len(token) > 2 and token[-2:] == "'s" and token[:-2].lower() not in _CONTRACTED:
            tokens.extend((token[:-2], "'s"))
        else:
            tokens.append(token)
    return tokens


def analyse(text: str) -> Sentence:
    """Tokens, mentions and mood (question, hedge) of one sentence."""
    words = tokenize(text)
    lows = [word.lower() for word in words]
    lowered = text.lower()
    return Sentence(
        text=text,
        words=words,
        lows=lows,
        mentions=find_mentions(words, lows),
        question=_is_question(lowered, lows),
        hedged=_HEDGES.search(lowered) is not None,
    )


def _is_question(lowered: str, lows: list[str]) -> bool:
    if any(lead in lowered for lead in _REQUEST_LEADS):
        return False
    first = next((low for low in lows if low[0].isalnum()), "")
    return lowered.rstrip().endswith("?") or first in _QUESTION_START


class _Finder:
    """Finds the mentions of one sentence; one instance per sentence."""

    def __init__(self, words: list[str], lows: list[str]) -> None:
        self.words = words
        self.lows = lows
        self.taken = [False] * len(words)
        self.found: list[Mention] = []
        self.initial = {i for i, low in enumerate(lows) if _is_initial(lows, i)}

    def add(self, mention: Mention) -> None:
        for i in range(mention.start, mention.end):
            self.taken[i] = True
        self.found.append(mention)

    def prev(self, i: int, back: int = 1) -> str:
        return self.lows[i - back] if i - back >= 0 else ""

    def next(self, i: int, ahead: int = 0) -> str:
        return self.lows[i + ahead] if i + ahead < len(self.lows) else ""


def _is_initial(lows: list[str], i: int) -> bool:
    """Whether token ``i`` opens the sentence (after bullets, quotes, a label's colon)."""
    j = i - 1
    while j >= 0 and not lows[j][0].isalnum() and lows[j] not in (":",):
        j -= 1
    return j < 0 or lows[j] == ":"


def find_mentions(words: list[str], lows: list[str]) -> list[Mention]:
    """Every explicitly named entity of a tokenized sentence, in token order."""
    finder = _Finder(words, lows)
    _find_teams(finder)
    _find_known(finder)
    unknown = _find_capitalised(finder)
    _find_lowercase_projects(finder)
    _propagate_lists(finder, unknown)
    finder.found.sort(key=lambda mention: mention.start)
    return finder.found


def _find_teams(f: _Finder) -> None:
    for i, low in enumerate(f.lows):
        if low not in _TEAM_NOUNS or i == 0:
            continue
        j = i
        while j > 0 and i - j < 3 and f.lows[j - 1].isalpha() and f.lows[j - 1] not in _TEAM_SKIP:
            j -= 1
        if j < i and f.prev(j) in _TEAM_OWNERS and not any(f.taken[j : i + 1]):
            f.add(Mention(" ".join(f.words[j : i + 1]), "organization", 0.8, j, i + 1))


def _find_known(f: _Finder) -> None:
    i = 0
    while i < len(f.lows):
        match = _longest_known(f, i)
        if match is None:
            i += 1
            continue
        length, mention = match
        f.add(mention)
        i += length


def _longest_known(f: _Finder, i: int) -> tuple[int, Mention] | None:
    low = f.lows[i]
    if f.taken[i] or not low[0].isalnum():
        return None
    for length in range(min(gz.LONGEST_NAME_WORDS, len(f.lows) - i), 0, -1):
        phrase = " ".join(f.lows[i : i + length]) if length > 1 else low
        if not _is_known(phrase) or any(f.taken[i : i + length]):
            continue
        surface = " ".join(f.words[i : i + length])
        if phrase in gz.NEEDS_CAPITAL and not _capital_ok(f, i, length, surface):
            continue
        return length, _known_mention(f, phrase, surface, i, i + length)
    head, _, tail = low.partition("-")
    if tail in _HYPHEN_SUFFIXES and _is_known(head):
        return 1, _known_mention(f, head, f.words[i].split("-")[0], i, i + 1)
    return None


def _is_known(phrase: str) -> bool:
    return phrase in gz.TOOL_KIND or phrase in gz.ORGANIZATIONS or phrase in gz.CONCEPTS


def _capital_ok(f: _Finder, i: int, length: int, surface: str) -> bool:
    if surface.islower():
        return False
    return i not in f.initial or f.next(i, length) in _INITIAL_OK


def _known_mention(f: _Finder, phrase: str, surface: str, start: int, end: int) -> Mention:
    if phrase in gz.GIVEN_NAMES and _person_cue(f, start, end):
        return Mention(surface, "person", 0.8, start, end)
    kind = gz.TOOL_KIND.get(phrase)
    if phrase in gz.ORGANIZATIONS and (kind is None or _org_cue(f, start, end)):
        return Mention(surface, "organization", 0.9, start, end)
    if phrase in gz.PRIMARILY_ORGANIZATIONS:
        return Mention(surface, "organization", 0.9, start, end)
    if kind is not None:
        return Mention(surface, "tool", 0.9, start, end, kind=kind)
    return Mention(surface, "concept", 0.85, start, end)


def _person_cue(f: _Finder, start: int, end: int) -> bool:
    before = f.prev(start)
    return (
        before in _PERSON_PREV
        or before in gz.ROLES
        or before in HONORIFICS
        or f.next(end) in PERSON_NEXT
        or (f.next(end) == "and" and f.next(end, 1) == "i")
        or f.next(end) in ("she", "he", "she's", "he's")
        or (before == "with" and f.prev(start, 2) in ("lunch", "dinner", "coffee", "drinks"))
    )


def _org_cue(f: _Finder, start: int, end: int) -> bool:
    before = f.prev(start)
    return (
        before in _ORG_PREV
        or (before == "for" and f.prev(start, 2) in _WORK_FOR)
        or (before == "by" and f.prev(start, 2) == "acquired")
        or (before == "from" and start >= 2 and f.taken[start - 2])
        or (f.next(end) == "'s" and f.next(end, 1) in ("ceo", "cto", "office", "engineers"))
    )


def _find_capitalised(f: _Finder) -> list[tuple[int, int]]:
    """Classify capitalised or oddly shaped words; return the spans left unexplained."""
    unknown: list[tuple[int, int]] = []
    i = 0
    while i < len(f.words):
        if f.taken[i] or not _name_like(f.words[i]) or f.lows[i] in gz.NOT_NAMES:
            i += 1
            continue
        end = _chunk_end(f, i)
        mention = _classify(f, i, end)
        if mention is not None:
            f.add(mention)
        elif f.lows[i] not in gz.PLACES:
            unknown.append((i, end))
        i = end
    return unknown


def _name_like(word: str) -> bool:
    first = word[0]
    if not first.isalpha():
        return False
    return first.isupper() or _odd_shape(word)


def _odd_shape(word: str) -> bool:
    """CamelCase (nRF52, macOS), versioned (GPT-4) or dotted (fly.io)."""
    inner_upper = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
    has_digit = any(c.isdigit() for c in word) and word[0].isupper()
    dotted = "." in word.strip(".") and word.rsplit(".", 1)[-1].isalpha()
    return inner_upper or has_digit or dotted


def _chunk_end(f: _Finder, i: int) -> int:
    end = i + 1
    while end < len(f.words) and end - i < 4 and not f.taken[end]:
        word, low = f.words[end], f.lows[end]
        if not word[0].isupper():
            break
        if low in gz.NOT_NAMES and not _closing_noun(low):
            break
        end += 1
    return end


def _closing_noun(low: str) -> bool:
    return low in gz.ORG_SUFFIXES or low in PROJECT_NOUNS


def _classify(f: _Finder, start: int, end: int) -> Mention | None:
    name = " ".join(f.words[start:end])
    last = f.lows[end - 1]
    if end - start > 1 and last in gz.ORG_SUFFIXES:
        return Mention(name, "organization", 0.85, start, end)
    if end - start > 1 and last in PROJECT_NOUNS:
        return Mention(name, "project", 0.8, start, end)
    for rule in (_as_person_by_role, _as_project, _as_org, _as_person, _as_tool):
        mention = rule(f, name, start, end)
        if mention is not None:
            return mention
    return None


def _as_person_by_role(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    role, mine = _role_before(f, start)
    if role is None:
        role, mine = _role_after(f, end)
    if role is None:
        return None
    return Mention(name, "person", 0.9, start, end, role=role, mine=mine)


def role_words(lows: list[str], j: int) -> tuple[str | None, int]:
    """The role ending at token ``j`` ("manager", "tech lead") and where it starts."""
    if j >= 1 and f"{lows[j - 1]} {lows[j]}" in gz.ROLES:
        return f"{lows[j - 1]} {lows[j]}", j - 1
    if j >= 0 and lows[j] in gz.ROLES:
        return lows[j], j
    return None, j


def _owner_before(lows: list[str], j: int) -> bool:
    while j >= 0 and lows[j] in _ROLE_ADJECTIVES:
        j -= 1
    return j >= 0 and lows[j] in POSSESSIVES


def _role_before(f: _Finder, start: int) -> tuple[str | None, bool]:
    j = start - 1
    while j >= 0 and (f.lows[j] in HONORIFICS or f.lows[j] in (",", ".")):
        j -= 1
    role, role_start = role_words(f.lows, j)
    if role is None:
        return None, False
    return role, _owner_before(f.lows, role_start - 1)


def _role_after(f: _Finder, end: int) -> tuple[str | None, bool]:
    lows = f.lows
    j = end
    if j < len(lows) and lows[j] in (",", "is", "are", "was", "-", "("):
        j += 1
    if j >= len(lows) or lows[j] not in POSSESSIVES:
        return None, False
    j += 1
    while j < len(lows) and lows[j] in _ROLE_ADJECTIVES:
        j += 1
    for width in (2, 1):
        phrase = " ".join(lows[j : j + width])
        if phrase in gz.ROLES or phrase.rstrip("s") in gz.ROLES:
            return phrase.rstrip("s") if phrase not in gz.ROLES else phrase, True
    return None, False


def _as_project(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    before, after = f.prev(start), f.next(end)
    subject_of = after in _PROJECT_VERBS or (after == "is" and f.next(end, 1) in ("part", "a"))
    cued = before in _PROJECT_CUES or after in PROJECT_NOUNS or _called(f, start, _CALLED_PROJECT)
    if cued or (subject_of and f.next(end, 1) != "a") or _part_of_dependency(f, after, end):
        return Mention(name, "project", 0.8, start, end)
    return None


def _part_of_dependency(f: _Finder, after: str, end: int) -> bool:
    return after == "is" and f.next(end, 1) == "a" and f.next(end, 2) == "dependency"


def _called(f: _Finder, start: int, nouns: frozenset[str]) -> bool:
    if f.prev(start) in ("called", "named"):
        return any(f.prev(start, back) in nouns for back in range(2, 7))
    return f.prev(start) == "," and f.prev(start, 2) in nouns


def _as_org(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    low = name.lower()
    if low in gz.PLACES or f.lows[start] in gz.GIVEN_NAMES:
        return None
    client = f.prev(start) == "is" and f.prev(start, 2) in _CLIENT_NOUNS
    if _org_cue(f, start, end) or _called(f, start, _CALLED_ORG) or client:
        return Mention(name, "organization", 0.8, start, end)
    return None


def _as_person(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    first = f.lows[start]
    if first in gz.GIVEN_NAMES and (first not in _COMMON_GIVEN or start not in f.initial):
        return Mention(name, "person", 0.85, start, end)
    if _person_cue(f, start, end) or (f.prev(start) == "to" and f.prev(start, 2) in _TO_PERSON):
        return Mention(name, "person", 0.75, start, end)
    return None


def _as_tool(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    if name.lower() in gz.PLACES:
        return None
    if _odd_shape(f.words[start]) and end - start == 1:
        return Mention(name, "tool", 0.75, start, end)
    before, before2 = f.prev(start), f.prev(start, 2)
    cued = (
        before in TOOL_PREV
        or (before == "to" and before2 in _SWITCH_VERBS)
        or (before in ("in", "with") and before2 in _BUILT)
    )
    if cued and start not in f.initial:
        return Mention(name, "tool", 0.7, start, end)
    return None


def _find_lowercase_projects(f: _Finder) -> None:
    for i, low in enumerate(f.lows):
        if f.taken[i] or not low[0].isalpha() or low in gz.NOT_NAMES:
            continue
        called = f.prev(i) in ("called", "named") and _called(f, i, _CALLED_PROJECT)
        labelled = f.prev(i) == ":" and f.prev(i, 2) in ("repo", "repository", "project")
        if called or labelled:
            f.add(Mention(f.words[i], "project", 0.8, i, i + 1))


def _propagate_lists(f: _Finder, unknown: list[tuple[int, int]]) -> None:
    """An unexplained name listed beside a typed one ("Wei and Fatima") takes its type."""
    by_end = {m.end: m for m in f.found}
    by_start = {m.start: m for m in f.found}
    for start, end in unknown:
        if any(f.taken[start:end]) or start in f.initial:
            continue
        left = by_end.get(start - 1) if f.prev(start) in _LIST_JOINERS else None
        right = by_start.get(end + 1) if f.next(end) in _LIST_JOINERS else None
        neighbour = left or right
        if neighbour is not None and neighbour.entity_type != "concept":
            name = " ".join(f.words[start:end])
            f.add(Mention(name, neighbour.entity_type, 0.7, start, end))
