"""The selection channels of the facts read model (the facts projector owns the table):
the text channel (full text), the recent channel and the vector channel (``nearest``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import msgspec
import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import TSQUERY
from sqlalchemy.dialects.postgresql import array as postgresql_array
from sqlalchemy.engine import Connection
from sqlalchemy.sql import util as sql_util

from memledger.projectors import live_version
from memledger.projectors.base import live_schema
from memledger.projectors.embeddings.projector import DIM as EMBEDDING_DIM
from memledger.projectors.embeddings.projector import embeddings
from memledger.projectors.facts.projector import facts
from memledger.projectors.facts.queries import HIT_COLUMNS, FactHit, in_scope, live_where, visible_params, visible_where

# Columns the visibility test reads besides the hit's (``_scoped_words`` tests them outside its index read).
_TESTED = (facts.c.tenant_id, facts.c.status)
_MATCH_CAP = 2000  # ranking every OR match is what makes OR queries slow; bound it


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
    params = visible_params(tenant_id, scopes, min_confidence, categories)
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


@lru_cache(maxsize=64)
def _channels_statement(pairs: int, text: bool, recent: bool, categories: bool, scoped: bool) -> sa.Executable:
    """The union of the channels asked for, with bound parameters (see ``channels``)."""
    p = sa.bindparam
    where = visible_where(pairs, categories)
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
        found = sa.select(*HIT_COLUMNS, facts.c.tsv).where(*where, facts.c.tsv.op("@@")(query))
    else:
        # The index is read alone (OFFSET 0 keeps the rest out of the subquery): with the
        # scope and status tests beside it, PostgreSQL read all the visible facts instead
        # when it misjudged how many they are (a fresh copy has no statistics), or read
        # facts_tsv too. The rows it returns are tested here as before.
        inner = sa.select(*HIT_COLUMNS, *_TESTED, facts.c.tsv).where(scoped).offset(sa.literal_column("0"))
        candidates = inner.subquery("scoped")
        tested = sa.and_(*where, facts.c.tsv.op("@@")(query))
        adapted = sql_util.ClauseAdapter(candidates).traverse(tested)
        found = sa.select(*(candidates.c[c.name] for c in HIT_COLUMNS), candidates.c.tsv).where(adapted)
    matched = found.limit(_MATCH_CAP).subquery()
    rank = sa.func.ts_rank(matched.c.tsv, query).label("text_rank")
    best = (
        sa.select(*(matched.c[c.name] for c in HIT_COLUMNS), rank)
        .order_by(rank.desc(), matched.c.memory_id)
        .limit(sa.bindparam("text_limit", type_=sa.Integer))
        .subquery()
    )
    number = sa.func.row_number().over(order_by=(best.c.text_rank.desc(), best.c.memory_id))
    return sa.select(sa.literal("text").label("channel"), *(best.c[c.name] for c in HIT_COLUMNS), number)


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
        sa.select(*HIT_COLUMNS).where(in_scope(i), *live_where(categories)).order_by(*order).limit(limit)
        for i in range(pairs)
    ]
    scoped = (each[0] if pairs == 1 else sa.union_all(*each)).subquery()
    latest = (
        sa.select(*(scoped.c[c.name] for c in HIT_COLUMNS))
        .order_by(scoped.c.updated_at.desc(), scoped.c.memory_id)
        .limit(limit)
        .subquery()
    )
    number = sa.func.row_number().over(order_by=(latest.c.updated_at.desc(), latest.c.memory_id))
    return sa.select(sa.literal("recent").label("channel"), *(latest.c[c.name] for c in HIT_COLUMNS), number)


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
    caller to check (``embedding_queries.check_model``)."""
    scopes = list(scopes)
    if k <= 0 or not scopes:
        return NearFacts([], 0)
    params = visible_params(tenant_id, scopes, min_confidence, categories)
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
    visible = sa.func.coalesce(sa.and_(*visible_where(pairs, categories)), False).label("visible")
    joined = sa.select(near.c.item_id, near.c.distance, visible, *HIT_COLUMNS).select_from(
        near.outerjoin(facts, by_key)
    )
    rows = joined.subquery("joined")
    # A fact the request may not see comes back as its id alone (most of the k do).
    shown = [sa.case((rows.c.visible, rows.c[c.name])).label(c.name) for c in HIT_COLUMNS]
    # relaxed_order may return the k slightly out of order: sort them exactly.
    return sa.select(rows.c.item_id, rows.c.distance, rows.c.visible, *shown).order_by(rows.c.distance, rows.c.item_id)
