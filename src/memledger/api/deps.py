"""Request dependencies: the database and the tenant of the caller's API key."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.engine import Engine

from memledger.bootstrap import Database
from memledger.errors import Unauthorized
from memledger.service import keys

_bearer = HTTPBearer(auto_error=False)
_header = APIKeyHeader(name="X-API-Key", auto_error=False)


def database_of(request: Request) -> Database:
    """The database the app was built over."""
    db: Database = request.app.state.database
    return db


def tenant(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> str:
    """The tenant the request's API key is bound to; 401 without a valid key.

    The lookup runs as the owner: finding which tenant a key belongs to is the one
    question asked across tenants (by the key's hash, which reveals nothing else).
    """
    key = bearer.credentials if bearer is not None else header
    found = keys.tenant_for(database_of(request).engine, key) if key else None
    if found is None:
        raise Unauthorized("a valid API key is required (Authorization: Bearer <key> or X-API-Key)")
    return found


def tenant_engine(request: Request, tenant_id: Annotated[str, Depends(tenant)]) -> Engine:
    """The application role's engine, fenced by row-level security to the caller's
    tenant: everything a request reads or writes goes through it."""
    return database_of(request).for_tenant(tenant_id)


Tenant = Annotated[str, Depends(tenant)]
Fenced = Annotated[Engine, Depends(tenant_engine)]
