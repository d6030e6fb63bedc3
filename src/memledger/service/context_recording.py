"""Recording a served context: the ``ContextServed`` event of every block an agent is given.

Recording is best effort: a block the ledger cannot take is still served, and the
failure is logged. What is recorded is what a replay needs to render the same block.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidCommand, LedgerError
from memledger.events import codec
from memledger.events.catalogue import ContextServed, Scopes
from memledger.events.envelope import Metadata, NewEvent
from memledger.formatting import FORMATTER_VERSION, Block
from memledger.projectors import checkpoints
from memledger.selection.types import Selection
from memledger.service import failing_open, scope_ids
from memledger.service.context_limits import MIN_BUDGET_CHARS
from memledger.store import db, event_store
from memledger.store.identifiers import check_identifier

if TYPE_CHECKING:
    from memledger.service.context import SelectRequest

log = logging.getLogger(__name__)

# Recorded with each served context; bumped whenever the same request and ledger would
# select differently. What each version changed: CHANGELOG.md.
SELECTOR_VERSION = "6"
RECORD_TIMEOUT_MS = "5000"  # recording a failed-open block: its own bound, not the missed deadline
# Each served context is a stream of its own, named by its event id: concurrent
# requests of a tenant never queue on one stream's append lock. ``find_served`` reads
# by event id, so it also finds contexts in the shared "context:served" stream.
CONTEXT_STREAM_PREFIX = "context:served:"
READ_MODELS = ("facts", "entities", "relationships")
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def check_scopes(scopes: Scopes) -> None:
    """Refuse scope keys the ledger could not record (so every served block is recorded),
    naming the key as recording a turn does."""
    scope_ids.check_scopes(scopes)
    try:
        codec.encode(
            ContextServed(
                request="", scopes=scopes, item_ids=(), selector_version="1", formatter_version="1", block_hash="0" * 64
            )
        )
    except LedgerError as e:
        raise InvalidCommand(f"invalid scopes: {e}") from e


def connect(engine: Engine, tenant_id: str) -> Connection | None:
    """A connection to record on, its transaction begun (so an app engine's begin hook
    has set the tenant, whatever runs first); None (logged) if none can be had."""
    try:
        conn = engine.connect()
        conn.begin()
        return conn
    except Exception as e:  # noqa: BLE001 - fail open: serving must not depend on recording
        log.warning("could not record ContextServed for tenant %s: %s", tenant_id, e)
        return None


def for_recording(conn: Connection | None) -> Connection | None:
    """``conn`` after a selection that failed open, rolled back and ready to record the
    empty block in a transaction of its own: under the selection's statement timeout
    (the deadline it missed), the record would miss it too and the block go unrecorded."""
    _roll_back(conn)
    if conn is None or conn.closed:
        return conn
    try:
        return db.with_local_settings(conn, {"statement_timeout": RECORD_TIMEOUT_MS})
    except Exception as e:  # noqa: BLE001 - the connection is gone; recording will say so
        log.warning("could not prepare to record a failed-open context: %s", e)
        return conn


def _roll_back(conn: Connection | None) -> None:
    if conn is None:
        return
    try:
        conn.rollback()
    except Exception as e:  # noqa: BLE001 - the connection is gone; recording will say so
        log.warning("could not roll back a failed context selection: %s", e)


def record(
    conn: Connection,
    event_id: str,
    request: SelectRequest,
    selection: Selection,
    block: Block,
    style: Literal["text", "xml"],
    max_tokens: int | None,
    token_model: str | None,
    actor: str | None,
    asked_at: datetime,
    *,
    read_cursors: dict[str, str] | None = None,
) -> bool:
    """Append the ``ContextServed`` event (after the selection's reads, in their
    transaction) and commit; whether it was. Best effort: a failure is logged, not raised.
    ``read_cursors``: those of a selection read elsewhere (a replica); else read on ``conn``."""
    kept = selection.items  # all selected, so a replay renders (and omits) exactly the same
    try:
        served = ContextServed(
            request=storable(request.request),  # recorded, even if it holds what the ledger cannot
            scopes=request.scopes,
            item_ids=tuple(item.item_id for item in kept),
            item_scores=tuple(item.score for item in kept),
            selector_version=SELECTOR_VERSION,
            formatter_version=FORMATTER_VERSION,
            block_hash=block.sha256,
            as_of=selection.as_of,
            empty_reason=storable(selection.empty_reason) if selection.empty_reason else None,
            style=style,
            max_chars=request.budget_chars,
            max_tokens=max_tokens,
            token_model=token_model,
            read_cursors=(read_cursors if read_cursors is not None else cursors_of(conn))
            if selection.as_of is None
            else {},
        )
        new = NewEvent(event=served, event_id=event_id, occurred_at=asked_at, metadata=Metadata(actor=actor))
        stream = CONTEXT_STREAM_PREFIX + event_id.removeprefix("context:")
        event_store.append(conn, request.tenant_id, stream, [new], 0)
        conn.commit()
    except Exception as e:  # noqa: BLE001 - fail open: serving must not depend on recording
        log.warning("could not record ContextServed for tenant %s: %s", request.tenant_id, e)
        _roll_back(conn)
        return False
    return True


def storable(text: str) -> str:
    """``text`` with NUL (which PostgreSQL cannot store) and lone surrogates (which
    UTF-8 cannot encode) replaced by U+FFFD."""
    return UNSTORABLE.sub("\ufffd", text)


def cursors_of(conn: Connection) -> dict[str, str]:
    """Where each read model stood (one statement), for a replay to rebuild its state."""
    found = checkpoints.cursors(conn, list(READ_MODELS))
    return {name: str(found[name]) for name in READ_MODELS if name in found}


def check_block_options(request: SelectRequest, style: str, max_tokens: int | None, token_model: str | None) -> None:
    """Refuse a block's options that are the caller's mistake, before anything is read."""
    if max_tokens is not None and max_tokens < 1:
        raise InvalidCommand(f"max_tokens must be at least 1, not {max_tokens}")
    if style not in ("text", "xml"):
        raise InvalidCommand(f"style must be text or xml, not {style!r}")
    if token_model is not None:  # recorded with the block: refused now, not lost at recording
        check_identifier("token_model", token_model)
    if request.budget_chars < MIN_BUDGET_CHARS:
        raise InvalidCommand(f"budget_chars must be at least {MIN_BUDGET_CHARS}, not {request.budget_chars}")
    check_scopes(request.scopes)


def with_stored_ids(engine: Engine, request: SelectRequest) -> SelectRequest | Selection:
    """``request`` with its scopes as the tenant stores them (select, given them, keeps
    them as they are), or an empty selection saying why when they cannot be read."""
    try:
        return replace(request, scopes=scope_ids.stored_scopes(engine, request.tenant_id, request.scopes))
    except InvalidCommand:
        raise
    except LedgerError as e:  # fail open, as select does
        return failing_open.failed_open(request, e)
