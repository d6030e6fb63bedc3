"""Signed scope assertions: proof that the app, not the agent, named a request's user.

An API key decides the tenant; within it, a request names whose memory it reads and
writes (``user=``). Where agents are trusted less than the app, a deployment sets
``MEMLEDGER_SCOPE_SECRET``, and every HTTP request naming a user must carry, in
``X-Memledger-Scope``, an assertion the app minted for that tenant and user: the key
alone names no one. Format (any language can mint one):

    v1.<expiry, unix seconds>.<hex HMAC-SHA256>

keyed with the tenant's scope secret (``tenant_secret``: derived from the
deployment's, so each tenant's app holds only its own) over
``memledger-scope-v1 NUL tenant NUL user NUL expiry``. The user is the value the
request names, as it names it. Scope keys never hold NUL (``scope_ids.check_raw``),
so the message is unambiguous. Pure: the caller passes ``now``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from typing import Final

from memledger.errors import Refused

HEADER: Final = "X-Memledger-Scope"
VERSION: Final = "v1"
REFUSED_CODE: Final = "scope_assertion_required"
_SECRET_LABEL: Final = b"memledger-scope-secret-v1\x00"
_MESSAGE_LABEL: Final = "memledger-scope-v1"


def tenant_secret(deployment_secret: str, tenant_id: str) -> str:
    """The secret a tenant's app mints assertions with (hex), derived from the
    deployment's: an app holding it can name users of its own tenant only."""
    digest = hmac.new(deployment_secret.encode(), _SECRET_LABEL + tenant_id.encode(), hashlib.sha256)
    return digest.hexdigest()


def mint(secret: str, tenant_id: str, user: str, *, expires_at: int) -> str:
    """An assertion that the app names ``user`` of ``tenant_id`` until ``expires_at``
    (unix seconds); ``secret`` is the tenant's (``tenant_secret``)."""
    return f"{VERSION}.{expires_at}.{_signature(secret, tenant_id, user, expires_at)}"


def check(deployment_secret: str, tenant_id: str, users: Iterable[str], header: str | None, *, now: int) -> None:
    """Refuse (403 ``scope_assertion_required``) unless every one of ``users`` is named
    by an unexpired assertion of ``tenant_id`` in ``header`` (several, comma-separated,
    for a batch naming several users)."""
    wanted = sorted(set(users))
    if not wanted:
        return
    tokens = [t.strip() for t in (header or "").split(",") if t.strip()]
    if not tokens:
        raise Refused(REFUSED_CODE, f"a request naming a user needs a signed scope assertion in {HEADER}")
    secret = tenant_secret(deployment_secret, tenant_id)
    for user in wanted:
        if not any(_valid(secret, tenant_id, user, token, now) for token in tokens):
            raise Refused(
                REFUSED_CODE,
                f"{HEADER} holds no valid, unexpired assertion for the user this request names",
            )


def _valid(secret: str, tenant_id: str, user: str, token: str, now: int) -> bool:
    version, _, rest = token.partition(".")
    expiry, _, signature = rest.partition(".")
    if version != VERSION or not expiry.isascii() or not expiry.isdigit() or len(expiry) > 12:
        return False
    expected = _signature(secret, tenant_id, user, int(expiry))
    # constant time: a caller must not learn a signature byte by byte
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")) and int(expiry) > now


def _signature(secret: str, tenant_id: str, user: str, expires_at: int) -> str:
    message = "\x00".join((_MESSAGE_LABEL, tenant_id, user, str(expires_at)))
    return hmac.new(secret.encode(), message.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
