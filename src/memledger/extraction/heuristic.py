"""The offline heuristic extractor: entities, relationships, switches and facts.

Pure and deterministic (no I/O, clock or randomness). Only user turns are read:
an assistant's suggestions ("you could try Redis") say nothing about the user,
so other roles map to nothing.

Relationships come from clauses: a clause's subject (the speaker for "I"/"we"/
"our", or a named entity), a trigger ("use", "prefer", "decided to go with",
"depends on", "switched from ... to") and the named objects after it, typed by
what the trigger allows ("uses" wants a tool, "works on" a project or team).
Hedged sentences get lower confidence; questions give entities only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memledger.events.catalogue import EntityType
from memledger.events.keys import normalise_name
from memledger.extraction import gazetteer as gz
from memledger.extraction.heuristic_facts import facts_for_sentence
from memledger.extraction.patterns import (
    Mention,
    Sentence,
    analyse,
    role_words,
    split_sentences,
)
from memledger.extraction.protocol import (
    EntityCandidate,
    FactCandidate,
    RelationshipCandidate,
    RetractionCandidate,
    SourceType,
    TurnExtraction,
    TurnText,
)
from memledger.extraction.triggers import (
    ARROWS,
    BE_FORMS,
    BOUNDARIES,
    CONDITIONAL_LEADS,
    CONTRAST,
    DECISION_WORDS,
    DETERMINERS,
    NEGATIONS,
    NO_LONGER,
    POSSESSIVE_USER,
    PREPOSITIONS,
    RELATIONS,
    RELATIVE_LEADS,
    SELF,
    STRENGTH,
    SUBJECT_PRONOUNS,
    THIRD_PERSON,
    Trigger,
    find_triggers,
    is_filler,
)

EXPLICIT = 0.9
HEDGED = 0.6
_Item = str | Mention


def _entity_type(party: Party) -> EntityType | None:
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


@dataclass(slots=True)
class Found:
    """What one turn has yielded so far, deduplicated."""

    user: str
    entities: dict[tuple[str, str], EntityCandidate] = field(default_factory=dict)
    relationships: dict[tuple[str, str, str], RelationshipCandidate] = field(default_factory=dict)
    retractions: dict[tuple[str, str, str], RetractionCandidate] = field(default_factory=dict)
    facts: dict[tuple[str, str], FactCandidate] = field(default_factory=dict)

    def speaker(self) -> Party:
        return Party(self.user, "user")

    def entity(self, mention: Mention) -> None:
        key = (normalise_name(mention.name), mention.entity_type)
        old = self.entities.get(key)
        if old is None or old.confidence < mention.confidence:
            self.entities[key] = EntityCandidate(
                name=mention.name,
                entity_type=mention.entity_type,
                confidence=mention.confidence,
                context=mention.role or (old.context if old else None),
            )

    def apply(self, edge: Edge) -> None:
        target_type = _entity_type(edge.target)
        if target_type is None or not edge.source.name:
            return
        source, target = normalise_name(edge.source.name), normalise_name(edge.target.name)
        if source == target:
            return
        key = (source, edge.relation, target)
        if edge.retracted:
            self.retractions[key] = RetractionCandidate(
                source_name=edge.source.name, source_type=edge.source.kind,
                relation=edge.relation, target_name=edge.target.name, target_type=target_type,
                reason="the speaker said it no longer holds",
            )
            return
        old = self.relationships.get(key)
        if old is None or old.confidence < edge.confidence:
            self.relationships[key] = RelationshipCandidate(
                source_name=edge.source.name, source_type=edge.source.kind,
                relation=edge.relation, target_name=edge.target.name, target_type=target_type,
                confidence=edge.confidence, context=edge.context or (old.context if old else None),
            )

    def fact(self, fact: FactCandidate) -> None:
        key = (normalise_name(fact.key), fact.category)
        old = self.facts.get(key)
        if old is None or old.confidence <= fact.confidence:
            self.facts[key] = fact

    def result(self) -> TurnExtraction:
        kept = {k: r for k, r in self.relationships.items() if k not in self.retractions}
        return TurnExtraction(
            entities=tuple(self.entities.values()),
            relationships=tuple(kept.values()),
            retractions=tuple(self.retractions.values()),
            facts=tuple(self.facts.values()),
        )


class HeuristicExtractor:
    """Pattern-based extraction of user turns; see the module docstring."""

    name = "heuristic"
    version = "1"

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        """Candidates for each user turn; turns of other roles map to nothing."""
        return {turn.turn_id: extract_text(turn.text, turn.user) for turn in turns
                if turn.role == "user"}


def extract_text(text: str, user: str = "user") -> TurnExtraction:
    """Everything the heuristics find in one user turn's text."""
    found = Found(user)
    header: tuple[Party, str] | None = None
    for sentence in map(analyse, split_sentences(text)):
        for mention in sentence.mentions:
            found.entity(mention)
        edges = _named_relations(found, sentence)
        if not sentence.question:
            header = _listed(found, sentence, header, edges)
            edges.extend(_clause_relations(found, sentence))
        for edge in edges:
            found.apply(edge)
        if not sentence.question:
            for fact in facts_for_sentence(sentence, edges):
                found.fact(fact)
    return found.result()


def _named_relations(found: Found, sentence: Sentence) -> list[Edge]:
    """Relations the names alone state: "my manager Dave", "Ivan from Yandex", A -> B."""
    edges: list[Edge] = []
    mentions = sentence.mentions
    for mention in mentions:
        if mention.role and mention.mine:
            relation = "KNOWS" if mention.role in gz.PERSONAL_ROLES else "WORKS_WITH"
            edges.append(Edge(found.speaker(), relation, mention, EXPLICIT, mention.role))
    for left, right in zip(mentions, mentions[1:], strict=False):
        between = sentence.lows[left.end : right.start]
        if left.entity_type == "person" and right.entity_type == "organization":
            from_org = between in (["from"], ["from", "the"], [",", "from"])
            owned = len(between) == 3 and between[0] == "'s" and between[2] == ","
            if from_org or owned:
                edges.append(Edge(Party.of(left), "PART_OF", right, EXPLICIT))
        if between[:1] and between[0] in ARROWS and "depend" in sentence.text.lower():
            edges.append(Edge(Party.of(left), "DEPENDS_ON", right, EXPLICIT))
    return edges


def _listed(found: Found, sentence: Sentence, header: tuple[Party, str] | None,
            edges: list[Edge]) -> tuple[Party, str] | None:
    """Bullets under a header such as "Stack for Kestrel:" use what they list."""
    lows = sentence.lows
    if lows and lows[-1] == ":":
        if not any(low in ("stack", "tools", "tooling", "setup", "uses", "using") for low in lows):
            return None
        projects = [m for m in sentence.mentions if m.entity_type == "project"]
        return (Party.of(projects[0]) if projects else found.speaker(), "USES")
    if header is None or not lows or lows[0] not in ("-", "*", "•"):
        return None
    if not find_triggers(lows):
        for mention in sentence.mentions[:1]:
            if mention.entity_type == "tool":
                edges.append(Edge(header[0], header[1], mention, EXPLICIT))
    return header


# --- clauses -------------------------------------------------------------------------


@dataclass(slots=True)
class Clause:
    """Items of one clause (lower-case words and mentions) and the word that opened it."""

    items: list[_Item]
    lead: str
    words: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.words = [item if isinstance(item, str) else "" for item in self.items]


def _items(sentence: Sentence) -> list[_Item]:
    items: list[_Item] = []
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


def _clauses(items: list[_Item]) -> list[Clause]:
    clauses: list[Clause] = []
    current: list[_Item] = []
    lead = ""
    for index, item in enumerate(items):
        if isinstance(item, str) and _opens_clause(items, index):
            if current:
                clauses.append(Clause(current, lead))
            current, lead = [], item
            continue
        current.append(item)
    if current:
        clauses.append(Clause(current, lead))
    return clauses


def _opens_clause(items: list[_Item], index: int) -> bool:
    word = items[index]
    if word in BOUNDARIES:
        return True
    if word in (",", "and") and index + 1 < len(items):
        following = items[index + 1]
        return isinstance(following, str) and (
            following in SUBJECT_PRONOUNS or following in THIRD_PERSON
        )
    return False


def _clause_relations(found: Found, sentence: Sentence) -> list[Edge]:
    confidence = HEDGED if sentence.hedged else EXPLICIT
    edges: list[Edge] = []
    previous: list[Party] = []
    last_mention: Mention | None = None
    for clause in _clauses(_items(sentence)):
        if clause.lead in CONDITIONAL_LEADS:
            continue
        inherited = previous
        if clause.lead in RELATIVE_LEADS and last_mention is not None:
            inherited = [Party.of(last_mention)]
        reader = _ClauseReader(found, clause, inherited, confidence)
        edges.extend(reader.read())
        previous = reader.last_subjects or previous
        mentions = [item for item in clause.items if isinstance(item, Mention)]
        last_mention = mentions[-1] if mentions else last_mention
    return edges


@dataclass(slots=True)
class _Object:
    """A named object after a trigger, with the words between it and what came before."""

    target: Party | None  # None: "me"/"us", the speaker
    mention: Mention | None
    gap: list[str]


class _ClauseReader:
    """Reads one clause: its subjects, triggers and objects, into edges."""

    def __init__(self, found: Found, clause: Clause, inherited: list[Party], confidence: float
                 ) -> None:
        self.found = found
        self.items = clause.items
        self.words = clause.words
        self.inherited = inherited
        self.confidence = confidence
        self.decision = any(word in DECISION_WORDS for word in self.words)
        self.ended = any(word in NO_LONGER for word in self.words)
        self.last_subjects: list[Party] = []
        self.possessive = False

    def read(self) -> list[Edge]:
        edges: list[Edge] = []
        triggers = find_triggers(self.words)
        index = 0
        while index < len(triggers):
            trigger = triggers[index]
            kind, index, objects = self._absorb(triggers, index)
            subjects = self._subjects(trigger.start, first=trigger is triggers[0])
            self.last_subjects = subjects or self.last_subjects
            if subjects and objects:
                edges.extend(self._edges(kind, trigger, subjects, objects))
            index += 1
        edges.extend(self._co_subjects())
        return edges

    def _absorb(self, triggers: list[Trigger], index: int) -> tuple[str, int, list[_Object]]:
        kind = triggers[index].kind
        objects = self._objects(triggers, index)
        while not objects and index + 1 < len(triggers):
            following = triggers[index + 1]
            if following.start - triggers[index].end > 4:
                break
            if STRENGTH.get(following.kind, 1) > STRENGTH.get(kind, 1):
                kind = following.kind
            index += 1
            objects = self._objects(triggers, index)
        return kind, index, objects

    def _objects(self, triggers: list[Trigger], index: int) -> list[_Object]:
        stop = triggers[index + 1].start if index + 1 < len(triggers) else len(self.items)
        objects: list[_Object] = []
        gap: list[str] = []
        for item in self.items[triggers[index].end : stop]:
            if isinstance(item, Mention):
                objects.append(_Object(Party.of(item), item, gap))
                gap = []
            elif item in SELF:
                objects.append(_Object(None, None, gap))
                gap = []
            else:
                gap.append(item)
        return objects

    # subjects --------------------------------------------------------------------------

    def _subjects(self, position: int, *, first: bool) -> list[Party]:
        group: list[Party] = []
        weak: list[Party] = []
        blocked = False
        items = self.items
        for index, item in enumerate(items[:position]):
            before = items[index - 1] if index else ""
            party = self._subject_at(index, item, before)
            if party is None:
                if not group and isinstance(item, str) and self._blocks(index, item):
                    blocked = True
                if isinstance(item, Mention) and before in ("at", "of"):
                    weak = [Party.of(item)]
                continue
            joined = before in (",", "and", "&") and index >= 2 and self._is_party(index - 2)
            group = [*group, party] if joined and group else [party]
        if group:
            return group
        if weak:
            return weak
        if blocked:
            return []
        if self.inherited:
            return self.inherited
        lead = [item for item in items[:position] if isinstance(item, str)]
        return [self.found.speaker()] if first and all(w in _ELLIPTIC for w in lead) else []

    def _subject_at(self, index: int, item: _Item, before: _Item) -> Party | None:
        if isinstance(item, Mention):
            if before in PREPOSITIONS or before in ("i'm", "im", "'s", "called", "named"):
                return None
            return Party.of(item)
        if item in SUBJECT_PRONOUNS:
            return self.found.speaker()
        if item in POSSESSIVE_USER and not self._role_follows(index):
            self.possessive = True
            return self.found.speaker()
        if item == "team" and before in ("the", "whole"):
            return self.found.speaker()
        return None

    def _role_follows(self, index: int) -> bool:
        following = self.words[index + 1 : index + 3]
        return any(word in gz.ROLES for word in following[:1]) or " ".join(following) in gz.ROLES

    def _blocks(self, index: int, word: str) -> bool:
        return word in THIRD_PERSON or word in DETERMINERS or (
            word in POSSESSIVE_USER and self._role_follows(index)
        )

    def _is_party(self, index: int) -> bool:
        item = self.items[index]
        return isinstance(item, Mention) or item in SUBJECT_PRONOUNS

    def _co_subjects(self) -> list[Edge]:
        """ "Chinedu and I pair on ..." and "Dmitri and Olga work together"."""
        group = self._leading_group()
        people = [m for m in group if isinstance(m, Mention) and m.entity_type == "person"]
        edges: list[Edge] = []
        if any(not isinstance(m, Mention) for m in group):
            for person in people:
                relation = "KNOWS" if person.role in gz.PERSONAL_ROLES else "WORKS_WITH"
                edges.append(Edge(self.found.speaker(), relation, Party.of(person),
                                  self.confidence))
        joint = any(w == "together" or w.startswith("co-") or w in _JOINT_VERBS
                    for w in self.words)
        if len(people) > 1 and joint:
            edges.extend(Edge(Party.of(people[0]), "WORKS_WITH", Party.of(other),
                              self.confidence) for other in people[1:])
        return edges

    def _leading_group(self) -> list[Mention | str]:
        group: list[Mention | str] = []
        for item in self.items:
            if isinstance(item, Mention) or item in ("i", "me"):
                group.append(item)
            elif item not in (",", "and", "&"):
                break
        return group if len(group) > 1 else []

    # edges -----------------------------------------------------------------------------

    def _edges(self, kind: str, trigger: Trigger, subjects: list[Party],
               objects: list[_Object]) -> list[Edge]:
        if self._negated(trigger):
            return self._retract_all(kind, subjects, objects)
        if kind in ("SWITCH", "RETRACT", "LEAVE"):
            return self._switch(kind, subjects, objects)
        if kind == "LIKE" and not self._liked_by_subject(trigger):
            return []
        if kind == "BE" and not (self.possessive and subjects == [self.found.speaker()]):
            return []
        if kind in ("USE", "BE", "KEEP", "DEPEND") and self.decision:
            kind = "DECIDE" if kind != "KEEP" else kind
        edges: list[Edge] = []
        main, contrast = _split_contrast(objects)
        context = _context(contrast) if kind in ("PREFER", "LIKE") else None
        for subject in subjects:
            for obj in main:
                edges.extend(self._edge(kind, trigger, subject, obj, context))
        if kind in ("USE", "BUILD", "KEEP") and subjects == [self.found.speaker()]:
            edges.extend(self._project_frame(edges))
        return edges

    def _edge(self, kind: str, trigger: Trigger, subject: Party, obj: _Object,
              context: str | None) -> list[Edge]:
        speaker = self.found.speaker()
        if obj.target is None:
            if kind in ("WORK_WITH", "KNOW") and subject.kind == "person":
                return [Edge(speaker, RELATIONS[kind]["person"], subject, self.confidence)]
            return []
        target, mention = obj.target, obj.mention
        relation = self._relation(kind, trigger, subject, obj)
        if relation is None or mention is None or not _source_fits(relation, subject.kind):
            return []
        if kind == "INTRO":
            return [Edge(speaker, "KNOWS", target, self.confidence),
                    Edge(speaker, "KNOWS", subject, self.confidence)]
        if kind == "AT":
            owner = self._role_owner(trigger)
            if owner is not None and not owner.name:
                return []
            subject = owner or subject
        edges = [Edge(subject, relation, target, self.confidence, context)]
        if kind == "KEEP" and self.decision:
            edges.append(Edge(subject, "DECIDED", target, self.confidence))
        return edges

    def _relation(self, kind: str, trigger: Trigger, subject: Party, obj: _Object) -> str | None:
        entity_type = obj.target.kind if obj.target else ""
        if kind == "DEPEND" and subject.kind == "user":
            return "USES" if entity_type == "tool" else None
        if kind == "BUILD" and entity_type == "tool":
            return "USES" if set(obj.gap) & {"in", "with", "using", "on"} else None
        if kind == "ON":
            return self._on(trigger, entity_type, obj)
        if kind == "AT" and (obj.gap not in ([], ["the"]) or self._elsewhere()):
            return None
        return RELATIONS.get(kind, {}).get(entity_type)

    def _on(self, trigger: Trigger, entity_type: str, obj: _Object) -> str | None:
        if obj.gap not in ([], ["the"]):
            return None
        before = self.words[trigger.start - 1] if trigger.start else ""
        if entity_type == "tool":
            return "USES" if before in BE_FORMS or before in SUBJECT_PRONOUNS else None
        if entity_type == "organization" and set(self.words) & {"work", "works", "working"}:
            return "WORKS_ON"
        return RELATIONS["ON"].get(entity_type)

    def _elsewhere(self) -> bool:
        return any(word in _NOT_WORKPLACE for word in self.words)

    def _role_owner(self, trigger: Trigger) -> Party | None:
        """ "Ali is my mentor at Careem": the workplace is the mentor's, not the speaker's."""
        role, _ = role_words(self.words, trigger.start - 1)
        if role is None:
            return None
        for item in self.items:
            if isinstance(item, Mention) and item.role == role:
                return Party.of(item)
        return Party("", "person")

    def _project_frame(self, edges: list[Edge]) -> list[Edge]:
        """ "I use FastAPI for project Phoenix": Phoenix uses FastAPI too."""
        projects = [item for index, item in enumerate(self.items)
                    if isinstance(item, Mention) and item.entity_type == "project"
                    and index and self.items[index - 1] in ("for", "in", "called")]
        tools = [edge.target for edge in edges if edge.relation == "USES"]
        return [Edge(Party.of(project), "USES", tool, self.confidence)
                for project in projects for tool in tools]

    def _negated(self, trigger: Trigger) -> bool:
        window = self.words[max(0, trigger.start - 3) : trigger.start]
        return any(word in NEGATIONS for word in window)

    def _retract_all(self, kind: str, subjects: list[Party], objects: list[_Object]
                     ) -> list[Edge]:
        if kind not in ("USE", "BE", "KEEP", "ON", "PREFER", "LIKE"):
            return []
        relation = "PREFERS" if kind in ("PREFER", "LIKE") else "USES"
        main, _ = _split_contrast(objects)
        return [Edge(subject, relation, obj.target, self.confidence, retracted=True)
                for subject in subjects for obj in main
                if obj.target is not None and obj.target.kind == "tool"]

    def _switch(self, kind: str, subjects: list[Party], objects: list[_Object]) -> list[Edge]:
        side = "from" if kind != "SWITCH" else ""
        edges: list[Edge] = []
        for obj in objects:
            side = _side(kind, side, obj.gap)
            if obj.target is None or side == "":
                continue
            if kind == "LEAVE" and obj.target.kind == "organization":
                edges.extend(Edge(s, "PART_OF", obj.target, self.confidence, retracted=True)
                             for s in subjects)
            if obj.target.kind not in ("tool", "concept"):
                continue
            relation = "DECIDED" if self.decision and side == "to" else "USES"
            edges.extend(Edge(s, relation, obj.target, self.confidence, retracted=side == "from")
                         for s in subjects)
        return edges

    def _liked_by_subject(self, trigger: Trigger) -> bool:
        before = self.items[trigger.start - 1] if trigger.start else ""
        return isinstance(before, Mention) or before in SUBJECT_PRONOUNS


_ELLIPTIC = frozenset(
    "been just finally yesterday today lately also currently now recently - * • : decision "
    "note ps".split()
)
_JOINT_VERBS = frozenset("lead leading run runs founded pair share".split())
_NOT_WORKPLACE = frozenset(
    "meetup conference event talk party dinner lunch met meet visit visited went booth summit "
    "hackathon workshop office".split()
)


@dataclass(frozen=True, slots=True)
class Edge:
    """A relationship (or, ``retracted``, its withdrawal) read from a sentence."""

    source: Party
    relation: str
    target: Party
    confidence: float
    context: str | None = None
    retracted: bool = False


def _split_contrast(objects: list[_Object]) -> tuple[list[_Object], list[_Object]]:
    for index, obj in enumerate(objects):
        if any(word in CONTRAST for word in obj.gap):
            return objects[:index], objects[index:]
    return objects, []


def _context(contrast: list[_Object]) -> str | None:
    names = [obj.target.name for obj in contrast if obj.target is not None]
    return f"over {', '.join(names)}" if names else None


def _side(kind: str, side: str, gap: list[str]) -> str:
    for word in gap:
        if word in ("from", "off") and kind == "SWITCH":
            side = "from"
        elif word in ("to", "onto") or (word in ("with", "for", "by") and kind == "RETRACT"):
            side = "to"
    return side


_SOURCES: dict[str, frozenset[str]] = {
    "PREFERS": frozenset(("user", "person")),
    "DECIDED": frozenset(("user", "person", "organization")),
    "WORKS_ON": frozenset(("user", "person", "organization")),
    "WORKS_WITH": frozenset(("user", "person")),
    "KNOWS": frozenset(("user", "person")),
    "DEPENDS_ON": frozenset(("project", "tool", "organization")),
    "USES": frozenset(("user", "person", "project", "organization", "tool")),
    "PART_OF": frozenset(("user", "person", "project", "organization")),
}


def _source_fits(relation: str, source_kind: str) -> bool:
    return source_kind in _SOURCES.get(relation, frozenset())
