"""From candidates to events: thresholds, limits, cleaning, the secret guard, ids. Pure.

- Confidence at or above 0.7 is stored; 0.5 to 0.7 is stored and shows as
  low-confidence in the read models; below 0.5 is dropped and counted.
- Per conversation at most ``max_entities`` entity and ``max_relationships``
  relationship observations; beyond that they are skipped and counted.
- Names lose control characters and are cut to 200 characters, and further if
  their normalised form (NFKC, which can turn one character into 18) would be
  longer: it keys the read models and names the entity's stream. Entity names
  (and the ends of relationships) keep 13 characters less, so that an entity's
  id ("organization:" and the name) is itself a name of 200 characters at most.
- Anything that looks like a credential is refused and counted, and so is every
  candidate of a turn whose text holds one.
- Ids are derived from content, so the same fact said again gets the same id
  (and reinforces instead of duplicating), and a retried batch appends nothing new.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from memledger.events.catalogue import (
    EntityObserved,
    Event,
    FactExtracted,
    MemoryPromoted,
    MemoryRetracted,
    RelationshipObserved,
    ScopeKind,
    Scopes,
)
from memledger.events.envelope import Metadata, NewEvent
from memledger.events.keys import (
    MAX_NAME_LENGTH,
    edge_id,
    entity_id,
    item_stream,
    normalise_name,
    normalise_statement,
    relationship_key,
)
from memledger.extraction.protocol import (
    DirectiveCandidate,
    FactCandidate,
    TurnExtraction,
    TurnText,
)
from memledger.extraction.secrets import find_secret

STORE_THRESHOLD = 0.5
MAX_FACTS_PER_TURN = 20
MAX_ENTITY_NAME_LENGTH = MAX_NAME_LENGTH - len("organization:")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# Format characters (Unicode Cf: zero-width spaces and joiners, soft hyphens, bidi
# controls): invisible, so "sk-pro\u200bj-..." slipped past the secret guard and
# "Doc\u200bker" became a second Docker that renders (and is cited) as the first.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]")
_NARROWER: dict[ScopeKind, tuple[ScopeKind, ...]] = {
    "session": ("session",),
    "project": ("project", "session"),
    "user": ("user", "project", "session"),
    "org": ("org", "user", "project", "session"),
}


@dataclass
class Counts:
    """What one conversation has produced and what the policy held back."""

    entities: int = 0
    relationships: int = 0  # relationships and retractions of relationships
    facts: int = 0
    skipped_entities: int = 0
    skipped_relationships: int = 0
    skipped_facts: int = 0
    dropped_low_confidence: int = 0
    refused_secrets: int = 0
    refused_kinds: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Policy:
    """The limits in force (from settings and the tenant's switches)."""

    max_entities: int = 20
    max_relationships: int = 50
    max_facts: int = 1000
    auto_promote: bool = False
    broad_scope_writes: bool = False  # may extraction write the user and org scopes?


def clean_text(text: str) -> str:
    """Control characters replaced by spaces, invisible ones removed, whitespace collapsed."""
    return " ".join(_CONTROL.sub(" ", _INVISIBLE.sub("", text)).split())


def clean_name(name: str, limit: int = MAX_NAME_LENGTH) -> str:
    """Control characters stripped, invisible ones removed, whitespace collapsed, at most
    ``limit`` characters, in its normalised form too (``normalise_name``)."""
    cleaned = clean_text(name)[:limit]
    if len(normalise_name(cleaned)) <= limit:
        return cleaned
    low, high = 0, len(cleaned) - 1  # the longest prefix that fits lies in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if len(normalise_name(cleaned[:middle])) <= limit:
            low = middle
        else:
            high = middle - 1
    return cleaned[:low].rstrip()


def short_hash(*parts: str) -> str:
    """A stable 16-hex-digit id from ``parts``."""
    # surrogatepass: the same digest for any storable text, and one (not an error) for any other
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def scope_key(scopes: Scopes, wanted: ScopeKind, *, broad: bool = True) -> tuple[ScopeKind, str]:
    """The scope to store in: ``wanted`` if the turn has its key, else the next narrower.
    Without ``broad``, the user and org scopes are skipped (only promotion writes them)."""
    for kind in _NARROWER[wanted]:
        if not broad and kind in ("user", "org"):
            continue
        key = getattr(scopes, kind)
        if key:
            return kind, key
    return "session", "default"


def conversation_of(turn: TurnText) -> str:
    """The conversation limits are counted per: the session."""
    return turn.scopes.session or "default"


@dataclass
class _Out:
    turn: TurnText
    extractor: str  # the one asked: its name and version make the events' ids
    version: str
    answered_by: tuple[str, str] | None = None  # the one whose candidates these are, if another
    events: list[tuple[str, NewEvent]] = field(default_factory=list)

    def add(self, stream: str, event: Event) -> None:
        n = len(self.events)
        name, version = self.answered_by or (self.extractor, self.version)
        self.events.append(
            (
                stream,
                NewEvent(
                    event=event,
                    event_id=f"x:{self.extractor}@{self.version}:{self.turn.event_id}:{n}",
                    occurred_at=self.turn.occurred_at,
                    metadata=Metadata(
                        causation_id=self.turn.event_id,
                        correlation_id=self.turn.turn_id,
                        actor=f"extractor:{name}",
                        extractor=name,
                        extractor_version=version,
                    ),
                ),
            )
        )


def _refused(counts: Counts, *texts: str | None) -> bool:
    """Whether any of ``texts`` holds a credential (counted once if so)."""
    for text in texts:
        kind = find_secret(text) if text else None
        if kind is not None:
            counts.refused_secrets += 1
            counts.refused_kinds.append(kind)
            return True
    return False


def _refused_turn(turn: TurnText, found: TurnExtraction, counts: Counts) -> bool:
    """Whether the turn's own text holds a credential; if so, every candidate of it is
    refused and counted. Checking each candidate alone is not enough: the value, once
    apart from its "password is", looks like any name ("the user DECIDED Tr0ub4dor&3x"),
    and a model may split, trim or paraphrase it, so which candidate carries it (or a
    piece of it) cannot be told reliably. Losing the turn's other memories costs less."""
    kind = find_secret(turn.text)
    if kind is None:
        return False
    found_parts = (found.entities, found.relationships, found.retractions, found.facts, found.directives)
    refused = sum(len(part) for part in found_parts)
    counts.refused_secrets += refused
    counts.refused_kinds.extend([kind] * refused)
    return True


def _keep(counts: Counts, confidence: float) -> bool:
    if confidence < STORE_THRESHOLD:
        counts.dropped_low_confidence += 1
        return False
    return True


def to_events(
    turn: TurnText,
    found: TurnExtraction,
    counts: Counts,
    policy: Policy,
    *,
    extractor: str,
    version: str,
) -> list[tuple[str, NewEvent]]:
    """The (stream, event) pairs one turn's candidates become; ``counts`` is updated.
    ``extractor`` and ``version`` name the extractor asked (the events' ids are made
    of them); the metadata names the one that answered (``found.answered_by``).
    Only a user's turn becomes memories: an assistant's turn is context for the
    extractor, and what the assistant suggests says nothing about the user. A turn
    whose text holds a credential becomes nothing (``_refused_turn``)."""
    if turn.role != "user" or _refused_turn(turn, found, counts):
        return []
    out = _Out(turn, extractor, version, found.answered_by)
    _entities(out, found, counts, policy)
    _relationships(out, found, counts, policy)
    for i, fact in enumerate(found.facts):
        if i >= MAX_FACTS_PER_TURN:  # one turn does not state more; an answer that says so is flooding
            counts.skipped_facts += len(found.facts) - i
            break
        _fact(out, fact, counts, policy)
    for directive in found.directives:
        _directive(out, directive, counts, policy)
    return out.events


def follow_up(
    turn: TurnText, pairs: list[tuple[str, NewEvent]], events: Sequence[Event], *, extractor: str, version: str
) -> list[tuple[str, NewEvent]]:
    """``pairs`` (``to_events`` of ``turn``), then ``events`` (retractions the turn asked
    for: ``service.forgetting``), numbered on from them as the same extraction's."""
    out = _Out(turn, extractor, version)
    out.events = list(pairs)
    for event in events:
        out.add(item_stream(str(getattr(event, "item_id", turn.turn_id))), event)
    return out.events


def _entities(out: _Out, found: TurnExtraction, counts: Counts, policy: Policy) -> None:
    for cand in found.entities:
        name = clean_name(cand.name, MAX_ENTITY_NAME_LENGTH)
        if not name or not normalise_name(name) or not _keep(counts, cand.confidence):
            continue
        if _refused(counts, name, cand.context):
            continue
        if counts.entities >= policy.max_entities:
            counts.skipped_entities += 1
            continue
        counts.entities += 1
        aliases = tuple(a for a in (clean_name(a, MAX_ENTITY_NAME_LENGTH) for a in cand.aliases) if a and a != name)
        event = EntityObserved(
            name=name,
            entity_type=cand.entity_type,
            confidence=cand.confidence,
            aliases=aliases,
            description=clean_name(cand.context) if cand.context else None,
            source_turns=(out.turn.turn_id,),
        )
        out.add(f"entity:{entity_id(cand.entity_type, name)}", event)


def _relationships(out: _Out, found: TurnExtraction, counts: Counts, policy: Policy) -> None:
    for retraction in found.retractions:
        source = clean_name(retraction.source_name, MAX_ENTITY_NAME_LENGTH)
        target = clean_name(retraction.target_name, MAX_ENTITY_NAME_LENGTH)
        if not normalise_name(source) or not normalise_name(target) or _refused(counts, source, target):
            continue
        if not _counted(counts, policy):
            continue
        key = edge_id(
            relationship_key(retraction.source_type, source, retraction.relation, retraction.target_type, target)
        )
        event = MemoryRetracted(
            item_id=key,
            item_kind="relationship",
            reason=retraction.reason,
            source_turns=(out.turn.turn_id,),
        )
        out.add(f"relationship:{key}", event)
    for cand in found.relationships:
        source = clean_name(cand.source_name, MAX_ENTITY_NAME_LENGTH)
        target = clean_name(cand.target_name, MAX_ENTITY_NAME_LENGTH)
        if not normalise_name(source) or not normalise_name(target) or not _keep(counts, cand.confidence):
            continue
        if _refused(counts, source, target, cand.context) or not _counted(counts, policy):
            continue
        key = edge_id(relationship_key(cand.source_type, source, cand.relation, cand.target_type, target))
        observed = RelationshipObserved(
            relationship_id=key,
            source_name=source,
            source_type=cand.source_type,
            relation=cand.relation,
            target_name=target,
            target_type=cand.target_type,
            confidence=cand.confidence,
            context=clean_name(cand.context) if cand.context else None,
            source_turns=(out.turn.turn_id,),
        )
        out.add(f"relationship:{key}", observed)


def fact_memory_id(scope: str, key_of_scope: str, key: str, statement: str) -> str:
    """The id of a fact: the same statement on the same subject and scope, the same id."""
    return "fact-" + short_hash(scope, key_of_scope, normalise_name(key), normalise_statement(statement))


def _counted(counts: Counts, policy: Policy) -> bool:
    """Whether the conversation may have one more relationship (or retraction of one)."""
    if counts.relationships >= policy.max_relationships:
        counts.skipped_relationships += 1
        return False
    counts.relationships += 1
    return True


def _fact(out: _Out, fact: FactCandidate, counts: Counts, policy: Policy) -> None:
    statement = clean_text(fact.statement)
    key = clean_name(fact.key)
    if not statement or not normalise_name(key) or not _keep(counts, fact.confidence):
        return
    if _refused(counts, statement, fact.value, key):
        return
    if counts.facts >= policy.max_facts:
        counts.skipped_facts += 1
        return
    counts.facts += 1
    scope, key_of_scope = _fact_scope(out.turn.scopes, fact, policy)
    memory_id = fact_memory_id(scope, key_of_scope, key, statement)
    event = FactExtracted(
        memory_id=memory_id,
        scope=scope,
        scope_key=key_of_scope,
        key=key,
        statement=statement,
        category=fact.category,
        confidence=fact.confidence,
        value=fact.value,
        source_turns=(out.turn.turn_id,),
    )
    out.add(item_stream(memory_id), event)


def _fact_scope(scopes: Scopes, fact: FactCandidate, policy: Policy) -> tuple[ScopeKind, str]:
    """Where a fact is stored. A person's own personal fact or preference, said by
    them ("I'm vegetarian."), goes to their user scope: their next conversation needs
    it, and only their requests read it. Anything else stays out of the user and org
    scopes unless the tenant allows ``broad_scope_writes``."""
    if fact.about_speaker and scopes.user:
        return "user", scopes.user
    return scope_key(scopes, fact.scope, broad=policy.broad_scope_writes)


def directive_scope(directive: DirectiveCandidate) -> ScopeKind:
    """The named scope, or the least lasting one that fits the kind (never user or org)."""
    if directive.scope is not None:
        return directive.scope
    return "session" if directive.kind == "task_update" else "project"


def _directive(out: _Out, directive: DirectiveCandidate, counts: Counts, policy: Policy) -> None:
    statement, key = clean_text(directive.statement), clean_name(directive.key)
    if not statement or not key or _refused(counts, statement):
        return
    directive = msgspec.structs.replace(directive, statement=statement, key=key)
    scope, key_of_scope = scope_key(out.turn.scopes, directive_scope(directive))
    if not policy.auto_promote:  # still worth keeping, as an ordinary fact of the turn
        _fact(
            out,
            FactCandidate(
                key=directive.key,
                statement=directive.statement,
                category=directive.kind,
                confidence=0.9,
                scope=scope,
            ),
            counts,
            policy,  # an ordinary fact: kept from the user and org scopes unless broad_scope_writes is on
        )
        return
    memory_id = "promoted-" + short_hash(scope, key_of_scope, directive.key, directive.statement)
    event = MemoryPromoted(
        memory_id=memory_id,
        kind=directive.kind,
        scope=scope,
        scope_key=key_of_scope,
        key=directive.key,
        statement=directive.statement,
        confidence=1.0,
        source_turns=(out.turn.turn_id,),
    )
    out.add(item_stream(memory_id), event)
