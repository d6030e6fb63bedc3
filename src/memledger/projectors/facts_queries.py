"""Queries on the facts read model (the facts projector owns the table)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import msgspec
import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY, TSQUERY
from sqlalchemy.dialects.postgresql import array as postgresql_array
from sqlalchemy.engine import Connection
from sqlalchemy.sql import util as sql_util
from sqlalchemy.types import NullType

from memledger.projectors import live_version
from memledger.projectors.base import live_schema
from memledger.projectors.embeddings import DIM as EMBEDDING_DIM
from memledger.projectors.embeddings import embeddings
from memledger.projectors.facts import conflicts, facts


class FactHit(msgspec.Struct, frozen=True):
    """A fact found for a request, with the rank its channel gave it (1 = best)."""

    memory_id: str
    scope: str
    scope_key: str
    key: str
    statement: str
    category: str
    confidence: float
    conflicted: bool
    slot_id: str
    source_turns: list[str]
    valid_from: datetime
    updated_at: datetime
    rank: int


_HIT_COLUMNS = (
    facts.c.memory_id,
    facts.c.scope,
    facts.c.scope_key,
    facts.c.key,
    facts.c.statement,
    facts.c.category,
    facts.c.confidence,
    facts.c.conflicted,
    facts.c.slot_id,
    # psycopg returns text[] as a list already; ARRAY's result processing per element
    # cost more than the rest of a hit.
    sa.type_coerce(facts.c.source_turns, NullType()).label("source_turns"),
    facts.c.valid_from,
    facts.c.updated_at,
)
# Columns the visibility test reads besides the hit's (``_scoped_words`` tests them outside its index read).
_TESTED = (facts.c.tenant_id, facts.c.status)
_MATCH_CAP = 2000  # ranking every OR match is what makes OR queries slow; bound it


def _hits(conn: Connection, stmt: sa.Select[Any]) -> list[FactHit]:
    rows = conn.execute(stmt).all()
    return [FactHit(*row[:12], rank=i) for i, row in enumerate(rows, start=1)]  # type: ignore[misc]


class FactChannels(msgspec.Struct, frozen=True):
    """The text channel's hits and the recent channel's hits of one request."""

    text: list[FactHit]
    recent: list[FactHit]


def channels(
    conn: Connection,
    tenant_id: str,
    scopes: Sequence[tuple[str, str]],
    words: Sequence[str],
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
    text_limit: int,
    recent_limit: int,
) -> FactChannels:
    """The text channel (facts matching any of ``words`` in full text, best ts_rank
    first, matches capped before ranking so a common word cannot make the query slow)
    and the recent channel (the most recently learned or reinforced facts of the
    scopes) in one statement, so a request pays one round trip. The statement is built
    once per shape (scopes, words, categories present) and takes everything else as
    parameters. A ``recent_limit`` of 0 leaves the recent channel out (as no words
    leave the text channel out). The vector channel is ``nearest``.
    """
    scopes = list(scopes)
    text, recent = bool(words and scopes), bool(scopes and recent_limit > 0)
    out: dict[str, list[FactHit]] = {"text": [], "recent": []}
    if not (text or recent):
        return FactChannels(**out)
    params = _visible_params(tenant_id, scopes, min_confidence, categories)
    params.update(tsquery=" | ".join(words), text_limit=text_limit, recent_limit=recent_limit)
    scoped = text and live_version.at_least(conn, "facts", SCOPED_WORDS_VERSION)
    if scoped:
        params["words"] = " ".join(words)
    stmt = _channels_statement(len(scopes), text, recent, categories is not None, scoped)
    for row in conn.execute(stmt, params).all():
        out[row[0]].append(FactHit(*row[1:13], rank=row[13]))  # type: ignore[misc]
    for hits in out.values():
        hits.sort(key=lambda hit: hit.rank)
    return FactChannels(**out)


def _visible_where(pairs: int, categories: bool) -> list[sa.ColumnElement[bool]]:
    """What a request may see, with bound parameters: the tenant (``tenant_id``), one of
    its scope pairs (``scope_<i>``, ``scope_key_<i>``), active, at least
    ``min_confidence`` and, if ``categories``, of one of ``categories``."""
    return [sa.or_(*(_in_scope(i) for i in range(pairs))), *_live_where(categories)]


def _in_scope(pair: int) -> sa.ColumnElement[bool]:
    c, p = facts.c, sa.bindparam
    return sa.and_(c.scope == p(f"scope_{pair}", type_=sa.Text), c.scope_key == p(f"scope_key_{pair}", type_=sa.Text))


def _live_where(categories: bool) -> list[sa.ColumnElement[bool]]:
    p = sa.bindparam
    where = [
        facts.c.tenant_id == p("tenant_id", type_=sa.Text),
        facts.c.status.in_(["active", "low_confidence"]),
        facts.c.confidence >= p("min_confidence", type_=sa.Float),
    ]
    if categories:
        where.append(facts.c.category == sa.any_(p("categories", type_=ARRAY(sa.Text))))
    return where


def _visible_params(
    tenant_id: str, scopes: Sequence[tuple[str, str]], min_confidence: float, categories: Iterable[str] | None
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "tenant_id": tenant_id,
        "min_confidence": min_confidence,
        "categories": None if categories is None else sorted(categories),
    }
    for i, (scope, key) in enumerate(scopes):
        params[f"scope_{i}"], params[f"scope_key_{i}"] = scope, key
    return params


@lru_cache(maxsize=64)
def _channels_statement(pairs: int, text: bool, recent: bool, categories: bool, scoped: bool) -> sa.Executable:
    """The union of the channels asked for, with bound parameters (see ``channels``)."""
    p = sa.bindparam
    where = _visible_where(pairs, categories)
    parts: list[sa.Select[Any]] = []
    if text:
        # A scalar subquery, so PostgreSQL parses the query once per execution: in a
        # generic plan (psycopg prepares a statement run often), to_tsquery of a
        # parameter would be parsed and stemmed again for every row it is matched on.
        query = sa.select(sa.func.to_tsquery("english", p("tsquery", type_=sa.Text))).scalar_subquery()
        parts.append(_text_part(where, query, _scoped_words(pairs) if scoped else None))
    if recent:
        parts.append(_recent_part(pairs, categories))
    return parts[0] if len(parts) == 1 else sa.union_all(*parts)


def _text_part(
    where: list[sa.ColumnElement[bool]], query: sa.ColumnElement[Any], scoped: sa.ColumnElement[bool] | None
) -> sa.Select[Any]:
    """The text channel's rows, best ts_rank first, numbered in that order. With ``scoped`` (``_scoped_words``),
    the facts holding a request's word in one of its scopes are found by
    ``facts_scoped_words`` first, then matched as before."""
    if scoped is None:
        found = sa.select(*_HIT_COLUMNS, facts.c.tsv).where(*where, facts.c.tsv.op("@@")(query))
    else:
        # The index is read alone (OFFSET 0 keeps the rest out of the subquery): with the
        # scope and status tests beside it, PostgreSQL read all the visible facts instead
        # when it misjudged how many they are (a fresh copy has no statistics), or read
        # facts_tsv too. The rows it returns are tested here as before.
        inner = sa.select(*_HIT_COLUMNS, *_TESTED, facts.c.tsv).where(scoped).offset(sa.literal_column("0"))
        candidates = inner.subquery("scoped")
        tested = sa.and_(*where, facts.c.tsv.op("@@")(query))
        adapted = sql_util.ClauseAdapter(candidates).traverse(tested)
        found = sa.select(*(candidates.c[c.name] for c in _HIT_COLUMNS), candidates.c.tsv).where(adapted)
    matched = found.limit(_MATCH_CAP).subquery()
    rank = sa.func.ts_rank(matched.c.tsv, query).label("text_rank")
    best = (
        sa.select(*(matched.c[c.name] for c in _HIT_COLUMNS), rank)
        .order_by(rank.desc(), matched.c.memory_id)
        .limit(sa.bindparam("text_limit", type_=sa.Integer))
        .subquery()
    )
    number = sa.func.row_number().over(order_by=(best.c.text_rank.desc(), best.c.memory_id))
    return sa.select(sa.literal("text").label("channel"), *(best.c[c.name] for c in _HIT_COLUMNS), number)


# The facts version whose facts_scoped_words index the text channel reads (projections/facts/v5.sql).
SCOPED_WORDS_VERSION = 5


def _scoped_words(pairs: int) -> sa.ColumnElement[bool]:
    """Whether a fact holds one of the request's words (``words``, its content words
    joined by spaces) in one of its scope pairs, as ``scoped_tsv`` holds them: each
    pair's prefix (``fact_scope_prefix``) before each of the words' lexemes. A fact
    matching the words' OR query holds one of those lexemes, so none is missed."""
    p, schema = sa.bindparam, live_schema("facts")
    prefixes = [
        getattr(sa.func, schema).fact_scope_prefix(
            p("tenant_id", type_=sa.Text), p(f"scope_{i}", type_=sa.Text), p(f"scope_key_{i}", type_=sa.Text)
        )
        for i in range(pairs)
    ]
    prefix = sa.func.unnest(postgresql_array(prefixes)).table_valued("value").render_derived("prefix")
    lexemes = (
        sa.func.unnest(sa.func.tsvector_to_array(sa.func.to_tsvector("english", p("words", type_=sa.Text))))
        .table_valued("value")
        .render_derived("lexeme")
    )
    # tsquery's text form: each entry quoted, its quotes and backslashes escaped; "|" between
    quoted = sa.func.replace(sa.func.replace(prefix.c.value.concat(lexemes.c.value), "\\", "\\\\"), "'", "''")
    entries = sa.select(
        sa.cast(sa.func.string_agg(sa.literal("'").concat(quoted).concat("'"), " | "), TSQUERY)
    ).select_from(prefix.join(lexemes, sa.true()))  # every prefix with every lexeme
    matches: sa.ColumnElement[bool] = facts.c.scoped_tsv.op("@@", is_comparison=True)(entries.scalar_subquery())
    return matches


def _recent_part(pairs: int, categories: bool) -> sa.Select[Any]:
    """The recent channel's rows, newest first, numbered in that order: the latest of each scope pair (read
    in order from ``facts_recent``), then the latest of those."""
    limit = sa.bindparam("recent_limit", type_=sa.Integer)
    order = (facts.c.updated_at.desc(), facts.c.memory_id)
    each = [
        sa.select(*_HIT_COLUMNS).where(_in_scope(i), *_live_where(categories)).order_by(*order).limit(limit)
        for i in range(pairs)
    ]
    scoped = (each[0] if pairs == 1 else sa.union_all(*each)).subquery()
    latest = (
        sa.select(*(scoped.c[c.name] for c in _HIT_COLUMNS))
        .order_by(scoped.c.updated_at.desc(), scoped.c.memory_id)
        .limit(limit)
        .subquery()
    )
    number = sa.func.row_number().over(order_by=(latest.c.updated_at.desc(), latest.c.memory_id))
    return sa.select(sa.literal("recent").label("channel"), *(latest.c[c.name] for c in _HIT_COLUMNS), number)


_PARTNERS = sa.select(*_HIT_COLUMNS).where(
    facts.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text),
    facts.c.slot_id == sa.any_(sa.bindparam("slot_ids", type_=ARRAY(sa.Text))),
    facts.c.conflicted.is_(True),
    facts.c.status.in_(["active", "low_confidence"]),
)


def conflict_partners(conn: Connection, tenant_id: str, slot_ids: Iterable[str]) -> list[FactHit]:
    """The live facts in conflict in these slots (the sides of each slot's open
    conflict), whatever their confidence or category: a conflict is shown whole."""
    slots = sorted(set(slot_ids))
    if not slots:
        return []
    rows = conn.execute(_PARTNERS, {"tenant_id": tenant_id, "slot_ids": slots}).all()
    return [FactHit(*row[:12], rank=0) for row in rows]  # type: ignore[misc]


class NearFacts(msgspec.Struct, frozen=True):
    """The visible facts among the ``found`` nearest of a query vector, each ranked
    by its place among all ``found`` (visible or not), nearest first."""

    hits: list[FactHit]
    found: int


def nearest(
    conn: Connection,
    tenant_id: str,
    scopes: Sequence[tuple[str, str]],
    vector_literal: str,
    model: str,
    *,
    k: int,
    min_confidence: float,
    categories: Iterable[str] | None,
    max_distance: float = 2.0,
) -> NearFacts:
    """The tenant's ``k`` facts nearest the query vector (pgvector's text form, made by
    ``model``), by the HNSW index, and those of them the request may see (as
    ``channels`` sees them) within ``max_distance`` (cosine), in one statement. The caller's transaction must allow
    iterative scans (``hnsw.iterative_scan``), so the tenant filter does not starve
    the top ``k``. ``found`` 0 with vectors of another model stored is for the
    caller to check (``embeddings.check_model``)."""
    scopes = list(scopes)
    if k <= 0 or not scopes:
        return NearFacts([], 0)
    params = _visible_params(tenant_id, scopes, min_confidence, categories)
    params.update(query=vector_literal, model=model, near_tenant=tenant_id)
    rows = conn.execute(_nearest_statement(len(scopes), categories is not None, k), params).all()
    hits = [
        FactHit(*row[3:15], rank=i)  # type: ignore[misc]
        for i, row in enumerate(rows, start=1)
        if row[2] and row[1] <= max_distance
    ]
    return NearFacts(hits, len(rows))


@lru_cache(maxsize=16)
def _nearest_statement(pairs: int, categories: bool, k: int) -> sa.Select[Any]:
    """The statement of ``nearest``. The tenant, model, kind and ``k`` of the index scan
    are written into the statement, not bound: psycopg prepares a statement run often,
    and in PostgreSQL's generic plan, not knowing how many vectors the tenant has, it
    would sort them all instead of reading the HNSW index."""
    e = embeddings
    # The request's vector is parsed once per execution (a scalar subquery): in a
    # generic plan a cast of the parameter is evaluated for every distance computed.
    query = sa.select(sa.cast(sa.bindparam("query", type_=sa.Text), Vector(EMBEDDING_DIM))).scalar_subquery()
    distance = e.c.embedding.cosine_distance(query)
    near = (
        sa.select(e.c.item_id, distance.label("distance"))
        .where(
            e.c.tenant_id == sa.bindparam("near_tenant", type_=sa.Text, literal_execute=True),
            e.c.item_kind == sa.bindparam("near_kind", "fact", type_=sa.Text, literal_execute=True),
            e.c.model == sa.bindparam("model", type_=sa.Text, literal_execute=True),
        )
        .order_by(distance)
        .limit(sa.literal_column(str(int(k))))
        .subquery("near")
    )
    # Joined by primary key only, whether the request may see each fact is a column:
    # with the visibility filter in the join, a generic plan would read every visible
    # fact of the scopes (estimated as one) and compare each with the k.
    by_key = sa.and_(facts.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text), facts.c.memory_id == near.c.item_id)
    visible = sa.func.coalesce(sa.and_(*_visible_where(pairs, categories)), False).label("visible")
    joined = sa.select(near.c.item_id, near.c.distance, visible, *_HIT_COLUMNS).select_from(
        near.outerjoin(facts, by_key)
    )
    rows = joined.subquery("joined")
    # A fact the request may not see comes back as its id alone (most of the k do).
    shown = [sa.case((rows.c.visible, rows.c[c.name])).label(c.name) for c in _HIT_COLUMNS]
    # relaxed_order may return the k slightly out of order: sort them exactly.
    return sa.select(rows.c.item_id, rows.c.distance, rows.c.visible, *shown).order_by(rows.c.distance, rows.c.item_id)


def by_ids(conn: Connection, tenant_id: str, memory_ids: Sequence[str]) -> list[FactHit]:
    """Facts by id, whatever their status (for provenance and for the vector channel)."""
    if not memory_ids:
        return []
    stmt = sa.select(*_HIT_COLUMNS).where(facts.c.tenant_id == tenant_id, facts.c.memory_id.in_(list(memory_ids)))
    return _hits(conn, stmt)


def withdrawn_turns(conn: Connection, tenant_id: str, turn_ids: Iterable[str]) -> set[str]:
    """Those of ``turn_ids`` whose facts were all withdrawn: each is a source turn of
    some fact and of no fact still standing (active or low confidence), so what it
    said was superseded or retracted. One statement, on the source turns' index."""
    wanted = sorted(set(turn_ids))
    if not wanted:
        return set()
    params = {"tenant_id": tenant_id, "turn_ids": wanted}
    return {row[0] for row in conn.execute(_withdrawn_statement(), params).all()}


@lru_cache(maxsize=1)
def _withdrawn_statement() -> sa.Select[Any]:
    ids = sa.bindparam("turn_ids", type_=ARRAY(sa.Text))
    turn = sa.func.unnest(facts.c.source_turns).table_valued("turn_id").render_derived(name="turn")
    standing = facts.c.status.in_(["active", "low_confidence"])
    return (
        sa.select(turn.c.turn_id)
        .select_from(facts.join(turn, sa.true()))
        .where(
            facts.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text),
            facts.c.source_turns.op("&&")(ids),
            turn.c.turn_id == sa.any_(ids),
        )
        .group_by(turn.c.turn_id)
        .having(sa.not_(sa.func.bool_or(standing)))
    )


def visible_by_ids(
    conn: Connection,
    tenant_id: str,
    scopes: Sequence[tuple[str, str]],
    memory_ids: Iterable[str],
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
) -> list[FactHit]:
    """Those of these facts a request of ``scopes`` may see (as ``channels`` sees
    them), in no particular order (rank 0)."""
    scopes, wanted = list(scopes), sorted(set(memory_ids))
    if not scopes or not wanted:
        return []
    params = _visible_params(tenant_id, scopes, min_confidence, categories)
    params["memory_ids"] = wanted
    rows = conn.execute(_visible_by_ids_statement(len(scopes), categories is not None), params).all()
    return [FactHit(*row, rank=0) for row in rows]  # type: ignore[misc]


@lru_cache(maxsize=16)
def _visible_by_ids_statement(pairs: int, categories: bool) -> sa.Select[Any]:
    wanted = facts.c.memory_id == sa.any_(sa.bindparam("memory_ids", type_=ARRAY(sa.Text)))
    return sa.select(*_HIT_COLUMNS).where(*_visible_where(pairs, categories), wanted)


class ConflictView(msgspec.Struct, frozen=True):
    """A conflict as people read it."""

    conflict_id: str
    scope: str
    scope_key: str
    key: str
    state: str
    resolution: str
    reason: str
    memory_ids: list[str]
    winner_ids: list[str]
    manual_choice: str | None
    resolved_by: str | None
    updated_at: datetime


def has_conflict(conn: Connection, tenant_id: str, conflict_id: str) -> bool:
    """Whether the tenant has (or had) a conflict of this id."""
    stmt = sa.select(sa.literal(1)).where(conflicts.c.tenant_id == tenant_id, conflicts.c.conflict_id == conflict_id)
    return conn.execute(stmt.limit(1)).first() is not None


def list_conflicts(
    conn: Connection, tenant_id: str, *, states: Iterable[str] | None = None, limit: int = 100
) -> list[ConflictView]:
    """The tenant's conflicts (open, resolved, dissolved), most recent first."""
    c = conflicts
    stmt = sa.select(
        c.c.conflict_id,
        c.c.scope,
        c.c.scope_key,
        c.c.key,
        c.c.state,
        c.c.resolution,
        c.c.reason,
        c.c.memory_ids,
        c.c.winner_ids,
        c.c.manual_choice,
        c.c.resolved_by,
        c.c.updated_at,
    ).where(c.c.tenant_id == tenant_id)
    if states is not None:
        stmt = stmt.where(c.c.state.in_(sorted(states)))
    stmt = stmt.order_by(c.c.updated_at.desc(), c.c.conflict_id).limit(limit)
    return [ConflictView(*row) for row in conn.execute(stmt).all()]  # type: ignore[call-arg]


class ScopeFact(msgspec.Struct, frozen=True):
    """A fact of a scope, live or superseded, with what a request to forget reads."""

    memory_id: str
    slot_id: str
    key: str
    statement: str
    value: str | None
    source_turns: list[str]
    status: str


class SlotClaim(msgspec.Struct, frozen=True):
    """A live fact of a slot, as the facts fold weighs it against a newer one."""

    slot_id: str
    value: str | None
    confidence: float
    valid_from: datetime
    chosen: bool  # a person chose between the slot's facts (``ConflictResolved``)


def slot_claims(conn: Connection, tenant_id: str, slot_ids: Iterable[str]) -> list[SlotClaim]:
    """The live facts (not superseded or retracted) of these slots, one statement."""
    wanted = sorted(set(slot_ids))
    if not wanted:
        return []
    f, c = facts, conflicts
    chosen = sa.and_(c.c.tenant_id == f.c.tenant_id, c.c.conflict_id == f.c.slot_id, c.c.manual_choice.is_not(None))
    stmt = sa.select(f.c.slot_id, f.c.value, f.c.confidence, f.c.valid_from, sa.exists().where(chosen)).where(
        f.c.tenant_id == tenant_id, f.c.slot_id.in_(wanted), f.c.status.in_(("active", "low_confidence"))
    )
    return [SlotClaim(*row) for row in conn.execute(stmt).all()]


def live_and_superseded(conn: Connection, tenant_id: str, scopes: Iterable[tuple[str, str]]) -> list[ScopeFact]:
    """The live and superseded facts of these (scope, scope key) pairs (not retracted)."""
    pairs = sorted(set(scopes))
    if not pairs:
        return []
    f = facts
    stmt = sa.select(f.c.memory_id, f.c.slot_id, f.c.key, f.c.statement, f.c.value, f.c.source_turns, f.c.status).where(
        f.c.tenant_id == tenant_id,
        sa.tuple_(f.c.scope, f.c.scope_key).in_(pairs),
        f.c.status.in_(("active", "low_confidence", "superseded")),
    )
    return [ScopeFact(*row[:5], list(row[5] or ()), row[6]) for row in conn.execute(stmt).all()]
