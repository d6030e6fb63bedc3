"""Value types for the command line's options: argparse refuses a bad value (exit 2,
naming the option) before any command connects to anything."""

from __future__ import annotations

import argparse
import math

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


def positive_seconds(text: str) -> float:
    """A duration in seconds above 0 (fractions allowed)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
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


SCOPE_HELP = {
    "session": "the conversation's key, e.g. a chat or thread id (default: none)",
    "project": "the project's key, e.g. a repository or workspace name (default: none)",
    "user": "the person's key, e.g. an account id; 'me' in graph means them (default: none)",
    "org": "the organisation's key, e.g. a team or company id (default: none)",
}


def add_tenant(parser: argparse.ArgumentParser, *, required: bool = True, about: str = "") -> None:
    """``--tenant``: whose memory a command reads or writes (one tenant per API key)."""
    need = "required" if required else "default: every tenant"
    parser.add_argument("--tenant", required=required, help=f"the tenant whose memory to use{about} ({need})")


def add_json(parser: argparse.ArgumentParser, what: str = "JSON") -> None:
    """``--json``: machine-readable output for scripts."""
    parser.add_argument("--json", action="store_true", help=f"print {what} for scripts (default: text for people)")


def add_scopes(parser: argparse.ArgumentParser) -> None:
    """The four scope keys a request may name; memory said under any of them is recalled."""
    for scope, text in SCOPE_HELP.items():
        parser.add_argument(f"--{scope}", metavar="KEY", help=text)
