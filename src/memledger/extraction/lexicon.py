"""Reading the extractor's word lists: the data files in ``lexicon/`` beside this module.

A file holds one entry a line; blank lines and lines starting with ``#`` are skipped.
A sectioned file groups its entries under ``[NAME]`` headers. The files ship with the
package and are read once, at import, by the modules that use them, with
importlib.resources: the package's own files, read like its code, so the parsers stay
free of run-time I/O.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final

LEXICON: Final = resources.files("memledger.extraction") / "lexicon"


def entries(name: str) -> list[str]:
    """The entries of one lexicon file, in order: each non-blank line not starting with ``#``."""
    text = (LEXICON / name).read_text(encoding="utf-8")
    return [line for line in (raw.strip() for raw in text.splitlines()) if line and not line.startswith("#")]


@functools.cache
def sections(name: str) -> dict[str, list[str]]:
    """The ``[NAME]`` sections of one lexicon file: name -> its entries, in order; read
    once, shared by the modules that load the same file, so never to be changed.

    A repeated header continues its section; an entry before any header is an error.
    """
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for entry in entries(name):
        if entry.startswith("[") and entry.endswith("]"):
            current = found.setdefault(entry[1:-1], [])
        elif current is None:
            raise ValueError(f"lexicon/{name}: {entry!r} comes before any [NAME] header")
        else:
            current.append(entry)
    return found
