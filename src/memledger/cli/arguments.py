"""Value types for the command line's options: argparse refuses a bad value (exit 2,
naming the option) before any command connects to anything."""

from __future__ import annotations

import argparse

MAX_PORT = 65_535


def positive_int(text: str) -> int:
    """A whole number above 0 (a ``--limit``: 0 or less would print nothing, or all but the last)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def port(text: str) -> int:
    """A TCP port to listen on: 1 to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a port number, not {text!r}") from None
    if not 1 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"must be a port from 1 to {MAX_PORT}, not {value}")
    return value


def nonblank(text: str) -> str:
    """Text with something besides whitespace in it."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must not be blank (got {text!r})")
    return text
