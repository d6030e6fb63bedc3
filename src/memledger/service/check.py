"""Checking an installation (``memledger check``): named steps, each timed, none raising.

Read-only: the database answers, its migrations are at this release's head, the
projections keep up, the embedder embeds, the configured model answers. Smoke (on
top): a turn recorded in a scratch tenant is extracted, projected and served in a
context block, then the tenant is erased and nothing of it can be read any more.
A failed step is reported; the steps that need it are skipped, saying why.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import msgspec
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import Embedder
from memledger.projectors import registry
from memledger.projectors.relationships.graph_aging import DEFAULT_AGING, Aging
from memledger.service import context, erasure, health, projections, search
from memledger.service.context import VectorSearch
from memledger.service.extraction import ExtractionWorker, turn_stream
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from memledger.store import db, event_reads, migrate

Status = Literal["ok", "failed", "skipped"]

SCRATCH_PREFIX = "memledger-check-"  # scratch tenants' ids: the smoke run's, recognisable in the ledger
MARKER = "Kestrel"  # the fact's distinctive word, looked for in what the tenant serves
FACT = f"Project {MARKER} uses PostgreSQL."
QUESTION = f"Which database does Project {MARKER} use?"
SCOPES = Scopes(session="check", project="kestrel", user="check")
WAIT_S = 30.0  # how long extraction and projection may take to reach the scratch turn
DEADLINE_MS = 10_000  # the scratch context's: a cold selection is slower than an agent's budget
_POLL_S = 0.05


class Step(msgspec.Struct, frozen=True):
    """One step's outcome: ``skipped`` when a step it needs did not pass, or it does not apply."""

    name: str
    status: Status
    detail: str
    ms: float


class Report(msgspec.Struct, frozen=True):
    """Every step, in order; ``ok`` when no step that ran failed."""

    ok: bool
    smoke: bool
    steps: list[Step]


@dataclass(frozen=True)
class Probes:
    """What the check uses, wired by ``bootstrap.check_probes``: ``engine`` is the owner's,
    ``for_tenant`` the application role's fenced engine, ``ping_model`` None when no
    model is configured."""

    engine: Engine
    for_tenant: Callable[[str], Engine]
    build_worker: Callable[[], ExtractionWorker]
    embedder: Embedder
    vector_search: VectorSearch | None
    ping_model: Callable[[], str] | None
    model: str | None = None
    aging: Aging = DEFAULT_AGING


@dataclass
class _Run:
    connect: Callable[[], Probes]
    steps: list[Step] = field(default_factory=list)
    probes: Probes | None = None
    tenant_id: str = ""
    turn_position: int = 0

    def step(self, name: str, needs: tuple[str, ...], action: Callable[[], tuple[Status, str]]) -> None:
        """Run ``action`` timed, unless a step named in ``needs`` did not pass."""
        passed = {s.name for s in self.steps if s.status == "ok"}
        missing = [n for n in needs if n not in passed]
        if self.steps and self.probes is None:  # connecting failed: nothing to check with
            missing = missing or ["database"]
        if missing:
            self.steps.append(Step(name, "skipped", f"needs {', '.join(missing)}, which did not pass", 0.0))
            return
        began = time.perf_counter()
        try:
            status, detail = action()
        except Exception as e:  # noqa: BLE001 - a check reports every failure as its step's, and goes on
            status, detail = "failed", _failure(e)
        self.steps.append(Step(name, status, detail, round((time.perf_counter() - began) * 1000, 1)))

    @property
    def wired(self) -> Probes:
        assert self.probes is not None  # only steps after "database" use it
        return self.probes


def _failure(error: Exception) -> str:
    """The error on one line; a driver's own message without SQLAlchemy's wrapping."""
    cause = error.orig if isinstance(error, sa_exc.DBAPIError) and error.orig is not None else error
    return f"{type(cause).__name__}: {' '.join(str(cause).split())}"


def run(connect: Callable[[], Probes], *, smoke: bool = False) -> Report:
    """The read-only steps, then with ``smoke`` the scratch tenant's round trip. Never
    raises: ``connect`` failing fails the database step and skips what needs it."""
    state = _Run(connect)
    for name, needs, action in _read_only(state):
        state.step(name, needs, action)
    if smoke:
        for name, needs, action in _smoke(state):
            state.step(name, needs, action)
    return Report(ok=all(s.status != "failed" for s in state.steps), smoke=smoke, steps=state.steps)


Action = Callable[[], tuple[Status, str]]


def _read_only(state: _Run) -> Iterator[tuple[str, tuple[str, ...], Action]]:
    yield "database", (), lambda: _database(state)
    yield "migrations", ("database",), lambda: _migrations(state.wired)
    yield "projections", ("migrations",), lambda: _projections(state.wired)
    yield "embedder", (), lambda: _embedder(state.wired)  # neither needs the server to answer
    yield "model", (), lambda: _model(state.wired)


def _smoke(state: _Run) -> Iterator[tuple[str, tuple[str, ...], Action]]:
    yield "record", ("migrations",), lambda: _record(state)
    yield "extract", ("record",), lambda: _extract(state)
    yield "project", ("extract",), lambda: _project(state)
    yield "context", ("project",), lambda: _context(state)
    yield "erase", ("record",), lambda: _erase(state)  # after any failure past the record too
    yield "erased", ("erase",), lambda: _erased(state)


def _database(state: _Run) -> tuple[Status, str]:
    state.probes = state.connect()
    with state.probes.engine.connect() as conn:
        server = db.server_status(conn)
    vector = f", pgvector {server.pgvector_version}" if server.pgvector_version else ", no pgvector"
    return "ok", f"PostgreSQL {server.server_version}{vector}, database {server.database}"


def _migrations(probes: Probes) -> tuple[Status, str]:
    current, head = migrate.current(probes.engine), migrate.head()
    if current == head:
        return "ok", f"at head {head}"
    if current is None:
        return "failed", f"the database holds no ledger yet (run `memledger migrate` to create it at {head})"
    return "failed", f"the database is at {current}, this release's head is {head} (run `memledger migrate`)"


def _projections(probes: Probes) -> tuple[Status, str]:
    statuses = projections.statuses(probes.engine)
    behind = [
        f"{s.name} {s.state}, {s.lag_events} events / {s.lag_seconds:.0f} s behind"
        for s in statuses
        if not s.state.startswith("live") or s.lag_seconds >= health.LAG_WARNING_S
    ]
    if behind:
        return "failed", "; ".join(behind)
    lag = sum(s.lag_events for s in statuses)
    return "ok", f"{len(statuses)} live, {lag} events to apply"


def _embedder(probes: Probes) -> tuple[Status, str]:
    vector = probes.embedder.embed(["The check embeds one sentence."])[0]
    return "ok", f"{probes.embedder.model}, {len(vector)} dimensions"


def _model(probes: Probes) -> tuple[Status, str]:
    if probes.ping_model is None:
        return "skipped", "not configured (MEMLEDGER_LLM_MODEL is unset)"
    answer = probes.ping_model()
    return "ok", f"{probes.model} answered {answer.strip()[:20]!r}"


def _record(state: _Run) -> tuple[Status, str]:
    state.tenant_id = f"{SCRATCH_PREFIX}{uuid.uuid4().hex}"
    turn = TurnInput(role="user", text=FACT, scopes=SCOPES, turn_id="check-turn")
    recorded = record_turns(state.wired.for_tenant(state.tenant_id), state.tenant_id, [turn])
    state.turn_position = recorded[0].positions[0]
    return "ok", f"tenant {state.tenant_id}, position {state.turn_position}"


def _extract(state: _Run) -> tuple[Status, str]:
    """Extract up to the scratch turn: here, or by a worker already busy with the batch."""
    worker = state.wired.build_worker()
    deadline = time.monotonic() + WAIT_S
    while not worker.reached(state.turn_position):
        if time.monotonic() >= deadline:
            return "failed", f"{worker.name} did not reach the turn within {WAIT_S:.0f} s"
        if worker.run_once().busy_elsewhere:
            time.sleep(_POLL_S)
    stream = turn_stream(worker.extractor, "check-turn")
    with state.wired.for_tenant(state.tenant_id).connect() as conn:
        made = len(event_reads.read_stream(conn, state.tenant_id, stream, after_version=0, limit=1000))
    return "ok", f"{made} events extracted ({worker.name})"


def _project(state: _Run) -> tuple[Status, str]:
    with state.wired.engine.connect() as conn:
        last = event_reads.read_tenant(conn, state.tenant_id, limit=1000)[-1].position
    caught_up = erasure.catch_up_through(state.wired.engine, last, WAIT_S, state.wired.embedder)
    behind = sorted(name for name, done in caught_up.items() if not done)
    if behind or len(caught_up) < len(registry.all_projectors()):
        return "failed", f"not caught up to position {last}: {', '.join(behind) or 'not installed'}"
    return "ok", f"{len(caught_up)} projections through position {last}"


def _context(state: _Run) -> tuple[Status, str]:
    request = context.SelectRequest(tenant_id=state.tenant_id, scopes=SCOPES, request=QUESTION, deadline_ms=DEADLINE_MS)
    engine = state.wired.for_tenant(state.tenant_id)
    wired = state.wired
    block = context.build_context(
        engine, request, vector_search=wired.vector_search, actor="check", aging=wired.aging
    ).block
    if MARKER not in block.text:
        return "failed", f"the fact is not in the block ({len(block.item_ids)} items, {block.chars} chars)"
    return "ok", f"the fact is in the block ({len(block.item_ids)} items, {block.chars} chars)"


def _erase(state: _Run) -> tuple[Status, str]:
    # No VACUUM: the scratch text is nobody's words, and vacuuming a large ledger's
    # tables would make the check as slow as that.
    report = erasure.erase(
        state.wired.engine,
        state.tenant_id,
        reason="memledger check",
        actor="check",
        vacuum_after=False,
        embedder=state.wired.embedder,
    )
    behind = sorted(name for name, done in report.projections.items() if not done)
    if report.legacy_events or behind:
        return "failed", f"{report.legacy_events} events kept their text; not caught up: {', '.join(behind)}"
    return "ok", f"{report.erased_events} events erased, {len(report.projections)} projections caught up"


def _erased(state: _Run) -> tuple[Status, str]:
    """Nothing of the fact shows through context selection, search or the tenant's events."""
    engine = state.wired.for_tenant(state.tenant_id)
    request = context.SelectRequest(tenant_id=state.tenant_id, scopes=SCOPES, request=QUESTION, deadline_ms=DEADLINE_MS)
    selected = context.select(engine, request, vector_search=state.wired.vector_search, aging=state.wired.aging).items
    found = search.search(engine, state.tenant_id, SCOPES, "database PostgreSQL", k=10, aging=state.wired.aging)
    with engine.connect() as conn:
        recs = event_reads.read_tenant(conn, state.tenant_id, limit=1000)
    payloads = [msgspec.json.encode(health.event_record(rec)).decode() for rec in recs]
    left = len(selected) + len(found) + sum(MARKER in p for p in payloads)
    if left:
        return "failed", f"{left} reads still show the scratch fact in {state.tenant_id}"
    return "ok", f"nothing readable; {len(recs)} events remain in {state.tenant_id}, their text erased"
