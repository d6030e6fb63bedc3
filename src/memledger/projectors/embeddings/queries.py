"""Queries over the embeddings read model: the nearest items to a vector (of one
model's rows, checked against the tenant's), the texts an item's rows hold, the
deletes erasure needs, and the backfill's reads and moves of fallback rows. The
projector that writes the table is ``embeddings``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import msgspec
import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

from memledger.errors import EmbeddingMismatch
from memledger.projectors.embeddings.projector import DIM, embeddings, in_keys, stored_models


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
    chain: Sequence[str] = (),
) -> list[Neighbour]:
    """The tenant's ``k`` items of ``kinds`` nearest ``query_vector``, nearest first.

    ``query_vector`` must come from ``model``: if the tenant's vectors were made by
    a model outside the embedding ``chain`` (the models of the embedder that made the
    query, first choice first) or have another dimension, raises
    ``EmbeddingMismatch`` (never an empty answer). A tenant with no vectors of
    ``model`` gets [] (items with only a fallback model's vectors are the other
    channels' to find). Uses the HNSW index with iterative scans, so the tenant
    filter does not starve the top ``k``; sets ``hnsw.iterative_scan`` for the
    caller's transaction only (SET LOCAL).

    The search asks for ``model``'s vectors only, so rows found prove the model
    matches, and the tenant's stored model is looked up (one more statement) only
    when none are found.
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
    check_model(conn, tenant_id, model, len(query_vector), chain)
    return []


def check_model(conn: Connection, tenant_id: str, model: str, dim: int, chain: Sequence[str] = ()) -> None:
    """``EmbeddingMismatch`` if the tenant's vectors were made by another model than a
    query vector of ``model`` and ``dim``, or have another dimension (a search that
    found nothing calls this: a mismatch is an error, never an empty answer). Rows of
    a fallback model of the embedding ``chain`` are none when ``model`` is of the chain
    too: the tenant's items wait for the backfill."""
    stored = stored_models(conn, [tenant_id]).get(tenant_id)
    if stored is None or stored == (model, dim):
        return
    if stored[1] != dim or stored[0] not in chain or model not in chain:
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


class FallbackRow(msgspec.Struct, frozen=True):
    """A row under a model other than the chain's first: the backfill's to move."""

    tenant_id: str
    item_kind: str
    item_id: str
    model: str
    text_sha256: str


def _not_model(model: str) -> sa.ColumnElement[bool]:
    # Two ranges rather than "<>": each can read the (model, tenant_id) index.
    wanted = sa.bindparam("first", model, type_=sa.Text)
    return sa.or_(embeddings.c.model < wanted, embeddings.c.model > wanted)


def fallback_rows(conn: Connection, first: str, limit: int) -> list[FallbackRow]:
    """Up to ``limit`` rows under a model other than ``first``, by tenant and item."""
    e = embeddings.c
    stmt = (
        sa.select(e.tenant_id, e.item_kind, e.item_id, e.model, e.text_sha256)
        .where(_not_model(first))
        .order_by(e.tenant_id, e.item_kind, e.item_id)
        .limit(limit)
    )
    return [FallbackRow(*row) for row in conn.execute(stmt).all()]


def rows_by_model(conn: Connection, tenant_id: str | None = None) -> dict[str, int]:
    """How many rows each model has (of one tenant, or of all): rows of a model other
    than the chain's first wait for the backfill."""
    stmt = sa.select(embeddings.c.model, sa.func.count()).group_by(embeddings.c.model)
    if tenant_id is not None:
        stmt = stmt.where(embeddings.c.tenant_id == tenant_id)
    return {str(model): int(n) for model, n in conn.execute(stmt).all()}


def move_to(tx: Connection, first: str, rows: Iterable[FallbackRow], vectors: Mapping[str, str]) -> int:
    """Backfill: give each of ``rows`` still under the model and text it was read with,
    whose text has a vector of ``first`` in ``vectors`` (by hash, pgvector's text form,
    read from the cache), that vector and model: the row the projector would write
    now. Returns how many moved."""
    e = embeddings.c
    params = [
        {"tenant": r.tenant_id, "kind": r.item_kind, "id": r.item_id, "was": r.model, "sha": r.text_sha256}
        | {"first": first, "vector": vectors[r.text_sha256]}
        for r in sorted(rows, key=lambda r: (r.tenant_id, r.item_kind, r.item_id))
        if r.text_sha256 in vectors
    ]
    if not params:
        return 0
    stmt = (
        embeddings.update()
        .values(model=sa.bindparam("first"), embedding=sa.cast(sa.bindparam("vector", type_=sa.Text), Vector(DIM)))
        .where(
            e.tenant_id == sa.bindparam("tenant"),
            e.item_kind == sa.bindparam("kind"),
            e.item_id == sa.bindparam("id"),
            e.model == sa.bindparam("was"),
            e.text_sha256 == sa.bindparam("sha"),
        )
    )
    return int(tx.execute(stmt, params).rowcount)
