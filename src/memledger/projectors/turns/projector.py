"""The turns read model: what was said, by whom, in which scopes; searchable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, TSQUERY, TSVECTOR
from sqlalchemy.engine import Connection

from memledger.events.catalogue import TurnRecorded
from memledger.events.codec import tag_of
from memledger.events.envelope import Cursor, Recorded
from memledger.projectors import bulk
from memledger.projectors.base import live_schema, read_models

NAME = "turns"
VERSION = 2  # v2: the first 50,000 characters are indexed (projections/turns/v2.sql)
HANDLES = frozenset({tag_of(TurnRecorded)})

turns = sa.Table(
    "turns",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("turn_id", sa.Text, primary_key=True),
    sa.Column("role", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("session_key", sa.Text),
    sa.Column("project_key", sa.Text),
    sa.Column("user_key", sa.Text),
    sa.Column("org_key", sa.Text),
    sa.Column("subject", sa.Text),
    sa.Column("stream_id", sa.Text, nullable=False),
    sa.Column("event_id", sa.Text, nullable=False),
    sa.Column("position", sa.BigInteger, nullable=False),
    sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("tsv", TSVECTOR),
    schema=live_schema(NAME),
)


class TurnRow(msgspec.Struct):
    """One row of ``turns``."""

    tenant_id: str
    turn_id: str
    role: str
    text: str
    session_key: str | None
    project_key: str | None
    user_key: str | None
    org_key: str | None
    subject: str | None
    stream_id: str
    event_id: str
    position: int
    occurred_at: datetime
    recorded_at: datetime


def to_row(rec: Recorded, event: TurnRecorded) -> TurnRow:
    """The row a TurnRecorded event gives. Pure."""
    scopes = event.scopes
    return TurnRow(
        rec.tenant_id,
        event.turn_id,
        event.role,
        event.text,
        scopes.session,
        scopes.project,
        scopes.user,
        scopes.org,
        event.subject,
        rec.stream_id,
        rec.event_id,
        rec.position,
        rec.occurred_at,
        rec.recorded_at,
    )


class TurnsProjector:
    """Projects TurnRecorded events into ``turns``. A turn id recorded twice keeps
    its first recording (the ledger refuses a second event id, but two events may
    name the same caller-given turn id)."""

    name = NAME
    version = VERSION
    handles = HANDLES

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        bulk.insert_new(tx, turns, _rows(batch))

    def replayer(self) -> TurnsReplay:
        """The same fold for a rebuild; turns keep no state between batches."""
        return TurnsReplay()


def _rows(batch: Sequence[Recorded]) -> list[TurnRow]:
    rows: dict[tuple[str, str], TurnRow] = {}
    for rec in batch:
        event = rec.event
        if isinstance(event, TurnRecorded):
            rows.setdefault((rec.tenant_id, event.turn_id), to_row(rec, event))
    return list(rows.values())


class TurnsReplay:
    """``TurnsProjector.apply`` for a rebuild. A turn id recorded again is dropped
    here, where the first recording is known, so no two batches write one row and
    they may be written side by side (``lanes``): the text search vectors, most
    of a rebuild's work, then use both cores."""

    lanes = 2
    flush_every = 10_000  # smaller batches than the default: more to share between lanes

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.rows: list[TurnRow] = []

    def evolve(self, page: Sequence[Recorded]) -> None:
        for row in _rows(page):
            key = (row.tenant_id, row.turn_id)
            if key not in self.seen:
                self.seen.add(key)
                self.rows.append(row)

    def flush(self) -> Callable[[Connection], None]:
        rows, self.rows = self.rows, []
        return lambda tx: bulk.insert_new(tx, turns, rows)


# Okapi BM25's constants (the usual ones), and the most turns one search scores: a
# word in every turn would otherwise make a search read and score them all.
BM25_K1, BM25_B = 1.2, 0.75
MATCH_CAP = 2000
_LAST_POSITION = 2**63 - 1
_END_OF_TIME = datetime(9999, 12, 31, tzinfo=UTC)


class Said(NamedTuple):
    """A turn found by its words: id, text, BM25 score and speaker (stored user id)."""

    turn_id: str
    text: str
    score: float
    subject: str | None


def search(
    conn: Connection,
    tenant_id: str,
    words: Sequence[str],
    *,
    limit: int = 10,
    match_cap: int = MATCH_CAP,
    until: Cursor | datetime | None = None,
    seen_from: Sequence[tuple[str, str]] | None = None,
) -> list[Said]:
    """Turns holding any of ``words`` (full text), best first (``Said``);
    with ``until`` (a ledger cursor or a time of recording), only the turns
    recorded by then, as a selection of that moment saw them; with ``seen_from``
    (scope, stored key pairs), only the turns seen from them (``_visible``).

    Scored by Okapi BM25 over the turns found: a word weighs more the fewer of them
    hold it, so "residency" counts for more than "keep", and a long turn is not
    preferred for being long (length: its tokens indexed).

    The turns found: for each of the words' lexemes, up to ``match_cap`` divided by
    their number of the turns holding it. So every turn holding a rarer word is
    scored, whatever the common words match, and a common word's turns are a sample
    (the first the index gives, not the newest). The document frequencies are counted
    in the turns found: exact for the rarer words, floors for the common ones; no
    per-tenant statistics to keep. Ties: earlier first.
    """
    distinct = sorted({w for w in words if w})
    if not distinct:
        return []
    params = {
        "tenant_id": tenant_id,
        "words": " ".join(distinct),
        "per_word": max(1, match_cap // len(distinct)),
        "limit": limit,
        "until_position": until.position if isinstance(until, Cursor) else _LAST_POSITION,
        "until_time": until if isinstance(until, datetime) else _END_OF_TIME,
        **_seen_params(seen_from),
    }
    return [Said(r[0], r[1], float(r[2]), r[3]) for r in conn.execute(_SEARCH, params).all()]


_KEYS = {
    "session": turns.c.session_key,
    "project": turns.c.project_key,
    "user": turns.c.user_key,
    "org": turns.c.org_key,
}


def _seen_params(seen_from: Sequence[tuple[str, str]] | None) -> dict[str, object]:
    keys = dict(seen_from or ())
    return {"seen_anywhere": not keys, **{f"seen_{scope}": keys.get(scope) for scope in _KEYS}}


def _visible() -> sa.ColumnElement[bool]:
    """A turn the request may see, as ``selection.visibility`` decides for the turns an
    item cites: it shares a scope key with the request, has none (the tenant's), or the
    request has none (an operator's: ``seen_anywhere``)."""
    shares = [column == sa.bindparam(f"seen_{scope}", type_=sa.Text) for scope, column in _KEYS.items()]
    unscoped = sa.and_(*(column.is_(None) for column in _KEYS.values()))
    return sa.or_(sa.bindparam("seen_anywhere", type_=sa.Boolean), unscoped, *shares)


def _search_statement() -> sa.Select[Any]:
    """The turns holding any of the words (``_matched``), best BM25 score first (``_scored``)."""
    wanted = _wanted()
    matched = _matched(wanted)
    scored = _scored(matched, wanted)
    # Rounded for the order: a sum over the words in another order may differ in its
    # last bit for two turns of equal score, and equal scores go earlier first.
    rounded = sa.func.round(sa.cast(scored.c.score, sa.Numeric), 9)
    return (
        sa.select(matched.c.turn_id, matched.c.text, scored.c.score, matched.c.subject)
        .select_from(matched.join(scored, matched.c.turn_id == scored.c.turn_id))
        .order_by(rounded.desc(), matched.c.position)
        .limit(sa.bindparam("limit", type_=sa.Integer))
    )


def _wanted() -> sa.CTE:
    """The lexemes to_tsvector gives the words, as the index holds them."""
    func, words = sa.func, sa.bindparam("words", type_=sa.Text)
    return sa.select(func.unnest(func.tsvector_to_array(func.to_tsvector("english", words))).label("lexeme")).cte(
        "wanted"
    )


def _matched(wanted: sa.CTE) -> sa.CTE:
    """The turns found: for each wanted lexeme, up to ``per_word`` of the turns the request
    may see that hold it, recorded by ``until``."""
    func, param = sa.func, sa.bindparam
    tenant = param("tenant_id", type_=sa.Text)
    # Each lexeme is matched as itself (a quoted tsquery operand: nothing parsed, nothing
    # stemmed again), so the words match and score the same lexemes.
    quoted = func.replace(func.replace(wanted.c.lexeme, "\\", "\\\\"), "'", "''")
    operand = sa.cast(sa.literal("'") + quoted + sa.literal("'"), TSQUERY)
    holding_word = (
        sa.select(turns.c.turn_id)
        .where(
            turns.c.tenant_id == tenant,
            turns.c.tsv.op("@@")(operand),
            turns.c.position <= param("until_position", type_=sa.BigInteger),
            turns.c.recorded_at <= param("until_time", type_=sa.DateTime(timezone=True)),
            _visible(),
        )
        .limit(param("per_word", type_=sa.Integer))
        .lateral("holding_word")
    )
    found = sa.select(holding_word.c.turn_id).select_from(wanted.join(holding_word, sa.true())).distinct()
    return (
        sa.select(turns.c.turn_id, turns.c.text, turns.c.position, turns.c.tsv, turns.c.subject)
        .where(turns.c.tenant_id == tenant, turns.c.turn_id.in_(found))
        .cte("matched")
    )


def _scored(matched: sa.CTE, wanted: sa.CTE) -> sa.CTE:
    """Each matched turn's Okapi BM25 score over the wanted lexemes, the document
    frequencies and the average length counted in the matched turns."""
    func = sa.func
    # Every lexeme of every turn found, read once: the wanted ones score, and all of
    # them give the turn's length in tokens (BM25's usual length).
    entry = func.unnest(matched.c.tsv).table_valued("lexeme", "positions", "weights").alias("entry")
    entries = (
        sa.select(matched.c.turn_id, entry.c.lexeme, sa.cast(func.cardinality(entry.c.positions), sa.Float).label("tf"))
        .select_from(matched.join(entry, sa.true()))
        .cte("entries")
    )
    lengths = (
        sa.select(entries.c.turn_id, func.sum(entries.c.tf).label("length")).group_by(entries.c.turn_id).cte("lengths")
    )
    hits = (
        sa.select(entries.c.turn_id, entries.c.lexeme, entries.c.tf, lengths.c.length)
        .select_from(
            entries.join(wanted, entries.c.lexeme == wanted.c.lexeme).join(
                lengths, entries.c.turn_id == lengths.c.turn_id
            )
        )
        .cte("hits")
    )
    one = sa.literal(1.0, sa.Float)
    corpus = sa.select(
        sa.cast(func.count(), sa.Float).label("n"),
        sa.cast(func.greatest(func.avg(lengths.c.length), one), sa.Float).label("avg_length"),
    ).cte("corpus")
    holding = (
        sa.select(hits.c.lexeme, sa.cast(func.count(), sa.Float).label("df")).group_by(hits.c.lexeme).cte("holding")
    )
    half, k1, b = (sa.literal(x, sa.Float) for x in (0.5, BM25_K1, BM25_B))
    idf = func.ln(one + (corpus.c.n - holding.c.df + half) / (holding.c.df + half))
    saturation = hits.c.tf * (k1 + one) / (hits.c.tf + k1 * (one - b + b * hits.c.length / corpus.c.avg_length))
    return (
        sa.select(hits.c.turn_id, func.sum(idf * saturation).label("score"))
        .select_from(hits.join(holding, hits.c.lexeme == holding.c.lexeme).join(corpus, sa.true()))
        .group_by(hits.c.turn_id)
        .cte("scored")
    )


_SEARCH = _search_statement()


def texts_by_id(
    conn: Connection, tenant_id: str, turn_ids: Iterable[str], seen_from: Sequence[tuple[str, str]] | None = None
) -> dict[str, tuple[str, str | None]]:
    """The text and speaker (stored user id) of each of these turns the tenant has, by
    turn id; with ``seen_from``, of those seen from them (``_visible``)."""
    wanted = sorted(set(turn_ids))
    if not wanted:
        return {}
    params = {"tenant_id": tenant_id, "turn_ids": wanted, **_seen_params(seen_from)}
    return {r[0]: (r[1], r[2]) for r in conn.execute(_TEXTS, params).all()}


_TEXTS = sa.select(turns.c.turn_id, turns.c.text, turns.c.subject).where(
    turns.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text),
    turns.c.turn_id == sa.any_(sa.bindparam("turn_ids", type_=ARRAY(sa.Text))),
    _visible(),
)


def speakers_among(conn: Connection, tenant_id: str, subjects: Iterable[str]) -> set[str] | None:
    """Those of ``subjects`` (stored user ids) who said at least one of the tenant's
    turns; None when the tenant has no turn at all. One statement."""
    params = {"tenant_id": tenant_id, "subjects": sorted(set(subjects))}
    said, spoke = conn.execute(_SPEAKERS, params).one()
    return set(spoke or ()) if said else None


def _speakers_statement() -> sa.Select[Any]:
    tenant = sa.bindparam("tenant_id", type_=sa.Text)
    subject = sa.func.unnest(sa.bindparam("subjects", type_=ARRAY(sa.Text))).table_valued("subject").render_derived()
    by_them = sa.select(turns.c.turn_id).where(turns.c.tenant_id == tenant, turns.c.subject == subject.c.subject)
    spoke = sa.select(sa.func.array_agg(subject.c.subject)).where(by_them.exists()).scalar_subquery()
    return sa.select(sa.select(turns.c.turn_id).where(turns.c.tenant_id == tenant).exists(), spoke)


_SPEAKERS = _speakers_statement()
