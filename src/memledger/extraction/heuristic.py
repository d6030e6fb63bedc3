"""The offline heuristic extractor: entities, relationships, switches and facts.

Pure and deterministic (no I/O, clock or randomness). Only user turns are read:
an assistant's suggestions ("you could try Redis") say nothing about the user,
so other roles map to nothing.

Relationships come from clauses: a clause's subject (the speaker for "I"/"we"/
"our", or a named entity), a trigger ("use", "prefer", "decided to go with",
"depends on", "switched from ... to") and the named objects after it, typed by
what the trigger allows ("uses" wants a tool, "works on" a project or team).
Sentence shapes the triggers miss come from ``frames`` (passive, "is where",
appositions); names no list knows are typed by their slot (``slots``); a clause that
asserts nothing now (negated, rejected, hypothetical, past only: ``polarity``) states
no relationship. Hedged sentences get lower confidence; questions and small talk
(thanks, greetings, compliments, wishes: ``speech_acts``) give entities only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise, takewhile
from typing import Final

from memledger.events.keys import normalise_name, speaker_prefix
from memledger.extraction import gazetteer as gz
from memledger.extraction import polarity
from memledger.extraction.clauses import EXPLICIT, HEDGED, clause_relations, sentence_clauses
from memledger.extraction.clefts import cleft_edges
from memledger.extraction.complaints import complaint_uses
from memledger.extraction.dependency_notes import bullet_dependencies, dependency_label, listed_dependencies
from memledger.extraction.directives import asks_to_forget, directive_content
from memledger.extraction.ellipsis import echoed
from memledger.extraction.frames import frame_edges
from memledger.extraction.heuristic_facts import facts_for_sentence
from memledger.extraction.memberships import listed_before
from memledger.extraction.mentions import analyse
from memledger.extraction.needs import needed
from memledger.extraction.note_lines import (
    ITEM_BREAKS,
    follows_notes,
    heading_mode,
    heading_owner,
    note_uses,
    on_trial,
    owned_uses,
    preferred_in_note,
    ranked,
    stack_owner,
    under_heading,
)
from memledger.extraction.patterns import (
    BULLETS,
    Edge,
    Mention,
    Party,
    Sentence,
    entity_type_of,
    split_sentences,
)
from memledger.extraction.protocol import (
    EntityCandidate,
    FactCandidate,
    RelationshipCandidate,
    RetractionCandidate,
    TurnExtraction,
    TurnText,
)
from memledger.extraction.roles import relation_of, said_as_ours
from memledger.extraction.rosters import people_lines
from memledger.extraction.speech_acts import is_small_talk
from memledger.extraction.their_tools import their_tools
from memledger.extraction.triggers import (
    ARROWS,
    NEGATIONS,
    OWNER_LABELS,
    POSSESSIVE_USER,
    PREPOSITIONS,
    PROJECT_LABELS,
    STACK_LABELS,
    Clause,
    Item,
    find_triggers,
)
from memledger.extraction.wishes import wished


@dataclass(slots=True)
class Found:
    """What one turn has yielded so far, deduplicated."""

    user: str
    entities: dict[tuple[str, str], EntityCandidate] = field(default_factory=dict)
    relationships: dict[tuple[str, str, str], RelationshipCandidate] = field(default_factory=dict)
    retractions: dict[tuple[str, str, str], RetractionCandidate] = field(default_factory=dict)
    facts: dict[tuple[str, str], FactCandidate] = field(default_factory=dict)
    unsettled: dict[str, None] = field(default_factory=dict)  # in order, once each

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
        target_type = entity_type_of(edge.target)
        if target_type is None or not edge.source.name:
            return
        source, target = normalise_name(edge.source.name), normalise_name(edge.target.name)
        if source == target:
            return
        key = (source, edge.relation, target)
        if edge.retracted:
            self.retractions[key] = RetractionCandidate(
                source_name=edge.source.name,
                source_type=edge.source.kind,
                relation=edge.relation,
                target_name=edge.target.name,
                target_type=target_type,
                reason="the speaker said it no longer holds",
            )
            return
        old = self.relationships.get(key)
        if old is None or old.confidence < edge.confidence:
            self.relationships[key] = RelationshipCandidate(
                source_name=edge.source.name,
                source_type=edge.source.kind,
                relation=edge.relation,
                target_name=edge.target.name,
                target_type=target_type,
                confidence=edge.confidence,
                context=edge.context or (old.context if old else None),
            )

    def fact(self, fact: FactCandidate) -> None:
        key = (normalise_name(fact.key), fact.category)
        old = self.facts.get(key)
        if old is None or old.confidence <= fact.confidence:
            self.facts[key] = fact

    def result(self) -> TurnExtraction:
        kept = {k: r for k, r in self.relationships.items() if k not in self.retractions}
        return TurnExtraction(
            entities=tuple(_one_type_per_name(self.entities, kept.values())),
            relationships=tuple(kept.values()),
            retractions=tuple(self.retractions.values()),
            facts=tuple(self.facts.values()),
            unsettled=tuple(self.unsettled),
        )


def _one_type_per_name(
    entities: Mapping[tuple[str, str], EntityCandidate], relationships: Iterable[RelationshipCandidate]
) -> list[EntityCandidate]:
    """A name means one thing within a turn: where mentions typed it differently, the
    surest reading stands ("My partner Kealoha ... Kealoha's app"), unless a relationship
    stands on each reading ("my colleague Julia writes it in Julia"). ``entities`` are
    keyed by normalised name and type, as ``Found`` keeps them."""
    related: set[tuple[str, str]] = set()
    for r in relationships:
        related |= {(normalise_name(r.source_name), r.source_type), (normalise_name(r.target_name), r.target_type)}
    best: dict[str, EntityCandidate] = {}
    for (name, _), entity in entities.items():
        if name not in best or best[name].confidence < entity.confidence:
            best[name] = entity
    return [entity for key, entity in entities.items() if best[key[0]] is entity or key in related]


class HeuristicExtractor:
    """Pattern-based extraction of user turns; see the module docstring."""

    name = "heuristic"
    version = "80"

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        """Candidates for each user turn; turns of other roles map to nothing."""
        return {
            turn.turn_id: extract_text(turn.text, turn.user, turn.project_name or turn.scopes.project or "")
            for turn in turns
            if turn.role == "user"
        }


MAX_TEXT_CHARS = 100_000
"""Characters of a turn that are read. Reading takes time in proportion to the text,
but a hostile megabyte of one-word lines would still keep the worker busy for about
10 s; a turn's text is stored whole, only its extraction stops here."""


def extract_text(text: str, user: str = "user", project: str = "") -> TurnExtraction:
    """Everything the heuristics find in one user turn's text (its first
    :data:`MAX_TEXT_CHARS` characters). ``user`` is the turn's user scope key, or
    "user" when the turn names none; ``project`` its project scope key, whose bare
    name ("Atlas uses MongoDB.") then names the project."""
    found = Found(user)
    speaker = speaker_prefix(user)
    me = found.speaker()  # the speaker as a party: the same for every sentence of the turn
    header: tuple[Party, str] | None = None
    labelled: list[tuple[str, Sentence]] = []
    text = text[:MAX_TEXT_CHARS]
    lowercase = not any(character.isupper() for character in text)
    named_before: list[Mention] = []  # the sentence before's names, for a pronoun opening the next
    project_before: Mention | None = None  # the one project the sentence before named: an "Owner:" line's
    headings = _Headings(me)
    for sentence in (analyse(part, project, lowercase=lowercase) for part in split_sentences(text)):
        if asks_to_forget(sentence.text):
            continue  # what the speaker asks to forget is not to be remembered
        label = _label(sentence)
        if label:
            labelled.append((label, sentence))
            if label in OWNER_LABELS and project_before is not None:
                headings.owners.setdefault(id(sentence), Party.of(project_before))  # "... Owner: Keahi."
        for mention in sentence.mentions:
            found.entity(mention)
        roles = _role_relations(found, sentence)
        edges = _named_relations(found, sentence)
        stating = not sentence.question and not is_small_talk(sentence)
        if stating:
            found.unsettled.update(dict.fromkeys(sentence.unsettled))
            header = _listed(found, sentence, header, edges)
            if not (header and sentence.lows[:1] and sentence.lows[0] in BULLETS):
                clauses = sentence_clauses(sentence)
                edges.extend(clause_relations(me, sentence, clauses, named_before))
                edges.extend(_terse_relations(me, sentence, clauses))
            edges.extend(frame_edges(me, sentence.words, sentence.lows, sentence.mentions))
            edges.extend(people_lines(me, sentence))
            noted = note_uses(me, sentence, in_notes=follows_notes(labelled, sentence))
            edges = [*_not_the_labels(me, edges, noted), *noted]
            edges.extend(their_tools(sentence))
            edges.extend(wished(me, sentence))
            edges.extend(cleft_edges(me, sentence))
            edges.extend(listed_dependencies(sentence, headings.owner_of(sentence)))
        # "P can't build without X" is negated in form only: its dependency skips the polarity reading
        dependencies = needed(sentence) if stating else []
        complained = complaint_uses(me, sentence)
        asserted = _unless_complained(complained, _asserted(sentence, edges))
        asserted += echoed(me, sentence.lows, asserted)  # "..., and honestly so do I"
        edges = _relied_on([*roles, *complained, *dependencies, *asserted])
        edges = headings.read(sentence, edges)
        for edge in edges:
            found.apply(edge)
        if stating:
            for fact in facts_for_sentence(_quoted(sentence), edges, speaker):
                found.fact(fact)
        named_before = sentence.mentions
        projects = {m.name: m for m in sentence.mentions if m.entity_type == "project"}
        project_before = next(iter(projects.values())) if len(projects) == 1 else None
    for edge in _under_headings(me, labelled, headings.modes, _labelled_edges(me, labelled, headings.owners)):
        found.apply(edge)
    return found.result()


_FIRST_PERSON: Final = frozenset(("i", "my", "we", "our"))


def _unless_complained(complained: list[Edge], edges: list[Edge]) -> list[Edge]:
    """``edges`` less the negated uses of what a fault report makes the speaker's ("I can't
    log in to X" negates its verb, yet tells that the speaker uses X)."""
    if not complained:
        return edges
    named = {e.target.name for e in complained}
    return [e for e in edges if not (e.retracted and e.relation == "USES" and e.target.name in named)]


def _relied_on(edges: list[Edge]) -> list[Edge]:
    """``edges`` less a use of what the same source depends on ("I rely on my X" is not
    also "my X", a use)."""
    depended = {(e.source, e.target.name) for e in edges if e.relation == "DEPENDS_ON" and not e.retracted}
    return [e for e in edges if e.relation != "USES" or (e.source, e.target.name) not in depended]


def _bullet(sentence: Sentence) -> bool:
    return sentence.lows[:1] != [] and sentence.lows[0] in BULLETS


class _Headings:
    """A note's headings as its lines go by: what the heading above a bullet makes of it
    ("Trip checklist:", a mode), and the project it names ("Stack (Moonwort):")."""

    def __init__(self, me: Party) -> None:
        self.me = me
        self.mode: str | None = None
        self.owner: Party | None = None
        self.depending = False  # the heading lists dependencies ("Project Honeycomb deps:")
        self.modes: dict[int, str] = {}  # the bullets under a heading, by id, with its mode
        self.owners: dict[int, Party] = {}  # the bullets under a heading that names a project

    def owner_of(self, sentence: Sentence) -> Party | None:
        """The project the heading above a bullet names, or None for a line that is no bullet."""
        return self.owner if _bullet(sentence) else None

    def read(self, sentence: Sentence, edges: list[Edge]) -> list[Edge]:
        """``edges`` of a bullet read under its heading; a line that is no bullet opens the next."""
        if not _bullet(sentence):
            self.mode, self.owner = heading_mode(sentence.lows), heading_owner(sentence)
            self.depending = sentence.lows[-1:] == [":"] and dependency_label(sentence.lows) is not None
            return edges
        if self.depending and self.owner is not None:
            listed = bullet_dependencies(sentence, self.owner)
            named = {e.target.name for e in listed}
            edges = [e for e in edges if not (e.source == self.me and e.target.name in named)] + listed
        if self.mode is not None:
            edges = under_heading(self.me, self.mode, sentence.lows, edges)
            self.modes[id(sentence)] = self.mode
        if self.owner is not None:
            edges = owned_uses(self.me, self.owner, edges)
            self.owners[id(sentence)] = self.owner
        return edges


def _under_headings(
    me: Party, labelled: list[tuple[str, Sentence]], headed: dict[int, str], edges: list[Edge]
) -> list[Edge]:
    """``edges`` of labelled lines, each read under its heading's mode ("decisions:" above
    "- ORM: Drizzle" makes it a choice)."""
    plain = {m.name for _, sentence in labelled if id(sentence) not in headed for m in sentence.mentions}
    for _, sentence in labelled:
        mode = headed.get(id(sentence))
        if mode is None:
            continue
        names = {m.name for m in sentence.mentions} - plain  # one also on a line of its own keeps that reading
        own = [e for e in edges if e.target.name in names]
        edges = [e for e in edges if e.target.name not in names] + under_heading(me, mode, sentence.lows, own)
    return edges


def _not_the_labels(me: Party, edges: list[Edge], noted: list[Edge]) -> list[Edge]:
    """``edges`` less the speaker's uses of tools a note's label gives a project ("Stack
    for Merganser: LiteDB"): the project's tools, not the writer's."""
    projects = {e.source for e in noted if e.source.kind == "project"}
    owned = {e.target.name for e in [*noted, *edges] if e.source in projects}  # "Ktor on Slatecask" too
    return [e for e in edges if not (e.source == me and e.relation == "USES" and e.target.name in owned)]


_OWNING: Final = frozenset(("have", "run", "own"))
_FORMER: Final = frozenset(("former", "previous", "ex"))
_NAMED: Final = polarity.NAME_STAND_IN  # stands for a word of a name while the polarity cues are read
_STANDING_IN: Final = frozenset(("it", "them"))  # what an object named before is called again


def _asserted(sentence: Sentence, edges: list[Edge]) -> list[Edge]:
    """The edges whose object the sentence asserts now (``polarity``); withdrawals stay."""
    inside = {i for m in sentence.mentions for i in range(m.start, m.end) if m.end - m.start > 1}
    # a cue inside a name ("the Harwood Debating Society") is no cue
    named = frozenset(i for m in sentence.mentions for i in range(m.start, m.end))
    scope = polarity.unasserted([_NAMED if i in inside else w for i, w in enumerate(sentence.lows)], named)
    if not scope:
        return edges
    # where an object named before is called again, and where it is used again ("... and now I use it")
    standing_in = [scope.get(i) for i, w in enumerate(sentence.lows) if w in _STANDING_IN]
    used_again = [scope.get(i) for i in _used_pronouns(sentence.lows)] if standing_in else []
    kept: list[Edge] = []
    for edge in edges:
        reasons = [scope.get(m.start) for m in sentence.mentions if m.name == edge.target.name]
        if not reasons:  # named in a sentence before: judged where the pronoun stands
            reasons = standing_in
        elif edge.relation == "USES":
            reasons = reasons + used_again
        unsaid = bool(reasons) and all(
            reason is not None and not (reason in polarity.TIMED and edge.relation in polarity.TIMELESS)
            for reason in reasons
        )
        if edge.retracted or not unsaid or _member_by_name(sentence, edge):
            kept.append(edge)
    return kept


def _member_by_name(sentence: Sentence, edge: Edge) -> bool:
    """Whether a person's membership is told by the noun phrase itself ("N from O", "N at
    the O"), which the clause's verb, its tense or its negation does not touch."""
    if edge.relation != "PART_OF" or edge.source.kind != "person":
        return False
    sources = [m.end for m in sentence.mentions if m.name == edge.source.name]
    targets = [m.start for m in sentence.mentions if m.name == edge.target.name]
    return any(sentence.lows[end:start] in _NAMING_LINKS for end in sources for start in targets)


_NAMING_LINKS: Final = (["from"], ["from", "the"], ["at"], ["at", "the"])


def _used_pronouns(lows: list[str]) -> list[int]:
    """Where "it"/"them" is the object of a verb of use ("... and now I use it")."""
    return [
        i
        for i, w in enumerate(lows)
        if w in _STANDING_IN and i > 0 and any(t.kind == "USE" for t in find_triggers(lows[i - 1 : i]))
    ]


def _quoted(sentence: Sentence) -> Sentence:
    """The sentence its facts quote: what a memory directive asks to keep ("Remember
    that Atlas uses MySQL." quotes "Atlas uses MySQL."), so the fact says it as the
    directive would (``directives.with_directives`` then keeps this fact, keyed by its
    subject, instead of the directive)."""
    content = directive_content(sentence.text)
    if content is None:
        return sentence
    return replace(sentence, text=content[:-1] + "." if content.endswith("?") else content)


def _label(sentence: Sentence) -> str:
    """The label of a note line such as "- DB: Postgres" or "Repo: billing-service"."""
    lows = sentence.lows[1:] if sentence.lows[:1] and sentence.lows[0] in BULLETS else sentence.lows
    if len(lows) > 2 and lows[1] == ":" and not sentence.question:
        return lows[0]
    return ""


def _labelled_edges(speaker: Party, labelled: list[tuple[str, Sentence]], owners: dict[int, Party]) -> list[Edge]:
    """A note's lines: the tools under stack labels, used by the note's project (named by a
    label or by the heading above the line, ``owners``) or the speaker."""
    projects = [m for label, s in labelled if label in PROJECT_LABELS for m in s.mentions if m.entity_type == "project"]
    user = projects[0] if projects else None
    edges: list[Edge] = []
    for label, sentence in labelled:
        project = Party.of(user) if user else owners.get(id(sentence))
        colon = sentence.lows.index(":") if ":" in sentence.lows else 0
        mine = not _FIRST_PERSON.isdisjoint(sentence.lows[:colon])  # "- Editor I use: Vim"
        source = speaker if mine else project or speaker
        for mention in sentence.mentions:
            if label in STACK_LABELS and mention.entity_type == "tool" and not ranked(sentence, mention):
                edges.append(Edge(source, "USES", Party.of(mention), 0.75))  # not "Editor: Zed over X"
            elif label in OWNER_LABELS and mention.entity_type == "person" and project:
                edges.append(Edge(Party.of(mention), "WORKS_ON", project, 0.75))
    return edges


def _terse_relations(speaker: Party, sentence: Sentence, clauses: list[Clause]) -> list[Edge]:
    """Statements without a verb: "Ansible for config, Terraform for provisioning", "we're
    a C# shop", "Our frontend: Vue + Vite", and "our Postgres cluster" (the speaker's)."""
    confidence = min(HEDGED if sentence.hedged else EXPLICIT, 0.75)
    edges: list[Edge] = []
    for clause in clauses:
        items, words = clause.items, clause.words
        triggers = find_triggers(words)
        negated = any(w in NEGATIONS for w in words)
        stops = [t.end for t in triggers if t.kind in ("RETRACT", "LEAVE")]  # "cancel my Peloton membership"
        preferring = any(t.kind in ("PREFER", "LIKE") for t in triggers)  # "I prefer my old X": a preference
        for index, item in enumerate(items):
            if not isinstance(item, Mention) or item.entity_type != "tool":
                continue
            after = items[index + 1] if index + 1 < len(items) else ""
            before = items[index - 1] if index else ""
            listed = _leads(items, index) or (bool(edges) and before == ",")
            stopped = any(end <= index for end in stops)
            stated = _shop(items, index) or (_owned(items, index) and not (negated or preferring or stopped))
            bare = not triggers and (
                (after == "for" and listed) or (":" in words[:4] and words[:1] in (["our"], ["my"]))
            )
            if stated or bare:
                edges.append(Edge(speaker, "USES", Party.of(item), confidence))
    return edges


def _shop(items: list[Item], index: int) -> bool:
    """ "we're a C# shop", "I have an eBay shop": the speaker's trade or their own shop;
    not "she runs a tiny Etsy shop"."""
    if items[index + 1 : index + 2] != ["shop"] or index < 2 or items[index - 1] not in ("a", "an"):
        return False
    owning = items[index - 2] in _OWNING and index >= 3 and items[index - 3] in ("i", "we")  # "I have an eBay shop"
    return owning or items[index - 2] in ("we're", "i'm", "im", "are", "am")


def _owned(items: list[Item], index: int) -> bool:
    """ "my Kindle", "my new MacBook Air": the speaker's, past one describing word (not
    a person, "my brother's", a verb's "-s", "my team uses", nor a role "as our X")."""
    before = items[index - 1] if index else ""
    if index >= 2 and items[index - 2] == "as":
        return False  # "we chose Toast as our POS": what the thing before is, no thing of its own
    if before in POSSESSIVE_USER:
        return True
    described = isinstance(before, str) and before.isalpha() and before.islower() and not before.endswith("s")
    former = before in _FORMER  # "my former Dell": the speaker's once
    return described and not former and index >= 2 and items[index - 2] in POSSESSIVE_USER and before not in gz.ROLES


def _listed_people(sentence: Sentence, last: Mention) -> list[Mention]:
    """The people named in a list joined by "and" that ends with ``last`` ("Ikaika, Mirela
    and Tenzin"); not a name addressed before a comma ("Thanks Ama, Kofi from X ..."), nor
    kin ("Mum, Dad and Kofi")."""
    lows = sentence.lows
    listed = list(takewhile(lambda m: m.name.lower() not in gz.ROLES, listed_before(lows, last, sentence.mentions)))
    first = listed[-1].start if listed else last.start
    joined = any(lows[m.end] != "," for m in listed) or (first >= 2 and lows[first - 1] in ("and", "&"))
    return listed if joined else []


def _former_role(lows: list[str], mention: Mention) -> bool:
    """Whether "former", "ex" or "previous" ("old", but for kin and friends) stands between
    the possessive and the person's role, before the name or after its comma."""
    before = lows[max(0, mention.start - 12) : mention.start]
    head = (mention.role or "").rsplit(" ", 1)[-1]
    if head in before:  # "my old boss at Rennick Data, Sunniva": up to the role's noun
        before = before[: len(before) - before[::-1].index(head)]
    before = before[-4:]
    after = lows[mention.end : mention.end + 4] if lows[mention.end : mention.end + 1] == [","] else []
    # "my old manager" is a former one; "my old friend" a friend of long standing
    former = _FORMER if mention.role in gz.FAMILIAR_ROLES else _FORMER | {"old"}
    for words in (before, after):
        owner = max((k for k, w in enumerate(words) if w in ("my", "our")), default=None)
        phrase = words[owner:] if owner is not None else []
        if former.intersection(phrase) and PREPOSITIONS.isdisjoint(phrase):  # not "my old desk to Sam"
            return True
    return False


def _leads(items: list[Item], index: int) -> bool:
    return all(isinstance(i, Mention) or i in (",", "and", "+", "&", "/", "-", "*") for i in items[:index])


def _role_relations(found: Found, sentence: Sentence) -> list[Edge]:
    """ "my manager Dave": the speaker's relation a role names, whatever the verb after it
    asserts ("my husband Anirudh cannot see the calendar"), unless a negation comes first
    or the role is a former one ("Kofi, my former business partner")."""
    return [
        Edge(
            found.speaker(),
            relation_of(mention.role, ours=said_as_ours(sentence.lows, mention.start)),
            Party.of(mention),
            EXPLICIT,
            mention.role,
        )
        for mention in sentence.mentions
        if mention.role
        and mention.mine
        and not NEGATIONS.intersection(sentence.lows[: mention.start])
        and not _former_role(sentence.lows, mention)
    ]


def _named_relations(found: Found, sentence: Sentence) -> list[Edge]:
    """Relations the names alone state: "Ivan from Yandex", "Yousician > Fender Play", A -> B."""
    edges: list[Edge] = []
    mentions = sentence.mentions
    for mention in mentions:
        if mention.entity_type in ("tool", "concept") and preferred_in_note(sentence, mention):
            edges.append(Edge(found.speaker(), "PREFERS", Party.of(mention), EXPLICIT))  # "Yousician > Fender Play"
    for left, right in pairwise(mentions):
        between = sentence.lows[left.end : right.start]
        if left.entity_type == "person" and right.entity_type == "organization":
            from_org = between in (["from"], ["from", "the"], [",", "from"], ["at"], [",", "at"], ["at", "the"], ["of"])
            owned = len(between) == 3 and between[0] == "'s" and between[2] == ","
            if from_org or owned:
                edges.append(Edge(Party.of(left), "PART_OF", Party.of(right), EXPLICIT))
            if from_org and "from" in between:  # "Ikaika, Mirela and Tenzin from the Greyfriars Data Guild"
                listed = _listed_people(sentence, left)
                edges.extend(Edge(Party.of(p), "PART_OF", Party.of(right), EXPLICIT) for p in listed)
        if between[:1] and between[0] in ARROWS and "depend" in sentence.text.lower():
            edges.append(Edge(Party.of(left), "DEPENDS_ON", Party.of(right), EXPLICIT))
    return edges


def _listed(
    found: Found, sentence: Sentence, header: tuple[Party, str] | None, edges: list[Edge]
) -> tuple[Party, str] | None:
    """Bullets under a header such as "Stack for Kestrel:" use what they list."""
    lows = sentence.lows
    if lows and lows[-1] == ":":
        if not any(low in ("stack", "tools", "tooling", "setup", "uses", "using") for low in lows):
            return None
        owner = stack_owner(sentence)
        if heading_mode(lows) != "noted" or (owner is None and "'s" in lows):
            return None  # "Rejected stack:", "Friend's stack:": not the writer's
        return (owner or found.speaker(), "USES")
    if header is None or not lows or lows[0] not in BULLETS:
        return None
    if not find_triggers(lows):
        first = sentence.mentions[:1]
        joined = [m for m in sentence.mentions[1:] if lows[m.start - 1] in ITEM_BREAKS]  # "- Postgres + Redis"
        for mention in first + joined:
            if mention.entity_type == "tool" and not on_trial(lows, mention.end):  # not "- Klaviyo (trial)"
                edges.append(Edge(header[0], header[1], Party.of(mention), EXPLICIT))
    return header
