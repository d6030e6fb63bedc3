"""The projectors memledger runs, by name."""

from __future__ import annotations

from memledger.adapters.embedding import Embedder, offline
from memledger.adapters.embedding_chain import as_chain
from memledger.errors import NotFound
from memledger.projectors import embedding_queries
from memledger.projectors.api_keys import ApiKeysProjector
from memledger.projectors.base import Projector
from memledger.projectors.embeddings import EmbeddingsProjector
from memledger.projectors.entities import EntitiesProjector
from memledger.projectors.facts import FactsProjector
from memledger.projectors.relationships import RelationshipsProjector
from memledger.projectors.turns import TurnsProjector


class _Configured:
    """The embedder of this process's embeddings projector (one model, or a chain:
    ``adapters.embedding_chain``, an embedder whose ``embed`` is its first model's).
    The composition root sets it from the settings (``bootstrap.connect``); until
    then the offline default is used. Embedders load lazily, so holding one costs
    nothing."""

    embedder: Embedder | None = None


def use_embedder(embedder: Embedder) -> None:
    """Make ``embedder`` the one the embeddings projector uses in this process; its
    chain's models are the ones a tenant's rows may be of."""
    _Configured.embedder = embedder
    embedding_queries.use_chain(as_chain(embedder).models)


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
