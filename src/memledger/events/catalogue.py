"""The event catalogue of DESIGN.md: one frozen, tagged msgspec Struct per event.

Rules (STYLE.md section 3): tags are stable dotted strings; a field added with a
default needs no version bump; renaming, removing or retyping a field bumps
``schema_version`` and adds an upcaster in ``upcasters.py``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar, Literal

import msgspec

Confidence = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Text = Annotated[str, msgspec.Meta(min_length=1)]
ShortText = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
# What a context block cites: a memory id, a relationship's id (hashed when long) or an
# entity's id, which is its type, a colon and its normalised name: longer than a Name
# can be (lower-casing can lengthen a name too).
ItemId = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
# A conflict's id is its slot's: scope, scope key and normalised key (a ShortText,
# which case folding can lengthen).
MAX_SLOT_ID = 4000
SlotId = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_SLOT_ID)]
TurnIds = tuple[Annotated[str, msgspec.Meta(min_length=1, max_length=256)], ...]

ScopeKind = Literal["session", "project", "user", "org"]
Role = Literal["user", "assistant", "system", "tool"]
ItemKind = Literal["fact", "entity", "relationship"]
EntityType = Literal["person", "project", "tool", "concept", "organization"]
FactCategory = Literal[
    "preference",
    "decision",
    "constraint",
    "technical_fact",
    "procedure",
    "goal",
    "terminology",
    "task_update",
    "personal_fact",
    "lesson_learned",
]
PromotionKind = Literal["decision", "lesson_learned", "preference", "procedure", "task_update", "terminology"]


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", gc=False):
    """Base of every event. Subclasses set a stable ``tag`` and a ``schema_version``.

    ``gc=False`` (inherited): an event holds strings, numbers, and tuples and dicts of
    them, so it can be in no reference cycle, and the garbage collector need not
    track the many a read decodes.

    ``private_fields`` names the fields that hold what a person said (or ids made
    from it in plain text). The ledger keeps them apart from the chained payload,
    so that erasure can remove them (see ``codec.split``). They hold strings,
    lists of strings or None only, so their digest is the same when recomputed
    from what PostgreSQL returns.
    """

    schema_version: ClassVar[int] = 1
    private_fields: ClassVar[tuple[str, ...]] = ()


class Scopes(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """The scope keys a turn belongs to, narrowest first. Any may be absent. Strings
    only, so untracked by the garbage collector, as events are."""

    session: Name | None = None
    project: Name | None = None
    user: Name | None = None
    org: Name | None = None


class TurnRecorded(Event, tag="turn.recorded", frozen=True):
    """A user or assistant turn of a conversation, as it was said."""

    schema_version: ClassVar[int] = 2
    private_fields: ClassVar[tuple[str, ...]] = ("text", "speaker")
    turn_id: Name
    role: Role
    text: str
    scopes: Scopes = Scopes()
    subject: Name | None = None  # whose words these are, for erasure; defaults to scopes.user
    speaker: Name | None = None  # the speaker's name as a block shows it; erasable like the text


class FactExtracted(Event, tag="fact.extracted", frozen=True):
    """A fact about a subject (``key``) in one scope, with its source turns."""

    private_fields: ClassVar[tuple[str, ...]] = ("key", "statement", "value")
    memory_id: Name
    scope: ScopeKind
    scope_key: Name
    key: ShortText
    statement: Text
    category: FactCategory
    confidence: Confidence
    source_turns: TurnIds = ()
    value: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class EntityObserved(Event, tag="entity.observed", frozen=True):
    """A named entity seen in a turn; merged with others on name, type and tenant."""

    private_fields: ClassVar[tuple[str, ...]] = ("name", "aliases", "description")
    name: Name
    entity_type: EntityType
    confidence: Confidence
    aliases: tuple[Name, ...] = ()
    description: str | None = None
    source_turns: TurnIds = ()


class RelationshipObserved(Event, tag="relationship.observed", frozen=True):
    """A typed, directed edge between two entities (or from the user)."""

    # relationship_id is made of the endpoint names (keys.relationship_key).
    private_fields: ClassVar[tuple[str, ...]] = ("relationship_id", "source_name", "target_name", "context")
    relationship_id: Name
    source_name: Name
    source_type: EntityType | Literal["user"]
    relation: Annotated[str, msgspec.Meta(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
    target_name: Name
    target_type: EntityType
    confidence: Confidence
    context: str | None = None
    source_turns: TurnIds = ()


class MemoryReinforced(Event, tag="memory.reinforced", frozen=True):
    """An item was mentioned again: its confidence rises and last-seen moves."""

    # An entity's or relationship's id is made of names ("tool:postgresql").
    private_fields: ClassVar[tuple[str, ...]] = ("item_id",)
    item_id: Name
    item_kind: ItemKind
    confidence: Confidence | None = None
    source_turns: TurnIds = ()


class MemoryPromoted(Event, tag="memory.promoted", frozen=True):
    """A memory copied to a longer-lived scope, with the kind of lesson it is."""

    private_fields: ClassVar[tuple[str, ...]] = ("key", "statement")
    memory_id: Name
    kind: PromotionKind
    scope: ScopeKind
    scope_key: Name
    key: ShortText
    statement: Text
    confidence: Confidence = 1.0
    promoted_from: Name | None = None
    source_turns: TurnIds = ()


class MemoryRetracted(Event, tag="memory.retracted", frozen=True):
    """Soft delete of a fact, entity or relationship; nothing is lost."""

    private_fields: ClassVar[tuple[str, ...]] = ("item_id", "reason")
    item_id: Name
    item_kind: ItemKind
    reason: str = ""
    source_turns: TurnIds = ()


class MemoryRestored(Event, tag="memory.restored", frozen=True):
    """Undo of a retraction."""

    private_fields: ClassVar[tuple[str, ...]] = ("item_id", "reason")
    item_id: Name
    item_kind: ItemKind
    reason: str = ""


class ConflictResolved(Event, tag="conflict.resolved", frozen=True):
    """A person chose which of several conflicting facts stands."""

    # A conflict's id is its slot, made of the facts' key ("project:apollo:editor").
    private_fields: ClassVar[tuple[str, ...]] = ("conflict_id", "reason")
    conflict_id: SlotId
    chosen_memory_id: Name
    reason: str = ""
    resolved_by: Name | None = None


class ContextServed(Event, tag="context.served", frozen=True):
    """Which memory a context block held, for which request, rendered how."""

    private_fields: ClassVar[tuple[str, ...]] = ("request", "item_ids")
    request: str
    scopes: Scopes
    item_ids: tuple[ItemId, ...]
    selector_version: Name
    formatter_version: Name
    block_hash: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
    as_of: str | None = None
    empty_reason: str | None = None
    item_scores: tuple[float, ...] = ()
    style: Literal["text", "xml"] = "text"
    max_chars: int = 5000
    max_tokens: int | None = None
    token_model: str | None = None
    # Where each read model stood when the items were read ("tx:position"), so a
    # replay can rebuild the same items from the ledger.
    read_cursors: dict[str, str] = {}


class SubjectErased(Event, tag="subject.erased", frozen=True):
    """A person's words were erased on request (``whole_tenant``: everyone's).

    ``erased_events`` counts the events whose private fields this erasure removed;
    ``verify`` checks that every erased event of a tenant is accounted for.
    ``turn_ids`` lists the erased turns, unless there were more than fit
    (``turns`` counts them either way).
    """

    subject: Name
    reason: str = ""
    turn_ids: TurnIds = ()
    whole_tenant: bool = False
    turns: int = 0
    erased_events: int = 0


ExtractionMode = Literal["heuristic", "llm", "hybrid"]


class TenantSettingsChanged(Event, tag="tenant.settings_changed", frozen=True):
    """A tenant's switches changed; fields left None keep their previous value."""

    capture: bool | None = None
    recall: bool | None = None
    auto_promote: bool | None = None
    broad_scope_writes: bool | None = None
    changed_by: Name | None = None
    # Optional, so events without it decode as they are (no version bump).
    extraction_mode: ExtractionMode | None = None


class ApiKeyIssued(Event, tag="api_key.issued", frozen=True):
    """An API key bound to this tenant was created; only its hash is kept."""

    key_id: Name
    key_sha256: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
    label: str = ""
    issued_by: Name | None = None


class ApiKeyRevoked(Event, tag="api_key.revoked", frozen=True):
    """An API key stopped working."""

    key_id: Name
    reason: str = ""


class EntitiesMerged(Event, tag="entities.merged", frozen=True):
    """Entities found to be one: each of ``merged_entity_ids`` reads as ``kept_entity_id``
    from now on; no row is deleted, and ``EntitiesSplit`` undoes it. ``rule`` and
    ``score`` are the evidence (which rule matched, how strongly), ``merged_by`` who or
    what decided."""

    # Entity ids are made of names ("person:ada lovelace").
    private_fields: ClassVar[tuple[str, ...]] = ("kept_entity_id", "merged_entity_ids", "evidence")
    kept_entity_id: ItemId
    merged_entity_ids: tuple[ItemId, ...]  # never empty when made; empty once erased
    rule: Name
    score: Confidence
    merged_by: Name
    evidence: str = ""


class EntitiesSplit(Event, tag="entities.split", frozen=True):
    """Undo of a merge: each of ``merged_entity_ids`` is its own entity again, and is
    never proposed for a merge with ``kept_entity_id`` again."""

    private_fields: ClassVar[tuple[str, ...]] = ("kept_entity_id", "merged_entity_ids", "reason")
    kept_entity_id: ItemId
    merged_entity_ids: tuple[ItemId, ...]  # never empty when made; empty once erased
    split_by: Name
    reason: str = ""


AnyEvent = (
    TurnRecorded
    | FactExtracted
    | EntityObserved
    | RelationshipObserved
    | MemoryReinforced
    | MemoryPromoted
    | MemoryRetracted
    | MemoryRestored
    | ConflictResolved
    | ContextServed
    | SubjectErased
    | TenantSettingsChanged
    | ApiKeyIssued
    | ApiKeyRevoked
    | EntitiesMerged
    | EntitiesSplit
)

ALL_EVENT_TYPES: tuple[type[Event], ...] = (
    TurnRecorded,
    FactExtracted,
    EntityObserved,
    RelationshipObserved,
    MemoryReinforced,
    MemoryPromoted,
    MemoryRetracted,
    MemoryRestored,
    ConflictResolved,
    ContextServed,
    SubjectErased,
    TenantSettingsChanged,
    ApiKeyIssued,
    ApiKeyRevoked,
    EntitiesMerged,
    EntitiesSplit,
)
