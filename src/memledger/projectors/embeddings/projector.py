"""The embeddings projector: a vector for every fact, entity and turn, and the
nearest-neighbour query over them.

Per batch, ``apply`` works out each item's text (pure), looks the texts up in the
embedding cache by (model, sha256), embeds only the misses (64 at a time), keeps
them in the cache, and writes the rows set-wise. Every row takes its vector from
the cache, so a rebuild re-embeds nothing and gives rows identical to the live ones.

Which text an item has, whatever the batch boundaries:

- a turn: its text, from its first recording (as the turns projection);
- a fact (extracted or promoted): "key: statement", from the event that created
  the memory id (as the facts projection; a re-extraction is a mention), the key
  without a hashed speaker's prefix (``keys.key_words``; v2: v1 kept it, and the
  random 8 hex digits decided whether an unrelated question came near the fact);
- an entity: "name: description" from its latest observation with a description,
  or its name alone until one has a description.

Models: the embedder is a chain (``adapters.embedding_chain``; one model is a chain
of one) whose first model is the tenants'. An item's row holds the vector of the
first model of the chain whose vector of its text the cache holds; a text none
holds is embedded by the chain, and its row is kept under the model that answered
(a fallback's vector is never stored as the first model's). Queries ask for one
model's rows. The backfill (``embedding_backfill``) later moves fallback rows to
the first model. A tenant whose rows are of a model outside the chain is refused
(``EmbeddingMismatch``): changing the first model without keeping the old one in
the chain is a rebuild of this projection.

Erasure: a batch is read, and embedded, before an erasure of its events may
commit; so every write of the cache first holds the erasure of the texts' tenants
off (``embedding_cache.hold_off_erasure``) and re-reads the events the texts come
from (``still_said``), storing only texts an event not erased still gives. The
erasure then either committed before (the events read as erased) or forgets the
entries after. Rows of events erased meanwhile go when the tenant is refolded at
the erasure's record, as always.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec
import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection, Engine

from memledger.adapters.embedding_chain import as_chain
from memledger.errors import EmbeddingFailed, EmbeddingMismatch
from memledger.events.catalogue import EntityObserved, FactExtracted, MemoryPromoted, TurnRecorded
from memledger.events.codec import tag_of
from memledger.events.envelope import Recorded
from memledger.events.keys import entity_id, key_words
from memledger.projectors import bulk, in_place_upgrade
from memledger.projectors.base import live_schema, read_models
from memledger.store import db, embedding_cache, event_reads

if TYPE_CHECKING:
    from memledger.adapters.embedding import Embedder
    from memledger.adapters.embedding_chain import ChainEmbedder

NAME = "embeddings"
VERSION = 3
HANDLES = frozenset(tag_of(t) for t in (TurnRecorded, FactExtracted, MemoryPromoted, EntityObserved))
DIM = 384  # the column's dimension (projections/embeddings/v3.sql)
EMBED_BATCH = 64
ItemKey = tuple[str, str, str]  # (tenant, kind, item id)

embeddings = sa.Table(
    "embeddings",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("item_kind", sa.Text, primary_key=True),
    sa.Column("item_id", sa.Text, primary_key=True),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("dim", sa.Integer, nullable=False),
    sa.Column("text_sha256", sa.Text, nullable=False),
    sa.Column("embedding", Vector(DIM), nullable=False),
    schema=live_schema(NAME),
)


class EmbeddingRow(msgspec.Struct):
    """One row of ``embeddings``; the vector in pgvector's text form, from the cache."""

    tenant_id: str
    item_kind: str
    item_id: str
    model: str
    dim: int
    text_sha256: str
    embedding: str


class ItemText(msgspec.Struct, frozen=True):
    """The text an event gives an item; ``replaces`` if it overrides an earlier one."""

    text: str
    replaces: bool


def text_sha256(text: str) -> str:
    """The cache key of a text (with the model): sha256 of its UTF-8 bytes. Pure."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_text(rec: Recorded) -> tuple[ItemKey, ItemText] | None:
    """The item an event gives text to, and that text; None for other events and
    for erased ones (their text is gone). Pure."""
    if rec.erased:
        return None
    event = rec.event
    match event:
        case TurnRecorded():
            return (rec.tenant_id, "turn", event.turn_id), ItemText(event.text, replaces=False)
        case FactExtracted() | MemoryPromoted():
            text = f"{key_words(event.key)}: {event.statement}"
            return (rec.tenant_id, "fact", event.memory_id), ItemText(text, replaces=False)
        case EntityObserved():
            key = (rec.tenant_id, "entity", entity_id(event.entity_type, event.name))
            if event.description:
                return key, ItemText(f"{event.name}: {event.description}", replaces=True)
            return key, ItemText(event.name, replaces=False)
        case _:
            return None


def texts_of(batch: Iterable[Recorded]) -> dict[ItemKey, ItemText]:
    """Each item's text after ``batch``: a replacing text wins over what came before,
    any other only fills a gap. Pure; the same result whatever the batch boundaries."""
    out: dict[ItemKey, ItemText] = {}
    for rec in batch:
        found = item_text(rec)
        if found is None:
            continue
        key, text = found
        if text.replaces or key not in out:
            out[key] = text
    return out


def in_keys(keys: Iterable[ItemKey]) -> sa.ColumnElement[bool]:
    """SQL: whether a row is one of ``keys`` (tenant, kind, item id)."""
    return sa.tuple_(embeddings.c.tenant_id, embeddings.c.item_kind, embeddings.c.item_id).in_(sorted(keys))


def _existing(tx: Connection, keys: Iterable[ItemKey]) -> set[ItemKey]:
    wanted = list(keys)
    if not wanted:
        return set()
    stmt = sa.select(embeddings.c.tenant_id, embeddings.c.item_kind, embeddings.c.item_id).where(in_keys(wanted))
    return {(r[0], r[1], r[2]) for r in tx.execute(stmt).all()}


def _tenant_hashes(conn: Connection, tenant_id: str) -> set[str]:
    stmt = sa.select(embeddings.c.text_sha256).where(embeddings.c.tenant_id == tenant_id).distinct()
    return set(conn.execute(stmt).scalars())


def stored_models(conn: Connection, tenant_ids: Iterable[str]) -> dict[str, tuple[str, int]]:
    """(model, dim) of one of each tenant's vectors; tenants with none are absent.

    One row per tenant suffices: apply lets only the models of its chain into a
    tenant, so a row of another model means every row was made before that chain.
    """
    tenants = sa.func.unnest(sa.bindparam("tenants", sorted(set(tenant_ids)), type_=ARRAY(sa.Text)))
    tenant = tenants.table_valued("tenant_id").render_derived(name="t")
    one = (
        sa.select(embeddings.c.model, embeddings.c.dim)
        .where(embeddings.c.tenant_id == tenant.c.tenant_id)
        .limit(1)
        .lateral("one")
    )
    stmt = sa.select(tenant.c.tenant_id, one.c.model, one.c.dim).select_from(tenant.join(one, sa.true()))
    return {r[0]: (r[1], r[2]) for r in conn.execute(stmt).all()}


def _check_model(conn: Connection, tenant_ids: Iterable[str], models: Sequence[str], dim: int) -> None:
    for tenant_id, (stored, stored_dim) in stored_models(conn, tenant_ids).items():
        if stored not in models or stored_dim != dim:
            raise EmbeddingMismatch(tenant_id, stored, stored_dim, models[0], dim)


def vectors_for(
    tx: Connection, chain: ChainEmbedder, texts: Mapping[str, str], batch: Sequence[Recorded]
) -> dict[str, tuple[str, str]]:
    """The model and cached vector of each text (by hash): the first model of the
    chain the cache holds a vector of, else the chain's answer, cached under the model
    that gave it, for the misses an event of ``batch`` not erased still gives
    (``still_said``); a text only erased events give gets none.

    The vectors returned are re-read from the cache, so if another writer cached a
    text first, its vector is the one used.
    """
    found = embedding_cache.lookup_first(tx, chain.models, texts.keys())
    missing = [sha for sha in texts if sha not in found]
    if missing:
        said = still_said(tx, batch, missing)
        missing = [sha for sha in missing if sha in said]
    # One store per model for all of them, in (model, hash) order: two transactions
    # storing overlapping texts chunk by chunk (shortest first) took their rows in
    # different orders and deadlocked (a live catch-up against a rebuild, or an
    # erasure's refresh).
    made: dict[str, dict[str, list[float]]] = {}
    embed_missing(chain, texts, missing, lambda model, vectors: made.setdefault(model, {}).update(vectors))
    for model in sorted(made):
        embedding_cache.store(tx, model, made[model])
    if missing:
        found.update(embedding_cache.lookup_first(tx, chain.models, missing))
    return found


def still_said(tx: Connection, batch: Sequence[Recorded], text_sha256s: Iterable[str]) -> set[str]:
    """Which of these text hashes an event of ``batch`` gives that is not erased now.

    Holds the erasures of those events' tenants off until ``tx`` ends, then re-reads
    the events: an erasure that committed since ``batch`` was read shows here, and
    one that did not will forget what ``tx`` caches. Call it in the transaction that
    writes the cache, before writing.
    """
    wanted = set(text_sha256s)
    sources: dict[str, list[Recorded]] = {}
    for rec in batch:
        found = item_text(rec)
        if found is not None and (sha := text_sha256(found[1].text)) in wanted:
            sources.setdefault(sha, []).append(rec)
    recs = [rec for found in sources.values() for rec in found]
    embedding_cache.hold_off_erasure(tx, {rec.tenant_id for rec in recs})
    erased = _erased_now(tx, recs)
    return {sha for sha, found in sources.items() if any(rec.position not in erased for rec in found)}


def _erased_now(conn: Connection, recs: Iterable[Recorded]) -> set[int]:
    """The positions of these events that are erased now (re-read: ``recs`` may be older)."""
    ids: dict[str, set[str]] = {}
    for rec in recs:
        ids.setdefault(rec.tenant_id, set()).add(rec.event_id)
    return {
        rec.position
        for tenant_id, event_ids in sorted(ids.items())
        for rec in event_reads.read_events(conn, tenant_id, event_ids)
        if rec.erased
    }


def embed_missing(
    chain: ChainEmbedder,
    texts: Mapping[str, str],
    missing: Iterable[str],
    keep: Callable[[str, dict[str, list[float]]], None],
) -> None:
    """Embed the ``missing`` texts (by hash) shortest first, ``EMBED_BATCH`` at a time
    (little padding), handing each run's vectors to ``keep`` with the model that
    made them."""
    ordered = sorted(missing, key=lambda sha: (len(texts[sha]), sha))
    for start in range(0, len(ordered), EMBED_BATCH):
        chunk = ordered[start : start + EMBED_BATCH]
        model, vectors = chain.embed_any([texts[sha] for sha in chunk])
        if model not in chain.models:
            raise EmbeddingFailed(f"embedder {model!r} is not of the chain {chain.models!r}")
        if len(vectors) != len(chunk) or any(len(v) != chain.dim for v in vectors):
            raise EmbeddingFailed(f"embedder {model!r} returned vectors of the wrong number or size")
        keep(model, dict(zip(chunk, vectors, strict=True)))


class EmbeddingsProjector:
    """Projects turns, facts and entities into ``embeddings`` with ``embedder`` (a
    chain of models, or one).

    Deterministic: rows depend on the events, the cache and the chain, never on
    batch boundaries or on when the vector was made.
    """

    name = NAME
    version = VERSION
    handles = HANDLES

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.chain = as_chain(embedder)

    def prepare(self, engine: Engine, batch: Sequence[Recorded]) -> None:
        """Embed the batch's uncached texts before its transaction begins, caching each
        run of vectors in a short transaction of its own. Embedding takes seconds, and
        a write transaction open that long holds every gap-safe reader of the ledger
        back (the worker, the other projectors, the sealer: docs/adr/0001). ``apply``
        then finds the vectors in the cache; anything it misses it embeds itself.
        A run's texts whose events were erased while it embedded are not cached."""
        batch = [r for r in batch if not r.erased]
        items = texts_of(batch)
        if not items:
            return
        with engine.connect() as conn:  # reads only: no transaction id, holds nobody back
            exists = _existing(conn, [key for key, item in items.items() if not item.replaces])
            texts = {text_sha256(i.text): i.text for k, i in items.items() if i.replaces or k not in exists}
            missing = set(texts) - set(embedding_cache.lookup_first(conn, self.chain.models, texts.keys()))

        def keep(model: str, vectors: dict[str, list[float]]) -> None:
            with db.begin(engine) as tx:
                said = still_said(tx, batch, vectors.keys())
                embedding_cache.store(tx, model, {sha: v for sha, v in vectors.items() if sha in said})

        embed_missing(self.chain, texts, missing, keep)

    def refolding(self, tx: Connection, tenant_id: str) -> Callable[[], None]:
        """Before the tenant is refolded at an erasure record: what to do after. The
        texts whose rows the refold did not bring back were erased; their cache
        entries go unless some row of any tenant still holds them. The erasure could
        not always forget them: another tenant who said the same words, and was erased
        too, still had rows until its own refold (then this one, the last, forgets)."""
        before = _tenant_hashes(tx, tenant_id)

        def forget_unused() -> None:
            gone = before - _tenant_hashes(tx, tenant_id)
            embedding_cache.forget(tx, gone - hashes_in_use(tx, gone, other_than=tenant_id))

        return forget_unused

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        items = texts_of(batch)
        if not items:
            return
        chain, dim = self.chain, self.chain.dim
        if dim != DIM:
            raise EmbeddingFailed(
                f"embedder {chain.model!r} makes {dim}-dimensional vectors; this projection stores {DIM}"
            )
        _check_model(tx, {key[0] for key in items}, chain.models, dim)
        exists = _existing(tx, [key for key, item in items.items() if not item.replaces])
        items = {key: item for key, item in items.items() if item.replaces or key not in exists}
        hashes = {key: text_sha256(item.text) for key, item in items.items()}
        vectors = vectors_for(tx, chain, {hashes[key]: item.text for key, item in items.items()}, batch)
        # An item whose text got no vector came from events erased since the batch was
        # read: it gets no row (the refold at the erasure's record removes any left).
        keys = sorted(key for key in items if hashes[key] in vectors)

        def row(key: ItemKey) -> EmbeddingRow:
            model, vector = vectors[hashes[key]]
            return EmbeddingRow(*key, model, dim, hashes[key], vector)

        bulk.insert_new(tx, embeddings, [row(k) for k in keys if not items[k].replaces])
        bulk.upsert(tx, embeddings, [row(k) for k in keys if items[k].replaces])


def hashes_in_use(conn: Connection, text_sha256s: Iterable[str], *, other_than: str) -> set[str]:
    """Erasure: which of these text hashes rows of tenants other than ``other_than``
    hold (their cache entries must stay: the cache is shared)."""
    hashes = sorted(set(text_sha256s))
    if not hashes:
        return set()
    stmt = (
        sa.select(embeddings.c.text_sha256)
        .where(
            embeddings.c.text_sha256 == sa.any_(sa.bindparam("hashes", hashes, type_=ARRAY(sa.Text))),
            embeddings.c.tenant_id != other_than,
        )
        .distinct()
    )
    return set(conn.execute(stmt).scalars())


_UPGRADED_FROM = 2


def upgrade_in_place(engine: Engine) -> bool:
    """Make a live v2 copy v3 where it stands (``projections/embeddings/v3_from_v2.sql``):
    v3 adds only an index, so this equals a rebuild and spares one. True if it upgraded;
    a copy of another version is left."""
    return in_place_upgrade.upgrade(engine, NAME, _UPGRADED_FROM, VERSION)
