"""One tiny request to the configured model, to learn whether it answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memledger.adapters.litellm_import import import_litellm

PING_TIMEOUT_S = 10.0


def ping(model: str, options: Mapping[str, Any], *, timeout_s: float = PING_TIMEOUT_S) -> str:
    """Ask ``model`` for one token through litellm, once (no retries), within
    ``timeout_s``; what it answered. Raises whatever litellm raises."""
    litellm = import_litellm()
    call: dict[str, Any] = {
        **options,  # the deployment's keys, base URL, or a test's mock_response
        "model": model,
        "messages": [{"role": "user", "content": "Reply with the word ok."}],
        "max_tokens": 1,
        "timeout": min(timeout_s, float(options.get("timeout", timeout_s))),
        "num_retries": 0,
    }
    response = litellm.completion(**call)
    content = response.choices[0].message.content
    return content if isinstance(content, str) else ""
