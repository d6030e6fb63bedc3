"""Whether a request comes from the operator: it carries ``MEMLEDGER_OPERATOR_KEY``, which
reads across tenants (health details, an installation's check)."""

from __future__ import annotations

import hmac

from fastapi import Request


def is_operator(request: Request) -> bool:
    """Whether the request carries the operator key, compared in constant time."""
    expected: str | None = request.app.state.operator_key
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())
