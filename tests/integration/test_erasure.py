"""Erasure (issue 7, item 3): ``erase`` removes what a person said, and everything
derived from it, from every table and column of the database (read models, search
indexes, vectors and the embedding cache included), records ``SubjectErased``, and
leaves the hash chain verifying; live read models equal a rebuild, and rebuilds
stay erased. The ledger's trigger lets through no update but erasure's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.errors import InvalidIdentifier, NotFound
from memledger.events import codec
from memledger.events.catalogue import Scopes, SubjectErased, TurnRecorded
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.projectors import checkpoints, rebuild, registry, runner
from memledger.projectors import replay as replaying
from memledger.projectors.base import Projector
from memledger.service import context, erasure, integrity, scope_ids
from memledger.service.extraction import ExtractionWorker
from memledger.service.record import TurnInput, record_turns
from memledger.store import event_reads
from memledger.store.schema import events
from tests.integration.test_projections_support import (
    append_in_transactions,
    compare_with_rebuild,
    fresh_database,
    url_of,
)
from tests.support import workload

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

SECRET_WORDS = ("Zorblaxify", "Quentavius")  # said only by the subject erased
ADA = [  # the subject
    "I use Zorblaxify for all our Phoenix deploys.",
    "We decided to use Zorblaxify instead of Jenkins.",
    "My colleague Quentavius Brightwater works with me on Phoenix.",
    "decision: deploy Phoenix with Zorblaxify every Friday",
    "I use PostgreSQL for the Phoenix project.",
]
GRACE = [  # another person of the same tenant and project
    "I use PostgreSQL for the Phoenix project.",
    "I prefer Vim over Emacs.",
]


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    """A database of this module's own, with every projection installed."""
    with fresh_database(database, "erasure", pool_size=6) as fresh:
        for projector in registry.all_projectors():
            runner.install(fresh, projector)
        yield fresh


def _say(engine: Engine, tenant: str, user: str, texts: list[str]) -> None:
    scopes = Scopes(session=f"{user}-session", project="phoenix", user=user)
    record_turns(engine, tenant, [TurnInput(role="user", text=t, scopes=scopes) for t in texts])


def _learn(engine: Engine) -> None:
    """Extract every turn, then bring every projection up to date."""
    ExtractionWorker(engine, HeuristicExtractor()).drain()
    for projector in registry.all_projectors():
        runner.catch_up(engine, projector)


def _ask(engine: Engine, tenant: str, user: str, request: str) -> context.ServedContext:
    scopes = Scopes(session=f"{user}-session", project="phoenix", user=user)
    served = context.build_context(engine, context.SelectRequest(tenant, scopes, request, deadline_ms=30_000))
    assert served.event_id, "the context was recorded"
    return served


def _columns(engine: Engine) -> list[tuple[str, str, str]]:
    """Every column of every table of the database, in every schema but the system's."""
    with engine.connect() as conn:
        # text(): a catalogue query over every schema, the read models' included.
        rows = conn.execute(
            sa.text(
                "SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c"
                " JOIN information_schema.tables t USING (table_schema, table_name)"
                " WHERE t.table_type = 'BASE TABLE'"
                " AND c.table_schema NOT IN ('pg_catalog', 'information_schema')"
                " ORDER BY 1, 2, 3"
            )
        ).all()
    return [(r[0], r[1], r[2]) for r in rows]


def find_everywhere(engine: Engine, needles: list[str]) -> set[tuple[str, str, str, str]]:
    """(needle, schema, table, column) for each column whose text holds a needle,
    ignoring case: every column of every table, cast to text."""
    found = set()
    with engine.connect() as conn:
        prep = conn.dialect.identifier_preparer
        for schema, table, column in _columns(engine):
            name, value = f"{prep.quote_schema(schema)}.{prep.quote(table)}", f"lower({prep.quote(column)}::text)"
            # text(): identifiers from the catalogue, quoted; the needle is a parameter.
            query = sa.text(f"SELECT EXISTS (SELECT 1 FROM {name} WHERE strpos({value}, :n) > 0)")
            for needle in needles:
                hit = conn.execute(query, {"n": needle.lower()}).scalar_one()
                if hit:
                    found.add((needle, schema, table, column))
    return found


def _vectors(engine: Engine, tenant: str) -> dict[tuple[str, str], str]:
    """Each embedded item of the tenant: the start of its vector's text (unique enough)."""
    with engine.connect() as conn:
        # text(): a test's direct look at the embeddings projection.
        rows = conn.execute(
            sa.text("SELECT item_kind, item_id, embedding::text FROM proj_embeddings.embeddings WHERE tenant_id = :t"),
            {"t": tenant},
        ).all()
    return {(r[0], r[1]): r[2][1:60] for r in rows}


def _events_of(engine: Engine, tenant: str) -> list[Any]:
    with engine.connect() as conn:
        return event_reads.read_tenant(conn, tenant, limit=100_000)


def _assert_projections_equal_a_rebuild(engine: Engine) -> None:
    for projector in registry.all_projectors():
        diffs = rebuild.verify(engine, projector)
        assert diffs and all(d.equal for d in diffs), f"{projector.name}: {diffs}"


@dataclass
class Erased:
    tenant: str
    report: erasure.ErasureReport
    before: set[tuple[str, str, str, str]]
    vectors_before: dict[tuple[str, str], str]
    vectors_after: dict[tuple[str, str], str]
    ada_turns: dict[str, str]  # turn id -> text


@pytest.fixture(scope="module")
def erased(engine: Engine) -> Erased:
    """Ada and Grace talk in one tenant (and someone in another); Ada asks for context,
    so does Grace; then Ada is erased."""
    tenant = "t-erasure"
    _say(engine, tenant, "ada", ADA)
    _say(engine, tenant, "grace", GRACE)
    _say(engine, "t-bystander", "ada", ["I use PostgreSQL too."])
    _learn(engine)
    _ask(engine, tenant, "ada", "How do I deploy Phoenix with Zorblaxify?")
    _ask(engine, tenant, "grace", "What does the Phoenix project deploy with?")
    for projector in registry.all_projectors():
        runner.catch_up(engine, projector)
    before = find_everywhere(engine, list(SECRET_WORDS))
    vectors_before = _vectors(engine, tenant)
    ada = scope_ids.stored_id(engine, tenant, "user", "ada")
    ada_turns = {
        r.event.turn_id: r.event.text
        for r in _events_of(engine, tenant)
        if isinstance(r.event, TurnRecorded) and r.event.subject == ada
    }
    report = erasure.erase(engine, tenant, "ada", reason="request 17", actor="dpo")
    return Erased(tenant, report, before, vectors_before, _vectors(engine, tenant), ada_turns)


def test_the_search_finds_the_words_before_the_erasure(erased: Erased) -> None:
    # The check below is only worth something if the same search finds them first.
    tables = {(schema, table) for _, schema, table, _ in erased.before}
    assert {
        ("public", "events"),
        ("proj_turns", "turns"),
        ("proj_facts", "facts"),
        ("proj_entities", "entities"),
        ("proj_relationships", "relationships"),
    } <= tables
    assert ("Zorblaxify", "public", "events", "private") in erased.before
    assert not any(column == "payload" for *_, column in erased.before), "the chained payload never held them"


def test_nothing_of_what_the_subject_said_is_left_in_any_table_or_column(engine: Engine, erased: Erased) -> None:
    assert erased.report.position is not None
    assert all(erased.report.projections.values()) and "embeddings" in erased.report.projections
    assert find_everywhere(engine, list(SECRET_WORDS)) == set()


def test_nor_the_vectors_of_it(engine: Engine, erased: Erased) -> None:
    # Vectors of the items that went, except where another item kept the same text
    # (Ada and Grace both said "I use PostgreSQL for the Phoenix project.").
    kept = set(erased.vectors_after.values())
    gone = {
        key: prefix
        for key, prefix in erased.vectors_before.items()
        if key not in erased.vectors_after and prefix not in kept
    }
    secret = {t for t, text in erased.ada_turns.items() if any(w in text for w in SECRET_WORDS)}
    assert {("turn", t) for t in secret} <= set(gone)
    assert ("entity", "tool:zorblaxify") in gone
    assert find_everywhere(engine, sorted(set(gone.values()))) == set()
    assert erased.report.forgotten_vectors > 0


def test_the_other_person_keeps_what_they_said(engine: Engine, erased: Erased) -> None:
    with engine.connect() as conn:
        # text(): a test's direct look at the read models.
        texts = set(
            conn.execute(
                sa.text("SELECT text FROM proj_turns.turns WHERE tenant_id = :t"), {"t": erased.tenant}
            ).scalars()
        )
        entities = set(
            conn.execute(
                sa.text("SELECT entity_id FROM proj_entities.entities WHERE tenant_id = :t"), {"t": erased.tenant}
            ).scalars()
        )
        bystander = conn.execute(sa.text("SELECT count(*) FROM proj_turns.turns WHERE tenant_id = 't-bystander'"))
    assert texts == set(GRACE)
    assert "tool:postgresql" in entities  # Ada named it too, but so did Grace
    assert "tool:zorblaxify" not in entities
    assert bystander.scalar_one() == 1  # the same user id in another tenant is another person


def test_the_erasure_is_recorded_and_the_chain_still_verifies(engine: Engine, erased: Erased) -> None:
    records = [r for r in _events_of(engine, erased.tenant) if isinstance(r.event, SubjectErased)]
    (record,) = records
    assert record.position == erased.report.position
    assert record.event.subject == scope_ids.stored_id(engine, erased.tenant, "user", "ada")
    assert set(record.event.turn_ids) == set(erased.ada_turns) and record.event.turns == len(ADA)
    assert record.event.erased_events == erased.report.erased_events
    assert record.event.reason == "request 17" and record.metadata.actor == "dpo"
    erased_events = [r for r in _events_of(engine, erased.tenant) if r.erased]
    assert len(erased_events) == erased.report.erased_events > len(ADA)  # the turns and what came of them
    assert all(r.event.text == "[erased]" for r in erased_events if isinstance(r.event, TurnRecorded))
    result = integrity.verify(engine, erased.tenant)
    assert result.ok, result.findings
    assert result.events == len(_events_of(engine, erased.tenant))


def test_erasing_again_finds_nothing_left_and_writes_nothing(engine: Engine, erased: Erased) -> None:
    count = len(_events_of(engine, erased.tenant))
    again = erasure.erase(engine, erased.tenant, "ada", refresh=False, vacuum_after=False)
    assert again.position is None and again.erased_events == 0
    assert len(_events_of(engine, erased.tenant)) == count


def test_live_read_models_equal_a_rebuild_and_rebuilds_stay_erased(engine: Engine, erased: Erased) -> None:
    _assert_projections_equal_a_rebuild(engine)
    for projector in registry.all_projectors():
        rebuild.rebuild(engine, projector)
    assert find_everywhere(engine, list(SECRET_WORDS)) == set()
    assert _vectors(engine, erased.tenant) == erased.vectors_after
    _assert_projections_equal_a_rebuild(engine)


class Recording(HeuristicExtractor):
    """The heuristic extractor, keeping every text it is given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def extract(self, turns: Any) -> Any:
        self.texts += [t.text for t in turns]
        return super().extract(turns)


def test_turns_erased_before_their_extraction_are_never_sent_to_an_extractor(engine: Engine) -> None:
    tenant = "t-erased-early"
    said = ["I use Frobnicatrix for every Phoenix deploy.", "decision: Phoenix ships with Frobnicatrix"]
    _say(engine, tenant, "zed", said)
    _say(engine, tenant, "yan", ["I prefer Vim over Emacs."])
    report = erasure.erase(engine, tenant, "zed", refresh=False, vacuum_after=False)
    assert report.turns == len(said)

    recording = Recording()
    drained = ExtractionWorker(engine, recording).drain()

    assert "I prefer Vim over Emacs." in recording.texts, "the worker ran over the tenant's turns"
    assert codec.ERASED not in recording.texts and not set(said) & set(recording.texts)
    assert drained.erased >= len(said)
    zed = scope_ids.stored_id(engine, tenant, "user", "zed")
    stored = _events_of(engine, tenant)
    zed_turns = {r.event.turn_id for r in stored if isinstance(r.event, TurnRecorded) and r.event.subject == zed}
    extracted_from = {r.metadata.correlation_id for r in stored if r.metadata.extractor}
    assert len(zed_turns) == len(said) and not zed_turns & extracted_from
    assert extracted_from, "yan's turn was extracted"


def test_bad_requests_are_refused_and_write_nothing(engine: Engine, erased: Erased) -> None:
    count = len(_events_of(engine, erased.tenant))
    with pytest.raises(NotFound, match="no turns or context requests of subject 'nobody'"):
        erasure.erase(engine, erased.tenant, "nobody")
    with pytest.raises(NotFound, match="tenant 't-never-seen' has no events"):
        erasure.erase(engine, "t-never-seen", "ada")
    with pytest.raises(InvalidIdentifier, match="subject"):
        erasure.erase(engine, erased.tenant, "ada\x00")
    with pytest.raises(InvalidIdentifier, match="tenant_id"):
        erasure.erase(engine, "", "ada")
    assert len(_events_of(engine, erased.tenant)) == count


# --- the trigger: erasure is the one update it lets through ---------------------------


def _turn_row(engine: Engine, tenant: str) -> int:
    _say(engine, tenant, "ada", ["something to erase"])
    last = sa.select(sa.func.max(events.c.position)).where(events.c.tenant_id == tenant)
    with engine.connect() as conn:
        return int(conn.execute(last).scalar_one())


REFUSED = {
    "private-and-payload": "UPDATE events SET private = NULL, payload = payload || '{\"x\": 1}' WHERE {where}",
    "private-and-tenant": "UPDATE events SET private = NULL, tenant_id = 'thief' WHERE {where}",
    "private-and-metadata": 'UPDATE events SET private = NULL, metadata = \'{"actor": "x"}\' WHERE {where}',
    "private-rewritten": "UPDATE events SET private = jsonb_set(private, '{text}', '\"forged\"') WHERE {where}",
    "private-emptied": "UPDATE events SET private = '{}'::jsonb WHERE {where}",
    "delete": "DELETE FROM events WHERE {where}",
}


@pytest.mark.parametrize("statement", REFUSED.values(), ids=REFUSED.keys())
def test_the_trigger_refuses_every_other_change(engine: Engine, statement: str) -> None:
    position = _turn_row(engine, "t-trigger")
    before = _events_of(engine, "t-trigger")
    # text(): raw SQL that goes around the event store, on purpose.
    with engine.begin() as tx, pytest.raises(sa.exc.DBAPIError, match="append-only") as info:
        tx.execute(sa.text(statement.replace("{where}", "tenant_id = 't-trigger' AND position = :p")), {"p": position})
    assert getattr(info.value.orig, "sqlstate", None) == "42501"
    assert _events_of(engine, "t-trigger") == before


def test_the_trigger_lets_erasure_through(engine: Engine) -> None:
    position = _turn_row(engine, "t-trigger-ok")
    with engine.begin() as tx:
        # text(): the one raw change the trigger allows.
        done = tx.execute(
            sa.text("UPDATE events SET private = NULL WHERE tenant_id = 't-trigger-ok' AND position = :p"),
            {"p": position},
        )
        assert done.rowcount == 1
    (rec,) = [r for r in _events_of(engine, "t-trigger-ok") if r.position == position]
    assert rec.erased and isinstance(rec.event, TurnRecorded) and rec.event.text == "[erased]"


# --- verify checks the private part too -----------------------------------------------


def _as_superuser(engine: Engine, statement: str, **params: object) -> None:
    # text(): an operator who bypasses the append-only trigger on purpose.
    with engine.begin() as tx:
        tx.execute(sa.text("ALTER TABLE events DISABLE TRIGGER USER"))
        tx.execute(sa.text(statement), params)
        tx.execute(sa.text("ALTER TABLE events ENABLE TRIGGER USER"))


def test_verify_names_an_event_whose_private_content_was_altered(engine: Engine) -> None:
    position = _turn_row(engine, "t-forged")
    integrity.seal(engine)
    _as_superuser(
        engine,
        "UPDATE events SET private = jsonb_set(private, '{text}', '\"forged\"') WHERE tenant_id = 't-forged'"
        " AND position = :p",
        p=position,
    )
    (finding,) = integrity.verify(engine, "t-forged").findings
    assert finding.position == position
    assert finding.problem.startswith("altered: its private content")


def test_verify_notices_an_erasure_nobody_recorded(engine: Engine) -> None:
    position = _turn_row(engine, "t-silent")
    integrity.seal(engine)
    with engine.begin() as tx:  # allowed by the trigger, but not done by erase: no SubjectErased
        # text(): the raw update the service would never make without its record.
        tx.execute(
            sa.text("UPDATE events SET private = NULL WHERE tenant_id = 't-silent' AND position = :p"), {"p": position}
        )
    (finding,) = integrity.verify(engine, "t-silent").findings
    assert finding.position == position
    assert finding.problem.startswith("erased without a record")


# --- a whole tenant, and the command line ---------------------------------------------


def test_erasing_a_whole_tenant_from_the_command_line(database: TestDatabase, engine: Engine) -> None:
    tenant = "t-whole"
    _say(engine, tenant, "ada", ["I use Zorblaxify at home."])
    _say(engine, tenant, "grace", ["Quentavius uses Zorblaxify too."])
    _learn(engine)
    env = {**os.environ, "DATABASE_URL": url_of(engine)}
    erase = ["erase", "--tenant", tenant, "--all-subjects", "--reason", "closed", "--json"]
    cli = [sys.executable, "-m", "memledger.cli.main", *erase]
    done = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    report = msgspec.json.decode(done.stdout.strip().splitlines()[-1])
    assert report["complete"] and report["subject"] is None and report["turns"] == 2
    records = [r for r in _events_of(engine, tenant) if isinstance(r.event, SubjectErased)]
    assert [(r.event.subject, r.event.whole_tenant) for r in records] == [(erasure.WHOLE_TENANT, True)]
    assert all(r.erased for r in _events_of(engine, tenant) if type(r.event).private_fields)
    assert find_everywhere(engine, list(SECRET_WORDS)) == set()
    assert integrity.verify(engine, tenant).ok


# --- live and rebuilt read models, on realistic traffic -------------------------------


T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
READ_MODELS = ("turns", "facts", "entities", "relationships")


def _read_models() -> list[Projector]:
    return [registry.by_name(name) for name in READ_MODELS]


def test_live_projections_equal_a_rebuild_across_erasures(database: TestDatabase) -> None:
    appends = workload.generate(seed=11, tenants=2, turns=160, start=T0)
    half = len(appends) // 2
    with fresh_database(database, "erasure_live", pool_size=4) as fresh:
        scope_ids.set_default(fresh, False)  # the workload's users are stored as given
        for projector in _read_models():
            runner.install(fresh, projector)
        append_in_transactions(fresh, appends[:half], per_tx=20)
        for projector in _read_models():
            runner.catch_up(fresh, projector, batch_size=97)  # batches that cut through the erasures' work
        users = sorted(
            {
                (a.tenant_id, n.event.subject)
                for a in appends
                for n in a.events
                if isinstance(n.event, TurnRecorded) and n.event.subject
            }
        )
        first = erasure.erase(fresh, users[0][0], users[0][1], refresh=False, vacuum_after=False)
        append_in_transactions(fresh, appends[half:], per_tx=20)
        second = erasure.erase(fresh, users[-1][0], users[-1][1], refresh=False, vacuum_after=False)
        assert first.erased_events and second.erased_events
        for projector in _read_models():
            runner.catch_up(fresh, projector, batch_size=97)
        for projector in _read_models():
            diffs = rebuild.verify(fresh, projector)
            assert all(d.equal for d in diffs), f"{projector.name}: {diffs}"
        assert integrity.verify(fresh).ok


def test_a_replay_that_meets_an_erasure_it_did_not_know_of_refolds(
    database: TestDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    appends = workload.generate(seed=12, tenants=2, turns=120, start=T0)
    with fresh_database(database, "erasure_replay", pool_size=4) as fresh:
        scope_ids.set_default(fresh, False)  # the workload's users are stored as given
        for projector in _read_models():
            runner.install(fresh, projector)
        append_in_transactions(fresh, appends, per_tx=20)
        subject = next(n.event.subject for n in appends[0].events if isinstance(n.event, TurnRecorded))
        assert subject is not None
        erasure.erase(fresh, appends[0].tenant_id, subject, refresh=False, vacuum_after=False)
        for projector in _read_models():
            runner.catch_up(fresh, projector)
        # As if the erasure had committed while the replay was running: the fast
        # replay must stop before its record, and the runner refold the tenant there.
        monkeypatch.setattr(replaying, "_erasures", lambda conn: set())
        for projector in _read_models():
            diffs = compare_with_rebuild(fresh, projector)
            assert all(d.equal for d in diffs), f"{projector.name}: {diffs}"
        with fresh.connect() as conn:
            assert all(cp.state == "live" for cp in checkpoints.all_checkpoints(conn))
