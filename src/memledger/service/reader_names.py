"""How a caller reads the stored scope ids in answers outside a block (search results,
graph edges on a command line): their own ids by role ("the user"), others' by kind."""

from __future__ import annotations

from sqlalchemy.engine import Connection, Engine

from memledger.formatting.names import Names, names_for
from memledger.service import scope_ids
from memledger.service.types import Scopes

__all__ = ["Names", "names_of_caller"]


def names_of_caller(bind: Connection | Engine, tenant_id: str, scopes: Scopes) -> Names:
    """The names the caller of ``scopes`` reads stored ids by, as a block names them
    (the tenant's key is read to find the caller's stored ids)."""
    return names_for(scope_ids.stored_scopes(bind, tenant_id, scopes))
