"""Importing chat histories (``memledger import``, ``MemoryLedger.import_turns``): each
conversation appended all or nothing.

Conversations go in groups, many to one transaction and one statement
(``batch_append.append_many``). A group that cannot go in whole (a conversation the
store refuses, or one a killed run left partly imported) is appended again conversation
by conversation through ``record_turns``, which names the refused one and keeps what
was stored before.

Idempotent and resumable: every turn has an id (its own, or one derived from the source,
``import_formats.turn_id``), and turns stored before under their ids are kept, so
importing the same source again appends only what a killed run had not.
"""

from __future__ import annotations

import dataclasses
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import Embedder
from memledger.errors import InvalidCommand, InvalidField, InvalidIdentifier, Refused
from memledger.events.catalogue import Scopes
from memledger.events.envelope import NewEvent
from memledger.service import readiness, scope_ids, tenant_settings
from memledger.service.extraction import ExtractionWorker
from memledger.service.import_formats import Conversation, Format, ImportedTurn, Parsed, Refusal, parse
from memledger.service.readiness import Readiness
from memledger.service.record import (
    TurnInput,
    check_turns,
    conversation_stream,
    record_turns,
    speaker_name,
    stored_turn,
    to_new_event,
)
from memledger.store import batch_append, db
from memledger.store.batch_append import StreamAppend
from memledger.store.identifiers import check_text

# Turns per append: a longer conversation is appended in parts of this many, in order.
DEFAULT_BATCH = 500

# Turns per group of conversations appended in one transaction.
GROUP_TURNS = 2000

# How long ``--wait`` waits, by default, for the read models to reflect an import.
WAIT_TIMEOUT_S = 600.0

Progress = Callable[[int, int, float], None]  # (turns done, turns in all, seconds so far)


@dataclass(frozen=True)
class ImportSummary:
    """What an import did. ``recorded`` turns are new; ``present`` were stored before
    (a re-run); ``refused`` lines were not imported, each with its reason."""

    conversations: int
    recorded: int
    present: int
    refused: tuple[Refusal, ...]
    seconds: float
    last_position: int = 0  # the highest ledger position of a turn imported or present; 0 for none
    readiness: Readiness | None = None  # after ``wait_until_ready``: whether the read models reflect it

    @property
    def complete(self) -> bool:
        """Whether every line was imported."""
        return not self.refused

    @property
    def ready_seconds(self) -> float | None:
        """How long after the import the tenant's context reflected all of it; None when
        not waited for, or not ready within the timeout (``readiness.behind`` says what was not)."""
        return self.readiness.seconds if self.readiness is not None and self.readiness.ready else None


def import_text(
    engine: Engine,
    tenant_id: str,
    text: str,
    *,
    source: str,
    defaults: Scopes = Scopes(),
    fmt: Format = "auto",
    batch: int = DEFAULT_BATCH,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import ``text`` (a file's content; ``source`` its name, from which missing ids and
    sessions are derived) into ``tenant_id``. A conversation with a bad message, or one
    ``record_turns`` refuses, is refused whole; the others are imported. Errors that
    are not the data's (the database is down, capture is off) raise."""
    started = time.perf_counter()
    parsed = parse(text, source=source, defaults=defaults, fmt=fmt)
    return _import_parsed(engine, tenant_id, parsed, batch, progress, started)


# How many bad lines a refused request names.
MAX_NAMED_LINES = 20


def import_request(
    engine: Engine,
    tenant_id: str,
    text: str,
    *,
    source: str,
    actor: str,
    defaults: Scopes = Scopes(),
    fmt: Format = "turns",
    first_line: int = 1,
) -> ImportSummary:
    """``import_text`` for a request's body (part of a file: ``first_line`` numbers its
    first line, so ids derived from ``source`` and line are the file's). A line the
    parser refuses, or a turn ``record_turns`` would refuse before the database,
    refuses the whole body: ``InvalidField`` naming the first bad line and listing up
    to ``MAX_NAMED_LINES``, and nothing is written. A conversation the store refuses
    (its ids were used elsewhere) is refused alone, as ``import_text`` does. Every turn
    is recorded as ``actor``."""
    started = time.perf_counter()
    parsed = parse(text, source=source, defaults=defaults, fmt=fmt, first_line=first_line)
    bad = sorted([*parsed.refused, *filter(None, map(_refusal, parsed.conversations))], key=lambda r: r.line)
    if bad:
        listed = "; ".join(_named(r) for r in bad[:MAX_NAMED_LINES])
        more = f" (and {len(bad) - MAX_NAMED_LINES} more)" if len(bad) > MAX_NAMED_LINES else ""
        raise InvalidField(f"line {bad[0].line}", f"is not importable; nothing was imported. {listed}{more}")
    acted = tuple(
        dataclasses.replace(c, turns=tuple(dataclasses.replace(t, actor=actor) for t in c.turns))
        for c in parsed.conversations
    )
    return _import_parsed(engine, tenant_id, Parsed(acted, ()), DEFAULT_BATCH, None, started)


def _refusal(conversation: Conversation) -> Refusal | None:
    """Why ``record_turns`` would refuse the conversation's turns before the database, or None."""
    turns = [_turn_input(t) for t in conversation.turns]
    try:
        check_turns(turns, indexed=True)
        for index, turn in enumerate(turns):
            speaker_name(turn)
            check_text(f"turns.{index}.text", turn.text)
    except InvalidCommand as e:
        match = _TURN_INDEX.match(getattr(e, "field", ""))
        at = conversation.lines[int(match.group(1))] if match and conversation.from_turn_lines else conversation.line
        return Refusal(at, _reason(e, conversation))
    return None


def _named(refusal: Refusal) -> str:
    """The refusal with its line, once."""
    named = f"line {refusal.line}"
    return refusal.reason if refusal.reason.startswith(named + ":") else f"{named}: {refusal.reason}"


def _import_parsed(
    engine: Engine, tenant_id: str, parsed: Parsed, batch: int, progress: Progress | None, started: float
) -> ImportSummary:
    total, done, recorded, present, imported, last = parsed.turns, 0, 0, 0, 0, 0
    refused = list(parsed.refused)
    for conversation, outcome in _import_all(engine, tenant_id, parsed.conversations, batch):
        if isinstance(outcome, InvalidCommand):
            refused.append(Refusal(conversation.line, _reason(outcome, conversation)))
        else:
            added, before, highest = outcome
            recorded, present, imported, last = recorded + added, present + before, imported + 1, max(last, highest)
        done += len(conversation.turns)
        if progress is not None:
            progress(done, total, time.perf_counter() - started)
    refused.sort(key=lambda r: r.line)
    return ImportSummary(imported, recorded, present, tuple(refused), time.perf_counter() - started, last)


Outcome = tuple[int, int, int] | InvalidCommand  # (appended, stored before, highest position), or why refused


@dataclass(frozen=True)
class _Prepared:
    """A conversation's events by stream, as ``record_turns`` would append them."""

    conversation: Conversation
    streams: dict[str, list[NewEvent]]


def _import_all(
    engine: Engine, tenant_id: str, conversations: Sequence[Conversation], batch: int
) -> Iterator[tuple[Conversation, Outcome]]:
    """Each conversation with its outcome, in order. One append at a time runs on a
    thread of its own while the next group is prepared here: the database's work and
    this process's overlap (on two cores, the import's two halves take one each)."""
    if not conversations:
        return
    key = _MemoKey(**dataclasses.asdict(scope_ids.key_for(engine, tenant_id)))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memledger-import") as appender:
        pending: Future[list[tuple[Conversation, Outcome]]] | None = None
        for work in _work(key, tenant_id, conversations, batch, datetime.now(UTC)):
            if pending is not None:
                yield from pending.result()
            pending = appender.submit(_run, engine, tenant_id, work, batch)
        if pending is not None:
            yield from pending.result()


@dataclass(frozen=True)
class _Group:
    """Conversations appended together: their appends checked and encoded here, or None
    when the store's checks refuse them (each conversation is then appended alone)."""

    members: list[_Prepared]
    encoded: batch_append.Prepared | None


Work = _Group | Conversation  # conversations appended together, or one appended alone


def _work(
    key: scope_ids.TenantKey, tenant_id: str, conversations: Sequence[Conversation], batch: int, now: datetime
) -> Iterator[Work]:
    """The conversations in groups of up to ``GROUP_TURNS`` turns with no stream twice
    (one statement appends a stream once). A conversation longer than ``batch``, or one
    whose turns are refused before the database, goes alone."""
    group: list[_Prepared] = []
    streams: set[str] = set()
    turns = 0
    for conversation in conversations:
        prepared = _prepare(key, conversation, now) if len(conversation.turns) <= batch else None
        if prepared is None or streams & prepared.streams.keys() or turns + len(conversation.turns) > GROUP_TURNS:
            if group:
                yield _group(tenant_id, group)
            group, streams, turns = [], set(), 0
        if prepared is None:
            yield conversation
            continue
        group.append(prepared)
        streams.update(prepared.streams)
        turns += len(conversation.turns)
    if group:
        yield _group(tenant_id, group)


def _group(tenant_id: str, members: list[_Prepared]) -> _Group:
    appends = [StreamAppend(tenant_id, stream, new, None) for p in members for stream, new in p.streams.items()]
    try:
        return _Group(members, batch_append.prepare(appends))
    except InvalidCommand:
        return _Group(members, None)


def _run(engine: Engine, tenant_id: str, work: Work, batch: int) -> list[tuple[Conversation, Outcome]]:
    if isinstance(work, Conversation):
        return [(work, _append_alone(engine, tenant_id, work, batch))]
    return list(_append_group(engine, tenant_id, work, batch))


@dataclass(frozen=True)
class _MemoKey(scope_ids.TenantKey):
    """A tenant's key that remembers the scopes it stored: an import's turns share a few."""

    memo: dict[tuple[Scopes, str], Scopes] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def stored_scopes(self, scopes: Scopes, *, field: str = "scopes") -> Scopes:
        found = self.memo.get((scopes, field))
        if found is None:
            found = self.memo[scopes, field] = super().stored_scopes(scopes, field=field)
        return found


def _prepare(key: scope_ids.TenantKey, conversation: Conversation, now: datetime) -> _Prepared | None:
    """The conversation's events (``record_turns``' own steps), or None if a turn is
    refused: appended alone, it is refused with the error naming that turn."""
    turns = [_turn_input(t) for t in conversation.turns]
    streams: dict[str, list[NewEvent]] = {}
    try:
        check_turns(turns, indexed=True)
        for turn in turns:
            stored = stored_turn(key, msgspec.structs.replace(turn, speaker=speaker_name(turn)))
            new = to_new_event(stored, now=now, make_id=uuid.uuid4)
            streams.setdefault(conversation_stream(stored.scopes), []).append(new)
    except InvalidCommand:
        return None
    return _Prepared(conversation, streams)


def _append_group(engine: Engine, tenant_id: str, group: _Group, batch: int) -> Iterator[tuple[Conversation, Outcome]]:
    """The group in one transaction, all or nothing; if the store refuses it, each
    conversation again on its own (``_append``), so that only the one at fault is refused."""
    try:
        if group.encoded is None:
            raise InvalidCommand("the group's events were refused")
        outcomes = _append_together(engine, tenant_id, group.members, group.encoded)
    except InvalidCommand:
        for prepared in group.members:
            yield prepared.conversation, _append_alone(engine, tenant_id, prepared.conversation, batch)
        return
    yield from zip((p.conversation for p in group.members), outcomes, strict=True)


def _append_together(
    engine: Engine, tenant_id: str, members: list[_Prepared], encoded: batch_append.Prepared
) -> list[Outcome]:
    """The members' appends in one ``append_many``, as ``record_turns`` appends them
    (capture on, ids kept): each conversation's outcome."""
    with db.begin(engine) as tx:
        if not tenant_settings.load(tx, tenant_id).capture:
            raise Refused(
                "capture_off", f"capture is switched off for tenant {tenant_id!r}: the turns were not recorded"
            )
        results = iter(batch_append.append_prepared(tx, encoded))
    outcomes: list[Outcome] = []
    for prepared in members:
        added = before = highest = 0
        for result in (next(results) for _ in prepared.streams):
            added += len(result.positions) - result.appended_before
            before += result.appended_before
            highest = max((highest, *result.positions))
        outcomes.append((added, before, highest))
    return outcomes


def _append_alone(engine: Engine, tenant_id: str, conversation: Conversation, batch: int) -> Outcome:
    try:
        return _append(engine, tenant_id, conversation, batch)
    except InvalidCommand as e:
        return e


def wait_until_ready(
    owner: Engine,
    worker: ExtractionWorker,
    summary: ImportSummary,
    *,
    timeout_s: float,
    progress: readiness.Progress | None = None,
    embedder: Embedder | None = None,
) -> ImportSummary:
    """``summary`` with its ``readiness``: extraction and every projection brought
    through the import's last turn, here or by a running worker (``readiness``), for
    up to ``timeout_s``. ``owner`` is the owner's engine; ``embedder``, the application's."""
    if not summary.last_position:
        return dataclasses.replace(summary, readiness=Readiness(True, 0.0))
    position = summary.last_position
    ready = readiness.wait_until_ready(
        owner, worker, position, timeout_s=timeout_s, progress=progress, embedder=embedder
    )
    return dataclasses.replace(summary, readiness=ready)


def _append(engine: Engine, tenant_id: str, conversation: Conversation, batch: int) -> tuple[int, int, int]:
    """(turns appended, turns stored before, the highest position of its turns). A
    conversation over ``batch`` turns goes in parts: a kill between them leaves the
    first parts stored, and a re-run appends the rest (the ids are the same), so it
    ends complete."""
    turns = [_turn_input(t) for t in conversation.turns]
    check_turns(turns, indexed=True)  # the whole conversation, before any part is appended
    added = before = highest = 0
    for at in range(0, len(turns), batch):
        try:
            results = record_turns(engine, tenant_id, turns[at : at + batch], indexed=True)
        except (InvalidField, InvalidIdentifier) as e:  # named within the part: name it within the whole
            match = _TURN_INDEX.match(e.field)
            if match is None or at == 0:
                raise
            raise dataclasses.replace(e, field=f"turns.{int(match.group(1)) + at}.{e.field[match.end() :]}") from None
        for result in results:
            added += len(result.positions) - result.appended_before
            before += result.appended_before
            highest = max((highest, *result.positions))
    return added, before, highest


_TURN_FIELDS = tuple(f.name for f in dataclasses.fields(ImportedTurn))


def _turn_input(turn: ImportedTurn) -> TurnInput:
    return TurnInput(**{name: getattr(turn, name) for name in _TURN_FIELDS})


_TURN_INDEX = re.compile(r"^turns\.(\d+)\.")


def _reason(error: InvalidCommand, conversation: Conversation) -> str:
    """``error`` naming the line a bad turn came from, or its message's index."""
    if not isinstance(error, InvalidField | InvalidIdentifier):
        return f"conversation not imported: {error}"
    match = _TURN_INDEX.match(error.field)
    if match is None:
        return f"conversation not imported: {error}"
    index, rest = int(match.group(1)), error.field[match.end() :]
    if conversation.from_turn_lines:
        lines = conversation.lines
        span = f"{lines[0]}-{lines[-1]}" if len(lines) > 1 else str(lines[0])
        return f"line {lines[index]}: {dataclasses.replace(error, field=rest)} (lines {span} not imported)"
    return f"conversation not imported: {dataclasses.replace(error, field=f'messages.{index}.{rest}')}"
