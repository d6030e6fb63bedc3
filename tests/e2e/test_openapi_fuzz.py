"""Property-based tests of the HTTP API from its own contract: schemathesis reads the
live server's /openapi.json and generates requests for every operation, valid ones
and invalid ones, sent with a valid key; the server must never fail (5xx) and must
answer what its schema says.

Bounded, so it runs in seconds: a few examples per operation and mode, derandomized
(the same requests every run), no shrinking. Known bugs that have their own xfail
tests in test_http_api.py are steered around here (``steer_clear``), so the fuzzer
can find new ones.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.e2e.conftest import ApiServer, Caller, Surfaces

EXAMPLES = {GenerationMode.POSITIVE: 5, GenerationMode.NEGATIVE: 3}
PG_MAX_OFFSET_S = 16 * 3600 - 60  # PostgreSQL takes UTC offsets up to +-15:59


def _extreme_offset(value: Any) -> bool:
    """A time whose UTC offset PostgreSQL refuses (test_a_turn_time_with_an_extreme_utc_offset_..., xfail)."""
    try:
        offset = datetime.fromisoformat(value).utcoffset() if isinstance(value, str) else None
    except ValueError:
        return False
    return offset is not None and abs(offset.total_seconds()) > PG_MAX_OFFSET_S


def _without_extreme_offsets(body: Any) -> Any:
    turns = body.get("turns") if isinstance(body, dict) else None
    for turn in [body, *(turns if isinstance(turns, list) else [])]:
        if isinstance(turn, dict) and _extreme_offset(turn.get("occurred_at")):
            turn.pop("occurred_at")
    return body


def steer_clear(case: Case[Any]) -> Case[Any]:
    """Take out of a generated case the inputs of known bugs (each has its own xfail
    test), and the ``model`` of context requests: naming a model imports litellm in
    the request, which costs seconds and tests nothing here."""
    if isinstance(case.body, dict):
        case.body = _without_extreme_offsets(case.body)
    if case.query and "model" in case.query:
        case.query = {k: v for k, v in case.query.items() if k != "model"}
    return case


def _negatable(definition: dict[str, Any]) -> bool:
    """Whether an operation takes a body or query parameters (which invalid requests can break)."""
    return "requestBody" in definition or any(p.get("in") == "query" for p in definition.get("parameters", ()))


@dataclass
class Findings:
    """What the generated requests found, each as a short description."""

    calls: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    schema_violations: list[str] = field(default_factory=list)
    undocumented: set[str] = field(default_factory=set)
    not_error_format: list[str] = field(default_factory=list)


def _describe(case: Case[Any], response: Any, error: BaseException) -> str:
    failures = getattr(error, "exceptions", [error])  # schemathesis raises a group of failures
    what = "; ".join(str(getattr(f, "title", f)).strip().splitlines()[0][:200] for f in failures)
    body = response.text[:300]
    return f"{case.operation.label} -> {response.status_code}: {what}\n  {body}\n  {case.as_curl_command()[:2000]}"


def _check(case: Case[Any], response: Any, check: Callable[..., Any], into: Callable[[str], None]) -> None:
    try:
        case.validate_response(response, checks=[check])
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        into(_describe(case, response, error))


def _record(found: Findings, case: Case[Any], response: Any) -> None:
    label, status = case.operation.label, response.status_code
    found.calls[label] += 1
    found.statuses[status] += 1
    unhealthy = label == "GET /health" and status == 503 and response.json() == {"status": "unavailable"}  # its design
    if not unhealthy:
        _check(case, response, not_a_server_error, found.server_errors.append)
    _check(case, response, response_schema_conformance, found.schema_violations.append)
    _check(case, response, content_type_conformance, found.schema_violations.append)
    _check(case, response, status_code_conformance, lambda _: found.undocumented.add(f"{label} -> {status}"))
    if 400 <= status < 500:
        body = response.json()
        if not (isinstance(body, dict) and set(body) == {"error"} and {"code", "message"} <= set(body["error"])):
            found.not_error_format.append(f"{label} -> {status}: {json.dumps(body)[:200]}")


@pytest.fixture(scope="module")
def findings(server: ApiServer, new_caller: Callable[[str], Caller], surfaces: Surfaces) -> Findings:
    caller = new_caller("fuzz")
    surfaces.catch_up()  # so that /health starts healthy
    schema = schemathesis.openapi.from_url(f"{server.base_url}/openapi.json")
    auth = {"Authorization": f"Bearer {caller.key}"}
    found = Findings()
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result  # an operation the schema describes badly
        operation = result.ok()
        for mode, examples in EXAMPLES.items():
            if mode is GenerationMode.NEGATIVE and not _negatable(operation.definition.raw):
                continue  # nothing to make invalid but a free string: hypothesis would search in vain

            @settings(
                max_examples=examples,
                deadline=None,
                derandomize=True,
                database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(mode, headers=auth).map(steer_clear))
            def explore(case: Case[Any]) -> None:
                _record(found, case, case.call(base_url=server.base_url, timeout=60))

            explore()
    return found


def test_every_operation_was_exercised(findings: Findings, server: ApiServer) -> None:
    paths = schemathesis.openapi.from_url(f"{server.base_url}/openapi.json").raw_schema["paths"]
    labels = {f"{method.upper()} {path}" for path, methods in paths.items() for method in methods}
    assert set(findings.calls) == labels
    assert min(findings.calls.values()) >= 1
    assert any(400 <= status < 500 for status in findings.statuses)  # invalid requests were refused
    assert any(200 <= status < 300 for status in findings.statuses)  # and valid ones served


def test_generated_requests_never_get_a_server_error(findings: Findings, server: ApiServer) -> None:
    assert findings.server_errors == [], "\n".join([*findings.server_errors, "server log:", server.log_text()[-4000:]])


def test_responses_conform_to_the_openapi_schema(findings: Findings) -> None:
    assert findings.schema_violations == []


def test_client_errors_are_json_with_a_code_and_a_message(findings: Findings) -> None:
    assert findings.not_error_format == []


def test_every_status_the_server_answers_is_documented(findings: Findings) -> None:
    assert sorted(findings.undocumented) == []
