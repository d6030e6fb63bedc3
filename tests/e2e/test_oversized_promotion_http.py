"""A promotion over HTTP refuses a statement above the cap (issue 26, item 5): 422
``invalid_request`` naming ``statement`` and the limit, and nothing is written."""

from __future__ import annotations

from memledger.service.memory import MAX_PROMOTED_STATEMENT
from tests.e2e.test_http_api import NewCaller, all_events, error_of, scopes


def test_a_promoted_statement_above_the_cap_is_refused_and_nothing_is_written(new_caller: NewCaller) -> None:
    caller = new_caller("oversized")
    long = "Ada formats every report this way. " * 172  # 6,020 characters
    body = {"kind": "preference", "scope": "user", "scopes": scopes("p"), "statement": long}
    error = error_of(caller.http.post("/v1/memory/promote", json=body), 422, "invalid_request")
    assert error["field"] == "statement"
    just_over = {**body, "statement": long[: MAX_PROMOTED_STATEMENT + 1]}  # the schema's bound is the ledger's cap
    error = error_of(caller.http.post("/v1/memory/promote", json=just_over), 422, "invalid_request")
    assert error["field"] == "statement" and str(MAX_PROMOTED_STATEMENT) in error["message"].replace(",", "")
    assert all_events(caller, type="memory.promoted") == []
    fits = {**body, "statement": long[:MAX_PROMOTED_STATEMENT]}
    assert caller.http.post("/v1/memory/promote", json=fits).status_code == 200
