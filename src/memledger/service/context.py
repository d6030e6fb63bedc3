"""Context for an agent: select what it should know now, render it, record what was served.

``select`` never raises into the caller's chat loop: on a timeout or any error it
returns an empty selection with the reason (fail open) and logs why.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache, partial
from typing import Literal, NamedTuple, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.adapters.tokenizers import Tokenizers
from memledger.events.envelope import Cursor
from memledger.extraction.secrets import find_secret
from memledger.formatting import Block
from memledger.formatting.neutralise import neutralise
from memledger.projectors.relationships.graph_aging import DEFAULT_AGING, Aging
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
from memledger.service import (
    context_limits,
    context_recording,
    episodes,
    failing_open,
    history,
    nearest_aside,
    scope_ids,
    tenant_settings,
)
from memledger.service.context_request import DEFAULT_DEADLINE_MS, MAX_DEADLINE_MS, SelectRequest
from memledger.service.selection_limit import SelectionLimit
from memledger.service.served_blocks import ServedBlock, ServedContext, render_block, served_block
from memledger.store import db, event_reads
from memledger.store.identifiers import check_identifier

# The request's shape lives in context_request; callers know it as context.SelectRequest.
__all__ = [
    "DEFAULT_DEADLINE_MS",
    "EDGES_PER_HOP",
    "MAX_DEADLINE_MS",
    "SELECT_SETTINGS",
    "SelectRequest",
    "ServedBlock",
    "ServedContext",
    "VectorSearch",
    "VectorWait",
    "build_context",
    "render_block",
    "select",
    "served_block",
]

log = logging.getLogger(__name__)

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
SELECT_SETTINGS = {"hnsw.iterative_scan": "relaxed_order", "plan_cache_mode": "force_generic_plan"}
# Waits at most its argument in seconds (None: no limit) for the request's vector
# (None for a blank request); raises TimeoutError after that, or why embedding failed.
VectorWait = Callable[[float | None], QueryVector | None]


class VectorSearch(Protocol):
    """The vector channel: ``start`` begins embedding the request off this thread,
    so the selector's other statements run meanwhile, and returns what waits for it."""

    def start(self, text: str) -> VectorWait: ...


def _min_confidence(request: SelectRequest, category: str) -> float:
    return max(request.min_confidence, GENERAL_MIN_CONFIDENCE) if category == "general" else request.min_confidence


def select(
    engine: Engine,
    request: SelectRequest,
    *,
    vector_search: VectorSearch | None = None,
    cursors: dict[str, str] | None = None,
    aging: Aging = DEFAULT_AGING,
    limit: SelectionLimit | None = None,
) -> Selection:
    """The memory items for ``request``, most important first; fails open. ``cursors``,
    if given, receives the read models' cursors as the selection's transaction saw them.
    ``aging``: how the graph ages when read; ``limit``: the application's limit on
    selections at once (None: this one runs unlimited)."""
    started = time.monotonic()
    limit = limit or SelectionLimit(0)
    try:
        check_identifier("tenant_id", request.tenant_id)
        request = replace(request, scopes=scope_ids.stored_scopes(engine, request.tenant_id, request.scopes))
        with limit.hold(_remaining_s(request, started)):
            wait = _start_embedding(request, vector_search)  # before the checkout: it is the longest step
            with db.reading(engine) as conn:
                selection = _select(conn, request, wait, started, vector_search, _Reads(aging, limit))
                if cursors is not None and selection.as_of is None:
                    cursors.update(context_recording.cursors_of(conn))
    except Exception as e:  # noqa: BLE001 - fail open: the chat loop must never see an error
        return failing_open.failed_open(request, e)
    return failing_open.within_deadline(request, selection, started)


def _start_embedding(request: SelectRequest, vector_search: VectorSearch | None) -> VectorWait | None:
    """Begin embedding the request (live selection only): it runs while the selection's
    statements do, and costs about as much as all of them. None while the model is still
    loading (``ready``): the first requests of a process go without the vector channel
    rather than fail open on a deadline spent loading it."""
    if vector_search is None or request.as_of is not None or not getattr(vector_search, "ready", True):
        return None
    return vector_search.start(context_recording.storable(request.request))


class _Reads(NamedTuple):
    """What the application gives a selection: how the graph ages, and its limit on
    selections at once (whether another one runs decides where the nearest are read)."""

    aging: Aging
    limit: SelectionLimit


class _Wanted(NamedTuple):
    """What a request wants, worked out once: its category, the categories of facts that
    answer it, the confidence a fact needs, and the time the selection reads at."""

    category: str
    categories: frozenset[str] | None  # None: every category
    min_confidence: float
    now: datetime
    reads: _Reads


def _select(
    conn: Connection,
    request: SelectRequest,
    wait: VectorWait | None,
    started: float,
    vector_search: VectorSearch | None,
    reads: _Reads,
) -> Selection:
    """The selection, read in ``conn``'s next transaction (left open for the caller);
    ``wait`` gives the request's vector (``_start_embedding``), and is started again
    by ``vector_search`` without the names of the speakers the request names."""
    category = request_category(request.request)
    now = datetime.now(UTC)
    wanted = _Wanted(category, relevant_categories(category), _min_confidence(request, category), now, reads)
    # The deadline, enforced by PostgreSQL for every statement of the transaction.
    conn = db.with_local_settings(conn, {"statement_timeout": str(request.deadline_ms), **SELECT_SETTINGS})
    settings = tenant_settings.kept(conn, request.tenant_id)
    if not settings.recall:
        return Selection(request=request.request, empty_reason="recall is switched off for this tenant")
    if request.as_of is not None:
        return _select_as_of(conn, request, request.as_of, wanted)
    return _select_live(conn, request, wanted, wait, started, vector_search)


def _select_as_of(conn: Connection, request: SelectRequest, as_of: datetime | int, wanted: _Wanted) -> Selection:
    """The selection the read models held at ``as_of``, folded from the ledger."""
    until = _until(conn, as_of)
    state = history.state_at(conn, request.tenant_id, until)
    pool = from_state.gather(
        state.facts,
        state.entities,
        state.relationships,
        request.scopes,
        request.request,
        min_confidence=wanted.min_confidence,
        categories=wanted.categories,
        at=until if isinstance(until, datetime) else None,  # edge weights as of then
        aging=wanted.reads.aging,
    )
    pool = relevant(pool, request.request, wanted.category)
    pool = visibility.keep_visible(conn, request.tenant_id, request.scopes, pool)
    said = episodes.turns_for(
        conn, request.tenant_id, request.scopes, request.request, {}, wanted.now, until=until, facts_then=state.facts
    )
    budget = request.budget_chars
    room = budget - turn_reserve(said, budget)
    items, _ = _choose(fuse(pool, wanted.now), wanted.categories, wanted.min_confidence, room)
    items = add_turns(items, said, budget)
    label = str(until) if isinstance(until, Cursor) else until.isoformat()
    if not (state.facts or state.entities or state.relationships):
        reason = "no memory had been made for this tenant by then"  # not "no match": nothing to match
        return Selection(request=request.request, empty_reason=reason, as_of=label)
    return _selection(conn, request, items, label)


def _select_live(
    conn: Connection,
    request: SelectRequest,
    wanted: _Wanted,
    wait: VectorWait | None,
    started: float,
    vector_search: VectorSearch | None,
) -> Selection:
    """The selection from the live read models: facts by words and by meaning, their
    conflicts, the turns that speak to the request and, if the facts leave room, the graph."""
    tenant, scopes = request.tenant_id, request.scopes
    speakers = episodes.speakers_named(conn, tenant, request.request)
    if speakers and wait is not None and vector_search is not None:  # who is asked about is not what
        wait = vector_search.start(
            context_recording.storable(episodes.without_names(request.request, speakers.values()))
        )

    def nearest(on: Connection, query: QueryVector) -> episodes.Nearby:
        return episodes.nearby(
            on,
            tenant,
            scopes,
            query,
            min_confidence=wanted.min_confidence,
            categories=wanted.categories,
            with_turns=speakers is not None,
        )

    # the nearest facts and turns beside the facts statement, on a connection of their
    # own, when the process selects nothing else (nearest_aside); else after it, on this one
    deadline = started + request.deadline_ms / 1000
    alone = wanted.reads.limit.held <= 1
    aside = nearest_aside.start(conn.engine, wait, nearest, deadline, SELECT_SETTINGS, alone=alone) if wait else None
    found = candidates.gather_facts(
        conn, tenant, scopes, request.request, min_confidence=wanted.min_confidence, categories=wanted.categories
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
        else episodes.turns_for(conn, tenant, scopes, request.request, near.turns, wanted.now, speakers=speakers)
    )
    items = _facts_then_graph(
        conn, request, wanted, found, request.budget_chars - turn_reserve(said, request.budget_chars)
    )
    return _selection(conn, request, add_turns(items, said, request.budget_chars), None)


def _facts_then_graph(
    conn: Connection, request: SelectRequest, wanted: _Wanted, found: dict[str, Candidate], room: int
) -> list[SelectedItem]:
    """The facts chosen first, in the ``room`` the best turns leave them, every fact before
    any graph item: when the facts alone fill it, the graph could add nothing, so it is
    not walked (same choice)."""
    tenant, scopes = request.tenant_id, request.scopes
    pool = relevant(found.values(), request.request, wanted.category)
    shown = visibility.keep_visible(conn, tenant, scopes, pool)  # no statement while all are facts
    items, full = _choose(fuse(shown, wanted.now), wanted.categories, wanted.min_confidence, room)
    if not full:
        candidates.add_graph(
            conn, tenant, scopes, request.request, found, edges_per_hop=EDGES_PER_HOP, aging=wanted.reads.aging
        )
        shown = visibility.keep_visible(
            conn, tenant, scopes, relevant(found.values(), request.request, wanted.category)
        )
        items, _ = _choose(fuse(shown, wanted.now), wanted.categories, wanted.min_confidence, room)
    return items


def _remaining_s(request: SelectRequest, started: float) -> float:
    return max(request.deadline_ms / 1000 - (time.monotonic() - started), 0.0)


def _choose(
    ranked: list[Candidate], categories: frozenset[str] | None, min_confidence: float, budget_chars: int
) -> tuple[list[SelectedItem], bool]:
    return choose_until_full(ranked, categories=categories, min_confidence=min_confidence, budget_chars=budget_chars)


def _selection(conn: Connection, request: SelectRequest, items: list[SelectedItem], as_of: str | None) -> Selection:
    # Defence in depth: no item is rendered whose shown form the guard refuses (a fact
    # stored before the guard knew its kind, or a form that neutralisation makes).
    items = [item for item in items if _shown_safely(item.text)]
    if not items:
        return Selection(request=request.request, empty_reason="no memory matches this request", as_of=as_of)
    chosen = speakers.attach(conn, request.tenant_id, items)
    return Selection(request=request.request, items=chosen, as_of=as_of, scopes=request.scopes)


@lru_cache(maxsize=4096)
def _shown_safely(text: str) -> bool:
    """Whether ``text``'s shown form passes the secret guard: pure, and asked of the
    same memories by request after request, so each answer is kept."""
    return find_secret(neutralise(text).text) is None


def _until(conn: Connection, as_of: datetime | int) -> Cursor | datetime:
    """Where an ``as_of`` (checked with the request) reads the ledger up to. A time to
    come is now, as a position past the head is the head: what the ledger holds then
    can still change, so a block must not be labelled with it."""
    if isinstance(as_of, datetime):
        now: datetime = conn.execute(sa.select(sa.func.statement_timestamp())).scalar_one()
        return min(as_of, now)
    return event_reads.cursor_at(conn, int(as_of))


def build_context(
    engine: Engine,
    request: SelectRequest,
    *,
    style: Literal["text", "xml"] = "text",
    max_tokens: int | None = None,
    token_model: str | None = None,
    vector_search: VectorSearch | None = None,
    actor: str | None = None,
    selector: Callable[[SelectRequest], tuple[Selection, dict[str, str]]] | None = None,
    aging: Aging = DEFAULT_AGING,
    limit: SelectionLimit | None = None,
    tokenizers: Tokenizers | None = None,
) -> ServedContext:
    """Select, render and record a ``ContextServed`` event. Recording is best effort:
    if the ledger cannot take it, the agent still gets its block. ``selector``, if given,
    selects elsewhere (a read replica: ``service.replica_reads``), returning the selection
    and the read models' cursors it saw; the record is then appended through ``engine``.
    ``aging``, ``limit``: as ``select``'s; ``tokenizers``: ``context_limits.request_counter``'s."""
    context_recording.check_block_options(request, style, max_tokens, token_model)
    count, counted_by = context_limits.request_counter(token_model, tokenizers)  # recorded, for replays
    estimated = counted_by != token_model
    block_of = partial(
        render_block, style=style, count_tokens=count, max_chars=request.budget_chars, max_tokens=max_tokens
    )
    stored = context_recording.with_stored_ids(engine, request)  # select and record by the stored ids
    if isinstance(stored, Selection):  # failed open: without the ids nothing can be recorded
        return ServedContext(block=block_of(stored), selection=stored, event_id="", tokens_estimated=estimated)
    started, asked_at = time.monotonic(), datetime.now(UTC)  # asked before its transaction began
    reads = _Reads(aging, limit or SelectionLimit(0))
    request, selection, conn, read_cursors = _selected(engine, stored, started, selector, vector_search, reads)
    try:
        selection, block = _rendered(request, selection, block_of)
        event_id = f"context:{uuid.uuid4()}"
        conn = conn or context_recording.connect(engine, request.tenant_id)
        recorded = conn is not None and context_recording.record(
            conn,
            event_id,
            request,
            selection,
            block,
            style,
            max_tokens,
            counted_by,
            actor,
            asked_at,
            read_cursors=read_cursors,
        )
    finally:
        if conn is not None:
            conn.close()
    # An id is given only for a block the ledger holds: a replay of it must find it.
    return ServedContext(
        block=block, selection=selection, event_id=event_id if recorded else "", tokens_estimated=estimated
    )


def _selected(
    engine: Engine,
    request: SelectRequest,
    started: float,
    selector: Callable[[SelectRequest], tuple[Selection, dict[str, str]]] | None,
    vector_search: VectorSearch | None,
    reads: _Reads,
) -> tuple[SelectRequest, Selection, Connection | None, dict[str, str] | None]:
    """The selection to serve and where to record it: failed open on the caller's unusable
    data (recorded), from ``selector`` (a replica, with the cursors it saw), or here, on
    the connection the record then goes through."""
    unusable = context_limits.unusable(request)
    if unusable is not None:  # the caller's data, not its bug: fail open, recorded
        return (*unusable, None, None)
    if selector is not None:  # it fails open itself
        selection, read_cursors = selector(request)
        return request, selection, None, read_cursors
    selection, conn = _select_to_record(engine, request, started, vector_search, reads)
    return request, selection, conn, None


def _select_to_record(
    engine: Engine, request: SelectRequest, started: float, vector_search: VectorSearch | None, reads: _Reads
) -> tuple[Selection, Connection | None]:
    """The selection, failed open on any error, and the connection it was read on, to
    record it in the same transaction (fewer round trips); after a failure, rolled back."""
    conn: Connection | None = None
    try:
        with reads.limit.hold(_remaining_s(request, started)):
            wait = _start_embedding(request, vector_search)  # before the checkout: it is the longest step
            conn = engine.connect()
            chosen = _select(conn, request, wait, started, vector_search, reads)
        selection = failing_open.within_deadline(request, chosen, started)
        if selection is not chosen:
            conn = context_recording.for_recording(conn)
    except Exception as e:  # noqa: BLE001 - fail open: the chat loop must never see an error
        selection = failing_open.failed_open(request, e)
        conn = context_recording.for_recording(conn)
    return selection, conn


def _rendered(
    request: SelectRequest, selection: Selection, block_of: Callable[[Selection], Block]
) -> tuple[Selection, Block]:
    """``selection`` and its block; an empty one saying why if rendering it failed (a
    formatting bug must not reach the chat loop)."""
    try:
        return selection, block_of(selection)
    except Exception as e:  # noqa: BLE001 - fail open, as a selection does
        failed = failing_open.failed_open(request, e)
        return failed, block_of(failed)
