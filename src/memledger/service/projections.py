"""Operating the projections: run them live, rebuild, verify, report status."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from sqlalchemy.engine import Engine

from memledger.projectors import rebuild as rebuilding
from memledger.projectors import registry, runner
from memledger.projectors.base import Projector
from memledger.projectors.rebuild import TableDiff
from memledger.projectors.status import ProjectionStatus, status
from memledger.store.follow import Wakeup


def select(names: Sequence[str] | None) -> tuple[Projector, ...]:
    """The projectors named (all of them for None, an empty list, or "all")."""
    if not names or list(names) == ["all"]:
        return registry.all_projectors()
    return tuple(registry.by_name(name) for name in names)


def install_all(engine: Engine) -> None:
    """Create every projection's live copy and checkpoint if missing."""
    for projector in registry.all_projectors():
        runner.install(engine, projector)


def catch_up_all(engine: Engine, names: Sequence[str] | None = None) -> dict[str, int]:
    """Inline mode: bring the projections up to date now; events applied per name."""
    applied = {}
    for projector in select(names):
        runner.install(engine, projector)
        applied[projector.name] = runner.catch_up(engine, projector)
    return applied


def run_live(
    engine: Engine,
    names: Sequence[str] | None = None,
    *,
    poll_interval: float = 0.1,
    wakeup: Wakeup | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> None:
    """Follow the ledger with the named projections until ``should_stop``."""
    runner.follow(engine, select(names), poll_interval=poll_interval, wakeup=wakeup, should_stop=should_stop)


def rebuild(engine: Engine, name: str, progress: Callable[[int], None] | None = None) -> int:
    """Rebuild one projection beside the live one and swap it in; events applied."""
    return rebuilding.rebuild(engine, registry.by_name(name), progress=progress)


def verify(engine: Engine, name: str, progress: Callable[[int], None] | None = None) -> list[TableDiff]:
    """Compare one projection's live rows with a scratch rebuild, table by table."""
    return rebuilding.verify(engine, registry.by_name(name), progress=progress)


def statuses(engine: Engine) -> list[ProjectionStatus]:
    """The status of every projection."""
    now = datetime.now(UTC)
    with engine.connect() as conn:
        return [status(conn, projector, now) for projector in registry.all_projectors()]


def reset_failure(engine: Engine, name: str) -> None:
    """Let a failed projection try again from where it stopped."""
    registry.by_name(name)
    runner.reset_failure(engine, name)
