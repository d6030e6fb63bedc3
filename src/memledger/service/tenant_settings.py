"""Per-tenant switches, stored as events in the tenant's settings stream."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import cast

import msgspec
from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidCommand
from memledger.events.catalogue import ExtractionMode, TenantSettingsChanged
from memledger.events.envelope import Metadata, NewEvent
from memledger.service.ttl_cache import TtlCache
from memledger.store import db, event_reads, event_store

SETTINGS_STREAM = "tenant:settings"
SWITCHES = ("capture", "recall", "auto_promote", "broad_scope_writes")
EXTRACTION_MODES: tuple[ExtractionMode, ...] = ("heuristic", "llm", "hybrid")
FIELDS = (*SWITCHES, "extraction_mode")  # every setting a change may name
# What a context request reads (``kept``): a change made in this process is seen at
# once, one made by another process within this many seconds.
KEPT_TTL_S = 2.0


class TenantSettings(msgspec.Struct, frozen=True):
    """The switches in force. Defaults: capture and recall on; automatic promotion
    from directives off; user and org scopes written only by promotion; extraction by
    the configured extractor (``extraction_mode`` None: ``MEMLEDGER_EXTRACTOR``)."""

    capture: bool = True
    recall: bool = True
    auto_promote: bool = False
    broad_scope_writes: bool = False
    extraction_mode: ExtractionMode | None = None


_kept: TtlCache[tuple[object, str], TenantSettings] = TtlCache(KEPT_TTL_S, 4096)


def fold(events: list[TenantSettingsChanged]) -> TenantSettings:
    """The settings after a sequence of changes. Pure."""
    current = TenantSettings()
    for change in events:
        updates = {name: value for name in FIELDS if (value := getattr(change, name)) is not None}
        current = msgspec.structs.replace(current, **updates)
    return current


def load(conn: Connection, tenant_id: str) -> TenantSettings:
    """The tenant's current settings, read from its settings stream."""
    changes = [
        rec.event
        for rec in event_reads.read_stream(conn, tenant_id, SETTINGS_STREAM)
        if isinstance(rec.event, TenantSettingsChanged)
    ]
    return fold(changes)


def kept(conn: Connection, tenant_id: str) -> TenantSettings:
    """``load``, kept for ``KEPT_TTL_S``: for reads that may lag another process's
    change by that much (serving context), never for a write's checks."""
    found = _kept.get_or_load((conn.engine.pool, tenant_id), lambda: load(conn, tenant_id))
    return cast(TenantSettings, found)  # load always answers, so the cache never answers None


def forget(tenant_id: str) -> None:
    """Drop this process's kept settings of ``tenant_id`` (and any being read now)."""
    _kept.drop_where(lambda slot, _settings: slot[1] == tenant_id)


def current(engine: Engine, tenant_id: str) -> TenantSettings:
    """The tenant's current settings, read in a connection of their own."""
    with engine.connect() as conn:
        return load(conn, tenant_id)


def load_many(conn: Connection, tenant_ids: Iterable[str]) -> dict[str, TenantSettings]:
    """The current settings of each of ``tenant_ids``, read in one query."""
    changes: dict[str, list[TenantSettingsChanged]] = {t: [] for t in tenant_ids}
    for rec in event_reads.read_stream_of_tenants(conn, changes, SETTINGS_STREAM):
        if isinstance(rec.event, TenantSettingsChanged):
            changes[rec.tenant_id].append(rec.event)
    return {tenant: fold(events) for tenant, events in changes.items()}


def switches_change(switches: Mapping[str, object]) -> TenantSettingsChanged:
    """The change ``switches`` ask for (switch name -> True/False, ``extraction_mode`` ->
    one of ``EXTRACTION_MODES``); ``InvalidCommand`` naming an unknown setting or a bad value."""
    unknown = sorted(set(switches) - set(FIELDS))
    if unknown:
        raise InvalidCommand(f"unknown switch {unknown[0]!r}: the switches are {', '.join(FIELDS)}")
    for name, value in switches.items():
        if name == "extraction_mode":
            if value not in EXTRACTION_MODES:
                raise InvalidCommand(f"extraction_mode must be one of {', '.join(EXTRACTION_MODES)}, not {value!r}")
        elif not isinstance(value, bool):
            raise InvalidCommand(f"switch {name!r} must be True or False, not {value!r}")
    return TenantSettingsChanged(**switches)  # type: ignore[arg-type]


def change(engine: Engine, tenant_id: str, change: TenantSettingsChanged, actor: str | None = None) -> TenantSettings:
    """Append a change of switches and return the settings now in force. A change
    naming no switch is refused (``InvalidCommand``): it would record nothing but noise."""
    if all(getattr(change, name) is None for name in FIELDS):
        raise InvalidCommand(f"a settings change names at least one switch: {', '.join(FIELDS)}")
    new = NewEvent(
        event=change,
        event_id=f"settings:{uuid.uuid4()}",
        occurred_at=datetime.now(UTC),
        metadata=Metadata(actor=actor),
    )
    try:
        with db.begin(engine) as tx:
            event_store.append(tx, tenant_id, SETTINGS_STREAM, [new], None)
            return load(tx, tenant_id)
    finally:
        forget(tenant_id)  # after the commit: a read racing it is not kept
