"""Typed events: the catalogue, the codec and the upcasters. Pure: no I/O."""

from memledger.events.catalogue import (
    ALL_EVENT_TYPES,
    AnyEvent,
    ConflictResolved,
    ContextServed,
    EntityObserved,
    Event,
    FactExtracted,
    MemoryPromoted,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
    RelationshipObserved,
    Scopes,
    SubjectErased,
    TenantSettingsChanged,
    TurnRecorded,
)
from memledger.events.codec import decode, encode, event_class, tag_of
from memledger.events.envelope import Metadata, NewEvent, Recorded

__all__ = [
    "ALL_EVENT_TYPES",
    "AnyEvent",
    "ConflictResolved",
    "ContextServed",
    "EntityObserved",
    "Event",
    "FactExtracted",
    "MemoryPromoted",
    "MemoryReinforced",
    "MemoryRestored",
    "MemoryRetracted",
    "Metadata",
    "NewEvent",
    "Recorded",
    "RelationshipObserved",
    "Scopes",
    "SubjectErased",
    "TenantSettingsChanged",
    "TurnRecorded",
    "decode",
    "encode",
    "event_class",
    "tag_of",
]
