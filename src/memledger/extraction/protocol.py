"""What an extractor is given and what it returns. Pure data; no I/O.

An extractor proposes candidates; ``policy`` decides what becomes an event
(confidence thresholds, limits, name cleaning, the secret guard, ids).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Literal, Protocol

import msgspec

from memledger.events.catalogue import (
    EntityType,
    ExtractionMode,
    FactCategory,
    PromotionKind,
    Role,
    ScopeKind,
    Scopes,
)

SourceType = EntityType | Literal["user"]


class TurnText(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded turn, as an extractor sees it."""

    tenant_id: str
    turn_id: str
    event_id: str
    role: Role
    text: str
    scopes: Scopes
    occurred_at: datetime
    subject: str | None = None  # whose words these are, when not the scopes' user
    # The project's name as the text says it ("atlas"), when its scope key is stored as a
    # keyed hash that a word of the text hashes to (``service.extraction_inputs.project_names``).
    project_name: str | None = None
    # The tenant's extraction mode (``TenantSettingsChanged.extraction_mode``), filled in by
    # the worker; None: the configured default. Only ``extraction.modes`` reads it.
    mode: ExtractionMode | None = None

    @property
    def speaker(self) -> str | None:
        """Whose words the turn holds: its subject, else its user scope key; None if unknown."""
        return self.subject or self.scopes.user

    @property
    def user(self) -> str:
        """The name user-sourced relationships start from: the user scope key, or "user"."""
        return self.scopes.user or "user"


class EntityCandidate(msgspec.Struct, frozen=True, kw_only=True):
    """A named entity: "Sarah"/person, with context such as "colleague"."""

    name: str
    entity_type: EntityType
    confidence: float
    context: str | None = None
    aliases: tuple[str, ...] = ()


class RelationshipCandidate(msgspec.Struct, frozen=True, kw_only=True):
    """A directed, typed edge; ``source_type`` "user" means the speaker."""

    source_name: str
    source_type: SourceType
    relation: str
    target_name: str
    target_type: EntityType
    confidence: float
    context: str | None = None


class RetractionCandidate(msgspec.Struct, frozen=True, kw_only=True):
    """An edge the speaker says no longer holds ("I don't use X anymore")."""

    source_name: str
    source_type: SourceType
    relation: str
    target_name: str
    target_type: EntityType
    reason: str = ""


class FactCandidate(msgspec.Struct, frozen=True, kw_only=True):
    """A fact about a subject. ``key`` names the subject so that later facts on it
    conflict with or supersede this one ("frontend framework", "deploy day")."""

    key: str
    statement: str
    category: FactCategory
    confidence: float
    scope: ScopeKind = "user"
    value: str | None = None
    # The speaker's own personal fact or preference, said by them ("I'm vegetarian"):
    # the policy keeps it in their user scope, where their next conversation finds it.
    about_speaker: bool = False


class DirectiveCandidate(msgspec.Struct, frozen=True, kw_only=True):
    """An explicit memory directive in a user turn: "decision (project): we ship on Fridays"."""

    kind: PromotionKind
    statement: str
    key: str
    scope: ScopeKind | None = None  # None: the least lasting scope that fits


class TurnExtraction(msgspec.Struct, frozen=True, kw_only=True):
    """Everything an extractor proposes for one turn."""

    entities: tuple[EntityCandidate, ...] = ()
    relationships: tuple[RelationshipCandidate, ...] = ()
    retractions: tuple[RetractionCandidate, ...] = ()
    facts: tuple[FactCandidate, ...] = ()
    directives: tuple[DirectiveCandidate, ...] = ()
    # (name, version) of the extractor that proposed these when it is not the one
    # asked (a fallback answered); their events' metadata names it.
    answered_by: tuple[str, str] | None = None
    # Spans of the text the extractor judged worth remembering but could not settle: a
    # name it could neither type nor place in a relationship or fact, a relation trigger
    # missing an end ("switched to" and no target), a clause it read only in part. Never
    # stored; a hybrid extractor sends a turn with any to the model (docs/llm-extraction.md).
    unsettled: tuple[str, ...] = ()


class Extractor(Protocol):
    """Turns a batch of turns into candidates, per turn id.

    ``name`` and ``version`` go into every event's metadata; a new version means
    every turn is extracted again (once) by it. It is given one tenant's turns at a
    time (``extract_per_tenant``): a turn id is unique in its tenant only.
    """

    name: str
    version: str

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        """Candidates for each turn id of ``turns`` (a turn may map to nothing)."""


TurnKey = tuple[str, str]  # (tenant id, turn id)


def extract_per_tenant(extractor: Extractor, turns: Sequence[TurnText]) -> dict[TurnKey, TurnExtraction]:
    """``extractor``'s candidates for ``turns``, asked one tenant at a time (in batch
    order), by (tenant, turn id). Two tenants may give a turn the same id ("1",
    "msg-0"): keyed by the id alone, one tenant's words became the other's memory. And
    no model call sees two tenants' words together."""
    by_tenant: dict[str, list[TurnText]] = {}
    for turn in turns:
        by_tenant.setdefault(turn.tenant_id, []).append(turn)
    return {
        (tenant, turn_id): extraction
        for tenant, theirs in by_tenant.items()
        for turn_id, extraction in extractor.extract(theirs).items()
    }
