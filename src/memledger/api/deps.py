"""Request dependencies: the database, the tenant of the caller's API key, the key
itself as the actor of every write, and (when the deployment asks for them) the signed
scope assertions that let a request name a user."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any, NamedTuple

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine
from starlette.concurrency import run_in_threadpool

from memledger.api.intake import HOLDER_STATE
from memledger.bootstrap import App
from memledger.errors import DatabaseUnavailable, Unauthorized
from memledger.service import keys, scope_assertions
from memledger.service.driver_errors import translate

_bearer = HTTPBearer(auto_error=False)
_header = APIKeyHeader(name="X-API-Key", auto_error=False)
_NO_KEY = "a valid API key is required (Authorization: Bearer <key> or X-API-Key)"


def database_of(request: Request) -> App:
    """The application (``bootstrap.App``: the database, its engines and the parts use cases
    are given) the HTTP app was built over."""
    built: App = request.app.state.database
    return built


async def api_key(
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> str | None:
    """The key the request carries, if any (Bearer first). A coroutine: it does no I/O,
    so it runs on the event loop rather than in a worker thread."""
    return bearer.credentials if bearer is not None else header


def _checked(request: Request, key: str | None) -> tuple[str, str] | None:
    """The key's tenant and id as ``intake.Intake`` found them before reading the body."""
    checked = getattr(request.state, HOLDER_STATE, None)
    if checked is not None and checked[0] == key:
        found: tuple[str, str] = checked[1]
        return found
    return None


def _holder(request: Request, key: str | None) -> tuple[str, str] | None:
    """The key's tenant and id: as ``intake.Intake`` found them before reading the
    body, or looked up now (a request without a body)."""
    found = _checked(request, key)
    if found is not None or not key:
        return found
    return keys.holder_for(database_of(request).engine, key)


async def named_users(request: Request) -> tuple[str, ...]:
    """The users a request names (``user=`` in its query, ``scopes.user`` in its body or
    in each of its turns), read only when the deployment asks for scope assertions. The
    body was read (and is kept) before dependencies run, so nothing is read twice."""
    if database_of(request).settings.scope_secret is None:
        return ()
    users = [u for u in request.query_params.getlist("user") if u]
    if request.method in ("POST", "PUT", "PATCH"):
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            body = None  # the route refuses it (422)
        users += _body_users(body)
    return tuple(users)


def _body_users(body: Any) -> list[str]:
    """``scopes.user`` of a body, and of each of its ``turns``."""
    turns = body.get("turns") if isinstance(body, dict) else None
    parts: list[Any] = turns if isinstance(turns, list) else [body]
    found = [p.get("scopes") for p in parts if isinstance(p, dict)]
    return [s["user"] for s in found if isinstance(s, dict) and isinstance(s.get("user"), str) and s["user"]]


def _check_scope(request: Request, tenant_id: str, users: tuple[str, ...]) -> None:
    """403 unless each user the request names is asserted by the app (when asked for)."""
    secret = database_of(request).settings.scope_secret
    if secret is not None and users:
        header = request.headers.get(scope_assertions.HEADER)
        scope_assertions.check(secret.get_secret_value(), tenant_id, users, header, now=int(time.time()))


def tenant(
    request: Request,
    key: Annotated[str | None, Depends(api_key)],
    users: Annotated[tuple[str, ...], Depends(named_users)],
) -> str:
    """The tenant the request's API key is bound to; 401 without a valid key, 403 when
    it names a user the app has not asserted (``MEMLEDGER_SCOPE_SECRET`` set).

    The lookup runs as the owner: finding which tenant a key belongs to is the one
    question asked across tenants (by the key's hash, which reveals nothing else).
    """
    found = _holder(request, key)
    if found is None:
        raise Unauthorized(_NO_KEY)
    _check_scope(request, found[0], users)
    return found[0]


def tenant_engine(request: Request, tenant_id: Annotated[str, Depends(tenant)]) -> Engine:
    """The application role's engine, fenced by row-level security to the caller's
    tenant: everything a request reads or writes goes through it."""
    return database_of(request).for_tenant(tenant_id)


def actor(
    request: Request, tenant_id: Annotated[str, Depends(tenant)], key: Annotated[str | None, Depends(api_key)]
) -> str:
    """Who a write is recorded as: "api:key:<key id>", so an auditor sees which of a
    tenant's keys wrote each event. Looked up only by the routes that write."""
    found = keys.holder_for(database_of(request).engine, key) if key else None
    if found is None or found[0] != tenant_id:  # revoked since ``tenant`` looked: refused as it would be now
        raise Unauthorized(_NO_KEY)
    return f"api:key:{found[1]}"


class Reader(NamedTuple):
    """The caller's tenant, its fenced engine and who it is recorded as, for a context read."""

    tenant_id: str
    engine: Engine
    actor: str


async def context_reader(
    request: Request,
    key: Annotated[str | None, Depends(api_key)],
    users: Annotated[tuple[str, ...], Depends(named_users)],
) -> Reader | None:
    """``tenant`` and ``tenant_engine`` for the context endpoints, which never fail the
    agent's chat loop: None when the database cannot look the key up (it is down), so
    the route answers an empty block that says why. An empty block holds nothing of
    any tenant, so answering it before the key is checked leaks nothing. A key that
    the database rejects is still 401. The key's holder is kept (``keys.holder_kept``):
    one this process holds is answered on the event loop, a lookup in a worker thread."""
    engine = database_of(request).engine
    found = _checked(request, key) or (keys.kept_holder(engine, key) if key else None)
    if found is None and key:
        try:
            found = await run_in_threadpool(keys.holder_kept, engine, key)
        except sa_exc.DBAPIError as e:
            if isinstance(translate(e), DatabaseUnavailable):
                return None
            raise
        except DatabaseUnavailable:
            return None
    if found is None:
        raise Unauthorized(_NO_KEY)
    tenant_id, key_id = found
    _check_scope(request, tenant_id, users)
    return Reader(tenant_id, database_of(request).for_tenant(tenant_id), f"api:key:{key_id}")


Tenant = Annotated[str, Depends(tenant)]
Fenced = Annotated[Engine, Depends(tenant_engine)]
Actor = Annotated[str, Depends(actor)]
ContextReader = Annotated[Reader | None, Depends(context_reader)]
