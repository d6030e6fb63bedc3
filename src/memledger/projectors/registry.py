"""The projectors memledger runs, by name."""

from __future__ import annotations

from memledger.adapters.embedding import Embedder, offline
from memledger.errors import NotFound
from memledger.projectors.api_keys import ApiKeysProjector
from memledger.projectors.base import Projector
from memledger.projectors.embeddings import EmbeddingsProjector
from memledger.projectors.entities import EntitiesProjector
from memledger.projectors.facts import FactsProjector
from memledger.projectors.relationships import RelationshipsProjector
from memledger.projectors.turns import TurnsProjector


class _Configured:
    """The embedder of this process's embeddings projector. The composition root
    sets it from the settings (``bootstrap.connect``); until then the offline
    default is used. Embedders load lazily, so holding one costs nothing."""

    embedder: Embedder | None = None


def use_embedder(embedder: Embedder) -> None:
    """Make ``embedder`` the one the embeddings projector uses in this process."""
    _Configured.embedder = embedder


def embedder() -> Embedder:
    """The embedder the embeddings projector uses in this process."""
    return _Configured.embedder or offline()


def all_projectors() -> tuple[Projector, ...]:
    """Every projector, in the order they are run."""
    return (
        TurnsProjector(),
        FactsProjector(),
        EntitiesProjector(),
        RelationshipsProjector(),
        ApiKeysProjector(),
        EmbeddingsProjector(embedder()),
    )


def by_name(name: str) -> Projector:
    """The projector called ``name``; ``NotFound`` lists the names there are."""
    for projector in all_projectors():
        if projector.name == name:
            return projector
    names = ", ".join(p.name for p in all_projectors())
    raise NotFound(f"no projection named {name!r}; there are: {names}")
