"""The connection test over HTTP, for operators: ``GET /v1/check``, ``POST /v1/check/smoke``."""

from __future__ import annotations

import msgspec
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from memledger.api.deps import database_of
from memledger.api.operator_key import is_operator
from memledger.bootstrap import check_probes
from memledger.errors import Unauthorized
from memledger.service import check

router = APIRouter(tags=["operators"])


@router.get("/v1/check")
def get_check(request: Request) -> JSONResponse:
    """The read-only steps of ``memledger check``, each with its status, detail and time:
    200 when none failed, 503 otherwise. Needs ``Authorization: Bearer <operator key>``."""
    return _run(request, smoke=False)


@router.post("/v1/check/smoke")
def post_check_smoke(request: Request) -> JSONResponse:
    """``memledger check --smoke``: the read-only steps, then a turn recorded in a scratch
    tenant, extracted, served in a context block, and erased. Needs the operator key."""
    return _run(request, smoke=True)


def _run(request: Request, *, smoke: bool) -> JSONResponse:
    if not is_operator(request):
        raise Unauthorized("the check needs the operator key (Authorization: Bearer <MEMLEDGER_OPERATOR_KEY>)")
    database = database_of(request)
    report = check.run(lambda: check_probes(database), smoke=smoke)
    return JSONResponse(status_code=200 if report.ok else 503, content=msgspec.to_builtins(report))
