"""``memledger import FILE|- --tenant T``: import chat histories (docs/operations.md,
"Importing chat histories")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_tenant, positive_seconds
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.errors import InvalidCommand
from memledger.service import importing
from memledger.service.import_formats import FORMATS
from memledger.service.importing import ImportSummary
from memledger.service.types import Scopes


def register(commands: Any) -> None:
    """Add ``import`` to the parser."""
    command = commands.add_parser(
        "import",
        help="import chat histories (memledger turns, or {role, content} message lists) from a file or stdin",
        description="Import chat histories into a tenant: JSON lines of memledger turns, or conversations of"
        " {role, content} messages (one per line, or a whole-file list). Each conversation is appended all or"
        " nothing; running it again imports nothing twice. See docs/operations.md.",
    )
    command.add_argument("file", metavar="FILE", help="the history to read: a path, or - for stdin")
    add_tenant(command, about=" (the turns go into it)")
    command.add_argument("--user", metavar="KEY", help="the user key for turns that name none (default: none)")
    command.add_argument("--project", metavar="KEY", help="the project key for turns that name none (default: none)")
    command.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="what each line is: a memledger turn, a conversation of messages, or either (default: auto)",
    )
    command.add_argument(
        "--source",
        help="the name ids and sessions are derived from when the history has none"
        " (default: the file's name; 'stdin' for -)",
    )
    command.add_argument(
        "--wait",
        action="store_true",
        help="then wait until the tenant's context reflects the whole import (extracting and projecting here,"
        " or waiting for a running worker), and print the time to ready (default: return once imported)",
    )
    command.add_argument(
        "--wait-timeout",
        metavar="SECONDS",
        type=positive_seconds,
        default=importing.WAIT_TIMEOUT_S,
        help=f"how long --wait waits before exiting 1, the import kept (default: {importing.WAIT_TIMEOUT_S:.0f})",
    )
    add_json(command, "the summary as one JSON object")
    command.set_defaults(handler=import_command)


def import_command(args: argparse.Namespace) -> int:
    """Exit 0 when every line was imported (and, with ``--wait``, the context reflects
    it), 1 when some were refused (the others were) or ``--wait`` timed out."""
    text, named = _read(args.file)
    show = _Progress(sys.stderr) if sys.stderr.isatty() else None
    database = bootstrap.connect(Settings())
    try:
        summary = importing.import_text(
            database.for_tenant(args.tenant),
            args.tenant,
            text,
            source=args.source or named,
            defaults=Scopes(user=args.user, project=args.project),
            fmt=args.format,
            progress=show,
        )
        if args.wait:
            if show is not None:
                show.end()
            summary = importing.wait_until_ready(
                database.engine,
                bootstrap.build_worker(database),
                summary,
                timeout_s=args.wait_timeout,
                progress=show.readiness if show is not None else None,
                embedder=database.embedder,
            )
    finally:
        database.close()
        if show is not None:
            show.end()
    print(json_line(_as_json(summary)) if args.json else _as_text(summary, args.tenant))
    if summary.readiness is not None and not summary.readiness.ready:
        print(_not_ready(summary, args.wait_timeout), file=sys.stderr)
        return 1
    return 0 if summary.complete else 1


def _not_ready(summary: ImportSummary, timeout_s: float) -> str:
    assert summary.readiness is not None
    behind = ", ".join(summary.readiness.behind)
    return (
        f"not ready within {timeout_s:g} s ({behind} behind): the import is stored, and the context will"
        " reflect it once a worker (memledger serve) or another --wait catches up"
    )


def _read(file: str) -> tuple[str, str]:
    """(text, source name) of FILE, or of stdin for -."""
    try:
        if file == "-":
            return sys.stdin.read(), "stdin"
        return Path(file).read_text(encoding="utf-8"), Path(file).name
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidCommand(f"cannot read {file!r}: {e}") from e


class _Progress:
    """One status line on a terminal, rewritten in place: turns, turns/s, ETA."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, done: int, total: int, seconds: float) -> None:
        rate = done / seconds if seconds > 0 else 0.0
        eta = f", ETA {(total - done) / rate:.0f} s" if rate > 0 else ""
        self.stream.write(f"\r{done}/{total} turns, {rate:.0f} turns/s{eta}   ")
        self.stream.flush()

    def readiness(self, extracted: int, projected: int) -> None:
        self.stream.write(f"\rwaiting: {extracted} turns extracted, {projected} events projected   ")
        self.stream.flush()

    def end(self) -> None:
        self.stream.write("\n")


def _as_json(summary: ImportSummary) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "conversations": summary.conversations,
        "recorded": summary.recorded,
        "present": summary.present,
        "refused": [{"line": r.line, "reason": r.reason} for r in summary.refused],
        "seconds": round(summary.seconds, 3),
        "complete": summary.complete,
    }
    if summary.readiness is not None:  # --wait: null when not ready within the timeout
        ready = summary.ready_seconds
        shown["ready_seconds"] = None if ready is None else round(ready, 3)
        shown["behind"] = list(summary.readiness.behind)
    return shown


def _as_text(summary: ImportSummary, tenant: str) -> str:
    lines = [
        f"imported {summary.conversations} conversation(s) into tenant {tenant!r}: {summary.recorded} turn(s)"
        f" recorded, {summary.present} already present, in {summary.seconds:.1f} s"
    ]
    if summary.refused:
        lines.append(f"{len(summary.refused)} line(s) refused:")
        lines.extend(f"  line {r.line}: {r.reason}" for r in summary.refused)
    if summary.ready_seconds is not None:
        lines.append(f"ready in {summary.ready_seconds:.1f} s")
    return "\n".join(lines)
