"""Scope ids kept private: the keys callers scope memory by, stored as keyed hashes.

Callers derive session, project, user and org keys (and turn subjects) from
session ids, workspace paths and account ids. The service takes them raw and
stores ``hid.<kind>.<32 hex digits>`` instead: HMAC-SHA256 of the kind and the
raw id under the tenant's secret (table ``tenant_secrets``), cut to 128 bits.
The same raw id of one tenant always gives the same stored id, so the same raw
ids select the same memory, and everything derived from stored ids (stream ids,
fact scope keys, the speaker's entity) just works. The same raw id in two tenants
gives two unrelated ids.

- A tenant's secret is made on its first use and never changes. Whether the tenant
  hashes at all is decided then too, by the deployment's switch
  (``MEMLEDGER_HASH_SCOPE_IDS``, on by default; see ``set_default``), and recorded
  in its row: a row with no secret stores ids as given. Flipping the switch later
  changes nothing for tenants already seen, so no raw id ever moves to another scope.
  Tenants that held scoped events before hashing existed keep storing ids as given.
- Ids we handed out can be passed back: a value already of the stored form, of the
  same kind, is kept as it is (a fact's ``scope_key``, a turn's ``subject``). One of
  another kind is refused. A raw id that happened to look exactly like a stored one
  would be kept as given; it is indistinguishable from random hex anyway.
- Raw ids are checked before hashing with the rules the ledger applies to stored
  ones (1 to 200 characters, no NUL, no lone surrogate), so a bad id is refused
  the same way whether hashing is on or off.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from dataclasses import dataclass

import sqlalchemy.exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidIdentifier
from memledger.events.catalogue import ScopeKind, Scopes
from memledger.store import db, tenant_secrets
from memledger.store.identifiers import check_identifier

KINDS: tuple[ScopeKind, ...] = ("session", "project", "user", "org")
MAX_RAW_LENGTH = 200  # the catalogue's ``Name``
OPTION = "memledger_hash_scope_ids"  # the engine's execution option holding the deployment's switch
_STORED = re.compile(r"hid\.(session|project|user|org)\.[0-9a-f]{32}")
_SECRET_BYTES = 32


def check_raw(field: str, raw: object) -> str:
    """``raw`` if it can be a scope key, else ``InvalidIdentifier`` naming ``field``."""
    if not isinstance(raw, str):
        raise InvalidIdentifier(field, repr(raw), f"must be a string, not {type(raw).__name__}")
    if not raw:
        raise InvalidIdentifier(field, raw, "must not be empty")
    if not raw.strip():  # as an identifier may not be (store.identifiers)
        raise InvalidIdentifier(field, raw, "must not be blank")
    if len(raw) > MAX_RAW_LENGTH:
        raise InvalidIdentifier(field, raw, f"is {len(raw)} characters long, above {MAX_RAW_LENGTH}")
    if "\x00" in raw:
        raise InvalidIdentifier(field, raw, "holds a NUL character")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidIdentifier(field, ascii(raw), "holds a character UTF-8 cannot encode") from None
    return raw


def check_scopes(scopes: Scopes, field: str = "scopes") -> None:
    """Refuse any scope key of ``scopes`` that ``check_raw`` refuses."""
    for kind in KINDS:
        if (raw := getattr(scopes, kind)) is not None:
            check_raw(f"{field}.{kind}", raw)


def is_stored(value: str) -> bool:
    """Whether ``value`` has the form of a stored (hashed) id."""
    return _STORED.fullmatch(value) is not None


@dataclass(frozen=True)
class TenantKey:
    """How one tenant stores its ids: hashed under ``secret``, or as given (None)."""

    tenant_id: str
    secret: bytes | None

    @property
    def hashes(self) -> bool:
        """Whether this tenant's ids are stored as keyed hashes."""
        return self.secret is not None

    def stored_id(self, kind: ScopeKind, raw: str, *, field: str | None = None) -> str:
        """The id ``raw`` (a ``kind`` key) is stored under. Pure once the key is known."""
        field = field or f"scopes.{kind}"
        check_raw(field, raw)
        if self.secret is None:
            return raw
        if (found := _STORED.fullmatch(raw)) is not None:
            if found.group(1) != kind:
                raise InvalidIdentifier(field, raw, f"is a stored {found.group(1)} id, not a {kind} id")
            return raw
        digest = hmac.new(self.secret, f"{kind}\x00{raw}".encode(), hashlib.sha256).hexdigest()
        return f"hid.{kind}.{digest[:32]}"

    def stored_scopes(self, scopes: Scopes, *, field: str = "scopes") -> Scopes:
        """``scopes`` with every key replaced by its stored id (all checked first)."""
        check_scopes(scopes, field)

        def stored(kind: ScopeKind) -> str | None:
            raw = getattr(scopes, kind)
            return None if raw is None else self.stored_id(kind, raw, field=f"{field}.{kind}")

        return Scopes(session=stored("session"), project=stored("project"), user=stored("user"), org=stored("org"))


_cache: dict[tuple[str | int | None, ...], TenantKey] = {}
_cache_lock = threading.Lock()


def set_default(engine: Engine, hashes: bool) -> None:
    """The deployment's switch: whether tenants first seen through ``engine`` hash their ids.
    Tenants already seen keep what their row says."""
    engine.update_execution_options(**{OPTION: hashes})


def key_for(bind: Connection | Engine, tenant_id: str) -> TenantKey:
    """The tenant's key, made on its first use; cached in the process once committed.

    A new row is written in a transaction of its own (committed before it is cached or
    used), so a caller's rollback never leaves the process using a secret the database
    forgot. Two processes making the same tenant's row at once end with the same one.
    """
    check_identifier("tenant_id", tenant_id)
    engine = bind if isinstance(bind, Engine) else bind.engine
    url = engine.url  # the database, whichever role connects to it
    where = (url.host, url.port, url.database, str(sorted(url.query.items())), tenant_id)
    cached = _cache.get(where)
    if cached is not None:
        return cached
    try:
        found = _read(bind, tenant_id)
        if found is None:
            hashes = bool(bind.get_execution_options().get(OPTION, True))
            with db.begin(engine) as tx:
                found = tenant_secrets.get_or_create(
                    tx, tenant_id, secrets.token_bytes(_SECRET_BYTES) if hashes else None
                )
    except sa_exc.DBAPIError as e:
        raise db.translate(e) from e
    key = TenantKey(tenant_id, found.secret)
    with _cache_lock:
        return _cache.setdefault(where, key)


def _read(bind: Connection | Engine, tenant_id: str) -> tenant_secrets.TenantSecret | None:
    if isinstance(bind, Connection):
        return tenant_secrets.get(bind, tenant_id)
    with bind.connect() as conn:
        return tenant_secrets.get(conn, tenant_id)


def forget_cached() -> None:
    """Drop the process's cached keys (after a tenant's row was deleted, or in tests)."""
    with _cache_lock:
        _cache.clear()


def stored_id(bind: Connection | Engine, tenant_id: str, kind: ScopeKind, raw: str) -> str:
    """The id the tenant stores the raw ``kind`` key ``raw`` under. For erasure, a raw
    subject is ``stored_id(conn, tenant, "user", subject)``."""
    return key_for(bind, tenant_id).stored_id(kind, raw)


def stored_scopes(bind: Connection | Engine, tenant_id: str, scopes: Scopes) -> Scopes:
    """``scopes`` as the tenant stores them; raw keys are checked before anything is read."""
    check_scopes(scopes)
    if all(getattr(scopes, kind) is None for kind in KINDS):
        return scopes
    return key_for(bind, tenant_id).stored_scopes(scopes)
