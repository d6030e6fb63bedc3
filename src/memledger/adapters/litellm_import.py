"""litellm, imported the one way every adapter needs it: with its bundled model map.

litellm fetches its model and price map from the network at import unless
``LITELLM_LOCAL_MODEL_COST_MAP`` is set, and it takes seconds to import, so an adapter
imports it through :func:`import_litellm` only when it first calls a model. An
operator's own value of the variable is kept.
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["LOCAL_MODEL_MAP", "import_litellm"]

LOCAL_MODEL_MAP = "LITELLM_LOCAL_MODEL_COST_MAP"


def import_litellm() -> ModuleType:
    """litellm (imported now if not yet), reading its bundled model map, and printing no
    "Provider List" banner on stdout (into a command's output or a server's log) for
    a model it does not map."""
    os.environ.setdefault(LOCAL_MODEL_MAP, "True")
    import litellm  # noqa: PLC0415 - slow to import: only a process that calls a model needs it

    litellm.suppress_debug_info = True
    return litellm
