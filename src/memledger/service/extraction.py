"""The extraction worker: the ledger is its queue.

It follows ``TurnRecorded`` events past its own checkpoint, a batch at a time,
runs the extractor outside any transaction (an LLM call can take seconds, and an
open write transaction would hold every gap-safe reader back), then appends the
results and advances its checkpoint in one short transaction.

Exactly once per extractor version: one worker at a time holds the extractor's
session lock; the checkpoint is compared before it moves; and each turn's
results go to a stream of their own that must be new (expected version 0), so
even a worker that lost its lock cannot append a turn's results twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from memledger.errors import ConcurrencyConflict, InvalidCommand, LedgerError
from memledger.events import codec
from memledger.events.catalogue import Event, TurnRecorded
from memledger.events.codec import tag_of
from memledger.events.envelope import Cursor, NewEvent
from memledger.extraction import name_guess
from memledger.extraction.directives import with_directives
from memledger.extraction.policy import Counts, Policy, conversation_of, follow_up, to_events
from memledger.extraction.protocol import Extractor, TurnExtraction, TurnKey, TurnText, extract_per_tenant
from memledger.projectors import checkpoints
from memledger.service import forgetting, replaced_edges, tenant_settings
from memledger.service.extraction_inputs import project_names, to_turn_text, with_modes
from memledger.store import batch_append, counters, db, event_reads, event_store, lock_keys

log = logging.getLogger(__name__)

TURN_TAG = tag_of(TurnRecorded)


_COUNTS = (
    "turns",
    "events",
    "refused_secrets",
    "skipped",
    "dropped_low_confidence",
    "invalid",
    "erased",
    "refused_answers",
    "refused_items",
    "fallbacks",
    "model_switches",
)


@dataclass
class BatchReport:
    """What one batch did."""

    turns: int = 0
    events: int = 0
    refused_secrets: int = 0
    skipped: int = 0
    dropped_low_confidence: int = 0
    invalid: int = 0
    erased: int = 0  # turns erased before they were extracted: passed over, never sent
    refused_answers: int = 0  # a model's answers refused (not the schema's), before a retry
    refused_items: int = 0  # items of a model's kept answers dropped (not the schema's)
    fallbacks: int = 0  # conversations whose model calls all failed: the fallback extracted them
    model_switches: int = 0  # conversations a later model of the chain answered (the first failed)
    busy_elsewhere: bool = False

    def add(self, other: BatchReport) -> None:
        """Add ``other``'s counts to this report's."""
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.busy_elsewhere |= other.busy_elsewhere


@dataclass
class WorkerConfig:
    """Limits of the worker; defaults are the issue's."""

    batch_turns: int = 10
    max_entities: int = 20
    max_relationships: int = 50
    max_facts: int = 1000


def checkpoint_name(extractor: Extractor) -> str:
    """The checkpoint of one extractor version."""
    return f"extract:{extractor.name}@{extractor.version}"


def turn_stream(extractor: Extractor, turn_id: str) -> str:
    """The stream holding what one extractor version made of one turn."""
    return f"extraction:{extractor.name}@{extractor.version}:{turn_id}"


@dataclass
class ExtractionWorker:
    """Runs one extractor over the ledger's turns, a batch at a time."""

    engine: Engine
    extractor: Extractor
    config: WorkerConfig = field(default_factory=WorkerConfig)

    @property
    def name(self) -> str:
        """This worker's checkpoint name."""
        return checkpoint_name(self.extractor)

    def _lock_key(self) -> sa.ColumnElement[int]:
        return lock_keys.named(self.name)

    def install(self) -> None:
        """Create the checkpoint at the start of the ledger if it is missing, and read the
        heuristic's name lists now, so the first batch does not wait for them."""
        with db.begin(self.engine) as tx:
            checkpoints.ensure(tx, self.name, 1, "ledger")
        name_guess.warm()

    def is_new(self) -> bool:
        """Whether this extractor version has never run here (its checkpoint is missing):
        it would extract every turn of the ledger, the past included."""
        with self.engine.connect() as conn:
            return checkpoints.get(conn, self.name) is None

    def start_from_now(self) -> bool:
        """For an extractor version that never ran here: start it at the end of the
        ledger, so it extracts only turns recorded from now on (the past keeps what
        earlier extractors found). False, and nothing changed, if it has run before."""
        with db.begin(self.engine) as tx:
            if checkpoints.get(tx, self.name) is not None:
                return False
            checkpoints.ensure(tx, self.name, 1, "ledger")
            checkpoints.advance(tx, self.name, event_reads.visible_head(tx), 0)
        return True

    def reached(self, position: int) -> bool:
        """Whether this extractor version has read past the turn at ``position`` (by
        this worker or another holding its lock)."""
        with self.engine.connect() as conn:
            cp = checkpoints.get(conn, self.name)
            return cp is not None and cp.cursor >= event_reads.cursor_at(conn, position)

    def pending(self, tenant_id: str | None = None) -> int:
        """Turns recorded and not yet extracted by this extractor version (of one
        tenant's, when ``tenant_id`` is given; else of every tenant)."""
        with self.engine.connect() as conn:
            cp = checkpoints.get(conn, self.name)
            after = cp.cursor if cp else Cursor(0, 0)
            return event_reads.count_after(conn, after, tenant_id=tenant_id, types=[TURN_TAG])

    def run_once(self) -> BatchReport:
        """Extract one batch, unless another worker of this extractor is busy."""
        return self.drain(max_batches=1)

    def drain(self, should_stop: Callable[[], bool] = lambda: False, *, max_batches: int | None = None) -> BatchReport:
        """Extract batches until nothing is pending (or ``max_batches`` are done); the sum
        of their reports. ``busy_elsewhere`` if another worker of this extractor is busy.

        The extractor's session lock is taken once for the whole drain, on one
        connection that also reads and writes every batch: per batch, one read and
        one short write transaction, and no connection checkout.
        """
        self.install()
        total = BatchReport()
        model_before = _model_counts(self.extractor)
        with self.engine.connect() as conn:
            if not conn.execute(sa.select(sa.func.pg_try_advisory_lock(self._lock_key()))).scalar():
                conn.rollback()
                return BatchReport(busy_elsewhere=True)
            conn.commit()  # hold the session lock outside any transaction
            try:
                after: Cursor | None = None  # where this drain's last batch left the checkpoint
                while not should_stop() and (max_batches is None or max_batches > 0):
                    report, after = self._batch(conn, after)
                    total.add(report)
                    if report.busy_elsewhere or not report.turns:
                        break
                    max_batches = None if max_batches is None else max_batches - 1
            finally:
                _unlock(conn, self._lock_key())
        counts = (now - then for now, then in zip(_model_counts(self.extractor), model_before, strict=True))
        total.refused_answers, total.refused_items, total.fallbacks, total.model_switches = counts
        return total

    def _batch(self, conn: Connection, after: Cursor | None) -> tuple[BatchReport, Cursor | None]:
        """One batch on the locked connection: read turns past the checkpoint, extract
        them outside any transaction, then append and advance in one transaction.
        Returns the report and the checkpoint's new cursor."""
        with _transaction(conn):
            if after is None:
                start = checkpoints.get(conn, self.name)
                assert start is not None
                after = start.cursor
            page = event_reads.read_all(conn, after=after, limit=self.config.batch_turns, types=[TURN_TAG])
        if not page:
            return BatchReport(), after
        # A turn erased before its extraction reads "[erased]": nothing to extract, and
        # no text for a model to be paid for (or to make something up from).
        with _transaction(conn):
            turns = with_modes(conn, project_names(conn, [to_turn_text(rec) for rec in page if not rec.erased]))
        found = extract_per_tenant(self.extractor, turns) if turns else {}  # outside any transaction
        with _transaction(conn):
            now = checkpoints.lock(conn, self.name)
            if now is None or now.cursor != after:
                return BatchReport(busy_elsewhere=True), None  # someone else did this batch
            report = self._append(conn, turns, found)
            report.erased = len(page) - len(turns)
            checkpoints.advance(conn, self.name, page[-1].cursor, len(page))
        return report, page[-1].cursor

    def _append(
        self, tx: Connection, turns: Sequence[TurnText], results: Mapping[TurnKey, TurnExtraction]
    ) -> BatchReport:
        label = f"{self.extractor.name}@{self.extractor.version}"
        keys = {(t.tenant_id, conversation_of(t)) for t in turns}
        saved = counters.load(tx, label, keys)
        counts = {key: Counts(**saved.get(key, {})) for key in keys}  # type: ignore[arg-type]
        report = BatchReport(turns=len(turns))
        per_turn, deltas = self._events_of(tx, turns, results, counts)
        self._write(tx, per_turn, deltas, counts, report)
        counters.save(tx, label, {k: {n: getattr(c, n) for n in counters.COUNT_COLUMNS} for k, c in counts.items()})

        def added(*names: str) -> int:
            now: int = sum(getattr(c, n) for c in counts.values() for n in names)
            return now - sum(s.get(n, 0) for s in saved.values() for n in names)

        report.refused_secrets = added("refused_secrets")
        report.skipped = added("skipped_entities", "skipped_relationships", "skipped_facts")
        report.dropped_low_confidence = added("dropped_low_confidence")
        return report

    def _events_of(
        self,
        tx: Connection,
        turns: Sequence[TurnText],
        results: Mapping[TurnKey, TurnExtraction],
        counts: dict[tuple[str, str], Counts],
    ) -> tuple[list[tuple[TurnText, list[NewEvent]]], dict[TurnKey, dict[str, int]]]:
        """Each turn's events under the policy, with what they add to its conversation's counts."""
        settings = tenant_settings.load_many(tx, {t.tenant_id for t in turns})
        per_turn: list[tuple[TurnText, list[NewEvent]]] = []
        deltas: dict[TurnKey, dict[str, int]] = {}
        # this batch's events so far, per tenant: a batch holds several tenants' turns, and
        # one's "sam" or relationship id must not be read as another's
        earlier: dict[str, list[Event]] = {}
        said_at: dict[str, dict[str, datetime]] = {}  # tenant -> turn id -> when it was said
        for turn in turns:
            extraction = results.get((turn.tenant_id, turn.turn_id), TurnExtraction())
            if turn.role == "user":
                extraction = with_directives(extraction, turn.text)
            switches = settings[turn.tenant_id]
            policy = Policy(
                max_entities=self.config.max_entities,
                max_relationships=self.config.max_relationships,
                max_facts=self.config.max_facts,
                auto_promote=switches.auto_promote,
                broad_scope_writes=switches.broad_scope_writes,
            )
            conversation = counts[(turn.tenant_id, conversation_of(turn))]
            before = _tally(conversation)
            asked = forgetting.topics(turn.text) if turn.role == "user" else []
            if asked:  # nothing of what the turn asks to forget becomes memory
                extraction = forgetting.without_forgotten(extraction, asked)
            pairs = to_events(
                turn, extraction, conversation, policy, extractor=self.extractor.name, version=self.extractor.version
            )
            if turn.role == "user":  # retractions, as part of this extraction
                mine = earlier.get(turn.tenant_id, [])
                pairs = self._with_retractions(tx, turn, asked, pairs, mine, said_at.get(turn.tenant_id, {}))
            deltas[(turn.tenant_id, turn.turn_id)] = {n: v - before[n] for n, v in _tally(conversation).items()}
            per_turn.append((turn, [new for _, new in pairs]))
            earlier.setdefault(turn.tenant_id, []).extend(new.event for _, new in pairs)
            said_at.setdefault(turn.tenant_id, {})[turn.turn_id] = turn.occurred_at
        return per_turn, deltas

    def _with_retractions(
        self,
        tx: Connection,
        turn: TurnText,
        asked: list[str],
        pairs: list[tuple[str, NewEvent]],
        mine: list[Event],
        when: dict[str, datetime],
    ) -> list[tuple[str, NewEvent]]:
        """``pairs`` followed by what the turn retracts: what the speaker asks to forget
        ("Forget what I said about ..."), and the edges a newer fact replaces ("I now work
        at Globex.")."""
        retracted = forgetting.retractions(tx, turn, asked, mine) if asked else []
        written = [new.event for _, new in pairs]
        asked_for = {r.item_id for r in retracted}
        replaced = replaced_edges.retractions(tx, turn, written, mine, when)
        retracted += [r for r in replaced if r.item_id not in asked_for]
        if not retracted:
            return pairs
        return follow_up(turn, pairs, retracted, extractor=self.extractor.name, version=self.extractor.version)

    def _write(
        self,
        tx: Connection,
        per_turn: list[tuple[TurnText, list[NewEvent]]],
        deltas: dict[TurnKey, dict[str, int]],
        counts: dict[tuple[str, str], Counts],
        report: BatchReport,
    ) -> None:
        """Append each turn's encodable events; a turn whose stream held them already
        (nothing written) takes back what it added to its conversation's counts."""
        appends: list[tuple[TurnText, batch_append.StreamAppend]] = []
        for turn, events in per_turn:
            valid = _encodable(turn, events)
            report.invalid += len(events) - len(valid)
            if valid:
                stream = turn_stream(self.extractor, turn.turn_id)
                appends.append((turn, batch_append.StreamAppend(turn.tenant_id, stream, valid, 0)))
        for (turn, wanted), result in zip(appends, self._append_all(tx, [a for _, a in appends]), strict=True):
            if result is None or result.replayed:  # nothing written: its counts do not count
                conversation = counts[(turn.tenant_id, conversation_of(turn))]
                for name, delta in deltas[(turn.tenant_id, turn.turn_id)].items():
                    setattr(conversation, name, getattr(conversation, name) - delta)
                continue
            report.events += len(wanted.events)

    def _append_all(
        self, tx: Connection, appends: list[batch_append.StreamAppend]
    ) -> list[event_store.AppendResult | None]:
        """Every turn's results in one set-wise append. If one turn's stream was written
        before (extracted already, e.g. after a checkpoint reset), that call writes
        nothing; then each turn is appended alone, and a turn refused (None) is skipped."""
        try:
            return list(batch_append.append_many(tx, appends))
        except (ConcurrencyConflict, InvalidCommand) as e:
            log.info("a turn of this batch was extracted before; appending turn by turn (%s)", e)
        results: list[event_store.AppendResult | None] = []
        for one in appends:
            try:
                results.append(event_store.append(tx, one.tenant_id, one.stream_id, one.events, 0))
            except (ConcurrencyConflict, InvalidCommand) as e:  # extracted before (e.g. after a reset)
                log.info("%s was already written; skipped (%s)", one.stream_id, e)
                results.append(None)
        return results


@contextmanager
def _transaction(conn: Connection) -> Iterator[None]:
    """A transaction on ``conn`` that commits on success and rolls back on any error,
    with driver errors raised as ``LedgerError``s (as ``db.begin`` does for an engine)."""
    try:
        with conn.begin():
            yield
    except sa_exc.DBAPIError as e:
        raise db.translate(e) from e


def _unlock(conn: Connection, key: sa.ColumnElement[int]) -> None:
    """Release the drain's session lock. When that fails the session is closed, not
    pooled: if it lives on, it would hold the lock, and every later drain would find
    the extractor busy elsewhere."""
    try:
        conn.rollback()  # a batch that failed may have left its transaction behind
        conn.execute(sa.select(sa.func.pg_advisory_unlock(key)))
        conn.commit()
    except sa_exc.DBAPIError as e:
        log.warning("could not release the extraction lock, closing its session: %s", e)
        conn.invalidate()


def _tally(counts: Counts) -> dict[str, int]:
    return {name: getattr(counts, name) for name in counters.COUNT_COLUMNS}


def _encodable(turn: TurnText, events: list[NewEvent]) -> list[NewEvent]:
    """The events the ledger will take; one it would refuse is logged and dropped, so a
    single bad candidate can never stop the worker."""
    kept = []
    for new in events:
        try:
            codec.encode(new.event)
        except LedgerError as e:
            log.warning("dropped an extracted event of turn %s that the ledger refuses: %s", turn.turn_id, e)
            continue
        kept.append(new)
    return kept


def _model_counts(extractor: Extractor) -> tuple[int, int, int, int]:
    """A model extractor's answers refused, items refused, fallbacks and switches to a
    later model of its chain so far (0 for others)."""
    answers, items = getattr(extractor, "refused_answers", 0), getattr(extractor, "refused_items", 0)
    return answers, items, getattr(extractor, "fallbacks", 0), getattr(extractor, "model_switches", 0)
