"""The embedding cache: one vector per (model, sha256 of a text).

Embedding is slow (hundreds of texts per second), so every vector made is kept
here and found again by the text's hash: rebuilding a projection never embeds a
text it has embedded before. The table is a control table (migrated, never
rebuilt) and shared by tenants. A text's first stored vector stays: later writers
of the same key keep it, so every copy of a projection gets bit-identical rows.

A chain of models (a primary and its fallbacks) keeps each model's vectors under that
model; ``lookup_first`` finds a text's vector of the first model of the chain that has one.

Vectors are read in pgvector's text form (``VectorText``) and handed on as they
are, so a vector copied from the cache into a projection is never re-parsed.

Erasure deletes the entries of the texts it erases (``forget``). A writer that
read a text before the erasure could store its vector after; so erasure takes its
tenant's lock (``lock_for_erasure``), and a writer takes the same lock shared
(``hold_off_erasure``), checks in that transaction that the text's events are not
erased, and only then stores: the erasure either committed before the check, or
starts after the writer's commit and finds the entry to forget.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

from memledger.store import lock_keys
from memledger.store.schema import embedding_cache

t = embedding_cache

VectorText = str  # pgvector's text form of a vector: "[0.1,-0.2,...]"


def _any_of(values: Iterable[str]) -> sa.ColumnElement[bool]:
    """``text_sha256 = ANY(:hashes)``: one array parameter however many hashes."""
    return t.c.text_sha256 == sa.any_(sa.bindparam("hashes", sorted(set(values)), type_=ARRAY(sa.Text)))


def lookup(conn: Connection, model: str, text_sha256s: Collection[str]) -> dict[str, VectorText]:
    """The cached vectors of ``model`` for these text hashes (missing ones are absent)."""
    if not text_sha256s:
        return {}
    stmt = sa.select(t.c.text_sha256, sa.cast(t.c.embedding, sa.Text)).where(t.c.model == model, _any_of(text_sha256s))
    return {str(sha): str(vector) for sha, vector in conn.execute(stmt).all()}


def lookup_first(
    conn: Connection, models: Sequence[str], text_sha256s: Collection[str]
) -> dict[str, tuple[str, VectorText]]:
    """For each of these text hashes, the first of ``models`` (in order) with a cached
    vector, and that vector; hashes none of them has are absent."""
    if not text_sha256s or not models:
        return {}
    stmt = sa.select(t.c.model, t.c.text_sha256, sa.cast(t.c.embedding, sa.Text)).where(
        t.c.model == sa.any_(sa.bindparam("models", sorted(set(models)), type_=ARRAY(sa.Text))),
        _any_of(text_sha256s),
    )
    rank = {model: i for i, model in enumerate(models)}
    found: dict[str, tuple[str, VectorText]] = {}
    for model, sha, vector in conn.execute(stmt).all():
        held = found.get(sha)
        if held is None or rank[model] < rank[held[0]]:
            found[str(sha)] = (str(model), str(vector))
    return found


def store(tx: Connection, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
    """Keep ``vectors`` (by text hash) for ``model``. An entry that exists is left as
    it was: the first vector stored for a text is the one every reader gets.

    Rows go in hash order, so two writers of overlapping entries cannot deadlock.
    """
    if not vectors:
        return
    rows = [{"model": model, "text_sha256": sha, "embedding": list(vectors[sha])} for sha in sorted(vectors)]
    tx.execute(postgresql.insert(t).on_conflict_do_nothing(index_elements=["model", "text_sha256"]), rows)


def lock_for_erasure(tx: Connection, tenant_id: str) -> None:
    """Erasure: take the tenant's erasure lock until ``tx`` ends. One erasure of a
    tenant at a time; waits for the cache writers holding it (``hold_off_erasure``)."""
    key = lock_keys.named(lock_keys.erasure(tenant_id))
    tx.execute(sa.select(sa.func.pg_advisory_xact_lock(key)))


def hold_off_erasure(tx: Connection, tenant_ids: Iterable[str]) -> None:
    """A cache writer: hold off the erasures of these tenants until ``tx`` ends (their
    erasure locks, shared: writers never wait for each other). Take it before checking
    that the texts to store are not erased, and store in the same ``tx``."""
    keys = sorted({lock_keys.erasure(tenant_id) for tenant_id in tenant_ids})
    if not keys:
        return
    key = sa.func.unnest(sa.bindparam("keys", keys, type_=ARRAY(sa.Text))).table_valued("key").render_derived()
    lock = sa.func.pg_advisory_xact_lock_shared(lock_keys.hashed(key.c.key))
    tx.execute(sa.select(sa.func.count(lock)).select_from(key))


def forget(tx: Connection, text_sha256s: Iterable[str]) -> int:
    """Erasure: delete the entries of these text hashes, for every model. Returns how many."""
    hashes = set(text_sha256s)
    if not hashes:
        return 0
    result = tx.execute(t.delete().where(_any_of(hashes)))
    return int(result.rowcount)


def count(conn: Connection, model: str | None = None) -> int:
    """How many vectors the cache holds (of ``model``, or of every model)."""
    stmt = sa.select(sa.func.count()).select_from(t)
    if model is not None:
        stmt = stmt.where(t.c.model == model)
    return int(conn.execute(stmt).scalar_one())
