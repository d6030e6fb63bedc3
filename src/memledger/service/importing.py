"""Importing chat histories (``memledger import``, ``MemoryLedger.import_turns``): each
conversation appended in one ``record_turns`` call, all or nothing.

Idempotent and resumable: every turn has an id (its own, or one derived from the source,
``import_formats.turn_id``), and ``record_turns`` keeps turns stored before under their
ids, so importing the same source again appends only what a killed run had not.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from memledger.errors import InvalidCommand, InvalidField, InvalidIdentifier
from memledger.events.catalogue import Scopes
from memledger.service import readiness
from memledger.service.extraction import ExtractionWorker
from memledger.service.import_formats import Conversation, Format, ImportedTurn, Refusal, parse
from memledger.service.readiness import Readiness
from memledger.service.record import TurnInput, check_turns, record_turns

# Turns per append: a longer conversation is appended in parts of this many, in order.
DEFAULT_BATCH = 500

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
    total, done, recorded, present, imported, last = parsed.turns, 0, 0, 0, 0, 0
    refused = list(parsed.refused)
    for conversation in parsed.conversations:
        try:
            added, before, highest = _append(engine, tenant_id, conversation, batch)
        except InvalidCommand as e:
            refused.append(Refusal(conversation.line, _reason(e, conversation)))
        else:
            recorded, present, imported, last = recorded + added, present + before, imported + 1, max(last, highest)
        done += len(conversation.turns)
        if progress is not None:
            progress(done, total, time.perf_counter() - started)
    refused.sort(key=lambda r: r.line)
    return ImportSummary(imported, recorded, present, tuple(refused), time.perf_counter() - started, last)


def wait_until_ready(
    owner: Engine,
    worker: ExtractionWorker,
    summary: ImportSummary,
    *,
    timeout_s: float,
    progress: readiness.Progress | None = None,
) -> ImportSummary:
    """``summary`` with its ``readiness``: extraction and every projection brought
    through the import's last turn, here or by a running worker (``readiness``), for
    up to ``timeout_s``. ``owner`` is the owner's engine."""
    if not summary.last_position:
        return dataclasses.replace(summary, readiness=Readiness(True, 0.0))
    ready = readiness.wait_until_ready(owner, worker, summary.last_position, timeout_s=timeout_s, progress=progress)
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


def _turn_input(turn: ImportedTurn) -> TurnInput:
    return TurnInput(**{f.name: getattr(turn, f.name) for f in dataclasses.fields(turn)})


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
