"""API keys: each bound to one tenant, stored as a hash, issued and revoked as events."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import UTC, datetime

from sqlalchemy.engine import Engine

from memledger.errors import NotFound
from memledger.events.catalogue import ApiKeyIssued, ApiKeyRevoked
from memledger.events.envelope import Metadata, NewEvent
from memledger.projectors import api_keys
from memledger.service.memory import read_model_through
from memledger.service.ttl_cache import TtlCache
from memledger.store import db, event_store
from memledger.store.identifiers import check_identifier

KEYS_STREAM = "tenant:keys"
KEY_READY_S = 10.0  # how long issuing or revoking a key waits for the key lookup to show it
PREFIX = "mlk_"
# Which tenant a key reaches, as a context read asks it (``holder_kept``). A revocation
# made in this process drops the answer at once; one made by another process (the
# CLI, another server) is seen within this many seconds. Unknown keys are never kept,
# so a key issued anywhere works at once. Every other use looks the key up each time.
HOLDER_TTL_S = 2.0
_holders: TtlCache[tuple[object, str], tuple[str, str]] = TtlCache(HOLDER_TTL_S, 4096)


def key_hash(key: str) -> str:
    """The sha256 a key is stored and looked up by."""
    return hashlib.sha256(key.encode()).hexdigest()


def create(engine: Engine, tenant_id: str, *, label: str = "", issued_by: str | None = None) -> tuple[str, str]:
    """Issue a key for ``tenant_id``; returns (key id, the key). The key is shown once:
    only its hash is kept. Usable as soon as this returns."""
    check_identifier("tenant_id", tenant_id)
    key_id = f"k-{uuid.uuid4().hex[:12]}"
    key = f"{PREFIX}{secrets.token_urlsafe(32)}"
    event = ApiKeyIssued(key_id=key_id, key_sha256=key_hash(key), label=label, issued_by=issued_by)
    _append(engine, tenant_id, event, issued_by)
    return key_id, key


def revoke(engine: Engine, tenant_id: str, key_id: str, *, reason: str = "", actor: str | None = None) -> None:
    """Stop a key from working."""
    with engine.connect() as conn:
        if not any(k.key_id == key_id for k in api_keys.list_keys(conn, tenant_id)):
            raise NotFound(f"tenant {tenant_id!r} has no key {key_id!r}")
    _append(engine, tenant_id, ApiKeyRevoked(key_id=key_id, reason=reason), actor)
    forget(tenant_id, key_id)  # after the lookup shows it: a lookup racing it is not kept


def forget(tenant_id: str, key_id: str | None = None) -> None:
    """Drop this process's kept answers for the tenant's key ``key_id`` (None: every
    key of the tenant), and any being read now: the next request looks it up."""
    _holders.drop_where(lambda _slot, holder: holder[0] == tenant_id and key_id in (None, holder[1]))


def _append(engine: Engine, tenant_id: str, event: ApiKeyIssued | ApiKeyRevoked, actor: str | None) -> None:
    new = NewEvent(
        event=event, event_id=f"key:{uuid.uuid4()}", occurred_at=datetime.now(UTC), metadata=Metadata(actor=actor)
    )
    with db.begin(engine) as tx:
        event_store.append(tx, tenant_id, KEYS_STREAM, [new], None)
    # Usable at once: caught up through the new event even while another process's
    # open transaction keeps it from gap-safe readers for a moment.
    read_model_through(engine, tenant_id, api_keys.NAME, KEYS_STREAM, timeout_s=KEY_READY_S)


def tenant_for(engine: Engine, key: str) -> str | None:
    """The tenant a key reaches, or None for an unknown or revoked key."""
    found = holder_for(engine, key)
    return None if found is None else found[0]


def holder_for(engine: Engine, key: str) -> tuple[str, str] | None:
    """The tenant a key reaches and the key's id (what a write is recorded as made by),
    or None for an unknown or revoked key. One statement, by the key's hash."""
    if not key.startswith(PREFIX):
        return None
    with engine.connect() as conn:
        return api_keys.holder_of(conn, key_hash(key))


def holder_kept(engine: Engine, key: str) -> tuple[str, str] | None:
    """``holder_for``, kept for ``HOLDER_TTL_S`` once found live: for reads that may
    follow another process's revocation by that much (serving context)."""
    if not key.startswith(PREFIX):
        return None
    return _holders.get_or_load((engine.pool, key_hash(key)), lambda: holder_for(engine, key))


def kept_holder(engine: Engine, key: str) -> tuple[str, str] | None:
    """``holder_kept``'s answer if this process holds it (no I/O), else None."""
    return _holders.get((engine.pool, key_hash(key))) if key.startswith(PREFIX) else None


def list_keys(engine: Engine, tenant_id: str) -> list[api_keys.KeyRow]:
    """The tenant's keys (ids, labels, hashes; never the keys)."""
    with engine.connect() as conn:
        return api_keys.list_keys(conn, tenant_id)
