"""Graph maintenance on a schedule: ``serve`` runs the merge rules over every tenant
every ``maintenance_interval_s`` (APScheduler, as the extraction worker)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy.engine import Engine

from memledger.projectors.entities import merges as entity_merges
from memledger.service import maintenance
from memledger.service.maintenance import MaintenanceReport
from memledger.store import db

log = logging.getLogger(__name__)


def run_all(
    owner: Engine, tenant_engine: Callable[[str], Engine], embedding_model: str | None = None
) -> list[MaintenanceReport]:
    """One maintenance run per tenant that has entities, each reading and appending
    through the tenant's own engine (``tenant_engine``) and shown through ``owner``,
    comparing vectors of ``embedding_model`` (``maintenance.find_merges``)."""
    with db.reading(owner) as conn:
        found = entity_merges.tenants(conn)
    reports = [maintenance.run(tenant_engine(t), t, owner=owner, embedding_model=embedding_model) for t in found]
    merged = sum(r.entities_merged for r in reports)
    if merged:
        log.info("maintenance merged %d entities in %d tenants", merged, sum(1 for r in reports if r.merges))
    return reports


class MaintenanceSchedule:
    """``run_all`` every ``interval_s`` in a scheduler thread; the first run one interval
    after ``start``, so a restart does not redo it at once. A failed run is logged by the
    scheduler and tried again at the next interval (a merge is all or nothing)."""

    def __init__(
        self,
        owner: Engine,
        tenant_engine: Callable[[str], Engine],
        interval_s: float,
        embedding_model: str | None = None,
    ) -> None:
        self.scheduler = BackgroundScheduler(timezone="UTC")
        self.scheduler.add_job(
            run_all,
            "interval",
            args=(owner, tenant_engine, embedding_model),
            seconds=interval_s,
            id="maintenance",
            max_instances=1,
            coalesce=True,
        )

    def start(self) -> None:
        """Start the scheduler thread."""
        self.scheduler.start()

    def stop(self) -> None:
        """Stop it, waiting for a run under way."""
        self.scheduler.shutdown(wait=True)


def start(
    owner: Engine, tenant_engine: Callable[[str], Engine], interval_s: float, embedding_model: str | None = None
) -> MaintenanceSchedule | None:
    """A started schedule, or None when ``interval_s`` is 0 (never)."""
    if interval_s <= 0:
        return None
    schedule = MaintenanceSchedule(owner, tenant_engine, interval_s, embedding_model)
    schedule.start()
    return schedule
