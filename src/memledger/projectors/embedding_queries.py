"""Queries over the embeddings read model: the nearest items to a vector (one
model per tenant, checked), the texts an item's rows hold, and the deletes erasure
needs. The projector that writes the table is ``embeddings``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import msgspec
import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

from memledger.errors import EmbeddingMismatch
from memledger.projectors.embeddings import DIM, embeddings, in_keys, stored_models


class Neighbour(msgspec.Struct, frozen=True):
    """An item near a query vector; ``distance`` is cosine distance (0 = same direction)."""

    item_kind: str
    item_id: str
    distance: float


def nearest(
    conn: Connection,
    tenant_id: str,
    query_vector: Sequence[float],
    model: str,
    kinds: Iterable[str],
    k: int,
) -> list[Neighbour]:
    """The tenant's ``k`` items of ``kinds`` nearest ``query_vector``, nearest first.

    ``query_vector`` must come from ``model``: if the tenant's vectors were made by
    another model or have another dimension, raises ``EmbeddingMismatch`` (never an
    empty answer). A tenant with no vectors gets []. Uses the HNSW index with
    iterative scans, so the tenant filter does not starve the top ``k``; sets
    ``hnsw.iterative_scan`` for the caller's transaction only (SET LOCAL).

    The search asks for ``model``'s vectors only, and a tenant's vectors all come
    from one model; so rows found prove the model matches, and the tenant's stored
    model is looked up (one more statement) only when none are found.
    """
    wanted = sorted(set(kinds))
    if k <= 0 or not wanted:
        return []
    if len(query_vector) == DIM:
        # The index returns its ef_search nearest rows of all tenants; without
        # iterative scans the tenant filter would drop most (PERFORMANCE-NOTES.md).
        conn.execute(_ITERATIVE_SCAN)
        params = {"tenant_id": tenant_id, "kinds": wanted, "model": model, "query": list(query_vector), "k": k}
        found = [Neighbour(r[0], r[1], float(r[2])) for r in conn.execute(_NEAREST, params).all()]
        if found:
            return found
    check_model(conn, tenant_id, model, len(query_vector))
    return []


def check_model(conn: Connection, tenant_id: str, model: str, dim: int) -> None:
    """``EmbeddingMismatch`` if the tenant's vectors were made by another model or
    have another dimension than a query vector of ``model`` and ``dim`` (a search
    that found nothing calls this: a mismatch is an error, never an empty answer)."""
    stored = stored_models(conn, [tenant_id]).get(tenant_id)
    if stored is not None and stored != (model, dim):
        raise EmbeddingMismatch(tenant_id, stored[0], stored[1], model, dim)


def to_literal(vector: Sequence[float]) -> str:
    """pgvector's text form of ``vector``: each number to 9 significant digits, which
    give back every float32 exactly (the column's precision; a provider's float64 may
    rarely land one float32 step from its nearest). A fixed-width format is cheaper to
    write once per request than the shortest form of each number."""
    return _literal_format(len(vector)) % tuple(vector)


@lru_cache(maxsize=8)
def _literal_format(dim: int) -> str:
    return "[" + ",".join(["%.9g"] * dim) + "]"


_ITERATIVE_SCAN = sa.select(sa.func.set_config("hnsw.iterative_scan", "relaxed_order", True))


def _nearest_statement() -> sa.Select[Any]:
    query = sa.bindparam("query", type_=Vector(DIM))
    distance = embeddings.c.embedding.cosine_distance(sa.cast(query, Vector(DIM)))
    relaxed = (
        sa.select(embeddings.c.item_kind, embeddings.c.item_id, distance.label("distance"))
        .where(
            # Written into the statement, not bound: a generic plan (psycopg prepares a
            # statement run often) does not know how many vectors the tenant has, and
            # would sort them all rather than read the HNSW index.
            embeddings.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text, literal_execute=True),
            embeddings.c.item_kind == sa.any_(sa.bindparam("kinds", type_=ARRAY(sa.Text))),
            embeddings.c.model == sa.bindparam("model", type_=sa.Text, literal_execute=True),
        )
        .order_by(distance)
        .limit(sa.bindparam("k", type_=sa.Integer, literal_execute=True))
        .subquery()
    )
    # relaxed_order may return rows slightly out of order: sort the k found exactly.
    return sa.select(relaxed).order_by(relaxed.c.distance, relaxed.c.item_kind, relaxed.c.item_id)


# Built once: building it per query costs more Python than the query's round trip.
_NEAREST = _nearest_statement()


def text_hashes(conn: Connection, tenant_id: str, items: Iterable[tuple[str, str]]) -> set[str]:
    """Erasure: the text hashes of these (kind, id) items, to ``forget`` in the cache."""
    keys = [(tenant_id, kind, item_id) for kind, item_id in items]
    if not keys:
        return set()
    stmt = sa.select(embeddings.c.text_sha256).where(in_keys(keys))
    return set(conn.execute(stmt).scalars())


def delete_items(tx: Connection, tenant_id: str, items: Iterable[tuple[str, str]]) -> int:
    """Erasure: delete the rows of these (kind, id) items of a tenant. Returns how many."""
    keys = [(tenant_id, kind, item_id) for kind, item_id in items]
    if not keys:
        return 0
    return int(tx.execute(embeddings.delete().where(in_keys(keys))).rowcount)
