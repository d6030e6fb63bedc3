"""How the CLI prints events: JSON lines for scripts, a readable line for people."""

from __future__ import annotations

from typing import Any

import msgspec

from memledger.events.envelope import Recorded

_encoder = msgspec.json.Encoder()


def event_record(rec: Recorded) -> dict[str, Any]:
    """An event as an auditor reads it: envelope fields, then the payload."""
    return {
        "position": rec.position,
        "cursor": str(rec.cursor),
        "tenant_id": rec.tenant_id,
        "stream_id": rec.stream_id,
        "stream_version": rec.stream_version,
        "event_id": rec.event_id,
        "type": msgspec.to_builtins(rec.event)["type"],
        "schema_version": type(rec.event).schema_version,
        "occurred_at": rec.occurred_at.isoformat(),
        "recorded_at": rec.recorded_at.isoformat(),
        "metadata": msgspec.to_builtins(rec.metadata),
        "payload": msgspec.to_builtins(rec.event),
    }


def json_line(value: Any) -> str:
    """One compact JSON line."""
    return _encoder.encode(value).decode()
