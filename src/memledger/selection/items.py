"""Read-model rows as selectable items: one conversion for the live path (query hits)
and the as-of path (rows folded in memory), so a replayed block renders the same. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from memledger.events.keys import edge_id
from memledger.selection.types import SelectedItem


class FactLike(Protocol):
    """What a fact row and a fact query hit have in common."""

    @property
    def memory_id(self) -> str: ...

    @property
    def statement(self) -> str: ...

    @property
    def confidence(self) -> float: ...

    @property
    def scope(self) -> str: ...

    @property
    def scope_key(self) -> str: ...

    @property
    def category(self) -> str: ...

    @property
    def conflicted(self) -> bool: ...

    @property
    def slot_id(self) -> str: ...

    @property
    def source_turns(self) -> Sequence[str]: ...

    @property
    def valid_from(self) -> datetime: ...


class EntityLike(Protocol):
    """What an entity row and an entity query hit have in common."""

    @property
    def entity_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def entity_type(self) -> str: ...

    @property
    def description(self) -> str | None: ...

    @property
    def confidence(self) -> float: ...

    @property
    def source_turns(self) -> Sequence[str]: ...


class EdgeLike(Protocol):
    """What a relationship row and a graph edge have in common."""

    @property
    def relationship_key(self) -> str: ...

    @property
    def source_name(self) -> str: ...

    @property
    def relation(self) -> str: ...

    @property
    def target_name(self) -> str: ...

    @property
    def context(self) -> str | None: ...

    @property
    def confidence(self) -> float: ...

    @property
    def source_turns(self) -> Sequence[str]: ...


def fact_item(fact: FactLike) -> SelectedItem:
    """A fact as a selectable item."""
    return SelectedItem(
        item_id=fact.memory_id,
        kind="fact",
        text=fact.statement,
        confidence=fact.confidence,
        score=0.0,
        scope=fact.scope,  # type: ignore[arg-type]
        scope_key=fact.scope_key,
        category=fact.category,
        conflicted=fact.conflicted,
        conflict_id=fact.slot_id if fact.conflicted else None,
        source_turns=tuple(fact.source_turns),
        valid_from=fact.valid_from,
    )


def entity_item(entity: EntityLike) -> SelectedItem:
    """An entity as a selectable item: "Sarah (person): colleague"."""
    described = f"{entity.name} ({entity.entity_type})" + (f": {entity.description}" if entity.description else "")
    return SelectedItem(
        item_id=entity.entity_id,
        kind="entity",
        text=described,
        confidence=entity.confidence,
        score=0.0,
        source_turns=tuple(entity.source_turns),
    )


def edge_text(edge: EdgeLike) -> str:
    """An edge as a sentence: "alice USES FastAPI (for Phoenix)"."""
    context = f" ({edge.context})" if edge.context else ""
    return f"{edge.source_name} {edge.relation} {edge.target_name}{context}"


def edge_item(edge: EdgeLike) -> SelectedItem:
    """A relationship as a selectable item, cited by its key, or by the id its events
    carry when the key (made of two names) is too long to be an id."""
    return SelectedItem(
        item_id=edge_id(edge.relationship_key),
        kind="relationship",
        text=edge_text(edge),
        confidence=edge.confidence,
        score=0.0,
        source_turns=tuple(edge.source_turns),
    )
