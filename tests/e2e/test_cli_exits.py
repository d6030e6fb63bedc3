"""The command line's exits and messages where an audit found them wrong: a stdout closed
early (``| head``), a key or an entity that is not there, a replay for scripts, a turn's
event id given to ``provenance``, and ``verify`` stopping at the first altered event.

The commands run as subprocesses on a database of this module's own: an erasure drops
every re-extraction shadow on its database, and a test here alters the ledger as a
superuser would. Independent commands run at once (``run_cli_chains``).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from memledger.events.envelope import START
from memledger.library import MemoryLedger
from memledger.service import integrity, ledger_pages
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from memledger.store import event_store
from tests.conftest import turn_event
from tests.e2e.conftest import CLI, Done, run_cli_chains, scratch_ledger

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

NOT_FOUND_EXIT = 3
STDOUT_CLOSED_EXIT = 141
REQUEST = "Which database does Condor use?"
SCOPE_ARGS = ["--project", "condor", "--session", "s1", "--user", "alice"]
ALTERED = 3  # the index of the event a superuser alters in the tampered tenant


@dataclass(frozen=True)
class Run:
    """The seeded tenants, what each command printed, and where the ledger was altered."""

    tenant: str
    tampered: str
    altered_position: int
    env: dict[str, str]
    ledger: MemoryLedger
    results: dict[str, Done]


def seed(ledger: MemoryLedger, tenant: str) -> None:
    """Alice's and Bob's turns in ``tenant``, extracted and projected."""
    condor = Scopes(session="s1", project="condor", user="alice")
    turns = [
        TurnInput(role="user", text="Project Condor uses PostgreSQL.", scopes=condor, turn_id="alice-t1"),
        TurnInput(role="user", text="I use Zorblaxify at home.", scopes=Scopes(session="s2", user="bob")),
    ]
    ledger.record_turns(tenant, turns)
    ledger.process()


def tamper(ledger: MemoryLedger, tenant: str) -> int:
    """Six sealed turns in ``tenant``, the fourth then altered behind the ledger's back;
    its position."""
    with ledger.engine.begin() as tx:
        stored = event_store.append(tx, tenant, "conv", [turn_event(f"turn {i}") for i in range(6)], None)
    integrity.seal(ledger.engine)
    position = list(stored.positions)[ALTERED]
    with ledger.engine.begin() as tx:
        # text(): the test plays an operator who bypasses the append-only trigger on purpose.
        tx.execute(sa.text("ALTER TABLE events DISABLE TRIGGER USER"))
        forged = "UPDATE events SET payload = jsonb_set(payload, '{text}', '\"forged\"') WHERE position = :p"
        tx.execute(sa.text(forged), {"p": position})
        tx.execute(sa.text("ALTER TABLE events ENABLE TRIGGER USER"))
    return position


def served_event(results: dict[str, Done]) -> str:
    event_id: str = json.loads(results["context"].stdout)["event_id"]
    return event_id


@pytest.fixture(scope="module")
def run(database: TestDatabase) -> Iterator[Run]:
    ledger, drop = scratch_ledger(database, "cli_exits")
    tenant, tampered = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("acme", "tampered"))
    try:
        seed(ledger, tenant)
        altered = tamper(ledger, tampered)
        env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
        t = ["--tenant", tenant]
        results = run_cli_chains(
            env,
            [
                [
                    ("context", ["context", REQUEST, *t, *SCOPE_ARGS, "--json"]),
                    ("replay json", lambda done: ["context", "replay", served_event(done), *t, "--json"]),
                    ("context help", ["context", "--help"]),
                ],
                [
                    ("history no key", ["history", "--key", "no such key", *t]),
                    ("history no key json", ["history", "--key", "no such key", *t, "--json"]),
                    ("graph no entity", ["graph", "NoSuchThing", *t]),
                    ("graph no entity json", ["graph", "NoSuchThing", *t, "--json"]),
                    ("graph no such relation", ["graph", "Condor", *t, "--relation", "OWNS"]),
                    ("graph me", ["graph", "me", *t, "--user", "alice", "--json"]),
                ],
                [
                    ("provenance turn event", ["provenance", "turn:alice-t1", *t]),
                    ("provenance turn", ["provenance", "alice-t1", *t, "--json"]),
                    ("provenance no turn", ["provenance", "turn:nobody-t9", *t]),
                    ("verify altered", ["verify", "--tenant", tampered]),
                    ("verify altered json", ["verify", "--tenant", tampered, "--json"]),
                ],
            ],
        )
        yield Run(tenant, tampered, altered, env, ledger, results)
    finally:
        drop()


def into_closed_pipe(env: dict[str, str], *args: str) -> Done:
    """``memledger ARGS | head`` when head has already gone: stdout is a pipe whose
    reading end is closed before the command writes anything."""
    reading, writing = os.pipe()
    os.close(reading)
    try:
        return subprocess.run(
            [*CLI, *args], env=env, stdout=writing, stderr=subprocess.PIPE, text=True, timeout=300, check=False
        )
    finally:
        os.close(writing)


def refused(done: Done, code: int) -> str:
    """The one line of a refusal, after checking the exit."""
    assert done.returncode == code, f"exit {done.returncode}: {done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    return line


def one_json(done: Done) -> dict[str, Any]:
    [line] = [line for line in done.stdout.splitlines() if line.strip()]
    record: dict[str, Any] = json.loads(line)
    return record


# --- a stdout closed early -----------------------------------------------------------


def test_context_into_a_closed_pipe_ends_quietly_with_exit_141(run: Run) -> None:
    done = into_closed_pipe(run.env, "context", REQUEST, "--tenant", run.tenant, *SCOPE_ARGS)

    assert done.returncode == STDOUT_CLOSED_EXIT, done.stderr
    assert done.stderr == ""


def test_erase_into_a_closed_pipe_erases_then_ends_quietly_with_exit_141(run: Run) -> None:
    done = into_closed_pipe(run.env, "erase", "--tenant", run.tenant, "--subject", "bob", "--no-vacuum")

    assert done.returncode == STDOUT_CLOSED_EXIT, done.stderr
    assert done.stderr == ""
    erasures, _ = ledger_pages.page(run.ledger.engine, run.tenant, after=START, types=["subject.erased"])
    assert len(erasures) == 1


# --- not found is exit 3 ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["history no key", "history no key json"])
def test_history_of_a_key_never_stated_is_not_found(run: Run, name: str) -> None:
    line = refused(run.results[name], NOT_FOUND_EXIT)

    assert line == f"memledger: NotFound: no facts on key 'no such key' in tenant {run.tenant!r}"


@pytest.mark.parametrize("name", ["graph no entity", "graph no entity json"])
def test_graph_of_an_entity_the_tenant_never_had_is_not_found(run: Run, name: str) -> None:
    line = refused(run.results[name], NOT_FOUND_EXIT)

    assert line == f"memledger: NotFound: tenant {run.tenant!r} has no entity 'NoSuchThing' (by name or id)"


def test_graph_of_an_entity_without_such_relationships_is_an_empty_answer(run: Run) -> None:
    done = run.results["graph no such relation"]

    assert done.returncode == 0, done.stderr
    assert done.stdout == "no relationships found\n"


def test_graph_of_me_with_a_user_is_an_answer_not_an_unknown_entity(run: Run) -> None:
    answer = one_json(run.results["graph me"])

    assert answer["entity"] is None
    assert isinstance(answer["edges"], list)


# --- replay for scripts ----------------------------------------------------------------


def test_replay_json_prints_one_object_with_the_verdict_hashes_and_block(run: Run) -> None:
    served = one_json(run.results["context"])
    replayed = one_json(run.results["replay json"])

    assert replayed["event_id"] == served["event_id"]
    assert replayed["matches"] is True
    assert replayed["sha256"] == replayed["served_sha256"] == replayed["served"]["block_hash"]
    assert replayed["block"] == served["block"]
    assert replayed["item_ids"] == [item["item_id"] for item in served["selection"]["items"]]
    assert replayed["erasures_since"] == 0


def test_context_help_says_an_as_of_time_is_a_recorded_time(run: Run) -> None:
    done = run.results["context help"]

    assert done.returncode == 0, done.stderr
    assert "a recorded time (ISO 8601 with a timezone), meaning the events recorded by then" in " ".join(
        done.stdout.split()
    )


# --- provenance of a turn's event id ----------------------------------------------------


def test_provenance_of_a_turn_lists_the_turn_and_what_was_made_of_it(run: Run) -> None:
    """An auditor goes from a cited turn to its memories too (before: "no event ... names")."""
    done = run.results["provenance turn event"]

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "provenance of alice-t1:"
    assert "turn.recorded" in lines[1]
    assert any("fact.extracted by heuristic" in line for line in lines[2:])
    assert lines[-1].startswith("  from turn alice-t1 (#")
    assert lines[-1].endswith(", user): Project Condor uses PostgreSQL.")
    record = one_json(run.results["provenance turn"])  # the turn as a block cites it
    assert record["item_id"] == "alice-t1"
    assert [t["turn_id"] for t in record["turns"]] == ["alice-t1"]
    made = [s for s in record["steps"] if s["type"] != "turn.recorded"]
    assert made and all(s["caused_by"] == "turn:alice-t1" for s in made)
    refused(run.results["provenance no turn"], NOT_FOUND_EXIT)


# --- verify stopping at the first altered event ------------------------------------------


def test_verify_says_it_stopped_at_the_first_altered_event_and_counts_those_before(run: Run) -> None:
    done = run.results["verify altered"]

    assert done.returncode == 1, done.stderr
    summary, finding, verdict = done.stdout.splitlines()
    assert summary.startswith(f"verified {ALTERED} events of 1 tenant(s) before stopping at the first altered event")
    where = f"position {run.altered_position}"
    assert finding.startswith(f"tenant {run.tampered}: stopped at its first altered event, {where}")
    assert verdict == "LEDGER ALTERED"


def test_verify_json_counts_the_events_verified_before_the_altered_one(run: Run) -> None:
    done = run.results["verify altered json"]

    assert done.returncode == 1, done.stderr
    record = one_json(done)
    assert record["ok"] is False
    assert record["verified"] == ALTERED
    assert [f["position"] for f in record["findings"]] == [run.altered_position]
