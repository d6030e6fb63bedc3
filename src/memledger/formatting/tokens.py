"""Counting tokens: a cheap estimate, and a model's own tokenizer through litellm.

The formatter never picks a tokenizer itself; the caller passes a
``count_tokens(text) -> int``. :func:`estimate` is the default when none is given.
litellm takes seconds to import, so :data:`TOKENIZERS` loads it once per process:
a server warms it in the background at start, and a request with a deadline asks
only whether it is loaded (``counter_if_ready``), never waits for the import.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Final

TokenCounter = Callable[[str], int]
Loader = Callable[[], ModuleType]

log = logging.getLogger(__name__)

_BYTES_PER_TOKEN: Final = 4
# Tokenizers that litellm would fetch from the Hugging Face hub on first use;
# counting must never touch the network, so these models get the estimate.
_DOWNLOADED_TOKENIZERS: Final = ("llama", "command-r", "replicate")


def estimate(text: str) -> int:
    """About a quarter of the text's UTF-8 bytes, at least 1 for any non-empty text.

    Bytes rather than characters, so text outside ASCII (which tokenizers split
    finely) is not under-counted; English prose comes out near chars / 4.
    """
    if not text:
        return 0
    size = len(text.encode("utf-8", errors="surrogatepass"))
    return max(1, -(-size // _BYTES_PER_TOKEN))


def import_litellm() -> ModuleType:
    """litellm, imported (seconds, the first time) with its bundled model map."""
    # litellm fetches its model map from the network at import unless told not to.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # noqa: PLC0415 - slow to import, and only needed here

    # An unmapped model is no error here (it gets the estimate): no "Provider List"
    # banner printed on stdout, into a command's output or a server's log.
    litellm.suppress_debug_info = True
    return litellm


class Tokenizers:
    """litellm's tokenizers, loaded once by ``loader`` (tests give a slow or failing one)."""

    def __init__(self, loader: Loader = import_litellm) -> None:
        self._loader = loader
        self._starting = threading.Lock()
        self._loading = threading.Lock()  # held for the import: never taken by a request's path
        self._module: ModuleType | None = None
        self._warming: threading.Thread | None = None

    @property
    def ready(self) -> bool:
        """Whether litellm is loaded, so a counter costs no import."""
        return self._module is not None

    @property
    def started(self) -> bool:
        """Whether loading began in the background (``warm``)."""
        return self._warming is not None

    def warm(self) -> threading.Thread:
        """Start loading litellm in a daemon thread (once per process); the thread."""
        with self._starting:
            if self._warming is None:
                self._warming = threading.Thread(target=self._warm, name="memledger-tokenizers", daemon=True)
                self._warming.start()
            return self._warming

    def _warm(self) -> None:
        try:
            self.load()
        except Exception:  # a thread's error reaches no caller: log it; counting keeps the estimate
            log.exception("could not load litellm's tokenizers; token budgets are estimated")

    def load(self) -> ModuleType:
        """litellm, imported now if not yet (blocks for the import)."""
        with self._loading:
            if self._module is None:
                self._module = self._loader()
            return self._module

    def counter(self, model: str) -> TokenCounter:
        """``model``'s counter, loading litellm first if need be (for replays and
        commands, which have no deadline); :func:`estimate` for a model litellm does
        not map, or whose tokenizer it would download (counting never uses the network)."""
        if any(name in model.lower() for name in _DOWNLOADED_TOKENIZERS):
            return estimate
        litellm = self.load()
        try:
            litellm.get_model_info(model)
        except Exception:  # noqa: BLE001 - litellm signals an unmapped model with several exception types
            return estimate

        def count(text: str) -> int:
            return int(litellm.token_counter(model=model, text=text))

        return count

    def counter_if_ready(self, model: str) -> TokenCounter | None:
        """``model``'s counter if litellm is loaded; else None, and loading starts in
        the background: a request never spends its deadline on the import."""
        if self.ready:
            return self.counter(model)
        self.warm()
        return None


# The process's tokenizers: nothing loads until warm(), load() or a counter is asked for.
TOKENIZERS = Tokenizers()


def litellm_counter(model: str) -> TokenCounter:
    """A counter using ``model``'s tokenizer through litellm (loaded now if need be);
    :func:`estimate` for a model litellm does not map."""
    return TOKENIZERS.counter(model)
