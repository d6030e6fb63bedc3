"""Clauses of a sentence, read into relationship edges. Pure.

A clause has a subject (the speaker for "I", "we", "our", or a named entity;
"Sarah and I" is both), trigger phrases ("use", "prefer", "decided to go with",
"depends on", "switched from ... to") and the named objects after each trigger,
which become relationships according to their type ("uses" wants a tool, "works
on" a project or team). Objects after "instead of", "over" or "than" are a
contrast, not objects; negated triggers become retractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon
from memledger.extraction.clause_objects import ClauseObject, contrast_context, project_frame, split_contrast
from memledger.extraction.clause_subjects import ClauseSubjects, after_bracket
from memledger.extraction.clause_switches import retractions, switched
from memledger.extraction.control import infinitive_of, made_to
from memledger.extraction.episodes import TIME_NOUNS, former_setting
from memledger.extraction.noun_types import common_noun
from memledger.extraction.patterns import TEAM_NOUNS, UNDERTAKINGS, Edge, Mention, Party, Sentence, named_team, word_set
from memledger.extraction.relative_clauses import about_someone_unnamed
from memledger.extraction.roles import owned_role, role_words
from memledger.extraction.senses import participle
from memledger.extraction.shared_work import (
    co_subjects,
    decided_with_me,
    done_with_me,
    on_it_with_me,
    shared_verb,
    shared_work,
)
from memledger.extraction.slots import INSTRUMENT_PREPOSITIONS
from memledger.extraction.triggers import (
    ARROWS,
    BE_FORMS,
    CONDITIONAL_LEADS,
    CONTRAST,
    DECISION_WORDS,
    EMBEDDED_LEADS,
    INTENTS,
    JOBS,
    NEGATIONS,
    NOT_WORKPLACE,
    PAST_FORMS,
    POSSESSIVE_USER,
    PREPOSITIONS,
    RELATIONS,
    RELATIVE_LEADS,
    RUNNING,
    SELF,
    SLOT_GAP,
    STRENGTH,
    SUBJECT_PRONOUNS,
    THIRD_PERSON,
    WORK_VERBS,
    Clause,
    Item,
    Trigger,
    clause_items,
    find_triggers,
    finite_form,
    is_bare,
    is_filler,
    is_purpose,
    prune,
    source_fits,
    split_clauses,
)

EXPLICIT = 0.9
_THINGS: Final = ("tool", "concept")
_THAT: Final = ("that", "which")
_IS: Final = ("is", "'s", "are")
_GAP_VERBS: Final = frozenset(("USE", "PREFER", "LIKE", "WORK_ON"))
_SPEAKER: Final = (["i"], ["we"])
_WORKS: Final = ("project",)
_BEING: Final = ("been", "am", "i'm", "im")  # "I've been a porter at X": the speaker's job there
HEDGED = 0.6
_NEEDING: Final = ("need", "needs", "require", "requires")
# Before a one-word trigger, words that make it a noun: "record every practice in X".
_POSSESSIVES: Final = word_set("my our your")
_NOUN_DETERMINERS: Final = word_set("a an the every his her their its") | _POSSESSIVES  # not "we each use X"
_NOW: Final = word_set("now currently still already")
_EXPERIENCE: Final = word_set("before once twice ever times briefly until")
_CLAUSE_BREAKS: Final = word_set(", ; . but and")
_SPAN_NOUNS: Final = TIME_NOUNS | word_set("ages ever long while")
_CHANGES: Final = ("SWITCH", "LEAVE", "RETRACT")
_TOPIC_NOUNS: Final = frozenset(lexicon.sections("frame_words.txt")["TOPIC_NOUNS"])
_OWNERS: Final = word_set("a an the my our his her their your")
_OPENERS: Final = word_set("the my our his her their")  # a subject's first word after a comma
_OVER_OBJECTS: Final = word_set("it them this that one ones")
# Words that open a verb's object: after a word in -s, they make it a verb, not a plural noun.
_OBJECT_OPENERS: Final = word_set("a an the it me us them everything all")  # not "the apps my company pays for"
_ING_NOUNS: Final = word_set("thing something nothing anything everything morning evening")
# Doings after "keep" that are no use of what they name: saying, minding, meaning, going.
_SAYING_OR_MEANING: Final = word_set(
    "saying telling asking recommending suggesting mentioning sending texting messaging nagging bugging "
    "forgetting thinking wondering meaning wanting trying going coming hearing talking"
)
_WOULD: Final = word_set("would i'd we'd 'd")
_FONDLY: Final = word_set("like love")
_UNDECIDED: Final = (["between"], ["whether"])
_STILL_DECIDING: Final = (["trying"], ["try"], ["tries"], ["about"], ["struggling"])  # "trying to decide"
_OFTEN: Final = word_set("every each nightly daily weekly hourly twice once")
_SPANS: Final = tuple([w] for w in ("week", "month", "year", "term", "semester", "quarter", "sprint"))
_FUTURE: Final = word_set("later soon next tomorrow")
_LATER_NOW: Final = word_set("now nowadays anymore")
_THEN_OR_NOW: Final = frozenset({("these", "days"), ("back", "when"), ("when", "i")})
_WHEN: Final = word_set("last this next yesterday today tonight so then")
_SETTINGS: Final = ("at", "in", "on")  # an opening phrase of place, not a note's bare verb
_HEADING: Final = ("manage", "own", "co-own")  # "I manage Lantern Yard Dance Studio": their workplace
_SUPPOSING: Final = word_set("if unless had")
_AFTER_TEAM: Final = word_set("at on for in from and with now since")  # words after a team that end its phrase
_SHARED: Final = {"WORK_ON": shared_work, "BUILD": shared_work, "ON": on_it_with_me, "DECIDE": decided_with_me}
_ON_VERBS: Final = frozenset(
    ("been", ",", "play", "plays", "played", "playing", "serve", "serves", "served", "serving", "sit", "sits", "sat")
)


def clause_relations(
    speaker: Party, sentence: Sentence, clauses: list[Clause] | None = None, before: Sequence[Mention] = ()
) -> list[Edge]:
    """The edges the clauses of one (non-question) sentence state; ``clauses`` are the
    sentence's (``sentence_clauses``), if the caller has them already; ``before``, the
    names of the sentence before, which its "it", "he" and "she" may stand for."""
    confidence = HEDGED if sentence.hedged else EXPLICIT
    edges: list[Edge] = []
    previous: list[Party] = []
    last_mention: Mention | None = None
    antecedent: Mention | None = None  # what an embedded relative clause was about
    earlier: list[Mention] = list(before)  # the names of the clauses before, for "she" and "it"
    last_clause: Clause | None = None
    bracketed: list[Party] = []  # the name a bracket follows, which the clause after it is about
    lows = sentence.lows
    hedged_now = _hedged_now(lows)  # "we may use X now": of the present, once a sentence
    for clause in sentence_clauses(sentence) if clauses is None else clauses:
        if clause.lead in CONDITIONAL_LEADS:
            continue
        inherited = previous
        head = None  # the name an apposition describes, which a relative clause after it is about
        if clause.lead in EMBEDDED_LEADS and last_mention is not None:
            antecedent = last_mention
            head = _apposition_head(last_clause) if clause.lead in _THAT else None
            head = head or _predicate_head(last_clause, clause.lead)
            if head is not None:  # "Tallgrass, an old PHP app that depends on X": Tallgrass's
                inherited = [Party.of(head)]
            elif clause.lead in RELATIVE_LEADS:  # "..., and I fixed the docs site, which runs on X": no name's
                named = last_clause is not None and (
                    any(item is last_mention for item in last_clause.items)
                    or [w for w in last_clause.words if w != ","] in (["i"], ["me"])  # "Ferhat and I, who"
                )
                inherited = [Party.of(last_mention)] if named else []
                person = _person_before_who(last_clause, last_mention) if clause.lead == "who" else None
                inherited = [Party.of(person)] if person is not None else inherited
            closing = [w for w in last_clause.words[-3:] if w != ","] if last_clause is not None else []
            if clause.lead in RELATIVE_LEADS and closing[-2:] == ["and", "i"]:
                inherited = [*inherited, speaker]  # "my colleague Ferhat and I, who both work on ..."
        if clause.resumes and antecedent is not None:
            inherited = [Party.of(antecedent)]
        if after_bracket(clause):  # "Foxglove (our booking app) depends on X": Foxglove's
            aside = last_clause is not None and last_clause.lead == "("
            inherited = bracketed if aside else _before_bracket(speaker, last_clause, previous)
        if clause.lead == "(":
            bracketed = _before_bracket(speaker, last_clause, previous)
        mentions = [item for item in clause.items if isinstance(item, Mention)]
        # "Juno, the cousin of a dentist that uses X": the clause is the inner noun's, unnamed
        inner = last_clause is not None and "of" in last_clause.words[-5:]
        if (head is None or inner) and about_someone_unnamed(last_clause, clause):
            last_clause, earlier = clause, [*earlier, *mentions]
            continue  # "the guy who did our loft uses X": said of someone unnamed
        decided = (
            clause.lead == "that"
            and last_clause is not None
            and last_clause.words[-1:] != []
            and last_clause.words[-1] in DECISION_WORDS
        )
        # "Ana decided that all drivers must use X": Ana's decision
        reader = _ClauseReader(
            speaker,
            clause,
            inherited,
            confidence,
            earlier,
            gap_filler=_named_right_before(last_clause) if clause.lead == "which" else head,
            decided_by=previous if decided else [],
            sentence_lows=lows,
            hedged_now=hedged_now,
            not_the_speakers=not _speakers_phrase(last_clause),
        )
        edges.extend(reader.read())
        previous = reader.last_subjects or previous
        last_mention = mentions[-1] if mentions else last_mention
        earlier = [*earlier, *mentions]
        last_clause = clause
    return edges


def _apposition_head(clause: Clause | None) -> Mention | None:
    """The name a closing apposition describes ("Tallgrass, an old PHP app"), which a
    relative clause right after it is about; None when the clause does not so end."""
    items = list(clause.items) if clause is not None else []
    if items[-1:] == [","]:
        items.pop()
    if not items or not isinstance(items[-1], str) or not items[-1].isalpha():
        return None  # the description ends in its noun ("app"), not a name
    comma = max((k for k, item in enumerate(items) if item == ","), default=-1)
    head = items[comma - 1] if comma >= 1 else None
    phrase = items[comma + 1 :]
    described = phrase[:1] in (["a"], ["an"], ["the"], ["our"], ["my"]) and 2 <= len(phrase) <= 6
    plain = all(isinstance(item, Mention) or item.isalpha() for item in phrase) and not find_triggers(
        [item if isinstance(item, str) else "" for item in phrase]
    )
    return head if isinstance(head, Mention) and described and plain else None


def _predicate_head(clause: Clause | None, lead: str) -> Mention | None:
    """The name a clause describes with "is a <noun phrase>" ("Kestrel is a small Django
    app"), which a relative clause right after it is about ("... that runs on Fly.io"; a
    person's after "who": "Ana is a designer who uses Figma")."""
    if lead not in _THAT and lead != "who":
        return None
    items = list(clause.items) if clause is not None else []
    be = next((k for k in range(len(items) - 1, 0, -1) if items[k] in _IS), None)
    if be is None or items[be + 1 : be + 2] not in (["a"], ["an"], ["the"]):
        return None
    phrase = items[be + 2 :]
    if (
        not phrase
        or not all(isinstance(i, Mention) or i.isalpha() for i in phrase)
        or find_triggers([i if isinstance(i, str) else "" for i in phrase])
    ):
        return None
    subject = items[be - 1] if items[be - 1] != "," or be < 2 else items[be - 2]
    kinds = ("person",) if lead == "who" else ("project", "tool")
    return subject if isinstance(subject, Mention) and subject.entity_type in kinds else None


def _person_before_who(clause: Clause | None, last: Mention) -> Mention | None:
    """The person a restrictive "who" is about when the name right before it is none: the
    clause's subject ("N is the staff engineer at O who owns X": N's); a comma before "who"
    may name a company the British way ("O, who make X"), so it is left to the name."""
    if clause is None or last.entity_type == "person" or clause.items[-1:] == [","] or not clause.items:
        return None
    first = clause.items[0]  # the clause's subject: not "I emailed Ana about Kestrel who ..."
    return first if isinstance(first, Mention) and first.entity_type == "person" else None


def _named_right_before(clause: Clause | None) -> Mention | None:
    """The name a clause ends with, before its comma ("I edit in Capture One, which ..."),
    which a relative "which" after it stands for; none after any other word."""
    items = [item for item in clause.items if item != ","] if clause is not None else []
    return items[-1] if items and isinstance(items[-1], Mention) else None


def _before_bracket(speaker: Party, clause: Clause | None, previous: list[Party]) -> list[Party]:
    """Who the clause after a bracket is about: the name the bracket follows ("Foxglove
    (our booking app) depends on X"), the speaker after "I"/"we"/"our team" ("We
    (finally) moved to X"), else the subject said before (none after "our debate club
    (the Kestrel Society)", whose doing is the club's)."""
    if clause is None or not clause.items:
        return previous
    last = clause.items[-1]
    if isinstance(last, Mention):
        return [Party.of(last)]
    ours = last in TEAM_NOUNS and any(w in POSSESSIVE_USER for w in clause.items[-3:-1])  # "Our team (mostly) uses X"
    return [speaker] if last in SUBJECT_PRONOUNS or ours else previous


def _main_verb(items: list[Item], k: int) -> bool:
    """Whether the word at ``k`` is a finite verb: a past form, or one in -s that no
    determiner heads ("in Jordan ran", "with uses"; not "the lakes")."""
    word = items[k]
    if not isinstance(word, str) or word in BE_FORMS or word in _OWNERS or word in PREPOSITIONS:
        return False
    past = word in PAST_FORMS or word.endswith("ed")
    return finite_form(word) and (past or k == 0 or items[k - 1] not in _OWNERS)


def _third_person(verb: str) -> bool:
    """Whether a verb has the third person's "-s" ("depends", "relies"): said of a thing,
    where "rely on X" or "depending on X" with no subject is the writer's."""
    return verb.endswith("s") and not verb.endswith("ss")


def _gerund(word: str) -> bool:
    """A verb in -ing after a copula, which then names no object: "are killing me on X"."""
    return len(word) > 4 and word.endswith("ing") and word not in _ING_NOUNS


def _employed(words: list[str], at: int) -> bool:
    """Whether the speaker's job stands before "at" ``at``: "I'm a teaching assistant at",
    "I've been the night porter at" (at most three words of the job after its article)."""
    for k in range(at - 2, max(at - 5, 0) - 1, -1):
        if words[k] in ("a", "an", "the"):
            job = words[k + 1 : at]
            return k >= 1 and words[k - 1] in _BEING and all(w.isalpha() and w not in NOT_WORKPLACE for w in job)
        if not words[k].isalpha():
            return False
    return False


def _given_up(words: list[str]) -> bool:
    """ "was going to", "were gonna": a plan of the past, so not done."""
    return any(w in ("going", "gonna") and k and words[k - 1] in ("was", "were") for k, w in enumerate(words))


def _would_love(window: list[str], verb: str) -> bool:
    """Whether "would like/love" wishes the verb at the end of ``window`` or the verb
    itself ("I'd love a X", "we'd like to move to X")."""
    words = [*window, verb]
    return any(w in _FONDLY and k and words[k - 1] in _WOULD for k, w in enumerate(words))


def _after_at(gap: list[str]) -> bool:
    """Whether an object follows "at" ("at X", "at the X"): a place or a firm, no instrument."""
    return gap[-1:] == ["at"] or gap[-2:] == ["at", "the"]


def _slot(gap: list[str]) -> set[str]:
    """The words between a trigger and its object, less a short noun phrase with "called"
    that introduces the name ("on a project called Atlas", "at a firm called X")."""
    phrase = gap[:-2] + gap[-1:] if gap[-2:-1] == [","] else gap  # "on the new payroll project, called X"
    named = phrase[-1:] in (["called"], ["named"]) and len(phrase) <= 5
    return set() if named and PREPOSITIONS.isdisjoint(phrase) else set(gap)


def _modifier(following: str) -> bool:
    """Whether the word after a noun makes it a modifier: another noun ("migration script")."""
    return common_noun(following) and following not in PREPOSITIONS and not is_filler(following)


def _speakers_phrase(clause: Clause | None) -> bool:
    """Whether a clause is the speaker's or ends in a thing of theirs ("I bought a NAS",
    "my homelab"), which a relative clause after it ("..., which runs on X") is about."""
    if clause is None:
        return False
    tail = clause.words[-4:]
    people = any(w in gz.ROLES or w.removesuffix("s") in gz.ROLES for w in tail)  # "my friend, who ..."
    mine = not POSSESSIVE_USER.isdisjoint(tail) and not people
    lead = clause.words[:4]  # "Last year I set up a server, which ...": past an opening time
    subject = next((k for k, w in enumerate(lead) if w in SUBJECT_PRONOUNS), None)
    timed = subject is not None and all(_time_word(w) for w in lead[:subject])
    return timed or mine


def _next_span(words: list[str]) -> bool:
    """Whether a clause names a span still to come ("next month", "from next term")."""
    return any(w == "next" and words[k + 1 : k + 2] in _SPANS for k, w in enumerate(words))


def _hedged_now(lows: list[str]) -> bool:
    """Whether a clause with "may"/"might" speaks of the present ("we may use Jira now,
    not sure"), not of a change to come ("we still use Trello, but may switch ...")."""
    clauses: list[list[str]] = [[]]
    for word in lows:
        if word in _CLAUSE_BREAKS:
            clauses.append([])
        else:
            clauses[-1].append(word)
    for words in clauses:
        if "may" not in words and "might" not in words:
            continue
        now = any(w in _NOW and words[k + 1 : k + 2] != ["that"] for k, w in enumerate(words))
        change = any(t.kind in _CHANGES for t in find_triggers(words)) or not _FUTURE.isdisjoint(words)
        if now and not change:
            return True
    return False


def _time_word(word: str) -> bool:
    """Whether a word may open a clause as its time ("last year", "yesterday", "so")."""
    return word.isdigit() or word in _SPAN_NOUNS or word in _WHEN or is_filler(word)


def _decided(objects: list[ClauseObject]) -> list[ClauseObject]:
    """The objects of a decision that are not its open choices: not "between X, Y and Z"
    nor "whether X or Y", whose list goes on past the first."""
    kept, open_choice = [], False
    for obj in objects:
        listed = all(w in (",", "and", "or") for w in obj.gap)
        open_choice = obj.gap[:1] in _UNDECIDED or (open_choice and listed)
        if not open_choice:
            kept.append(obj)
    return kept


def _organization(obj: ClauseObject) -> bool:
    return obj.target is not None and obj.target.kind == "organization"


def _stated_objects(kind: str, objects: list[ClauseObject]) -> list[ClauseObject]:
    """The objects a trigger of ``kind`` is about: not a purpose ("a tool for X"), nor,
    for a preference, a place ("prefer to pay by card at X"), nor the choices of a
    decision still open ("deciding between X, Y and Z")."""
    if kind in ("USE", "DECIDE", "PREFER", "LIKE", "KEEP", "BE", "DEPEND"):
        objects = [obj for obj in objects if not is_purpose(obj.gap)]  # "depends on X for Y"
    if kind == "PREFER":
        objects = [obj for obj in objects if "at" not in obj.gap]
    if kind in ("DECIDE", "PREFER"):
        objects = _decided(objects)
    if kind == "DECIDE":
        objects = [obj for obj in objects if "against" not in obj.gap]  # "we decided against it"
    if kind == "WORK_ON":  # "works on X with the parks department": a partner, not the work
        objects = [obj for obj in objects if not ("with" in obj.gap and _organization(obj))]
    if kind in ("USE", "DECIDE", "PREFER", "LIKE"):  # "went with Envision from Rusada": its maker
        objects = [obj for k, obj in enumerate(objects) if not (k and _maker(objects[k - 1], obj))]
    return [obj for obj in objects if not _topic(obj)]


def _built_in(kind: str, edges: list[Edge], objects: list[ClauseObject]) -> list[Edge]:
    """ "Wairimu wrote the Ashwick ETL in Dagster": the tool a piece of work is built in is
    the work's, not its writer's, when the work is named."""
    work = next((obj.target for obj in objects if obj.target is not None and obj.target.kind == "project"), None)
    if kind != "BUILD" or work is None:
        return edges
    return [replace(e, source=work) if e.relation == "USES" and e.source.kind == "person" else e for e in edges]


def _maker(product: ClauseObject, obj: ClauseObject) -> bool:
    """Whether ``obj`` names the maker of the tool named just before it ("Envision from Rusada")."""
    named_tool = product.mention is not None and product.mention.entity_type == "tool"
    return named_tool and obj.gap in (["from"], ["from", "the"])


def _topic(obj: ClauseObject) -> bool:
    """Whether an object is what a piece of writing is about ("writing her dissertation on
    the X approach", "a talk about X"), not where it is written ("my thesis on Overleaf")."""
    gap = obj.gap[:-1] if obj.gap[-1:] == ["the"] else obj.gap
    known_tool = obj.mention is not None and obj.mention.entity_type == "tool" and obj.mention.confidence >= 0.9
    about = gap[-1:] == ["about"] or (gap[-1:] == ["on"] and not known_tool)
    return about and len(gap) >= 3 and gap[-2] in _TOPIC_NOUNS and not _OWNERS.isdisjoint(gap[:-2])


def sentence_clauses(sentence: Sentence) -> list[Clause]:
    """The clauses of a sentence. Read-only to their readers, so one split serves them all."""
    return split_clauses(clause_items(sentence))


class _ClauseReader:
    """Reads one clause: its subjects, triggers and objects, into edges."""

    def __init__(
        self,
        speaker: Party,
        clause: Clause,
        inherited: list[Party],
        confidence: float,
        earlier: list[Mention],
        *,
        decided_by: list[Party],
        gap_filler: Mention | None = None,
        sentence_lows: list[str] | None = None,
        hedged_now: bool = False,
        not_the_speakers: bool = False,
    ) -> None:
        self.speaker = speaker
        self.sentence_lows = sentence_lows or clause.words
        self.hedged_now = hedged_now
        self.items = clause.items
        self.words = clause.words
        self.confidence = confidence
        self.decision = any(word in DECISION_WORDS for word in self.words)
        # who decided what this "that" clause says is to be done, when no one else is named to do it
        self.decided_by = decided_by
        self.last_subjects: list[Party] = []
        # "Hugo, which I now prefer to Jekyll": the thing the relative pronoun stands for
        self.gap_filler = gap_filler
        self.subjects = ClauseSubjects(speaker, clause, inherited, earlier, theirs=not_the_speakers)

    def read(self) -> list[Edge]:
        triggers = [
            t
            for t in prune(find_triggers(self.words))
            if not self._role_noun(t) and not self._unreal(t) and not self._repeating(t)
        ]
        edges: list[Edge] = []
        index = 0
        while index < len(triggers):
            first = triggers[index]
            kind, index, objects = self._absorb(triggers, index)
            objects = self._relative_object(first, kind, objects)
            if first.start == 0 and self.words[0] in _SETTINGS and self._subject_before(triggers[index]):
                first = triggers[index]  # "At the garage they log ... in X": the verb's own subject
            verbs = [t for t in triggers if not is_bare(t)] or triggers
            objects_from = verbs[0].end if first.start > verbs[0].start else len(self.items)
            subjects = self.subjects.find(first.start, first=first is triggers[0], objects_from=objects_from)
            if kind in ("DEPEND", "DEPENDED") and self.subjects.defaulted and _third_person(self.words[first.start]):
                subjects = []  # "- depends on: X, Y" in a note: a thing's dependency, not the writer's use
            self.last_subjects = subjects or self.last_subjects
            controlled = infinitive_of(self.words, first.start) or (
                "speaker" if made_to(self.words, first.start) else None
            )
            subjects = [] if controlled == "asked" else [self.speaker] if controlled else subjects
            if subjects and objects:
                edges.extend(self._edges(kind, first, triggers[index], subjects, objects))
            index += 1
        edges.extend(co_subjects(self.speaker, self.items, self.words, self.confidence))
        shared = shared_verb(self.words)
        if shared is not None:  # "N is co-authoring the paper with me"
            doers = self.subjects.find(shared, first=True, objects_from=len(self.items))
            edges.extend(done_with_me(self.speaker, self.words, shared, doers, self.confidence))
        return edges

    def _relative_object(self, first: Trigger, kind: str, objects: list[ClauseObject]) -> list[ClauseObject]:
        """The objects of "X, which I use daily" or "X, which I prefer to Y": the thing the
        relative pronoun stands for, when the speaker's verb names no object of its own
        (only a rival after "to", "over" or "than")."""
        thing = self.gap_filler
        before = [w for w in self.words[: first.start] if not is_filler(w)]
        fits = thing is not None and thing.entity_type in (_WORKS if kind == "WORK_ON" else _THINGS)
        if thing is None or not fits or kind not in _GAP_VERBS or before not in _SPEAKER:
            return objects
        rival = objects[:1] != [] and (
            any(w in CONTRAST for w in objects[0].gap) or (kind in ("PREFER", "LIKE") and objects[0].gap[:1] == ["to"])
        )
        if not rival and (objects or kind == "LIKE"):
            return objects  # its own object; "X, which I actually like": no rival, no preference
        return [ClauseObject(Party.of(thing), thing, []), *objects]

    def _repeating(self, trigger: Trigger) -> bool:
        """Whether "keep" only says that a saying, a forgetting or a going on goes on ("I'll
        keep saying it", "I keep forgetting X", "people keep recommending X"), of no tool
        unless one is named as its instrument; "I keep crashing X" still tells a use."""
        following = self.words[trigger.end] if trigger.end < len(self.words) else ""
        if trigger.kind != "KEEP" or trigger.end - trigger.start != 1 or following not in _SAYING_OR_MEANING:
            return False
        named = next((k for k in range(trigger.end, len(self.items)) if isinstance(self.items[k], Mention)), None)
        return named is None or INSTRUMENT_PREPOSITIONS.isdisjoint(self.words[trigger.end + 1 : named])

    def _subject_before(self, trigger: Trigger) -> bool:
        """Whether a subject stands right before the trigger ("... they log", "... Ana
        uses"), past adverbs; not a note's bare verb ("At work, mostly use X")."""
        k = trigger.start - 1
        while k > 0 and is_filler(self.words[k]):
            k -= 1
        before = self.items[k] if k >= 1 else ""
        named = isinstance(before, Mention) and before.entity_type == "person"
        people = isinstance(before, str) and (before == "people" or gz.ROLES & {before, before.removesuffix("s")})
        return named or bool(people) or before in SUBJECT_PRONOUNS or before in THIRD_PERSON  # "the kids use"

    def _unreal(self, trigger: Trigger) -> bool:
        """Whether a trigger tells what is not done: "rather die than use X", "X over running
        Y" (the side refused), a change or choice that did not happen ("I almost gave up on
        X", "we almost went with X"), or no one's membership ("played for members of X")."""
        before = self.words[max(0, trigger.start - 2) : trigger.start]
        verb = self.words[trigger.start]
        past = verb in PAST_FORMS or participle(verb)  # "almost went with X"; not "almost always go with X"
        almost = before[-1:] in (["almost"], ["nearly"]) and (trigger.kind != "DECIDE" or past)
        changed = trigger.kind in ("SWITCH", "RETRACT", "LEAVE", "DECIDE") and almost
        ranked = trigger.kind == "WORK_ON" and self.words[trigger.end : trigger.end + 1] in ([j] for j in JOBS)
        governed = trigger.kind == "PART" and before[-1:] != [] and before[-1] in PREPOSITIONS  # "for members of X"
        contrast = "than" in before or before == ["instead", "of"] or self._over(trigger.start)  # "X over using Y"
        noun = trigger.end - trigger.start == 1 and before[-1:] != [] and before[-1] in _NOUN_DETERMINERS
        noun = noun and trigger.kind not in ("SWITCH", "RETRACT", "LEAVE", "DECIDE")  # "the switch to X" still tells it
        said_of = trigger.kind == "PREFER" or self.words[trigger.end : trigger.end + 1] == ["of"]
        noun = noun and not (before[-1] in _POSSESSIVES and said_of)  # "my favourite is X", "our use of X"
        unreal = contrast or changed or ranked or governed or noun
        return unreal or self._tried(trigger) or self._counterfactual(trigger)

    def _counterfactual(self, trigger: Trigger) -> bool:
        """Whether "I'd have", "we'd have" stands before the trigger ("we'd have gone with
        X"): what would have been done, which was not ("would've" is an intent's word)."""
        window = self.words[max(0, trigger.start - 3) : trigger.start]
        return any(a in _WOULD and b == "have" for a, b in pairwise(window))

    def _over(self, start: int) -> bool:
        """Whether "over" before the verb at ``start`` sets its side against a thing named
        before ("take it over running X", "Vim over using Y"), not a verb's particle ("I
        took over running the store")."""
        if start < 2 or self.words[start - 1] != "over":
            return False
        thing = self.words[start - 2]
        return thing == "" or thing in _OVER_OBJECTS or (len(thing) > 4 and thing.endswith("ing"))

    def _tried(self, trigger: Trigger) -> bool:
        """Whether a present perfect "have used" tells of an experience, not a use now:
        it reaches up to now only with "always" or a span in its clause ("for years",
        "since 2019"), without "before", "once", "until" or "my old job" there, and no
        "but now" or change of tools after it."""
        lows = self.sentence_lows
        if self.words[trigger.end - 1] != "used" or "used" not in lows:
            return False
        at = len(lows) - 1 - lows[::-1].index("used")
        if "always" in lows[max(0, at - 3) : at]:
            return False  # "I've always used X"
        rest = lows[at + 1 :]
        own = rest[: next((k for k, w in enumerate(rest) if w in _CLAUSE_BREAKS), len(rest))]
        spans = "since" in own or any(w == "for" and _SPAN_NOUNS & set(own[k : k + 4]) for k, w in enumerate(own))
        later = rest[len(own) :]
        pairs = set(pairwise(later))
        now = not _LATER_NOW.isdisjoint(later) or bool(_THEN_OR_NOW & pairs)  # "..., but I'm on Mac now"
        changed = any(t.kind in _CHANGES for t in find_triggers(later))  # "..., then we moved to X"
        former = any(former_setting(own[k : k + 2]) for k in range(len(own)))  # "my old job"
        return not spans or not _EXPERIENCE.isdisjoint(own) or now or changed or former

    def _role_noun(self, trigger: Trigger) -> bool:
        """Whether a trigger's words end the role of the person named right after it ("my
        shift lead Olumide" names a lead, no one leads) or qualify a role noun after them
        ("my running coach")."""
        following = self.words[trigger.end] if trigger.end < len(self.words) else ""
        if self.words[trigger.end - 1].endswith("ing") and following in gz.ROLES:
            return True
        named = self.items[trigger.end] if trigger.end < len(self.items) else None
        if not isinstance(named, Mention) or named.role is None:
            return False
        return named.role.split()[-1] == self.words[trigger.end - 1]

    def _absorb(self, triggers: list[Trigger], index: int) -> tuple[str, int, list[ClauseObject]]:
        kind = triggers[index].kind
        objects = self._objects(triggers, index)
        while not objects and index + 1 < len(triggers):
            following = triggers[index + 1]
            near = following.start - triggers[index].end <= 4
            if not near or (kind not in STRENGTH and following.kind not in (kind, "USE", "BE")):
                break
            if self._stranded(triggers[index], following.start + 1):
                break  # "the agency we work with uses X": the verb after the relative clause is the main one
            if "," in self.items[triggers[index].end : following.start] and self._subject_before(triggers[index]):
                break  # "X, the bakery my aunt and I run, uses Y": the apposition's verb ends at its comma
            if kind == "DECIDE" and following.kind == "KEEP":
                kind = "KEEP"
            elif kind not in STRENGTH or STRENGTH.get(following.kind, 1) > STRENGTH[kind]:
                kind = following.kind
            index += 1
            objects = self._objects(triggers, index)
        return kind, index, objects

    def _objects(self, triggers: list[Trigger], index: int) -> list[ClauseObject]:
        stop = triggers[index + 1].start if index + 1 < len(triggers) else len(self.items)
        if self._stranded(triggers[index], stop):
            return []
        if stop < len(self.items):  # "moved to X, and now the Y app depends on": Y is the next verb's
            start = triggers[index].start
            opens = (j for j in range(triggers[index].end, stop) if self.subjects.noun_subject(j, stop, start - 1))
            stop = next(opens, stop)
        told = (j for j in range(triggers[index].end, stop) if self._told_after_comma(j, stop) or self._verb_joined(j))
        stop = next(told, stop)  # "decided on X, the A and B ones kept failing": a clause of its own
        objects: list[ClauseObject] = []
        gap: list[str] = []
        kinds = _WORKS if triggers[index].kind in ("WORK_ON", "BUILD") else _THINGS  # "our app X, I work on it"
        for item in self.items[triggers[index].end : stop]:
            if isinstance(item, Mention):
                objects.append(ClauseObject(Party.of(item), item, gap))
                gap = []
            elif item in SELF:
                objects.append(ClauseObject(None, None, gap))
                gap = []
            elif item == "it" and (thing := self.subjects.antecedent(triggers[index].start, kinds)) is not None:
                objects.append(ClauseObject(Party.of(thing), thing, gap))  # "she prefers it to EndNote"
                gap = []
            else:
                gap.append(item)
        return objects

    def _verb_joined(self, j: int) -> bool:
        """Whether "and" at ``j`` joins a second verb of the subject's ("depends on X and
        crashes with Y"), not another object ("X and Y", "X and docs for Y")."""
        following = self.items[j + 1] if j + 1 < len(self.items) else None
        if self.items[j] != "and" or not isinstance(following, str) or following in _OWNERS:
            return False
        return following in PAST_FORMS or (finite_form(following) and self.items[j + 2 : j + 3] in (["with"], ["on"]))

    def _told_after_comma(self, comma: int, stop: int) -> bool:
        """Whether a comma at ``comma`` opens a clause with a subject and a past or present
        verb of its own before ``stop`` ("X, the Wiz ones kept disconnecting", "X, my
        wrists are killing me on Y"), not another item of a list ("X, the Y app and Z")."""
        items = self.items
        if items[comma] != "," or items[comma + 1 : comma + 2] == [] or items[comma + 1] not in _OPENERS:
            return False
        for k in range(comma + 2, min(stop, comma + 8)):
            item = items[k]
            if item in (",", ";"):
                return False
            verb = isinstance(item, str) and (item in BE_FORMS or item in PAST_FORMS or participle(item))
            following = items[k + 1] if k + 1 < len(items) else ""
            present = isinstance(item, str) and finite_form(item) and following in _OBJECT_OPENERS  # "saves a"
            if (verb or present) and items[k - 1] not in _OWNERS:  # not "the paid one"
                return True
        return False

    def _stranded(self, trigger: Trigger, stop: int) -> bool:
        """Whether a trigger ending in a preposition closes a relative clause ("the tour
        company we went with ran everything off X"): its object is the noun before it, and
        the names after the main verb are that verb's ("the tools we rely on are X" equate)."""
        items, start = self.items, trigger.start
        if start < 3 or self.words[trigger.end - 1] not in PREPOSITIONS or items[start - 1] not in SUBJECT_PRONOUNS:
            return False
        noun, opening = items[start - 2], items[max(0, start - 4) : start - 2]
        if not isinstance(noun, str) or not noun.isalpha() or not any(w in _OWNERS for w in opening):
            return False
        if any(w in PREPOSITIONS for w in opening):
            return False  # "in the end we settled on X": a phrase of time, then the clause
        following = items[trigger.end : stop]
        bare = following[:1] != [] and (following[0] in PREPOSITIONS or _main_verb(following, 0))  # no object
        return bare and any(_main_verb(following, k) for k in range(len(following)))

    # edges -----------------------------------------------------------------------------

    def _edges(
        self, kind: str, trigger: Trigger, last: Trigger, subjects: list[Party], objects: list[ClauseObject]
    ) -> list[Edge]:
        if self._negated(trigger):
            return retractions(kind, subjects, objects, self.confidence)
        kept_on = trigger.kind == "KEEP" and last is not trigger  # "I keep telling him we should move it to X"
        intended = self._intended(trigger) or (kept_on and self._intended(last))
        if intended and kind not in ("WORK_WITH", "KNOW", "PART", "AT"):
            return []
        if kind == "SWITCH" and self.words[trigger.end : trigger.end + 1] in (["us"], ["me"], ["our"], ["my"]):
            subjects = [self.speaker]  # "Olumide switched us to X", "N moved our CI to X": the speaker's tools
        if kind in ("SWITCH", "RETRACT", "LEAVE"):
            return switched(
                kind, last, subjects, objects, self.words, decision=self.decision, confidence=self.confidence
            )
        if kind == "LIKE" and not self._liked_by_subject(trigger):
            return []
        if kind == "BE" and not self._speakers_thing_is(trigger, subjects):
            return []
        kind = self._would_choose(kind, trigger)
        decided = self._decided_before(trigger) or (kind in ("USE", "DEPEND") and subjects == self.decided_by)
        if kind in ("USE", "BE", "KEEP", "DEPEND") and decided:
            kind = "DECIDE" if kind != "KEEP" else kind
        edges: list[Edge] = []
        main, contrast = split_contrast(objects, preferring=kind in ("PREFER", "LIKE"))
        context = contrast_context(contrast) if kind in ("PREFER", "LIKE") else None
        main = self._named_objects(kind, _stated_objects(kind, main))
        for subject in subjects:
            for obj in main:
                edges.extend(self._edge(kind, last, subject, obj, context))
        edges = _built_in(kind, edges, main)
        if kind in ("USE", "BUILD", "KEEP") and subjects == [self.speaker]:
            edges.extend(project_frame(self.items, self.words, edges, self.confidence))
        share = _SHARED.get(kind)  # "Iker works on X with me", "Ines is on the platform team with me"
        if share is not None:
            edges.extend(share(self.speaker, self.items, subjects, edges, self.confidence))
        return edges

    def _named_objects(self, kind: str, objects: list[ClauseObject]) -> list[ClauseObject]:
        """``objects`` less those that name no object of the verb: a role said of the one
        before ("chose Toast as our POS"), a place after "at" ("runs a café at the X
        Hall"), the side a choice leaves ("Decided: MySQL -> TiDB")."""
        kept = [obj for k, obj in enumerate(objects) if not (k and obj.gap[:1] == ["as"] and len(obj.gap) <= 2)]
        if kind == "USE":
            kept = [obj for obj in kept if not (_after_at(obj.gap) and obj.target and obj.target.kind == "tool")]
        if kind == "DECIDE":
            kept = [obj for obj in kept if not self._left_by_arrow(obj)]
        return kept

    def _left_by_arrow(self, obj: ClauseObject) -> bool:
        """Whether an arrow follows the object: the side a change leaves ("MySQL -> TiDB")."""
        at = self._place_of(obj)
        return at is not None and at + 1 < len(self.items) and self.items[at + 1] in ARROWS

    def _place_of(self, obj: ClauseObject) -> int | None:
        """Where the object's name stands among the clause's items."""
        return next((i for i, item in enumerate(self.items) if item is obj.mention), None)

    def _speakers_thing_is(self, trigger: Trigger, subjects: list[Party]) -> bool:
        """Whether "my X is in Y" says where the speaker's thing is: not a progressive ("my
        wrists are killing me on X"), nor a passive done by someone ("our quiz scores are
        kept by Hamish in X": Hamish's doing)."""
        if not (self.subjects.possessive and subjects == [self.speaker]):
            return False
        if _gerund(self.words[trigger.end] if trigger.end < len(self.words) else ""):
            return False
        items = self.items[trigger.end : trigger.end + 4]  # "are kept by N in X", not "... by N and stored in X"
        by = next((k for k in range(len(items) - 1) if items[k] == "by"), None)
        agent = items[by + 1] if by is not None else None
        done_by = (
            isinstance(agent, Mention) and agent.entity_type == "person" and "and" not in self.items[trigger.end :]
        )
        return not done_by

    def _decided_before(self, trigger: Trigger) -> bool:
        """Whether a word of deciding stands before the trigger in its clause ("we decided to
        use X"); not one after it ("N runs payroll through X, and for invoicing we decided on Y")."""
        return self.decision and any(word in DECISION_WORDS for word in self.words[: trigger.start])

    def _would_choose(self, kind: str, trigger: Trigger) -> str:
        """ "I'd still choose my Prusa every time": a choice under "would" is a preference,
        none made."""
        would = not _WOULD.isdisjoint(self.words[max(0, trigger.start - 3) : trigger.start])
        supposed = "have" in self.words[max(0, trigger.start - 2) : trigger.start] or not _SUPPOSING.isdisjoint(
            self.sentence_lows
        )  # "we'd have picked X", "we'd go with X unless ...": no preference said
        return "PREFER" if kind == "DECIDE" and would and not supposed else kind

    def _edge(self, kind: str, trigger: Trigger, subject: Party, obj: ClauseObject, context: str | None) -> list[Edge]:
        speaker = self.speaker
        if obj.target is None:
            if kind in ("WORK_WITH", "KNOW") and subject.kind == "person":
                return [Edge(speaker, RELATIONS[kind]["person"], subject, self.confidence)]
            return []
        target, mention = obj.target, obj.mention
        relation = self._relation(kind, trigger, subject, obj)
        if kind == "DEPENDED" and relation is not None and mention is not None and source_fits(relation, target.kind):
            return [Edge(target, relation, subject, self.confidence)]  # "X is a dependency of Y": Y's
        if relation is None or mention is None or not source_fits(relation, subject.kind):
            return []
        if kind == "INTRO":
            return [Edge(speaker, "KNOWS", target, self.confidence), Edge(speaker, "KNOWS", subject, self.confidence)]
        if kind == "AT":
            owner = self._role_owner(trigger)
            if owner is not None and not owner.name:
                return []
            subject = owner or subject
        if kind == "KEEP" and self.decision:
            return [Edge(subject, "DECIDED", target, self.confidence)]  # "decided to stick with X": a choice
        return [Edge(subject, relation, target, self.confidence, context)]

    def _relation(self, kind: str, trigger: Trigger, subject: Party, obj: ClauseObject) -> str | None:
        entity_type = obj.target.kind if obj.target else ""
        if kind == "DEPEND" and subject.kind == "person" and self.words[trigger.start] in _NEEDING:
            return None  # "Anjali needs access to X": a need, not a use
        if kind == "DEPEND" and subject.kind == "user":
            return "DEPENDS_ON" if entity_type == "tool" else None  # "we rely on X": said as a dependency
        if kind == "DEPEND" and subject.kind == "person":
            return "USES" if entity_type == "tool" else None  # "Priya leans on X": a person's use
        if kind == "BUILD" and entity_type == "tool":
            return "USES" if set(obj.gap) & {"in", "with", "using", "on"} else None
        if kind == "ON":
            return self._on(trigger, entity_type, obj)
        if kind == "PLAY" and entity_type == "organization":  # "I play for Dockside Rovers": a team's member
            member = obj.gap[:1] == ["for"] and _slot(obj.gap[1:]) <= SLOT_GAP  # not "play in X tournaments"
            doer = self.items[trigger.start - 1] if trigger.start else ""  # not "tracking plays in X"
            person = doer in SUBJECT_PRONOUNS or (isinstance(doer, Mention) and doer.entity_type == "person")
            return "PART_OF" if member and person else None
        if kind == "USE" and entity_type == "project" and self.words[trigger.start] in RUNNING:
            return "WORKS_ON" if self._runs_undertaking(trigger, obj) else None
        if kind == "USE" and entity_type == "organization" and self.words[trigger.start] in WORK_VERBS:
            return "PART_OF"  # "I work in Sunvale Hospital": a workplace, not a tool
        verb, before = self.words[trigger.start], self.words[trigger.start - 1] if trigger.start else ""
        heads = verb in RUNNING or verb in _HEADING
        team = obj.target is not None and named_team(obj.target.name)
        runner = self.items[trigger.start - 1] if trigger.start else ""
        owner = before in ("i", "we") or (isinstance(runner, Mention) and runner.entity_type == "person")
        business = not team and UNDERTAKINGS.isdisjoint(obj.gap)  # not "runs a translation project called X"
        if heads and owner and entity_type == "organization" and business:
            return "PART_OF" if _slot(obj.gap) <= SLOT_GAP else None  # "I run Thimble & Moss": their business
        if verb in RUNNING and team and _slot(obj.gap) <= SLOT_GAP and self._team_run(trigger, obj):
            return "WORKS_ON"  # "Zainab and Ruairí run the pharmacy team": they lead it, as "lead" says
        if kind == "AT" and not self._workplace(trigger, obj):
            return None
        named_before = trigger.start > 0 and isinstance(self.items[trigger.start - 1], Mention)
        mine = before in SUBJECT_PRONOUNS or (not before.isalpha() and not named_before)  # "I joined", "Since joining"
        if kind == "PART" and team and verb.startswith("join") and mine:
            return "WORKS_ON"  # "I joined the receiving team": on it, as "on the X team" says
        return RELATIONS.get(kind, {}).get(entity_type)

    def _team_run(self, trigger: Trigger, obj: ClauseObject) -> bool:
        """Whether a person or the speaker runs the team itself ("I run the inbound team"), not
        a thing of it ("the team's rota", "the sales team offsite") or by a thing ("our scripts")."""
        before = self.items[trigger.start - 1] if trigger.start else ""
        doer = before in SUBJECT_PRONOUNS or (isinstance(before, Mention) and before.entity_type == "person")
        at = self._place_of(obj)
        after = str(self.items[at + 1]) if at is not None and at + 1 < len(self.items) else ""
        return doer and after != "'s" and not (after.isalpha() and after.islower() and after not in _AFTER_TEAM)

    def _runs_undertaking(self, trigger: Trigger, obj: ClauseObject) -> bool:
        """ "Ferdinand runs the Saltash depot renovation", "I run the Kestrel project": a
        person leading an undertaking; not "we run the Orion pipeline every night"."""
        before = self.items[trigger.start - 1] if trigger.start else ""
        person = isinstance(before, Mention) and before.entity_type == "person"
        at = self._place_of(obj)
        after = [] if at is None else [*self.words[at + 1 : at + 4], ""]
        heads = any(w in UNDERTAKINGS and not _modifier(after[k + 1]) for k, w in enumerate(after[:2]))
        called = obj.gap[-1:] in (["called"], ["named"]) and not UNDERTAKINGS.isdisjoint(obj.gap)
        heads = heads or called  # "runs a tiny pedal project called Nettlefuzz"
        repeated = not _OFTEN.isdisjoint(self.sentence_lows)  # "we run the Orion upgrade every night"
        progressive = before in ("is", "are", "am", "'m", "'re")  # "N is running the X literacy project"
        return (person or progressive or before in SUBJECT_PRONOUNS) and heads and not repeated

    def _on(self, trigger: Trigger, entity_type: str, obj: ClauseObject) -> str | None:
        if not _slot(obj.gap) <= SLOT_GAP:
            return None
        before = self.words[trigger.start - 1] if trigger.start else ""
        said_of = before in BE_FORMS or before in SUBJECT_PRONOUNS or before in _ON_VERBS  # "I'm on X", "played on X"
        if entity_type == "tool":
            return "USES" if said_of else None
        team = obj.target is not None and named_team(obj.target.name)
        if entity_type == "organization" and (team or not set(self.words).isdisjoint(WORK_VERBS)):
            return "WORKS_ON"  # "on the payments team": the team's work, as "works on" says
        if entity_type == "organization" and not said_of:
            return None  # "the loop on Arriva buses", "homework on X": where, not whose
        return RELATIONS["ON"].get(entity_type)

    def _workplace(self, trigger: Trigger, obj: ClauseObject) -> bool:
        """ "an engineer at Acme", "works for Acme": not "a meetup at Acme", "looking at X"."""
        nearby = self.words[max(0, trigger.start - 3) : trigger.end + 3]
        if not _slot(obj.gap) <= SLOT_GAP or any(w in NOT_WORKPLACE for w in nearby):
            return False
        before = self.items[trigger.start - 1] if trigger.start else ""
        if isinstance(before, Mention) and before.entity_type == "organization":
            return True
        if self._work_before(trigger.start):
            return True
        being = before in _BEING  # "I'm at Acme", "been at Tarrowby six years"
        words = self.words
        employed = _employed(words, trigger.start)
        return trigger.end - trigger.start > 1 or before in JOBS or before in gz.ROLES or being or employed

    def _work_before(self, at: int) -> bool:
        """Whether "at" follows a project that the clause's verb works on, past its head
        nouns ("works on Makai at O", "work on the Makai Reef restoration at O")."""
        k = at - 1
        while k > 0 and at - k <= 2 and isinstance(word := self.items[k], str) and word.isalpha() and word.islower():
            k -= 1
        named = k >= 0 and isinstance(project := self.items[k], Mention) and project.entity_type == "project"
        return named and any(t.kind == "WORK_ON" for t in find_triggers(self.words[:k]))

    def _role_owner(self, trigger: Trigger) -> Party | None:
        """ "Ali is my mentor at Careem": the workplace is the mentor's, not the speaker's."""
        role, start = role_words(self.words, trigger.start - 1)
        if role is None or not owned_role(self.words, start - 1):
            return None
        for item in self.items:
            if isinstance(item, Mention) and item.role == role:
                return Party.of(item)
        return Party("", "person")

    def _intended(self, trigger: Trigger) -> bool:
        """Whether a trigger tells of a plan, a wish or a possibility, not a fact."""
        window = self.words[max(0, trigger.start - 3) : trigger.start]
        if _would_love(window, self.words[trigger.start]):
            return True  # "I'd love a KitchenAid", "I'd love to move us to X": a wish
        if trigger.kind == "PREFER":
            window = [w for w in window if w != "would"]  # "I would rather use X": a preference now
        perfect = "have" in window or "'ve" in window  # "we may already have switched to X"
        if {"may", "might"} & set(window) and (self.hedged_now or perfect):
            return False  # "we may use Jira now, not sure": a hedge about the present
        may = any(w == "may" and k and window[k - 1] in SUBJECT_PRONOUNS for k, w in enumerate(window))
        # "we were going to use Kafka": a plan that was given up; "trying to decide between": undecided
        planned = _given_up(window) or (window[-1:] == ["and"] and self._given_up_before(trigger.start))
        planned = planned or window[-1:] == ["or"]  # "we need to upgrade to X or rewrite in Y": options
        deciding = trigger.kind == "DECIDE" and window[-2:-1] in _STILL_DECIDING and window[-1:] == ["to"]
        verb = self.words[trigger.start]
        done = participle(verb) or verb in PAST_FORMS or not {"have", "has", "'ve"}.isdisjoint(window)
        coming = trigger.kind == "SWITCH" and not done and _next_span(self.words)  # "we're moving to X next month"
        # "we may adopt X": a possibility, not the month
        return may or planned or deciding or coming or any(w in INTENTS for w in window)

    def _given_up_before(self, start: int) -> bool:
        """Whether the verb before "and" at ``start`` was a plan given up, with no subject
        between ("I was going to sign up and use X"): the second verb is planned with it."""
        before = self.words[:start]
        k = next((k for k in range(len(before) - 1, 0, -1) if before[k] in ("going", "gonna")), 0)
        subject = any(w in SUBJECT_PRONOUNS for w in before[k + 1 :])
        return bool(k) and _given_up(before[k - 1 : k + 1]) and not subject

    def _negated(self, trigger: Trigger) -> bool:
        window = self.words[max(0, trigger.start - 3) : trigger.start]
        return any(word in NEGATIONS for word in window)

    def _liked_by_subject(self, trigger: Trigger) -> bool:
        before = self.items[trigger.start - 1] if trigger.start else ""
        return isinstance(before, Mention) or before in SUBJECT_PRONOUNS
