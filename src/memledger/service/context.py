"""Context for an agent: select what it should know now, render it, record what was served.

``select`` never raises into the caller's chat loop: on a timeout or any error it
returns an empty selection with the reason (fail open) and logs why.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

import msgspec
import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidCommand, InvalidField, LedgerError
from memledger.events import codec
from memledger.events.catalogue import ContextServed, Scopes
from memledger.events.envelope import Cursor, Metadata, NewEvent
from memledger.extraction.secrets import find_secret
from memledger.formatting import FORMATTER_VERSION, Block, render, tokens
from memledger.formatting.neutralise import neutralise
from memledger.formatting.tokens import TokenCounter, estimate, litellm_counter
from memledger.projectors import checkpoints
from memledger.selection import candidates, from_state, speakers, visibility
from memledger.selection.candidates import QueryVector
from memledger.selection.rank import (
    GENERAL_MIN_CONFIDENCE,
    Candidate,
    add_turns,
    choose_until_full,
    fuse,
    relevant,
    relevant_categories,
    request_category,
    turn_reserve,
)
from memledger.selection.types import SelectedItem, Selection
from memledger.service import episodes, history, nearest_aside, scope_ids, tenant_settings, turns
from memledger.store import db, event_reads, event_store
from memledger.store.identifiers import check_identifier, check_text

log = logging.getLogger(__name__)

_REASON_LIMIT = 300
# Recorded with each served context; bumped whenever the same request and ledger would
# select differently. What each version changed: CHANGELOG.md.
SELECTOR_VERSION = "6"
MIN_BUDGET_CHARS = 600  # the block's header and footer alone take about 520
# What the agent surfaces (HTTP, MCP) accept: a request is a message, not a document.
# The library takes any request, so as not to raise into a chat loop.
MAX_BUDGET_CHARS = 200_000
MAX_REQUEST_CHARS = 10_000
RECORD_TIMEOUT_MS = "5000"  # recording a failed-open block: its own bound, not the missed deadline
# Each served context is a stream of its own, named by its event id: concurrent
# requests of a tenant never queue on one stream's append lock. ``find_served`` reads
# by event id, so it also finds contexts in the shared "context:served" stream.
CONTEXT_STREAM_PREFIX = "context:served:"
READ_MODELS = ("facts", "entities", "relationships")
# For every statement of a selection's transaction: iterative HNSW scans, so the
# tenant filter does not starve the nearest facts; and generic plans. A selection
# ends with COMMIT (it writes nothing): psycopg deallocates a connection's prepared
# statements at every ROLLBACK, so selections that rolled back would never run
# prepared and PostgreSQL would parse and plan every statement of every request.
# Each statement's plan is fixed by its shape (index reads fenced by OFFSET 0 or
# LIMIT; the nearest facts' vector is a scalar subquery, parsed once), and
# tests/integration/test_prepared_selections.py checks they choose what custom plans
# do. A live facts copy older than v5 has no scoped-words index, so its text channel
# reads every visible fact until rebuilt.
# A selection shows at most 50 items (``choose``'s cap), so it reads only the 50 most
# confident edges of each hop: more would make a hub's 2-hop walk slower and add
# nothing that can be shown.
EDGES_PER_HOP = 50
DEFAULT_DEADLINE_MS = 750
MAX_DEADLINE_MS = 60_000
SELECT_SETTINGS = {"hnsw.iterative_scan": "relaxed_order", "plan_cache_mode": "force_generic_plan"}
# Waits at most its argument in seconds (None: no limit) for the request's vector
# (None for a blank request); raises TimeoutError after that, or why embedding failed.
VectorWait = Callable[[float | None], QueryVector | None]


class VectorSearch(Protocol):
    """The vector channel: ``start`` begins embedding the request off this thread,
    so the selector's other statements run meanwhile, and returns what waits for it."""

    def start(self, text: str) -> VectorWait: ...


@dataclass(frozen=True)
class SelectRequest:
    """What an agent asks for before a prompt."""

    tenant_id: str
    scopes: Scopes
    request: str
    budget_chars: int = 5000
    min_confidence: float = 0.7
    as_of: datetime | int | None = None  # a time of recording, or a ledger position
    deadline_ms: int = DEFAULT_DEADLINE_MS

    def __post_init__(self) -> None:
        for name in ("budget_chars", "deadline_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidCommand(f"{name} must be an int, not {value!r}")
        if isinstance(self.min_confidence, bool) or not isinstance(self.min_confidence, (int, float)):
            raise InvalidCommand(f"min_confidence must be a number from 0 to 1, not {self.min_confidence!r}")
        if not 0 <= self.min_confidence <= 1:
            raise InvalidCommand(f"min_confidence must be from 0 to 1, not {self.min_confidence}")
        # 0 would be no deadline at all (PostgreSQL's statement_timeout 0 is off)
        if not 1 <= self.deadline_ms <= MAX_DEADLINE_MS:
            raise InvalidCommand(f"deadline_ms must be 1 to {MAX_DEADLINE_MS}, not {self.deadline_ms}")
        _check_as_of(self.as_of)


def _check_as_of(as_of: object) -> None:
    """Refuse an ``as_of`` that is neither a timezone-aware time nor a ledger position:
    the caller's mistake, raised at once (not an empty block that hides it)."""
    if as_of is None:
        return
    if isinstance(as_of, datetime):
        if as_of.tzinfo is None or as_of.utcoffset() is None:
            raise InvalidCommand("as_of must be a timezone-aware time, not a naive one")
        return
    if isinstance(as_of, bool) or not isinstance(as_of, int):
        raise InvalidCommand(f"as_of must be a timezone-aware datetime or a ledger position (int), not {as_of!r}")
    if not 0 <= as_of < 2**63:  # a position is a bigint
        raise InvalidCommand(f"as_of must be a ledger position from 0 to 2**63 - 1, not {as_of}")


def _min_confidence(request: SelectRequest, category: str) -> float:
    return max(request.min_confidence, GENERAL_MIN_CONFIDENCE) if category == "general" else request.min_confidence


def select(engine: Engine, request: SelectRequest, *, vector_search: VectorSearch | None = None) -> Selection:
    """The memory items for ``request``, most important first; fails open."""
    started = time.monotonic()
    try:
        check_identifier("tenant_id", request.tenant_id)
        request = replace(request, scopes=scope_ids.stored_scopes(engine, request.tenant_id, request.scopes))
        with turns.selections().turn(_remaining_s(request, started)):
            wait = _start_embedding(request, vector_search)  # before the checkout: it is the longest step
            with db.reading(engine) as conn:
                selection = _select(conn, request, wait, started, vector_search)
    except Exception as e:  # noqa: BLE001 - fail open: the chat loop must never see an error
        return _failed_open(request, e)
    return _within_deadline(request, selection, started)


def _failed_open(request: SelectRequest, error: Exception) -> Selection:
    reason = _reason(error)
    log.warning("context selection failed open for tenant %s: %s (%r)", request.tenant_id, reason, error)
    return Selection(request=request.request, empty_reason=f"memory unavailable ({reason})")


def _reason(error: Exception) -> str:
    """Why a selection failed, for the block and its ``ContextServed`` record. A
    statement's error names only its kind: its message holds the SQL, which has no
    place in a prompt, and its parameters, the request's words among them, which
    have none in the ledger's payloads (erasure cannot reach them). The log has all."""
    if _is_timeout(error):
        return "deadline exceeded"
    if isinstance(error, sa_exc.StatementError):
        return f"database error: {type(error.orig or error).__name__}"
    first_line = str(error).partition("\n")[0][:_REASON_LIMIT]
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__


def _within_deadline(request: SelectRequest, selection: Selection, started: float) -> Selection:
    elapsed_ms = (time.monotonic() - started) * 1000
    if elapsed_ms > request.deadline_ms:
        log.warning("context selection took %.0f ms, over its %d ms deadline", elapsed_ms, request.deadline_ms)
        return Selection(request=request.request, empty_reason="memory unavailable (deadline exceeded)")
    return selection


def _is_timeout(error: Exception) -> bool:
    if isinstance(error, TimeoutError):  # the request's vector was not ready in time
        return True
    return isinstance(error, sa_exc.DBAPIError) and isinstance(error.orig, psycopg.errors.QueryCanceled)


def _start_embedding(request: SelectRequest, vector_search: VectorSearch | None) -> VectorWait | None:
    """Begin embedding the request (live selection only): it runs while the selection's
    statements do, and costs about as much as all of them. None while the model is still
    loading (``ready``): the first requests of a process go without the vector channel
    rather than fail open on a deadline spent loading it."""
    if vector_search is None or request.as_of is not None or not getattr(vector_search, "ready", True):
        return None
    return vector_search.start(_storable(request.request))


def _select(
    conn: Connection,
    request: SelectRequest,
    wait: VectorWait | None,
    started: float,
    vector_search: VectorSearch | None = None,
) -> Selection:
    """The selection, read in ``conn``'s next transaction (left open for the caller);
    ``wait`` gives the request's vector (``_start_embedding``), and is started again
    by ``vector_search`` without the names of the speakers the request names."""
    category = request_category(request.request)
    categories = relevant_categories(category)
    min_conf = _min_confidence(request, category)
    now = datetime.now(UTC)
    # The deadline, enforced by PostgreSQL for every statement of the transaction.
    conn = db.with_local_settings(conn, {"statement_timeout": str(request.deadline_ms), **SELECT_SETTINGS})
    settings = tenant_settings.load(conn, request.tenant_id)
    if not settings.recall:
        return Selection(request=request.request, empty_reason="recall is switched off for this tenant")
    if request.as_of is not None:
        until = _until(conn, request.as_of)
        state = history.state_at(conn, request.tenant_id, until)
        pool = from_state.gather(
            state.facts,
            state.entities,
            state.relationships,
            request.scopes,
            request.request,
            min_confidence=min_conf,
            categories=categories,
        )
        pool = relevant(pool, request.request, category)
        pool = visibility.keep_visible(conn, request.tenant_id, request.scopes, pool)
        said = episodes.turns_for(
            conn, request.tenant_id, request.scopes, request.request, {}, now, until=until, facts_then=state.facts
        )
        budget = request.budget_chars
        items, _ = _choose(fuse(pool, now), categories, min_conf, budget - turn_reserve(said, budget))
        items = add_turns(items, said, budget)
        label = str(until) if isinstance(until, Cursor) else until.isoformat()
        if not (state.facts or state.entities or state.relationships):
            reason = "no memory had been made for this tenant by then"  # not "no match": nothing to match
            return Selection(request=request.request, empty_reason=reason, as_of=label)
        return _selection(conn, request, items, label)
    tenant, scopes = request.tenant_id, request.scopes
    speakers = episodes.speakers_named(conn, tenant, request.request)
    if speakers and wait is not None and vector_search is not None:  # who is asked about is not what
        wait = vector_search.start(_storable(episodes.without_names(request.request, speakers.values())))

    def nearest(on: Connection, query: QueryVector) -> episodes.Nearby:
        return episodes.nearby(
            on, tenant, scopes, query, min_confidence=min_conf, categories=categories, with_turns=speakers is not None
        )

    # the nearest facts and turns beside the facts statement, on a connection of their
    # own, when the process selects nothing else (nearest_aside); else after it, on this one
    deadline = started + request.deadline_ms / 1000
    aside = nearest_aside.start(conn.engine, wait, nearest, deadline, SELECT_SETTINGS) if wait else None
    found = candidates.gather_facts(
        conn, tenant, scopes, request.request, min_confidence=min_conf, categories=categories
    )
    near = episodes.NOTHING_NEAR
    if aside is not None:
        near = aside.result(_remaining_s(request, started))
    elif wait is not None and (query := wait(_remaining_s(request, started))) is not None:
        near = nearest(conn, query)
    candidates.add_vector_hits(found, near.facts)
    candidates.add_conflict_partners(conn, tenant, found)
    said = (
        []
        if speakers is None
        else episodes.turns_for(conn, tenant, scopes, request.request, near.turns, now, speakers=speakers)
    )
    # Facts are chosen first, in the budget the best turns leave them; every fact
    # before any graph item: when the facts alone fill that budget, the graph could
    # add nothing, so it is not walked (same choice). Then the turns, in what is left.
    budget = request.budget_chars
    room = budget - turn_reserve(said, budget)
    pool = relevant(found.values(), request.request, category)
    shown = visibility.keep_visible(conn, tenant, scopes, pool)  # no statement while all are facts
    items, full = _choose(fuse(shown, now), categories, min_conf, room)
    if not full:
        candidates.add_graph(conn, tenant, scopes, request.request, found, edges_per_hop=EDGES_PER_HOP)
        shown = visibility.keep_visible(conn, tenant, scopes, relevant(found.values(), request.request, category))
        items, _ = _choose(fuse(shown, now), categories, min_conf, room)
    items = add_turns(items, said, budget)
    return _selection(conn, request, items, None)


def _remaining_s(request: SelectRequest, started: float) -> float:
    return max(request.deadline_ms / 1000 - (time.monotonic() - started), 0.0)


def _choose(
    ranked: list[Candidate], categories: frozenset[str] | None, min_confidence: float, budget_chars: int
) -> tuple[list[SelectedItem], bool]:
    return choose_until_full(ranked, categories=categories, min_confidence=min_confidence, budget_chars=budget_chars)


def _selection(conn: Connection, request: SelectRequest, items: list[SelectedItem], as_of: str | None) -> Selection:
    # Defence in depth: no item is rendered whose shown form the guard refuses (a fact
    # stored before the guard knew its kind, or a form that neutralisation makes).
    items = [item for item in items if find_secret(neutralise(item.text).text) is None]
    if not items:
        return Selection(request=request.request, empty_reason="no memory matches this request", as_of=as_of)
    chosen = speakers.attach(conn, request.tenant_id, items)
    return Selection(request=request.request, items=chosen, as_of=as_of, scopes=request.scopes)


def _until(conn: Connection, as_of: datetime | int) -> Cursor | datetime:
    """Where an ``as_of`` (checked with the request) reads the ledger up to. A time to
    come is now, as a position past the head is the head: what the ledger holds then
    can still change, so a block must not be labelled with it."""
    if isinstance(as_of, datetime):
        now: datetime = conn.execute(sa.select(sa.func.statement_timestamp())).scalar_one()
        return min(as_of, now)
    return event_reads.cursor_at(conn, int(as_of))


def _check_scopes(scopes: Scopes) -> None:
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


def render_block(selection: Selection, **options: Any) -> Block:
    """The block, or InvalidCommand when the budget cannot hold even its frame."""
    try:
        return render(selection, **options)
    except ValueError as e:
        raise InvalidCommand(str(e)) from e


@dataclass(frozen=True)
class ServedContext:
    """A rendered block and the event that recorded it."""

    block: Block
    selection: Selection
    event_id: str
    # A model was named but its tokenizer was still loading: the estimate counted the
    # block's tokens, and the record says so (its token_model is None), for replays.
    tokens_estimated: bool = False


class ServedBlock(Block, frozen=True, kw_only=True):
    """A served block with the id of the ``ContextServed`` event that recorded it, for
    a replay ("" when the ledger could not take the record)."""

    event_id: str = ""


def served_block(served: ServedContext) -> ServedBlock:
    """``served``'s block, carrying its event id."""
    return ServedBlock(**msgspec.structs.asdict(served.block), event_id=served.event_id)


def check_agent_request(request: str, budget_chars: int) -> None:
    """``InvalidCommand`` for what an agent surface refuses: a blank request, one over
    ``MAX_REQUEST_CHARS``, one the ledger cannot store (``InvalidField``, as HTTP refuses
    it), a budget outside ``MIN_BUDGET_CHARS``..``MAX_BUDGET_CHARS``."""
    check_text("request", request)
    if not request.strip():
        raise InvalidCommand("request must not be empty or blank")
    if len(request) > MAX_REQUEST_CHARS:
        raise InvalidCommand(f"request is {len(request)} characters long, above {MAX_REQUEST_CHARS}")
    if not MIN_BUDGET_CHARS <= budget_chars <= MAX_BUDGET_CHARS:
        raise InvalidCommand(f"budget_chars must be {MIN_BUDGET_CHARS} to {MAX_BUDGET_CHARS}, not {budget_chars}")


def token_counter(model: str | None) -> Callable[[str], int]:
    """The model's tokenizer through litellm when a model is named (imported now if need
    be: for replays and commands), an estimate otherwise."""
    return litellm_counter(model) if model else estimate


def request_counter(model: str | None) -> tuple[TokenCounter, str | None]:
    """The counter of a request with a deadline, and the model it counts by: the
    model's tokenizer if litellm is loaded, else the estimate (None) while it loads in
    the background; the import takes seconds, never a request's."""
    if model is None:
        return estimate, None
    ready = tokens.TOKENIZERS.counter_if_ready(model)
    if ready is None:
        log.warning("tokens estimated, not counted by %s: its tokenizer is still loading", model)
        return estimate, None
    return ready, model


def build_context(
    engine: Engine,
    request: SelectRequest,
    *,
    style: Literal["text", "xml"] = "text",
    max_tokens: int | None = None,
    token_model: str | None = None,
    vector_search: VectorSearch | None = None,
    actor: str | None = None,
) -> ServedContext:
    """Select, render and record a ``ContextServed`` event. Recording is best effort:
    if the ledger cannot take it, the agent still gets its block."""
    if max_tokens is not None and max_tokens < 1:
        raise InvalidCommand(f"max_tokens must be at least 1, not {max_tokens}")
    if style not in ("text", "xml"):
        raise InvalidCommand(f"style must be text or xml, not {style!r}")
    if token_model is not None:  # recorded with the block: refused now, not lost at recording
        check_identifier("token_model", token_model)
    if request.budget_chars < MIN_BUDGET_CHARS:
        raise InvalidCommand(f"budget_chars must be at least {MIN_BUDGET_CHARS}, not {request.budget_chars}")
    _check_scopes(request.scopes)
    count, counted_by = request_counter(token_model)  # recorded: a replay counts as this block did
    estimated = counted_by != token_model

    def block_of(selection: Selection) -> Block:
        budget = {"max_chars": request.budget_chars, "max_tokens": max_tokens}
        return render_block(selection, style=style, count_tokens=count, **budget)

    try:  # select and record by the stored ids (select, given them, keeps them as they are)
        request = replace(request, scopes=scope_ids.stored_scopes(engine, request.tenant_id, request.scopes))
    except InvalidCommand:
        raise
    except LedgerError as e:  # fail open, as select does; without the ids nothing can be recorded
        log.warning("context for tenant %s failed open: %s", request.tenant_id, e)
        failed = Selection(request=request.request, empty_reason=f"memory unavailable ({type(e).__name__}: {e})")
        return ServedContext(block=block_of(failed), selection=failed, event_id="", tokens_estimated=estimated)
    started, asked_at = time.monotonic(), datetime.now(UTC)  # asked before its transaction began
    conn: Connection | None = None
    unusable = _unusable(request)
    if unusable is not None:  # the caller's data, not its bug: fail open, recorded
        request, selection = unusable
    else:
        try:  # select and record in one transaction of one connection: fewer round trips
            with turns.selections().turn(_remaining_s(request, started)):
                wait = _start_embedding(request, vector_search)  # before the checkout: it is the longest step
                conn = engine.connect()
                chosen = _select(conn, request, wait, started, vector_search)
            selection = _within_deadline(request, chosen, started)
            if selection is not chosen:
                conn = _for_recording(conn)
        except Exception as e:  # noqa: BLE001 - fail open: the chat loop must never see an error
            selection = _failed_open(request, e)
            conn = _for_recording(conn)
    try:
        selection, block = _rendered(request, selection, block_of)
        event_id = f"context:{uuid.uuid4()}"
        conn = conn or _connect(engine, request.tenant_id)
        recorded = conn is not None and _record(
            conn, event_id, request, selection, block, style, max_tokens, counted_by, actor, asked_at
        )
    finally:
        if conn is not None:
            conn.close()
    # An id is given only for a block the ledger holds: a replay of it must find it.
    return ServedContext(
        block=block, selection=selection, event_id=event_id if recorded else "", tokens_estimated=estimated
    )


def _rendered(
    request: SelectRequest, selection: Selection, block_of: Callable[[Selection], Block]
) -> tuple[Selection, Block]:
    """``selection`` and its block; an empty one saying why if rendering it failed (a
    formatting bug must not reach the chat loop)."""
    try:
        return selection, block_of(selection)
    except Exception as e:  # noqa: BLE001 - fail open, as a selection does
        failed = _failed_open(request, e)
        return failed, block_of(failed)


def _too_long(request: SelectRequest) -> tuple[SelectRequest, Selection]:
    """An empty selection for a request over ``MAX_REQUEST_CHARS`` (HTTP and MCP refuse
    one); its first ``MAX_REQUEST_CHARS`` characters are what is recorded."""
    length = len(request.request)
    log.warning("context request for tenant %s is %d characters long: nothing selected", request.tenant_id, length)
    cut = replace(request, request=request.request[:MAX_REQUEST_CHARS])
    reason = f"request too long ({length} characters, above {MAX_REQUEST_CHARS}): ask with the question alone"
    return cut, Selection(request=cut.request, empty_reason=reason)


def _unusable(request: SelectRequest) -> tuple[SelectRequest, Selection] | None:
    """An empty selection for a request text HTTP and MCP refuse (too long, or breaking
    the rule all text follows: ``check_text``, as search refuses its query), saying why
    and naming the field; None for one that can be served."""
    if len(request.request) > MAX_REQUEST_CHARS:
        return _too_long(request)
    try:
        check_text("request", request.request)
    except InvalidField as e:
        log.warning("context request for tenant %s not served: %s", request.tenant_id, e)
        return request, Selection(request=request.request, empty_reason=str(e))
    return None


def _connect(engine: Engine, tenant_id: str) -> Connection | None:
    try:
        return engine.connect()
    except Exception as e:  # noqa: BLE001 - fail open: serving must not depend on recording
        log.warning("could not record ContextServed for tenant %s: %s", tenant_id, e)
        return None


def _for_recording(conn: Connection | None) -> Connection | None:
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


def _record(
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
) -> bool:
    """Append the ``ContextServed`` event (after the selection's reads, in their
    transaction) and commit; whether it was. Best effort: a failure is logged, not raised."""
    kept = selection.items  # all selected, so a replay renders (and omits) exactly the same
    try:
        served = ContextServed(
            request=_storable(request.request),  # recorded, even if it holds what the ledger cannot
            scopes=request.scopes,
            item_ids=tuple(item.item_id for item in kept),
            item_scores=tuple(item.score for item in kept),
            selector_version=SELECTOR_VERSION,
            formatter_version=FORMATTER_VERSION,
            block_hash=block.sha256,
            as_of=selection.as_of,
            empty_reason=_storable(selection.empty_reason) if selection.empty_reason else None,
            style=style,
            max_chars=request.budget_chars,
            max_tokens=max_tokens,
            token_model=token_model,
            read_cursors=_read_cursors(conn) if selection.as_of is None else {},
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


UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable(text: str) -> str:
    """``text`` with NUL (which PostgreSQL cannot store) and lone surrogates (which
    UTF-8 cannot encode) replaced by U+FFFD."""
    return UNSTORABLE.sub("\ufffd", text)


def _read_cursors(conn: Connection) -> dict[str, str]:
    """Where each read model stood (one statement), for a replay to rebuild its state."""
    found = checkpoints.cursors(conn, list(READ_MODELS))
    return {name: str(found[name]) for name in READ_MODELS if name in found}
