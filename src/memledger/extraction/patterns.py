"""Sentences and tokens for the heuristic extractor, and the shapes of what it finds. Pure.

A turn is cut into sentences (fenced code dropped, abbreviations such as
"Mrs." kept whole) and each sentence into tokens; ``mentions`` then finds the
named entities among them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memledger.events.catalogue import EntityType
from memledger.extraction import lexicon
from memledger.extraction.protocol import SourceType


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``, as a set."""
    return frozenset(text.split())


def span_text(words: list[str]) -> str:
    """A name's words as written: spaced, with a possessive kept on its word
    ("St Brendan's Infirmary")."""
    return " ".join(words).replace(" 's ", "'s ").replace("s ' ", "s' ")  # "Residents' Association"


_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
# A line break ends a sentence with the whitespace around it; the match starts only
# where a whitespace run does ("(?<!\s)"), so a long run without a line break is
# scanned once, not once per character (quadratic, for a hostile turn).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[*•-])|(?<!\s)\s*\n\s*|;\s+")
_TOKEN = re.compile(r"(?:St|Mt|Ft)\.(?= [A-Z])|\b[wW]/|[^\W_](?:[\w'.+#&/-]*[\w+#])?|->|=>|→|\S")
# The content word lists (lexicon/cue_words.txt); the small closed-class sets left in
# code (wh-words and auxiliaries, pronouns, possessives, list joiners) are grammar.
_CUES: Final = lexicon.sections("cue_words.txt")
_ABBREVIATIONS: Final = frozenset(_CUES["ABBREVIATIONS"])
_CONTRACTED: Final = word_set("it he she that what there here who let where how")
_QUESTION_START: Final = word_set(
    "how what why which who whom whose where when should shall can could would will do "
    "does did is are was were have has any anyone anybody is there isn't aren't doesn't "
    "don't won't wouldn't shouldn't can't couldn't"
)
# A wh-word followed by its clause's subject opens a subordinate clause, not a question.
_WH_LEADS: Final = word_set("when where what how whenever wherever")
_DECLARATIVE_SUBJECTS: Final = word_set("i we he she they i'm we're i've we've")
_REQUEST_LEADS: Final = tuple(_CUES["REQUEST_LEADS"])
HEDGES: Final = re.compile(
    r"\b(?:i think|i guess|i believe|i suppose|i assume|maybe|perhaps|probably|possibly|"
    r"might|not sure|unsure|could be|likely|iirc|i reckon|seems like)\b"
)


@dataclass(slots=True, eq=False)  # compared by identity, so word sets can test any item
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
    unsettled: tuple[str, ...] = ()  # name-shaped spans no rule could type


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
        saint = bool(tokens) and tokens[-1] in ("St.", "Mt.", "Ft.")
        if len(token) > 2 and token[-2:] == "'s" and token[:-2].lower() not in _CONTRACTED and not saint:
            tokens.extend((token[:-2], "'s"))
        else:
            tokens.append(token)
    return tokens


def is_question(lowered: str, lows: list[str]) -> bool:
    if any(lead in lowered for lead in _REQUEST_LEADS):
        return False
    words = [low for low in lows if low[0].isalnum()]
    first, second = [*words, "", ""][:2]
    if lowered.rstrip().endswith("?"):
        return True
    subordinate = first in _WH_LEADS and second in _DECLARATIVE_SUBJECTS  # "When I travel I prefer ..."
    return first in _QUESTION_START and not subordinate


def entity_type_of(party: Party) -> EntityType | None:
    kind = party.kind
    return None if kind == "user" else kind


@dataclass(frozen=True, slots=True)
class Party:
    """A relationship endpoint: the speaker ("user") or a named entity."""

    name: str
    kind: SourceType

    @classmethod
    def of(cls, mention: Mention) -> Party:
        return cls(mention.name, mention.entity_type)


@dataclass(frozen=True, slots=True)
class Edge:
    """A relationship (or, ``retracted``, its withdrawal) read from a sentence."""

    source: Party
    relation: str
    target: Party
    confidence: float
    context: str | None = None
    retracted: bool = False


# --- cue words for the mention finder ---------------------------------------------
# (POSSESSIVES, TEAM_OWNERS and LIST_JOINERS are closed-class grammar, kept in code.)

HONORIFICS: Final = frozenset(_CUES["HONORIFICS"])
POSSESSIVES: Final = word_set("my our")
BULLETS: Final = frozenset(("-", "*", "\u2022"))
VERB_PARTICLES: Final = word_set("out up off over back down away")
"""Particles that end a phrasal verb ("go out", "set up")."""
"""Marks that open a note's line."""
ROLE_ADJECTIVES: Final = frozenset(_CUES["ROLE_ADJECTIVES"])
UNDERTAKINGS: Final = frozenset(_CUES["UNDERTAKINGS"])
PROJECT_NOUNS: Final = frozenset(_CUES["PROJECT_NOUNS"]) | UNDERTAKINGS
PROJECT_CUES: Final = frozenset(_CUES["PROJECT_CUES"])
WORKED: Final = frozenset(_CUES["WORKED"])
LOOKING: Final = frozenset(_CUES["LOOKING"])
CAME: Final = frozenset(_CUES["CAME"])
PROJECT_VERBS: Final = frozenset(_CUES["PROJECT_VERBS"])
CALLED_PROJECT: Final = frozenset(_CUES["CALLED_PROJECT"])
CALLED_ORG: Final = frozenset(_CUES["CALLED_ORG"])
NOT_PROJECT_NAMES: Final = frozenset(_CUES["NOT_PROJECT_NAMES"])
TEAM_NOUNS: Final = frozenset(_CUES["TEAM_NOUNS"])
# Words that make a role, a setting or a body one held before, not now ("my former manager").
FORMER_WORDS: Final = word_set("former ex previous retired old")
# The confidence of a name the lists know ("Proxmox", "Stripe"); a guessed one has less.
KNOWN_CONFIDENCE: Final = 0.9
# The sites of an organization, which a place's name may qualify ("the Lisbon office of X").
SITE_NOUNS: Final = word_set("office offices branch site plant campus store depot warehouse hub studio kitchen")
PEOPLE_NOUNS: Final = frozenset(_CUES["PEOPLE_NOUNS"])
ITEM_STATUS_UNSETTLED: Final = frozenset(_CUES["ITEM_STATUS_UNSETTLED"])
NAME_PARTICLES: Final = frozenset(_CUES["NAME_PARTICLES"])
PRODUCT_NOUNS: Final = frozenset(_CUES["PRODUCT_NOUNS"])
METHOD_NOUNS: Final = frozenset(_CUES["METHOD_NOUNS"])
PRODUCT_KINDS: Final = frozenset(_CUES["PRODUCT_KINDS"])
METHOD_LEADS: Final = frozenset(_CUES["METHOD_LEADS"])
UNSETTLED_NOTES: Final = frozenset(_CUES["UNSETTLED_NOTES"])
PROBLEM_LABELS: Final = frozenset(_CUES["PROBLEM_LABELS"])
_TICKET_OPENERS: Final = frozenset(_CUES["TICKET_OPENERS"])
TICKET_LABELS: Final = PROBLEM_LABELS | _TICKET_OPENERS
PLANNED_NOTES: Final = frozenset(_CUES["PLANNED_NOTES"])
TEAM_SKIP: Final = frozenset(_CUES["TEAM_SKIP"])
TEAM_OWNERS: Final = word_set("the our my their his her 's on")
HYPHEN_SUFFIXES: Final = frozenset(_CUES["HYPHEN_SUFFIXES"])
PERSON_NEXT: Final = frozenset(_CUES["PERSON_NEXT"])
PERSON_PREV: Final = frozenset(_CUES["PERSON_PREV"])
TO_PERSON: Final = frozenset(_CUES["TO_PERSON"])
COMMON_GIVEN: Final = frozenset(_CUES["COMMON_GIVEN"])
LOWER_PERSON_NEXT: Final = PERSON_NEXT | frozenset(_CUES["LOWER_PERSON_NEXT"])
ORG_PREV: Final = frozenset(_CUES["ORG_PREV"])
WORK_FOR: Final = frozenset(_CUES["WORK_FOR"])
CLIENT_NOUNS: Final = frozenset(_CUES["CLIENT_NOUNS"])
TOOL_PREV: Final = frozenset(_CUES["TOOL_PREV"])
APP_NOUNS: Final = word_set("app apps")
"""Nouns after a company's name that make it the product it offers ("the FlixBus app")."""
SWITCH_VERBS: Final = frozenset(_CUES["SWITCH_VERBS"])
BUILT: Final = frozenset(_CUES["BUILT"])
INITIAL_OK: Final = frozenset(_CUES["INITIAL_OK"])
LIST_JOINERS: Final = word_set(", and or & + / vs vs. versus over than >")
NAME_JOINS: Final = word_set(", and & + n")  # what joins names listed together ("me, Baren + Sarosa")


def named_team(name: str) -> bool:
    """Whether a name ends in a team's noun ("the payments team", "Platform Guild")."""
    return name.lower().rsplit(maxsplit=1)[-1] in TEAM_NOUNS
