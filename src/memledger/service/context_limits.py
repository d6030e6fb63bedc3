"""What a context request may ask for: the request text and budget the agent surfaces
accept, a request text that cannot be served, and how a block's tokens are counted."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from memledger.adapters.tokenizers import Tokenizers
from memledger.errors import InvalidCommand, InvalidField
from memledger.formatting.tokens import TokenCounter, estimate
from memledger.selection.types import Selection
from memledger.store.identifiers import check_text

if TYPE_CHECKING:
    from memledger.service.context import SelectRequest

log = logging.getLogger(__name__)

MIN_BUDGET_CHARS = 600  # the block's header and footer alone take about 520
# What the agent surfaces (HTTP, MCP) accept: a request is a message, not a document.
# The library takes any request, so as not to raise into a chat loop.
MAX_BUDGET_CHARS = 200_000
MAX_REQUEST_CHARS = 10_000


def check_agent_request(request: str, budget_chars: int) -> None:
    """``InvalidCommand`` for what an agent surface refuses: a blank request, one over
    ``MAX_REQUEST_CHARS``, one the ledger cannot store (``InvalidField``, as HTTP refuses
    it), a budget outside ``MIN_BUDGET_CHARS``..``MAX_BUDGET_CHARS``."""
    check_text("request", request)
    if not request.strip():
        raise InvalidCommand("request must not be empty or blank")
    if len(request) > MAX_REQUEST_CHARS:
        raise InvalidCommand(f"request is {len(request)} characters long, above {MAX_REQUEST_CHARS}")
    if not MIN_BUDGET_CHARS <= budget_chars <= MAX_BUDGET_CHARS:
        raise InvalidCommand(f"budget_chars must be {MIN_BUDGET_CHARS} to {MAX_BUDGET_CHARS}, not {budget_chars}")


def unusable(request: SelectRequest) -> tuple[SelectRequest, Selection] | None:
    """An empty selection for a request text HTTP and MCP refuse (too long, or breaking
    the rule all text follows: ``check_text``, as search refuses its query), saying why
    and naming the field; None for one that can be served."""
    if len(request.request) > MAX_REQUEST_CHARS:
        return _too_long(request)
    try:
        check_text("request", request.request)
    except InvalidField as e:
        log.warning("context request for tenant %s not served: %s", request.tenant_id, e)
        return request, Selection(request=request.request, empty_reason=str(e))
    return None


def _too_long(request: SelectRequest) -> tuple[SelectRequest, Selection]:
    """An empty selection for a request over ``MAX_REQUEST_CHARS`` (HTTP and MCP refuse
    one); its first ``MAX_REQUEST_CHARS`` characters are what is recorded."""
    length = len(request.request)
    log.warning("context request for tenant %s is %d characters long: nothing selected", request.tenant_id, length)
    cut = replace(request, request=request.request[:MAX_REQUEST_CHARS])
    reason = f"request too long ({length} characters, above {MAX_REQUEST_CHARS}): ask with the question alone"
    return cut, Selection(request=cut.request, empty_reason=reason)


def token_counter(model: str | None, tokenizers: Tokenizers | None = None) -> Callable[[str], int]:
    """The model's tokenizer through litellm when a model is named (``tokenizers``, the
    application's, else new ones; imported now if need be: for replays and commands), an
    estimate otherwise."""
    if not model:
        return estimate
    return (tokenizers or Tokenizers(estimate)).counter(model)


def request_counter(model: str | None, tokenizers: Tokenizers | None) -> tuple[TokenCounter, str | None]:
    """The counter of a request with a deadline, and the model it counts by: the
    model's tokenizer if the application's ``tokenizers`` have litellm loaded, else the
    estimate (None) while it loads in the background; the import takes seconds, never
    a request's. Without ``tokenizers``, the estimate."""
    if model is None:
        return estimate, None
    if tokenizers is None:
        log.warning("tokens estimated, not counted by %s: no tokenizers were given", model)
        return estimate, None
    ready = tokenizers.counter_if_ready(model)
    if ready is None:
        log.warning("tokens estimated, not counted by %s: its tokenizer is still loading", model)
        return estimate, None
    return ready, model
