"""Models' own tokenizers, through litellm.

litellm takes seconds to import, so a ``Tokenizers`` loads it once: a server warms it
in the background at start, and a request with a deadline asks only whether it is
loaded (``counter_if_ready``), never waits for the import. The composition root makes
one per application (``bootstrap.App.tokenizers``), with the counter a model litellm
does not map gets (the formatter's estimate).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Final

from memledger.adapters.litellm_import import import_litellm

__all__ = ["Loader", "TokenCounter", "Tokenizers"]

TokenCounter = Callable[[str], int]
Loader = Callable[[], ModuleType]

log = logging.getLogger(__name__)

# Tokenizers that litellm would fetch from the Hugging Face hub on first use;
# counting must never touch the network, so these models get the fallback.
_DOWNLOADED_TOKENIZERS: Final = ("llama", "command-r", "replicate")


class Tokenizers:
    """litellm's tokenizers, loaded once by ``loader`` (tests give a slow or failing one);
    ``fallback`` counts for a model litellm does not map."""

    def __init__(self, fallback: TokenCounter, loader: Loader = import_litellm) -> None:
        self.fallback = fallback
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
        """Start loading litellm in a daemon thread (once); the thread."""
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
        commands, which have no deadline); ``fallback`` for a model litellm does not
        map, or whose tokenizer it would download (counting never uses the network)."""
        if any(name in model.lower() for name in _DOWNLOADED_TOKENIZERS):
            return self.fallback
        litellm = self.load()
        try:
            litellm.get_model_info(model)
        except Exception:  # noqa: BLE001 - litellm signals an unmapped model with several exception types
            return self.fallback

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
