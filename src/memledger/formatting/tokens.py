"""Counting tokens: a cheap estimate, and a model's own tokenizer through litellm.

The formatter never picks a tokenizer itself; the caller passes a
``count_tokens(text) -> int``. :func:`estimate` is the default when none is given.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final

TokenCounter = Callable[[str], int]

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


def litellm_counter(model: str) -> TokenCounter:
    """A counter using ``model``'s tokenizer through litellm; :func:`estimate` if unknown.

    A model is known when litellm's bundled model map has it. Models whose
    tokenizer litellm would download get the estimate too, so counting works
    offline and never blocks on the network. litellm is imported here, lazily:
    it takes seconds to import.
    """
    # litellm fetches its model map from the network at import unless told not to.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # noqa: PLC0415 - slow to import, and only needed here

    # An unmapped model is no error here (it gets the estimate): no "Provider List"
    # banner printed on stdout, into a command's output or a server's log.
    litellm.suppress_debug_info = True
    if any(name in model.lower() for name in _DOWNLOADED_TOKENIZERS):
        return estimate
    try:
        litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm signals an unmapped model with several exception types
        return estimate

    def count(text: str) -> int:
        return int(litellm.token_counter(model=model, text=text))

    return count
