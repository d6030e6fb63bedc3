"""The command line refusing what it cannot do well: a whole tenant's erasure not asked
for by name, a broken environment, a shadow or a key that is not there, a limit or a
port out of range. Each refusal is one line naming what was wrong, a non-zero exit,
no traceback, and nothing written.

The commands run as subprocesses on a database of this module's own: an erasure drops
every re-extraction shadow on its database, which would reach other modules' shadows.
Starting Python and importing memledger costs seconds, so independent commands run at
once (``run_cli_chains``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa

from memledger.library import MemoryLedger
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from memledger.store.schema import events
from tests.e2e.conftest import Done, run_cli, run_cli_chains, scratch_ledger

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

PASSWORD = "s3cret-pw-do-not-print"
SETUP_EXIT = 6
UNAVAILABLE_EXIT = 5
NOT_FOUND_EXIT = 3


@dataclass(frozen=True)
class Run:
    """The seeded tenants, what each command printed, and the kept tenant's rows before."""

    kept: str
    erased: str
    results: dict[str, Done]
    kept_before: list[tuple[int, str, bool]]
    kept_after: list[tuple[int, str, bool]]
    unknown: str
    unknown_rows: list[tuple[int, str, bool]]


def say(ledger: MemoryLedger, tenant: str) -> None:
    """Two people's turns in ``tenant``, extracted and projected."""
    turns = [
        TurnInput(role="user", text="I use Zorblaxify at home.", scopes=Scopes(session="s1", user="ada")),
        TurnInput(role="user", text="Project Quill uses PostgreSQL.", scopes=Scopes(session="s2", user="grace")),
    ]
    ledger.record_turns(tenant, turns)
    ledger.process()


def rows_of(ledger: MemoryLedger, tenant: str) -> list[tuple[int, str, bool]]:
    """(position, type, erased) of every committed event of ``tenant``."""
    stmt = (
        sa.select(events.c.position, events.c.event_type, events.c.private.is_(None))
        .where(events.c.tenant_id == tenant)
        .order_by(events.c.position)
    )
    with ledger.engine.connect() as conn:
        return [(int(p), str(t), bool(e)) for p, t, e in conn.execute(stmt).all()]


@pytest.fixture(scope="module")
def guarded(database: TestDatabase) -> Iterator[Run]:
    ledger, drop = scratch_ledger(database, "cli_guards")
    kept, erased, unknown = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("kept", "erased", "nosuch"))
    try:
        say(ledger, kept)
        say(ledger, erased)
        before = rows_of(ledger, kept)
        env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
        t = ["--tenant", kept]
        results = run_cli_chains(
            env,
            [
                [
                    ("erase without subject", ["erase", *t]),
                    ("erase subject and all", ["erase", *t, "--subject", "ada", "--all-subjects"]),
                    ("history blank key", ["history", "--key", "", *t]),
                    ("history whitespace key", ["history", "--key", "  ", *t]),
                    ("tail limit -1", ["events", "tail", "--limit", "-1"]),
                    ("tail limit 0", ["events", "tail", "--limit", "0"]),
                    ("diff limit 0", ["extract", "diff", "trial", "--limit", "0"]),
                    ("serve port 99999", ["serve", "--port", "99999"]),
                    ("mcp port 0", ["mcp", "--transport", "http", "--port", "0"]),
                ],
                [  # an erasure drops every shadow: the shadow's steps come after it
                    ("erase all subjects", ["erase", "--tenant", erased, "--all-subjects", "--no-vacuum", "--json"]),
                    ("rebuild into", ["extract", "--extractor", "heuristic", "--rebuild-into", "trial"]),
                    ("diff", ["extract", "diff", "trial"]),
                    ("drop", ["extract", "drop", "trial"]),
                    ("drop again", ["extract", "drop", "trial"]),
                ],
                [
                    ("diff nosuch", ["extract", "diff", "nosuch"]),
                    ("drop nosuch", ["extract", "drop", "nosuch"]),
                    ("history no key", ["history", "--key", "nokey", *t]),
                    ("history no key json", ["history", "--key", "nokey", *t, "--json"]),
                    ("verify nosuch", ["verify", "--tenant", unknown]),
                    ("context nosuch", ["context", "Which database?", "--tenant", unknown]),
                    ("search nosuch", ["search", "database", "--tenant", unknown]),
                    ("verify kept", ["verify", *t]),
                ],
            ],
        )
        yield Run(kept, erased, results, before, rows_of(ledger, kept), unknown, rows_of(ledger, unknown))
    finally:
        drop()


def refused(done: Done, code: int) -> str:
    """The one line of a refusal (argparse's usage line aside), after checking the exit."""
    assert done.returncode == code, f"exit {done.returncode}: {done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines, "no message"
    return lines[-1]


# --- erase names whose words it erases -------------------------------------------------


def test_erase_without_a_subject_is_refused_and_erases_nothing(guarded: Run) -> None:
    message = refused(guarded.results["erase without subject"], 2)

    assert message.startswith("memledger: InvalidCommand: ")
    assert "--subject S" in message
    assert "--all-subjects" in message
    assert guarded.kept_after == guarded.kept_before


def test_erase_with_a_subject_and_all_subjects_is_refused(guarded: Run) -> None:
    message = refused(guarded.results["erase subject and all"], 2)

    assert "--all-subjects: not allowed with argument --subject" in message
    assert guarded.kept_after == guarded.kept_before


def test_erase_all_subjects_erases_every_persons_words_in_the_tenant(guarded: Run) -> None:
    done = guarded.results["erase all subjects"]

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["complete"]
    assert report["subject"] is None
    assert report["turns"] == 2


# --- extract diff and drop of a shadow -------------------------------------------------


def test_verify_of_a_tenant_without_events_is_not_found_not_ok(guarded: Run) -> None:
    """Before, a mistyped tenant printed "verified 0 events of 1 tenant(s)" and "ledger OK"."""
    message = refused(guarded.results["verify nosuch"], NOT_FOUND_EXIT)
    assert message.startswith("memledger: NotFound: tenant 'nosuch-") and "has no events to verify" in message
    kept = guarded.results["verify kept"]
    assert kept.returncode == 0, kept.stderr
    assert "ledger OK" in kept.stdout


@pytest.mark.parametrize("command", ["context nosuch", "search nosuch"])
def test_a_mistyped_tenant_is_not_found_and_nothing_is_recorded_for_it(guarded: Run, command: str) -> None:
    """Before, ``context`` served the unknown tenant an empty block and appended its
    ``ContextServed``: a tenant made, in an append-only ledger, by a typo."""
    message = refused(guarded.results[command], NOT_FOUND_EXIT)
    assert message == f"memledger: NotFound: tenant {guarded.unknown!r} has no events (is the name right?)"
    assert guarded.unknown_rows == []


def test_extract_drop_of_a_missing_shadow_is_not_found(guarded: Run) -> None:
    message = refused(guarded.results["drop nosuch"], NOT_FOUND_EXIT)

    assert message.startswith("memledger: NotFound: no shadow 'nosuch'")


def test_extract_diff_of_a_missing_shadow_names_the_rebuild_into_option(guarded: Run) -> None:
    message = refused(guarded.results["diff nosuch"], NOT_FOUND_EXIT)

    assert message.startswith("memledger: NotFound: no shadow 'nosuch'")
    assert "--rebuild-into nosuch" in message


def test_extract_diff_counts_entities_then_drop_drops_the_shadow_once(guarded: Run) -> None:
    for name in ("rebuild into", "diff", "drop"):
        assert guarded.results[name].returncode == 0, guarded.results[name].stderr
    counts = [line.split(":")[0] for line in guarded.results["diff"].stdout.splitlines() if not line.startswith(" ")]

    assert counts == ["facts", "entities", "relationships"]
    assert guarded.results["drop"].stdout == "dropped shadow 'trial'\n"
    assert refused(guarded.results["drop again"], NOT_FOUND_EXIT).startswith("memledger: NotFound: no shadow 'trial'")


# --- history of a key, limits and ports ------------------------------------------------


@pytest.mark.parametrize("name", ["history no key", "history no key json"])
def test_history_of_a_key_without_facts_is_not_found(guarded: Run, name: str) -> None:
    message = refused(guarded.results[name], NOT_FOUND_EXIT)

    assert message == f"memledger: NotFound: no facts on key 'nokey' in tenant {guarded.kept!r}"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("history blank key", "argument --key: must not be blank (got '')"),
        ("history whitespace key", "argument --key: must not be blank (got '  ')"),
        ("tail limit -1", "argument --limit: must be 1 or more, not -1"),
        ("tail limit 0", "argument --limit: must be 1 or more, not 0"),
        ("diff limit 0", "argument --limit: must be 1 or more, not 0"),
        ("serve port 99999", "argument --port: must be a port from 1 to 65535, not 99999"),
        ("mcp port 0", "argument --port: must be a port from 1 to 65535, not 0"),
    ],
)
def test_an_out_of_range_argument_exits_2_naming_it(guarded: Run, name: str, message: str) -> None:
    assert message in refused(guarded.results[name], 2)


# --- an environment memledger cannot start in ------------------------------------------


@pytest.fixture(scope="module")
def broken(database: TestDatabase, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Done]:
    """``memledger db status`` in broken environments, by name."""
    not_a_directory = tmp_path_factory.mktemp("home") / "a-file"
    not_a_directory.write_text("")
    embedded = {key: value for key, value in database.env.items() if key != "DATABASE_URL"}
    envs = {
        "pool size": {**database.env, "MEMLEDGER_POOL_SIZE": "abc"},
        "extractor": {**database.env, "MEMLEDGER_EXTRACTOR": "bogus"},
        "deadline": {**database.env, "MEMLEDGER_CONTEXT_DEADLINE_MS": "0"},
        "url": {**database.env, "DATABASE_URL": "notaurl"},
        "refused": {**database.env, "DATABASE_URL": f"postgresql://memledger:{PASSWORD}@127.0.0.1:1/x"},
        "home": {**embedded, "MEMLEDGER_HOME": str(not_a_directory / "home")},
    }
    with ThreadPoolExecutor(max_workers=len(envs)) as pool:
        running = {name: pool.submit(run_cli, env, "db", "status") for name, env in envs.items()}
        return {name: future.result() for name, future in running.items()}


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("pool size", SETUP_EXIT, "ValidationError: MEMLEDGER_POOL_SIZE='abc': Input should be a valid integer"),
        (
            "extractor",
            SETUP_EXIT,
            "ValidationError: MEMLEDGER_EXTRACTOR='bogus': Input should be 'heuristic', 'llm' or 'hybrid'",
        ),
        ("deadline", SETUP_EXIT, "ValidationError: MEMLEDGER_CONTEXT_DEADLINE_MS='0': Input should be greater than"),
        ("url", SETUP_EXIT, "ArgumentError: DATABASE_URL is not a database URL"),
        ("refused", UNAVAILABLE_EXIT, "DatabaseUnavailable: could not connect to PostgreSQL: "),
        ("home", SETUP_EXIT, "NotADirectoryError: MEMLEDGER_HOME="),
    ],
)
def test_a_broken_environment_is_reported_in_one_line(
    broken: dict[str, Done], name: str, code: int, message: str
) -> None:
    done = broken[name]

    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith(f"memledger: {message}")
    assert done.stderr.count("\n") == 1


def test_a_refused_connection_does_not_print_the_password(broken: dict[str, Done]) -> None:
    assert PASSWORD not in broken["refused"].stderr + broken["refused"].stdout
