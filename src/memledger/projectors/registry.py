"""The projectors memledger runs, by name."""

from __future__ import annotations

from memledger.adapters.embedding import Embedder, offline
from memledger.errors import NotFound
from memledger.projectors.api_keys import ApiKeysProjector
from memledger.projectors.base import Projector
from memledger.projectors.embeddings.projector import EmbeddingsProjector
from memledger.projectors.entities.projector import EntitiesProjector
from memledger.projectors.facts.projector import FactsProjector
from memledger.projectors.relationships.projector import RelationshipsProjector
from memledger.projectors.turns.projector import TurnsProjector


def all_projectors(embedder: Embedder | None = None) -> tuple[Projector, ...]:
    """Every projector, in the order they are run; the embeddings projector embeds with
    ``embedder`` (one model, or a chain: ``adapters.embedding_chain``), the offline
    default when None. Embedders load lazily, so building these costs nothing."""
    return (
        TurnsProjector(),
        FactsProjector(),
        EntitiesProjector(),
        RelationshipsProjector(),
        ApiKeysProjector(),
        EmbeddingsProjector(embedder or offline()),
    )


def by_name(name: str, embedder: Embedder | None = None) -> Projector:
    """The projector called ``name`` (the embeddings one with ``embedder``, as in
    ``all_projectors``); ``NotFound`` lists the names there are."""
    for projector in all_projectors(embedder):
        if projector.name == name:
            return projector
    names = ", ".join(p.name for p in all_projectors())
    raise NotFound(f"no projection named {name!r}; there are: {names}")
