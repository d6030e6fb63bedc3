"""Trigger phrases and clause segmentation for the heuristic extractor. Pure.

A trigger is a phrase ("use", "switched", "depends on", "introduced me to") and
a *kind* saying what the named objects after it become; the relation depends on
the object's type as well (``RELATIONS``). The phrases and the content word lists
live in ``lexicon/trigger_phrases.txt`` and ``lexicon/clause_words.txt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from memledger.extraction import lexicon
from memledger.extraction.patterns import Mention, Sentence, word_set

Item = str | Mention

# The phrases of each kind, in file order (lexicon/trigger_phrases.txt).
_PHRASES: Final[dict[str, tuple[str, ...]]] = {
    kind: tuple(phrases) for kind, phrases in lexicon.sections("trigger_phrases.txt").items()
}
# The content word lists (lexicon/clause_words.txt); the small closed-class sets below
# (pronouns, determiners, prepositions, negators, conjunctions, BE forms, punctuation)
# stay in code as grammar.
_WORDS: Final = lexicon.sections("clause_words.txt")
PAST_FORMS: Final = frozenset(lexicon.sections("frame_words.txt")["PAST_FORMS"])
"""Simple past forms that do not end in -ed ("was", "wrote")."""
INFORMAL: Final[dict[str, str]] = dict(entry.split(" ", 1) for entry in _WORDS["INFORMAL"])
"""Informal spellings and the word each is read as ("w/" -> "with", "n" -> "and")."""

# What an object of each type becomes, per trigger kind.
RELATIONS: Final[dict[str, dict[str, str]]] = {
    "USE": {"tool": "USES", "concept": "USES"},
    "PLAY": {"tool": "USES"},
    "BE": {"tool": "USES"},
    "PREFER": {"tool": "PREFERS", "concept": "PREFERS", "organization": "PREFERS"},
    "LIKE": {"tool": "PREFERS", "concept": "PREFERS"},
    "DECIDE": {"tool": "DECIDED", "concept": "DECIDED", "organization": "DECIDED"},
    "KEEP": {"tool": "USES", "concept": "USES"},
    "WORK_ON": {"project": "WORKS_ON", "organization": "WORKS_ON", "person": "WORKS_WITH"},
    "BUILD": {"project": "WORKS_ON"},
    "WORK_WITH": {"person": "WORKS_WITH"},
    "KNOW": {"person": "KNOWS"},
    "INTRO": {"person": "KNOWS"},
    "DEPEND": {"tool": "DEPENDS_ON", "project": "DEPENDS_ON", "organization": "DEPENDS_ON"},
    "DEPENDED": {"tool": "DEPENDS_ON", "project": "DEPENDS_ON", "organization": "DEPENDS_ON"},
    "PART": {"organization": "PART_OF", "project": "PART_OF"},
    "AT": {"organization": "PART_OF"},
    "ON": {"project": "WORKS_ON", "organization": "PART_OF", "tool": "USES"},
}

# When a trigger with no objects runs into another, the stronger kind wins
# ("decided to use X" is a decision, "prefer to use X" a preference).
STRENGTH: Final[dict[str, int]] = {
    "RETRACT": 6,
    "SWITCH": 6,
    "DECIDE": 5,
    "PREFER": 4,
    "LIKE": 4,
    "KEEP": 3,
    "BE": 0,
}

BOUNDARIES: Final = word_set(
    "but because although though while whereas so since unless if whether when which who "
    "where except until however cause yet that whom whose after before once . ; ! ? ( )"
) | {'"', "\u2014", "\u2013"}
CONDITIONAL_LEADS: Final = word_set("if whether unless")
RELATIVE_LEADS: Final = word_set("which who that whom")
EMBEDDED_LEADS: Final = RELATIVE_LEADS | {"where"}  # ", where I work," interrupts a clause too
SUBJECT_PRONOUNS: Final = word_set("i i'm im i've ive i'd i'll we we're we've we'd we'll myself ourselves")
POSSESSIVE_USER: Final = word_set("our my")
APPOSITION_LEADS: Final = word_set("the a an our my their")
"""Words that open a noun phrase set after a name: "Tern, the design system ..."."""
WORK_VERBS: Final = word_set("work works working worked")
THIRD_PERSON: Final = word_set(
    "he she they it he's she's it's they're they've his her their its them you you're "
    "anyone someone everyone nobody everything nothing"
)
DETERMINERS: Final = word_set("the a an this that these those some any every each")
PREPOSITIONS: Final = word_set(
    "for with in on at to from of by about like than over instead via through into onto "
    "off under behind after before without across"
)
CONTRAST: Final = word_set("instead rather than over vs vs. versus except unlike not >")  # "Komoot > AllTrails"
NEGATIONS: Final = word_set(
    "wouldn't wouldnt shouldn't couldn't "
    "not never no don't dont doesn't doesnt didn't didnt won't wont isn't isnt aren't "
    "arent wasn't can't cant cannot shouldn't haven't hasn't nobody"
)
MODALS: Final = frozenset(_WORDS["MODALS"])
INTENTS: Final = frozenset(_WORDS["INTENTS"])
SLOT_GAP: Final = frozenset(_WORDS["SLOT_GAP"])
DECISION_WORDS: Final = frozenset(_WORDS["DECISION_WORDS"])
FILLERS: Final = frozenset(_WORDS["FILLERS"])
_LY_WORDS: Final = frozenset(_WORDS["LY_WORDS"])
ARROWS: Final = frozenset(("->", "=>", "→"))
BE_FORMS: Final = word_set("i'm im we're is are am was were")
AUXILIARIES: Final = word_set("has have had will can does did")
SELF: Final = frozenset(("me", "us"))


@dataclass(frozen=True, slots=True)
class Trigger:
    """A trigger phrase found at items ``start`` to ``end`` (exclusive)."""

    kind: str
    start: int
    end: int


def _table() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    table: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for kind, phrases in _PHRASES.items():
        for phrase in phrases:
            words = tuple(phrase.split())
            table.setdefault(words[0], []).append((words, kind))
    for entries in table.values():
        entries.sort(key=lambda entry: -len(entry[0]))
    return table


_TABLE: Final = _table()


def is_filler(word: str) -> bool:
    """Adverbs that never change a relation ("we also mostly use")."""
    return word in FILLERS or (len(word) > 4 and word.endswith("ly") and word not in _LY_WORDS)


def find_triggers(words: list[str]) -> list[Trigger]:
    """Trigger phrases in ``words`` (lower-case; mentions replaced by ""), longest first."""
    return list(_triggers_of(tuple(words)))


@lru_cache(maxsize=1024)
def _triggers_of(words: tuple[str, ...]) -> tuple[Trigger, ...]:
    """``find_triggers``, kept: a sentence's readers ask for the same words' triggers."""
    found: list[Trigger] = []
    i = 0
    while i < len(words):
        match = _match_at(words, i)
        if match is None:
            i += 1
            continue
        found.append(match)
        i = match.end
    return tuple(found)


RUNNING: Final = ("run", "runs", "ran", "running")
"""Forms of "run", which leads a piece of work ("Ferdinand runs the Saltash renovation")."""
ADVERBS: Final = word_set("still also always just really often usually never now already sometimes mostly mainly")
"""Adverbs that may stand between a subject and its verb ("Gurpreet still does ..."), or
between a verb and its particle ("is depending also on X")."""
_PICK: Final = frozenset(("pick", "picked", "picking", "picks"))
_PICKED_UP: Final = frozenset((("it",), ("them",), ("her",), ("him",)))
_FAVOUR: Final = frozenset(("favour", "favor"))
# What may stand right before "favour" as a verb: its subject or an adverb ("I really favour X").
_FAVOURING: Final = frozenset(
    ("i", "we", "i'd", "we'd", "they", "really", "still", "always", "also", "generally", "definitely", "strongly")
)


def _picked_up(following: tuple[str, ...]) -> bool:
    """Whether "pick" goes on as "pick up" or "pick it up", the phrasal verb."""
    return following[:1] == ("up",) or (following[:1] in _PICKED_UP and following[1:] == ("up",))


def _match_at(words: Sequence[str], i: int) -> Trigger | None:
    entries = _TABLE.get(words[i])
    if entries is None:
        return _plural_of(words, i)
    if words[i] == "rather" and i + 1 < len(words) and words[i + 1] == "than":
        return None
    if words[i] in _PICK and _picked_up(tuple(words[i + 1 : i + 3])):
        return None  # "pick up cake from X", "picking it up": a phrasal verb, no choice
    if words[i] in _FAVOUR and (i == 0 or words[i - 1] not in _FAVOURING):
        return None  # "did me a huge favour": the noun
    for phrase, kind in entries:
        if tuple(words[i : i + len(phrase)]) == phrase:
            return Trigger(kind, i, i + len(phrase))
    if i + 2 < len(words) and words[i + 1] in ADVERBS and words[i + 1] != "never":
        for phrase, kind in entries:  # "depends also on X": one adverb before the particle
            if len(phrase) == 2 and (words[i], words[i + 2]) == phrase:
                return Trigger(kind, i, i + 3)
    return None


def _plural_of(words: Sequence[str], i: int) -> Trigger | None:
    """A noun's trigger before "of" in the plural: "are co-maintainers of X", as "a
    co-maintainer of X" says of each of them."""
    if i + 1 >= len(words) or words[i + 1] != "of":
        return None
    word = words[i]
    if len(word) < 4 or not word.endswith("s"):
        return None
    for phrase, kind in _TABLE.get(word[:-1], ()):
        if phrase[1:] == ("of",):
            return Trigger(kind, i, i + 2)
    return None


CLAUSE_VERBS: Final = frozenset(_WORDS["CLAUSE_VERBS"])
HEAD_NOUNS: Final = frozenset(_WORDS["HEAD_NOUNS"])
JOB_TITLES: Final = frozenset(_WORDS["JOB_TITLES"])
SERVING_PLACES: Final = frozenset(_WORDS["SERVING_PLACES"])
_JOB_WORDS: Final = frozenset(_WORDS["JOB_WORDS"])
JOBS: Final = JOB_TITLES | _JOB_WORDS
STACK_LABELS: Final = frozenset(_WORDS["STACK_LABELS"])
OWNER_LABELS: Final = frozenset(_WORDS["OWNER_LABELS"])
PROJECT_LABELS: Final = frozenset(_WORDS["PROJECT_LABELS"])
MODIFIER_KINDS = frozenset(("USE", "KEEP", "DECIDE", "PREFER", "LIKE", "SWITCH", "RETRACT", "BUILD", "DEPEND"))


def prune(triggers: list[Trigger]) -> list[Trigger]:
    """A bare "on"/"at" after a verb such as "run" is only a preposition ("run X on Y")."""
    kept: list[Trigger] = []
    for trigger in triggers:
        bare = trigger.kind in ("ON", "AT") and trigger.end - trigger.start == 1
        if bare and any(t.kind in MODIFIER_KINDS for t in kept):
            continue
        kept.append(trigger)
    return kept


def is_purpose(gap: list[str]) -> bool:
    """ "picked Fly.io for hosting the Elixir services": Elixir is not what was picked."""
    if "for" not in gap:
        return False
    after = gap[len(gap) - gap[::-1].index("for") :]
    return not any(word in (",", "and", "&", "+") for word in after)


ELLIPTIC: Final = frozenset(_WORDS["ELLIPTIC"])
JOINT_VERBS: Final = frozenset(_WORDS["JOINT_VERBS"])
NOT_WORKPLACE: Final = frozenset(_WORDS["NOT_WORKPLACE"])


def switch_side(kind: str, side: str, gap: list[str], *, replacing: bool = False) -> str:
    """Which side of a switch or stop the object after ``gap`` is: "from", "to", or ""
    for the place or means of the act ("cancelled the booking via Staylo")."""
    for word in gap:
        if word in ("from", "off") and kind == "SWITCH":
            side = "from"
        elif word in ("to", "onto") or (word in ("with", "for", "by") and kind == "RETRACT" and replacing):
            side = "to"
        elif word in _MEANS and kind == "RETRACT":
            side = ""
    return side


_MEANS: Final = frozenset(("in", "on", "at", "via", "through", "using", "with", "for", "by"))


SOURCES: dict[str, frozenset[str]] = {
    "PREFERS": frozenset(("user", "person", "project", "organization")),
    "DECIDED": frozenset(("user", "person", "project", "organization")),
    "WORKS_ON": frozenset(("user", "person", "organization")),
    "WORKS_WITH": frozenset(("user", "person")),
    "KNOWS": frozenset(("user", "person")),
    "DEPENDS_ON": frozenset(("user", "project", "tool", "organization")),
    "USES": frozenset(("user", "person", "project", "organization", "tool")),
    "PART_OF": frozenset(("user", "person", "project", "organization")),
}


def source_fits(relation: str, source_kind: str) -> bool:
    return source_kind in SOURCES.get(relation, frozenset())


@dataclass(slots=True)
class Clause:
    """Items of one clause (lower-case words and mentions) and the word that opened it."""

    items: list[Item]
    lead: str
    words: list[str] = field(default_factory=list)
    resumes: bool = False  # the main clause going on after an embedded relative clause

    def __post_init__(self) -> None:
        self.words = [item if isinstance(item, str) else "" for item in self.items]


def clause_items(sentence: Sentence) -> list[Item]:
    items: list[Item] = []
    starts = {mention.start: mention for mention in sentence.mentions}
    i = 0
    while i < len(sentence.lows):
        mention = starts.get(i)
        if mention is not None:
            items.append(mention)
            i = mention.end
            continue
        if not is_filler(sentence.lows[i]):
            items.append(sentence.lows[i])
        i += 1
    return items


def split_clauses(items: list[Item]) -> list[Clause]:
    """The clauses of a sentence's items. An embedded relative clause (", which Bao
    wrote in Odin,") ends at its closing comma, and what follows resumes the clause it
    interrupted: "Quince, which Tadhg maintains, runs on X" is said of Quince."""
    clauses: list[Clause] = []
    current: list[Item] = []
    names_only = True  # whether ``current`` only lists names so far (kept as it grows: linear)
    lead = ""
    embedded = resumes = False
    for index, item in enumerate(items):
        if embedded and item == "," and current:
            clauses.append(Clause(current, lead))
            current, lead, names_only, embedded, resumes = [], ",", True, False, True
            continue
        joint = item in (",", "and") and bool(current) and (names_only or _named_phrase_and_i(current, items, index))
        joint = joint or (item == "and" and _describing(current))  # "X, the tool Ayelet and I maintain, ..."
        joint = joint or (item == "," and _taken_up(current, items[index + 1 : index + 2]))  # "Baraka and me, we"
        if isinstance(item, str) and not joint and _opens_clause(items, index):
            if current:
                clauses.append(Clause(current, lead, resumes=resumes))
            embedded = item in EMBEDDED_LEADS and (items[index - 1 : index] == [","] or _in_apposition(items, index))
            current, lead, names_only, resumes = [], item, True, False
            continue
        current.append(item)
        names_only = names_only and _listed(item)
    if current:
        clauses.append(Clause(current, lead, resumes=resumes))
    return clauses


def _taken_up(current: list[Item], following: list[Item]) -> bool:
    """ "Baraka and me, we ...", "My colleague Baraka and me, we ...": a person, perhaps after
    "my <role>", and the speaker, taken up by "we"; not "Baraka uses Jira and me, we ..."."""
    if following != ["we"] or current[-2:] not in (["and", "me"], ["and", "i"]) or len(current) < 3:
        return False
    person = current[-3]
    if not isinstance(person, Mention) or person.entity_type != "person":
        return False
    before = current[:-3]
    return before == [] or (
        len(before) <= 3 and before[0] in POSSESSIVE_USER and all(isinstance(w, str) for w in before)
    )


def _named_phrase_and_i(current: list[Item], items: list[Item], index: int) -> bool:
    """ "My partner Oskarin and I ...": a noun phrase ending in a person's name, then "and
    I", is one subject, as "Oskarin and I" is."""
    following = items[index + 1] if index + 1 < len(items) else ""
    last = current[-1]
    if following not in ("i", "we") or not isinstance(last, Mention) or last.entity_type != "person":
        return False
    words = current[1:-1]  # "business partner"
    short = len(words) <= 2 and all(isinstance(word, str) and word.isalpha() for word in words)
    return short and current[0] in POSSESSIVE_USER | DETERMINERS


def _listed(item: Item) -> bool:
    """Whether ``item`` may be part of a clause that only lists names: "Sarah and I ..." is one subject."""
    return isinstance(item, Mention) or item in (",", "&")


def _describing(current: list[Item]) -> bool:
    """Whether a clause so far is a name and the open apposition after it ("Harbourline,
    the billing tool Ayelet"), which an "and" goes on inside."""
    opened = len(current) > 3 and isinstance(current[0], Mention) and current[1] == ","
    return opened and current[2] in APPOSITION_LEADS and "," not in current[2:]


def _in_apposition(items: list[Item], index: int) -> bool:
    """Whether the relative word at ``index`` ends the head of an apposition to a name
    ("Tern, the design system that the mobile team owns, ..."): the clause it opens is
    embedded, and the one after its closing comma goes on about the name."""
    for k in range(index - 2, max(0, index - 7), -1):
        if items[k] == ",":
            lead = items[k + 1]
            return isinstance(items[k - 1], Mention) and lead in APPOSITION_LEADS if k else False
        word = items[k + 1]
        if not isinstance(word, str) or not word.isalpha():
            return False
    return False


def _opens_clause(items: list[Item], index: int) -> bool:
    word = items[index]
    if word in ("(", ")") and _bracketed_name(items, index):
        return False  # "our shop (Pryor & Teasel) relies on X": a name in apposition, no clause
    if word == "since" and _duration_at(items, index + 1):
        return False  # "we are using since two years the Odoo": a duration, no clause
    if word in ("before", "after") and (index + 1 == len(items) or _ends_or_verb(items[index + 1])):
        return False  # "I've used X before", "whoever owned it before built ...": an adverb closing its clause
    if word in BOUNDARIES:
        return True
    if word not in (",", "and", ":") or index + 1 >= len(items):
        return False
    following = items[index + 1]
    if following in POSSESSIVE_USER and _after_comma(items, index):
        return _named_doer(items, index + 2)  # ", my flatmate Joss plans meals in X"
    if word == ":":  # "background before my question: I'm a translator": a sentence after a label
        return following in SUBJECT_PRONOUNS
    if isinstance(following, Mention):
        # ", Figma felt like overkill": a name followed by its own verb starts a clause.
        after = _word_after_name(items, index + 1)
        if not isinstance(after, str):
            return False
        if word == "," and (after in CLAUSE_VERBS or _noun_then_copula(items, index + 2)):
            return True  # ", Figma felt like overkill", ", firebase pricing was scary"
        if word == "and" and items[index - 1 : index] == [","] and (after in _COPULAS or finite_form(after)):
            return True  # "we settled on X, and Honeycomb is where ...", "..., and Paora coaches the novices"
        return _after_comma(items, index) and _named_doer(items, index + 1)
    if following in _QUANTIFIERS:  # "... and every shift lead has to log it in X"
        return any(w in CLAUSE_VERBS or w in MODALS for w in items[index + 2 : index + 6] if isinstance(w, str))
    return following in SUBJECT_PRONOUNS or following in THIRD_PERSON


def _noun_then_copula(items: list[Item], k: int) -> bool:
    """Whether a lower-case noun at ``k`` is followed by a copula: the name before it
    modifies the subject of a clause of its own ("..., firebase pricing was scary")."""
    noun = items[k] if k < len(items) else ""
    return isinstance(noun, str) and noun.isalpha() and noun.islower() and items[k + 1 : k + 2] in (["is"], ["was"])


def _ends_or_verb(item: Item) -> bool:
    """Whether ``item`` ends a clause or is a past verb, which no conjunction "before"
    would take without its subject."""
    if not isinstance(item, str):
        return False
    return item in (".", "!", ",", ";") or item in PAST_FORMS or (len(item) > 4 and item.endswith("ed"))


_QUANTIFIERS: Final = frozenset(("every", "each", "most", "half", "both", "none"))
_COPULAS: Final = frozenset(("is", "was", "'s", "are", "were"))
_COUNTS: Final = word_set("two three four five six seven eight nine ten twelve few several many long")


def _bracketed_name(items: list[Item], index: int) -> bool:
    """Whether the bracket at ``index`` encloses a name alone after a noun, naming it: "our
    shop (Pryor & Teasel)"; not a name's organization, "Leonor (Mistral Bakery)"."""
    opening = index if items[index] == "(" else index - 2
    inside = items[opening + 1 : opening + 3]
    noun = opening >= 1 and isinstance(items[opening - 1], str) and str(items[opening - 1]).isalpha()
    noun = noun and any(item in POSSESSIVE_USER for item in items[max(0, opening - 3) : opening])
    return noun and len(inside) == 2 and isinstance(inside[0], Mention) and inside[1] == ")"


def _duration_at(items: list[Item], index: int) -> bool:
    """Whether a span of time opens at ``index`` ("two years", "3 months", "long time",
    "a long time"), as non-native English puts after "since"."""
    words = items[index : index + 3]
    if words[:1] == ["a"]:
        words = words[1:]
    first = words[0] if words else ""
    return isinstance(first, str) and (first.isdigit() or first in _COUNTS) and len(words) > 1


def _word_after_name(items: list[Item], name: int) -> Item:
    """The item after the name at ``name``, past "from|at <name>" (", Tuomas from Vireo
    Systems is our contact"); "" at the end."""
    after = items[name + 1] if name + 1 < len(items) else ""
    if after in ("from", "at") and name + 3 < len(items) and isinstance(items[name + 2], Mention):
        return items[name + 3]
    return after


def _named_doer(items: list[Item], start: int) -> bool:
    """Whether a person named within two role words of ``start`` is followed by a verb
    in a finite form ("Keoni designs", "flatmate Joss plans")."""
    for k in range(start, min(start + 3, len(items) - 1)):
        item = items[k]
        if isinstance(item, Mention):
            after = items[k + 1]
            return item.entity_type == "person" and isinstance(after, str) and finite_form(after)
        if not item.isalpha():
            return False
    return False


def _after_comma(items: list[Item], index: int) -> bool:
    """Whether ``index`` is a comma, or an "and" right after one, that follows no
    person: ", and Keoni designs ..." goes on to a new clause; "Ana, Bo, and Cy ..." lists."""
    comma = index if items[index] == "," else index - 1
    if comma < 1 or items[comma] != ",":
        return False
    before = items[comma - 1]
    return not (isinstance(before, Mention) and before.entity_type == "person")


def finite_form(word: str) -> bool:
    """Whether a word right after a person's name has a finite verb's form ("designs",
    "handled", "drew"): after a name a plural noun or an adjective in -ed is rare."""
    return word in PAST_FORMS or third_person(word) or (len(word) > 3 and word.isalpha() and word.endswith("ed"))


def third_person(word: str) -> bool:
    """Whether a word has the -s of a verb's third person ("relies", "prefers"), not "-ss"."""
    return word.isalpha() and len(word) > 3 and word.endswith("s") and not word.endswith("ss")


def is_bare(trigger: Trigger) -> bool:
    """A lone "at" or "on": a preposition more often than a verb."""
    return trigger.kind in ("AT", "ON") and trigger.end - trigger.start == 1
