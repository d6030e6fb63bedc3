"""The projectors memledger runs, by name."""

from __future__ import annotations

from memledger.errors import NotFound
from memledger.projectors.base import Projector
from memledger.projectors.entities import EntitiesProjector
from memledger.projectors.facts import FactsProjector
from memledger.projectors.relationships import RelationshipsProjector
from memledger.projectors.turns import TurnsProjector


def all_projectors() -> tuple[Projector, ...]:
    """Every projector, in the order they are run."""
    return (TurnsProjector(), FactsProjector(), EntitiesProjector(), RelationshipsProjector())


def by_name(name: str) -> Projector:
    """The projector called ``name``; ``NotFound`` lists the names there are."""
    for projector in all_projectors():
        if projector.name == name:
            return projector
    names = ", ".join(p.name for p in all_projectors())
    raise NotFound(f"no projection named {name!r}; there are: {names}")
