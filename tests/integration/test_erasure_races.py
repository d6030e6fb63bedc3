"""Erasure against work in flight (issue 7, item 3): whatever read a person's words
before they were erased (the embeddings projector embedding them, a re-extraction
into shadow read models) keeps nothing of them once the erasure is done; nor do
shadow copies built before the erasure, or after it.

The races are real: two threads, two connections, the slow step (embedding,
extracting) paused at the critical moment until the erasure has run or is waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import offline
from memledger.errors import NotFound
from memledger.events.catalogue import Scopes
from memledger.events.envelope import Recorded
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.protocol import TurnExtraction, TurnText
from memledger.projectors import registry, runner
from memledger.projectors.embeddings import projector as embeddings
from memledger.service import erasure, memory, reextraction
from memledger.service.record import TurnInput, record_turns
from memledger.store import embedding_cache
from tests.integration.test_erasure import SECRET_WORDS, _learn, _say, find_everywhere
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tests.conftest import TestDatabase

SECRET = "My bank PIN hint is Zorblaxify Quentavius forty two."
WAIT_S = 30.0


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    """A database of this module's own, with every projection installed."""
    with fresh_database(database, "erasure_races", pool_size=6) as fresh:
        for projector in registry.all_projectors():
            runner.install(fresh, projector)
        yield fresh


def _done_or_waiting_for_a_lock(engine: Engine, call: Future[Any]) -> bool:
    """Wait until the call has ended (True) or some session waits for an advisory lock (False)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if call.done():
            return True
        with engine.connect() as conn:
            # text(): a look at the server's own activity view.
            waiting = conn.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
                )
            ).scalar_one()
        if waiting:
            return False
        time.sleep(0.02)
    raise AssertionError("the call neither ended nor waited for a lock")


class AroundOffline:
    """The offline embedder's model and size, for embedders that wrap it."""

    def __init__(self) -> None:
        self.inner = offline()

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __hash__(self) -> int:
        return id(self)


class PausingEmbedder(AroundOffline):
    """The offline embedder, pausing the first time it is given ``text`` until ``go``."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.reached, self.go = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.text in texts and not self.reached.is_set():
            self.reached.set()
            assert self.go.wait(WAIT_S)
        return self.inner.embed(texts)


class WithoutHeadStart(embeddings.EmbeddingsProjector):
    """Embeds in the batch's own transaction only (as when ``prepare`` failed)."""

    def prepare(self, engine: Engine, batch: Sequence[Recorded]) -> None:
        return None


def _cached(engine: Engine, text: str) -> int:
    with engine.connect() as conn:
        # text(): a test's direct look at the embedding cache.
        query = sa.text("SELECT count(*) FROM embedding_cache WHERE text_sha256 = :h")
        return int(conn.execute(query, {"h": embeddings.text_sha256(text)}).scalar_one())


def _embedded_turns(engine: Engine, tenant: str) -> int:
    with engine.connect() as conn:
        # text(): a test's direct look at the embeddings projection.
        query = sa.text("SELECT count(*) FROM proj_embeddings.embeddings WHERE tenant_id = :t AND item_kind = 'turn'")
        return int(conn.execute(query, {"t": tenant}).scalar_one())


def _erase_while_embedding(engine: Engine, projector: embeddings.EmbeddingsProjector, tenant: str) -> bool:
    """Run the projector until it pauses embedding SECRET, erase Ada meanwhile, then
    let both end and the projector catch up past the erasure. Whether the erasure
    ended while the embedder was paused (else it waited for the projector's lock)."""
    embedder = projector.embedder
    assert isinstance(embedder, PausingEmbedder)
    with ThreadPoolExecutor(max_workers=2) as pool:
        projecting = pool.submit(runner.catch_up, engine, projector)
        assert embedder.reached.wait(WAIT_S), "the projector embeds the secret"
        erasing = pool.submit(erasure.erase, engine, tenant, "ada", refresh=False, vacuum_after=False)
        ended_first = _done_or_waiting_for_a_lock(engine, erasing)
        embedder.go.set()
        projecting.result(WAIT_S)
        report = erasing.result(WAIT_S)
    assert report.erased_events == 1
    runner.catch_up(engine, projector)  # past the erasure record: the tenant is refolded
    return ended_first


def test_a_text_erased_while_it_is_embedded_ahead_of_its_batch_is_not_cached(engine: Engine) -> None:
    tenant = "t-race-prepare"
    _say(engine, tenant, "grace", ["I prefer Vim over Emacs."])
    _say(engine, tenant, "ada", [SECRET])
    projector = embeddings.EmbeddingsProjector(PausingEmbedder(SECRET))

    ended_first = _erase_while_embedding(engine, projector, tenant)

    assert ended_first, "embedding ahead holds no lock: the erasure ran to its end meanwhile"
    assert _embedded_turns(engine, tenant) == 1, "Grace's turn only"
    assert _cached(engine, SECRET) == 0
    assert _cached(engine, "I prefer Vim over Emacs.") == 1
    again = erasure.erase(engine, tenant, "ada", refresh=False, vacuum_after=False)
    assert again.erased_events == 0


def test_a_text_erased_while_its_batch_embeds_it_is_not_cached(engine: Engine) -> None:
    tenant = "t-race-apply"
    _say(engine, tenant, "grace", ["I prefer Emacs over Vim."])
    _say(engine, tenant, "ada", [SECRET + " Again."])
    projector = WithoutHeadStart(PausingEmbedder(SECRET + " Again."))

    ended_first = _erase_while_embedding(engine, projector, tenant)

    assert not ended_first, "the erasure waited for the batch that was caching the text"
    assert _embedded_turns(engine, tenant) == 1, "Grace's turn only"
    assert _cached(engine, SECRET + " Again.") == 0
    assert _cached(engine, "I prefer Emacs over Vim.") == 1


def _shadowed(engine: Engine, needles: list[str]) -> set[tuple[str, str, str, str]]:
    return {hit for hit in find_everywhere(engine, needles) if "_shadow_" in hit[1]}


def test_an_erasure_drops_the_shadow_copies_built_before_it(engine: Engine) -> None:
    tenant = "t-shadow-before"
    _say(engine, tenant, "ada", ["I use Zorblaxify for all our Phoenix deploys.", "I work with Quentavius on Phoenix."])
    _say(engine, tenant, "grace", ["I prefer Vim over Emacs."])
    _learn(engine)
    reextraction.rebuild_into(engine, HeuristicExtractor(), "before")
    assert _shadowed(engine, list(SECRET_WORDS)), "the shadow holds the words until the erasure"

    report = erasure.erase(engine, tenant, "ada")

    assert report.dropped_shadows == ["before"]
    assert find_everywhere(engine, list(SECRET_WORDS)) == set()
    with pytest.raises(NotFound):
        reextraction.diff(engine, "before")


def test_a_shadow_built_after_an_erasure_holds_no_erased_event(engine: Engine) -> None:
    tenant = "t-shadow-after"
    _say(engine, tenant, "ada", ["I use Zorblaxify for all our Phoenix deploys."])
    _learn(engine)
    promoted = "Zorblaxify deploys need two approvals"
    memory.promote(
        engine, tenant, kind="decision", scope="project", scopes=Scopes(project="phoenix"), statement=promoted
    )
    erasure.erase(engine, tenant)  # the whole tenant: the promotion a person made too

    reextraction.rebuild_into(engine, HeuristicExtractor(), "after")

    assert _shadowed(engine, [*SECRET_WORDS, "[erased]"]) == set()
    reextraction.drop(engine, "after")


class PausingExtractor(HeuristicExtractor):
    """The heuristic extractor, pausing the first time it is given ``text`` until ``go``."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.reached, self.go = threading.Event(), threading.Event()

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        if any(self.text in t.text for t in turns) and not self.reached.is_set():
            self.reached.set()
            assert self.go.wait(WAIT_S)
        return super().extract(turns)


def test_a_reextraction_an_erasure_overtakes_fails_and_keeps_nothing(engine: Engine) -> None:
    tenant = "t-shadow-during"
    said = "I use Zorblaxify with Quentavius for every Phoenix deploy."
    _say(engine, tenant, "ada", [said])
    _say(engine, tenant, "grace", ["I prefer Vim over Emacs."])
    _learn(engine)
    extractor = PausingExtractor(said)
    with ThreadPoolExecutor(max_workers=2) as pool:
        rebuilding = pool.submit(reextraction.rebuild_into, engine, extractor, "during", batch_turns=1000)
        assert extractor.reached.wait(WAIT_S), "the re-extraction read the words"
        erasing = pool.submit(erasure.erase, engine, tenant, "ada")
        _done_or_waiting_for_a_lock(engine, erasing)
        extractor.go.set()
        report = erasing.result(WAIT_S)
        with pytest.raises(NotFound, match="erasure"):
            rebuilding.result(WAIT_S)

    assert report.dropped_shadows == ["during"]
    assert find_everywhere(engine, list(SECRET_WORDS)) == set()


def test_words_two_tenants_said_leave_the_cache_once_both_are_erased_before_a_refold(engine: Engine) -> None:
    """Each erasure kept the cache entry because the other tenant's rows still held the
    text (not refolded yet); then nobody forgot it. Now the last refold does."""
    said = "My locker code hint is Frobozzicus Quuxlington."
    for tenant, user in (("t-twice-a", "ada"), ("t-twice-b", "bea")):
        record_turns(engine, tenant, [TurnInput(role="user", text=said, scopes=Scopes(session=f"{user}-s", user=user))])
    _learn(engine)
    digest = embeddings.text_sha256(said)
    with engine.connect() as conn:
        assert embedding_cache.lookup(conn, offline().model, [digest])

    first = erasure.erase(engine, "t-twice-a", "ada", refresh=False, vacuum_after=False)
    second = erasure.erase(engine, "t-twice-b", "bea", refresh=False, vacuum_after=False)
    assert (first.forgotten_vectors, second.forgotten_vectors) == (0, 0)  # each saw the other's rows
    for projector in registry.all_projectors():
        runner.catch_up(engine, projector)

    with engine.connect() as conn:
        assert not embedding_cache.lookup(conn, offline().model, [digest])
    assert not find_everywhere(engine, ["Frobozzicus"])


class SlowEmbedder(AroundOffline):
    """The offline embedder at 20 texts a second: a provider's API, or a busy core."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(0.05 * len(texts))
        return self.inner.embed(texts)


def test_an_erasure_waits_for_the_projections_up_to_its_record_not_for_later_appends(engine: Engine) -> None:
    """Its refresh caught each projection up until nothing was left: with appends
    outpacing the embedder, ``erase(timeout_s=2)`` ran on for a minute and more."""
    _say(engine, "t-refresh", "ada", ["My secret is Frobozzicus Quuxlington."])
    _learn(engine)
    stop = threading.Event()

    def appender() -> None:
        i = 0
        while not stop.is_set():
            _say(engine, "t-refresh-other", "bob", [f"turn number {i} about Gadget{i}"])
            i += 1
            time.sleep(0.02)  # 50 turns a second, against 20 texts a second

    slow = SlowEmbedder()
    thread = threading.Thread(target=appender)
    thread.start()
    reports: list[erasure.ErasureReport] = []
    try:
        time.sleep(0.5)
        erase = threading.Thread(
            target=lambda: reports.append(
                erasure.erase(engine, "t-refresh", "ada", timeout_s=2.0, vacuum_after=False, embedder=slow)
            )
        )
        erase.start()
        erase.join(15)  # before: it returned only once the appends stopped
        assert reports, "erase(timeout_s=2) was still running after 15 s"
    finally:
        stop.set()
        thread.join(30)
        erase.join(120)
    assert reports[0].erased_events >= 1
