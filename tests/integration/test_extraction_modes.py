"""Per-tenant extraction modes on a real PostgreSQL: a tenant's setting (an event of its
own) decides whether the worker extracts its turns by heuristic, model or hybrid."""

from __future__ import annotations

import uuid

from sqlalchemy.engine import Engine

from memledger.events.catalogue import EntityObserved, TenantSettingsChanged
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.hybrid import HybridExtractor
from memledger.extraction.modes import ModeSwitch
from memledger.service import tenant_settings
from memledger.service.extraction import ExtractionWorker, WorkerConfig
from memledger.store.schema import events
from tests.contract.recorded import RecordedLlm
from tests.integration.test_extraction_worker import committed, record, start_at_end

TEXTS = (
    "Kenji, my teammate, set up the CI pipeline on GitHub Actions yesterday.",  # recorded; unsettled by the heuristic
    "I'm using FastAPI for project Phoenix with my colleague Sarah.",  # recorded; settled
    "ok thanks",
)


def switch() -> tuple[ModeSwitch, RecordedLlm]:
    heuristic = HeuristicExtractor()
    heuristic.name = f"heuristic-{uuid.uuid4().hex[:8]}"  # a checkpoint of this test's own
    llm = RecordedLlm(heuristic)
    hybrid = HybridExtractor(heuristic, llm)
    return ModeSwitch(heuristic, {"heuristic": heuristic, "llm": llm, "hybrid": hybrid}), llm


def extractors_of(engine: Engine, tenant: str) -> set[str]:
    return {
        rec.metadata.extractor or ""
        for rec in committed(engine, events.c.tenant_id == tenant, events.c.stream_id.like("extraction:%"))
    }


def test_each_tenant_is_extracted_in_its_own_mode(engine: Engine) -> None:
    extractor, llm = switch()
    worker = ExtractionWorker(engine, extractor, WorkerConfig(batch_turns=50))
    start_at_end(worker)
    tenants = {mode: f"tenant-{mode}-{uuid.uuid4().hex[:8]}" for mode in ("default", "llm", "hybrid")}
    for mode in ("llm", "hybrid"):
        tenant_settings.change(engine, tenants[mode], TenantSettingsChanged(extraction_mode=mode))  # type: ignore[arg-type]
    for tenant in tenants.values():
        record(engine, tenant, *TEXTS)
    report = worker.drain()
    assert report.turns == 9 and report.fallbacks == 0
    assert extractors_of(engine, tenants["default"]) == {extractor.name}
    assert extractors_of(engine, tenants["llm"]) == {"llm:openai/gpt-4o-mini"}
    # hybrid: the unsettled turn merged (named hybrid), the settled ones the heuristic's
    assert extractors_of(engine, tenants["hybrid"]) == {"hybrid:llm:openai/gpt-4o-mini", extractor.name}
    # llm sent its three turns in one call; hybrid only what the heuristic left unsettled
    assert [len(call) for call in llm.sent] == [3, 1]
    merged = committed(engine, events.c.tenant_id == tenants["hybrid"], events.c.event_type == "entity.observed")
    assert {r.event.name for r in merged if isinstance(r.event, EntityObserved)} >= {"Kenji", "GitHub Actions", "Sarah"}
    assert all(r.stream_id.startswith(f"extraction:{extractor.name}@") for r in merged)  # the worker's streams
