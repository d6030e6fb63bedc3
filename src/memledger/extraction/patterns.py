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
from memledger.extraction.protocol import SourceType


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``, as a set."""
    return frozenset(text.split())


_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
# A line break ends a sentence with the whitespace around it; the match starts only
# where a whitespace run does ("(?<!\s)"), so a long run without a line break is
# scanned once, not once per character (quadratic, for a hostile turn).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[*•-])|(?<!\s)\s*\n\s*|;\s+")
_TOKEN = re.compile(r"(?:St|Mt|Ft)\.(?= [A-Z])|[^\W_](?:[\w'.+#&/-]*[\w+#])?|->|=>|→|\S")
_ABBREVIATIONS: Final = word_set("mr mrs ms dr prof st vs etc inc ltd jr sr no e.g i.e")
_CONTRACTED: Final = word_set("it he she that what there here who let where how")
_QUESTION_START: Final = word_set(
    "how what why which who whom whose where when should shall can could would will do "
    "does did is are was were have has any anyone anybody is there isn't aren't doesn't "
    "don't won't wouldn't shouldn't can't couldn't"
)
_REQUEST_LEADS: Final = ("remember that", "keep in mind that", "note that", "make a note that")
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
    first = next((low for low in lows if low[0].isalnum()), "")
    return lowered.rstrip().endswith("?") or first in _QUESTION_START


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

HONORIFICS: Final = word_set("mr mrs ms miss dr prof sir")
POSSESSIVES: Final = word_set("my our")
ROLE_ADJECTIVES: Final = word_set(
    "old new former ex current best dear little older younger big twin main favourite "
    "favorite lovely amazing great awesome wonderful long-time longtime"
)
PROJECT_NOUNS: Final = word_set(
    "deploy deployment integration redesign upgrade outage incident "
    "project projects repo repository codebase service app application frontend backend "
    "api sdk platform program programme initiative launch roadmap timeline migration "
    "dashboard release firmware pipeline website site module library plugin package "
    "rewrite monorepo microservice bot cli milestone epic workstream beta mvp prototype "
    "pilot"
)
PROJECT_CUES: Final = word_set("project codename repo repository program programme initiative")
WORKED: Final = word_set("work works working worked lead leads leading")
LOOKING: Final = word_set("look looking looked glance good great bad better best aim")
CAME: Final = word_set("came comes coming hired poached recruited")
PROJECT_VERBS: Final = word_set("depends relies ships launched launches")
CALLED_PROJECT: Final = word_set(
    "project app bot cli tool library service repo package script game site website plugin product extension framework"
)
CALLED_ORG: Final = word_set(
    "startup company firm agency business studio nonprofit bank employer client customer vendor shop lab"
)
NOT_PROJECT_NAMES: Final = word_set(
    "management manager managers plan plans planning timeline deadline scope lead leads work "
    "status update updates board budget meeting meetings kickoff files folder structure root "
    "settings proposal goals requirements docs documentation team teams name names page pages "
    "overview description template templates directory dir manager's roadmap ideas idea owner "
    "members member level file based related specific"
)
TEAM_NOUNS: Final = word_set("team squad guild tribe department crew")
TEAM_SKIP: Final = word_set(
    "whole entire same other small big large new old full rest my our your their his her "
    "the a an this that every each one two three"
)
TEAM_OWNERS: Final = word_set("the our my their his her 's on")
HYPHEN_SUFFIXES: Final = word_set(
    "related based powered native backed compatible specific like style friendly heavy only first centric"
)
PERSON_NEXT: Final = word_set(
    "said says told tells asked asks thinks thought suggested suggests mentioned reviewed "
    "wrote owns maintains manages leads reports introduced joined left insists swears "
    "wants prefers recommended recommends approved agreed emailed texted pinged replied "
    "explained noticed handles signs"
)
PERSON_PREV: Final = word_set(
    "met meet meeting told tell asked ask emailed email pinged ping called texted text "
    "thanks thank introduced hired cc messaged invited visited visiting hey hi hello dear"
)
TO_PERSON: Final = word_set("me reports report reporting talked spoke talking speaking emailed wrote sent married")
COMMON_GIVEN: Final = word_set("mark bill frank jack dev grace will may june max ray can sunny chase drew rose hope")
LOWER_PERSON_NEXT: Final = PERSON_NEXT | word_set("uses prefers works from is said")
ORG_PREV: Final = word_set("at joined join joining")
WORK_FOR: Final = word_set("work works working worked")
CLIENT_NOUNS: Final = word_set("client customer vendor investor competitor")
TOOL_PREV: Final = word_set("use uses using adopt adopted adopting install installed prefer prefers")
SWITCH_VERBS: Final = word_set("switched switching switch moved moving move migrated migrating migrate")
BUILT: Final = word_set("written built coded code developed made trained implemented write writing")
INITIAL_OK: Final = word_set(
    "is was has had does did can could will would should and or , 's uses runs keeps "
    "supports handles seems works feels makes lets gives just still also now vs + / - -> "
    ": for with on"
)
LIST_JOINERS: Final = word_set(", and or & + /")
