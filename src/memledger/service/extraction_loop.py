"""The extraction worker as a service: drains on a schedule, and early when turns arrive."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED
from apscheduler.schedulers.background import BackgroundScheduler

from memledger.service.extraction import ExtractionWorker
from memledger.store.outage import OUTAGES, Backoff

log = logging.getLogger(__name__)

FIRST_ERROR_WAIT_S = 1.0
MAX_ERROR_WAIT_S = 300.0


class WorkerLoop:
    """The worker as a service: APScheduler runs ``drain`` every ``interval_s``,
    and a watcher wakes it early when new turns arrive.

    While the database is unavailable (restarting, disk full or read-only) neither
    dies: the watcher waits with backoff, and after a drain that failed the next one
    waits too (each attempt runs the extractor, perhaps a paid model). Any other
    failure of a drain (an extractor that raises, a batch the policy cannot store)
    is logged and waited out the same way, up to ``MAX_ERROR_WAIT_S``, so a watcher
    waking the next drain at once cannot send a failing batch to the model again and
    again. Nothing is lost meanwhile: the turns stay past the
    checkpoint until a batch commits.
    """

    def __init__(self, worker: ExtractionWorker, *, interval_s: float = 30.0, poll_interval_s: float = 0.2) -> None:
        self.worker = worker
        self.poll_interval_s = poll_interval_s
        self._stop = threading.Event()
        self._busy = threading.Event()  # a drain is woken or running: no need to wake it
        self._draining = threading.Event()  # a drain is running
        self._installed = False
        self._watch_backoff = Backoff("extraction watcher", log)
        self._drain_backoff = Backoff("extraction", log, first_s=0.2, max_s=5.0)
        self._errors = 0  # drains failed in a row for another reason than an outage
        self._retry_at = 0.0  # no drain is woken before this (monotonic) time
        self.scheduler = BackgroundScheduler(timezone="UTC")
        self.scheduler.add_job(
            self._drain,
            "interval",
            seconds=interval_s,
            id="extract",
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,  # a run the scheduler was late for still runs
            next_run_time=datetime.now(UTC),
        )
        # A wake the scheduler drops (the drain before still finishing) is woken again
        # at the next poll, not left waiting for the next interval.
        self.scheduler.add_listener(lambda _: self._busy.clear(), EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)

    def _drain(self) -> None:
        self._busy.set()
        self._draining.set()
        try:
            report = self.worker.drain(self._stop.is_set)
        except OUTAGES as e:
            self._retry_at = time.monotonic() + self._drain_backoff.failed(e)
            return
        except Exception:  # a drain must not fail in a loop: logged, waited out
            wait_s = min(MAX_ERROR_WAIT_S, FIRST_ERROR_WAIT_S * 2.0**self._errors)
            self._errors += 1
            log.exception("extraction failed (%d in a row); the next attempt in %.1f s", self._errors, wait_s)
            self._retry_at = time.monotonic() + wait_s
            return
        finally:
            self._draining.clear()
            self._busy.clear()
        self._drain_backoff.succeeded()
        self._errors = 0
        if report.turns:
            log.info("extracted %d turns into %d events", report.turns, report.events)

    def _watch(self) -> None:
        """Wake a drain if turns wait and none runs (nor waits out a failure)."""
        if not self._installed:
            self.worker.install()
            self._installed = True
        idle = not self._busy.is_set() and not self._draining.is_set()
        if idle and time.monotonic() >= self._retry_at and self.worker.pending():
            self._busy.set()  # cleared when the drain it starts ends
            self.scheduler.modify_job("extract", next_run_time=datetime.now(UTC))

    def run(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Run until ``should_stop`` (checked every poll interval) or ``stop``."""

        def stopping() -> bool:
            return self._stop.is_set() or should_stop()

        self.scheduler.start()
        try:
            while not stopping():
                try:
                    self._watch()
                except OUTAGES as e:
                    self._watch_backoff.wait(e, stopping)
                    continue
                self._watch_backoff.succeeded()
                self._stop.wait(self.poll_interval_s)
        finally:
            self._stop.set()
            self.scheduler.shutdown(wait=True)

    def stop(self) -> None:
        """Ask ``run`` to return after the current batch."""
        self._stop.set()
