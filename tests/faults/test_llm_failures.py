"""The LLM provider failing, timing out and answering garbage, through the extraction worker.

The worker is built by ``bootstrap`` from settings (``MEMLEDGER_EXTRACTOR=llm``) and
talks through litellm, over real HTTP, to a fake provider on loopback that fails as
each test scripts it. tests/unit/test_llm_extractor.py covers the extractor alone
(every refused answer shape, backoff arithmetic); here the question is what reaches
the ledger and the read models: after a failure the heuristic fallback's events,
exactly those a heuristic worker makes of the same turns; from garbage, nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from memledger import bootstrap
from memledger.adapters.litellm_import import import_litellm
from memledger.adapters.llm_extractor import LlmExtractor
from memledger.events.catalogue import EntityObserved
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.modes import ModeSwitch
from memledger.service import projections
from memledger.service.extraction import ExtractionWorker, turn_stream
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.faults.checks import columns_containing
from tests.faults.fake_provider import DROP, HANG, FakeProvider, Reply, answer, fake_provider, status
from tests.faults.own_server import OwnServer

TENANT = "llm-faults"
TIMEOUT_S = 0.5
RETRIES = 2
BATCH = 3
TEXTS = (
    "I use Docker and Terraform for the Phoenix project.",
    "I work with Sarah on Atlas.",
    "We decided to deploy Phoenix on Fridays.",
    "I prefer Vim over Emacs.",
    "decision (project): all services log in JSON",
    "I switched from React to Vue last month.",
)
MARKER = "zqxmarker"  # in every garbage answer, in no turn


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    """The fake provider, and litellm imported and called once (its import takes seconds,
    which must not count against the timeouts measured here)."""
    with fake_provider(status(500)) as running:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price map fetched at import
        extractor = LlmExtractor("openai/fake-extractor", HeuristicExtractor(), options=running.options(), retries=1)
        extractor.extract([])
        yield running


@pytest.fixture(scope="module")
def database(own_server: OwnServer, provider: FakeProvider) -> bootstrap.App:
    return own_server.database(
        "llm",
        extractor="llm",
        llm_model="openai/fake-extractor",
        llm_options=provider.options(),
        llm_retries=RETRIES,
        llm_timeout_s=TIMEOUT_S,
        worker_batch_turns=BATCH,
    )


def record(database: bootstrap.App, prefix: str) -> list[str]:
    """The six turns, with ids of their own, in a session of their own."""
    turns = [
        TurnInput(
            role="user",
            text=text,
            turn_id=f"{prefix}-{i}",
            scopes=Scopes(session=prefix, project="phoenix", user="ann"),
        )
        for i, text in enumerate(TEXTS)
    ]
    record_turns(database.for_tenant(TENANT), TENANT, turns)
    return [str(t.turn_id) for t in turns]


def llm_worker(database: bootstrap.App, provider: FakeProvider, *script: Reply) -> ExtractionWorker:
    """The configured (LLM) worker, with the provider following ``script`` from now."""
    provider.script = list(script)
    provider.requests.clear()
    worker = bootstrap.build_worker(database)
    assert isinstance(worker.extractor, ModeSwitch), worker.extractor  # per-tenant modes, the default llm
    assert isinstance(worker.extractor.default, LlmExtractor), worker.extractor.default
    return worker


def model_of(worker: ExtractionWorker) -> LlmExtractor:
    """The worker's default extractor, the configured model."""
    assert isinstance(worker.extractor, ModeSwitch) and isinstance(worker.extractor.default, LlmExtractor)
    return worker.extractor.default


def results(database: bootstrap.App, worker: ExtractionWorker, turn_ids: list[str]) -> dict[str, list[object]]:
    """What ``worker``'s extractor appended for each turn (the events, not their ids or metadata)."""
    with database.engine.connect() as conn:
        return {
            turn_id: [
                rec.event for rec in event_reads.read_stream(conn, TENANT, turn_stream(worker.extractor, turn_id))
            ]
            for turn_id in turn_ids
        }


def answered_by(database: bootstrap.App, worker: ExtractionWorker, turn_ids: list[str]) -> dict[str, set[str]]:
    """Per turn, the extractors (name@version) the metadata of its events names."""
    with database.engine.connect() as conn:
        return {
            turn_id: {
                f"{rec.metadata.extractor}@{rec.metadata.extractor_version}"
                for rec in event_reads.read_stream(conn, TENANT, turn_stream(worker.extractor, turn_id))
            }
            for turn_id in turn_ids
        }


def heuristic_results(database: bootstrap.App, turn_ids: list[str]) -> dict[str, list[object]]:
    """What a heuristic worker makes of the same turns (its own checkpoint and streams)."""
    heuristic = bootstrap.build_worker(database, HeuristicExtractor())
    heuristic.drain()
    found = results(database, heuristic, turn_ids)
    assert any(found.values()), "the heuristic extractor found nothing in the turns; the comparison would be empty"
    return found


FAILURES = {
    "HTTP 500": status(500),
    "HTTP 429 (rate limited)": status(429),
    "no answer within the timeout": HANG,
    "connection dropped": DROP,
}


@pytest.mark.parametrize("failure", FAILURES.values(), ids=FAILURES.keys())
def test_a_failing_provider_is_retried_then_the_heuristics_extract_and_their_events_are_stored(
    database: bootstrap.App, provider: FakeProvider, failure: Reply
) -> None:
    turn_ids = record(database, f"fail-{failure.kind}-{failure.status}")
    worker = llm_worker(database, provider, failure)
    start = time.monotonic()
    report = worker.drain()
    took = time.monotonic() - start
    llm = model_of(worker)
    assert isinstance(llm, LlmExtractor)

    batches = -(-len(turn_ids) // BATCH)
    assert report.turns == len(turn_ids)
    # The one configured model cools down once a call's every attempt failed: the next
    # batch, within the window, goes to the heuristics without asking it.
    assert len(provider.requests) == RETRIES, "the first batch: one call per attempt; the second: none"
    assert (llm.fallbacks, llm.refused_answers) == (batches, 0)
    assert (report.fallbacks, report.refused_answers) == (batches, 0)  # what `memledger extract` prints
    # A hang costs the timeout per attempt and the backoff between attempts, no more.
    budget = batches * (RETRIES * TIMEOUT_S + llm.backoff_s * (RETRIES - 1)) + 10.0
    assert took < budget, f"the drain took {took:.1f} s; timeouts not applied?"
    assert results(database, worker, turn_ids) == heuristic_results(database, turn_ids)
    named = set().union(*answered_by(database, worker, turn_ids).values())
    heuristic = f"heuristic@{HeuristicExtractor.version}"
    assert named == {heuristic}, "an auditor must see that the heuristics, not the model, extracted these"


def test_garbage_answers_are_refused_whole_and_nothing_of_them_reaches_any_table(
    database: bootstrap.App, provider: FakeProvider
) -> None:
    turn_ids = record(database, "garbage")
    first, second = turn_ids[:BATCH], turn_ids[BATCH:]
    entity = {"name": "Zqxmarker Labs", "type": "organization", "confidence": 0.95}
    garbage = [
        answer(f"Sure! Here is what I found: {MARKER} uses Docker."),  # not JSON
        answer(  # valid for the first turn; the second's frame is not the schema's: refused whole
            {
                "turns": [
                    {"turn_id": first[0], "entities": [entity]},
                    {"turn_id": first[1], "entities": [entity], "instructions": "store this"},
                ]
            }
        ),
        answer({"turns": [{"turn_id": second[0], "entities": [entity]}], "note": f"{MARKER}: trust me"}),
        answer('{"turns": [{"turn_id": "' + second[0] + '", "entities": [{"name": "Zqxmarker'),  # cut short
    ]
    worker = llm_worker(database, provider, *garbage)
    report = worker.drain()
    llm = model_of(worker)
    assert isinstance(llm, LlmExtractor)

    assert report.turns == len(turn_ids)
    assert len(provider.requests) == len(garbage)
    assert (llm.refused_answers, llm.fallbacks) == (len(garbage), 2)
    assert (report.refused_answers, report.fallbacks) == (len(garbage), 2)
    assert results(database, worker, turn_ids) == heuristic_results(database, turn_ids)
    projections.catch_up_all(database.engine)
    assert columns_containing(database.engine, MARKER) == [], "something of a refused answer was stored"


@pytest.fixture(scope="module")
def quick_cooldown(own_server: OwnServer, provider: FakeProvider) -> bootstrap.App:
    """As ``database``, one attempt per call (litellm's Router sleeps seconds before retrying
    a lone model) and a cool-down of ``COOLDOWN_S`` (the default is a minute)."""
    return own_server.database(
        "llm_cool",
        extractor="llm",
        llm_model="openai/fake-extractor",
        llm_options=provider.options(),
        llm_retries=1,
        llm_timeout_s=TIMEOUT_S,
        llm_cooldown_s=COOLDOWN_S,
        worker_batch_turns=BATCH,
    )


COOLDOWN_S = 4.0


def test_a_lone_model_is_skipped_while_it_cools_down_and_asked_again_after_with_no_restart(
    quick_cooldown: bootstrap.App, provider: FakeProvider
) -> None:
    database = quick_cooldown
    turn_ids = record(database, "recovers")
    first, second = turn_ids[:BATCH], turn_ids[BATCH:]
    later = [f"recovered-{i}" for i in range(BATCH)]  # record() names turns prefix-index
    valid = answer(
        {
            "turns": [
                {
                    "turn_id": later[0],
                    "entities": [{"name": "Kestrel Analytics", "type": "organization", "confidence": 0.9}],
                }
            ]
        }
    )
    worker = llm_worker(database, provider, status(503), valid)
    import_litellm()  # loaded before the clock starts: its seconds are not the window's
    failed_at = time.monotonic()
    worker.drain()
    drained_at = time.monotonic()  # the model failed, and its window opened, before this
    llm = model_of(worker)

    assert len(provider.requests) == 1, "the second batch, within the window: the model not asked"
    assert drained_at - failed_at < COOLDOWN_S, "the drain outlasted the window; the test proves nothing"
    assert (llm.fallbacks, llm.refused_answers) == (2, 0)
    expected = heuristic_results(database, turn_ids)
    assert results(database, worker, turn_ids) == expected, "both batches: the heuristics'"
    named = answered_by(database, worker, turn_ids)
    assert set().union(*(named[t] for t in first + second)) == {
        f"{HeuristicExtractor().name}@{HeuristicExtractor().version}"
    }

    time.sleep(max(0.0, drained_at + COOLDOWN_S + 0.5 - time.monotonic()))  # past the window, however slow the drain
    assert record(database, "recovered")[:BATCH] == later
    worker.drain()  # the same worker and Router: no restart
    assert len(provider.requests) == 1 + 2, "after the window the model is asked again, each batch"
    assert llm.fallbacks == 2
    found = results(database, worker, later)
    (event,) = found[later[0]]
    assert isinstance(event, EntityObserved) and event.name == "Kestrel Analytics", "the model's answer, stored"
    assert found[later[2]] == [] != heuristic_results(database, later)[later[2]], "no heuristics added to it"
    assert answered_by(database, worker, later)[later[0]] == {"llm:openai/fake-extractor@1"}
