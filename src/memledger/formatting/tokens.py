"""Counting tokens: a cheap estimate.

The formatter never picks a tokenizer itself; the caller passes a
``count_tokens(text) -> int``. :func:`estimate` is the default when none is given; a
model's own tokenizer is an adapter's (``adapters.tokenizers``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

TokenCounter = Callable[[str], int]

_BYTES_PER_TOKEN: Final = 4


def estimate(text: str) -> int:
    """About a quarter of the text's UTF-8 bytes, at least 1 for any non-empty text.

    Bytes rather than characters, so text outside ASCII (which tokenizers split
    finely) is not under-counted; English prose comes out near chars / 4.
    """
    if not text:
        return 0
    size = len(text.encode("utf-8", errors="surrogatepass"))
    return max(1, -(-size // _BYTES_PER_TOKEN))
