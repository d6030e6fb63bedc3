"""How the CLI prints events: JSON lines for scripts, a readable line for people."""

from __future__ import annotations

from typing import Any

import msgspec

_encoder = msgspec.json.Encoder()


def json_line(value: Any) -> str:
    """One compact JSON line."""
    return _encoder.encode(value).decode()
