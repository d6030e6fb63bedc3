"""Entry point of the ``memledger`` command: parses arguments, maps errors to exit codes.

Exit codes: 0 done; 1 the command's check failed, or a ``LedgerError`` of no other
kind; 2 bad arguments (argparse, ``InvalidCommand``, ``UnknownEventType``); 3 not found;
4 a concurrency conflict; 5 the database is unavailable (a refused connection too);
6 the environment cannot start memledger (an invalid setting, a malformed database
URL, an unusable ``MEMLEDGER_HOME``); 130 interrupted; 141 stdout closed before the
output was all written (``memledger ... | head``), silently, as a shell reports a writer
ended by SIGPIPE (the command's work, an erasure say, is done all the same).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from memledger.cli import (
    check_commands,
    context_commands,
    db_commands,
    demo,
    erasure_commands,
    events_commands,
    extraction_commands,
    import_commands,
    integrity_commands,
    maintenance_commands,
    projections_commands,
    scope_commands,
    serve_commands,
    settings_commands,
    startup,
    stats_commands,
)
from memledger.errors import (
    ConcurrencyConflict,
    DatabaseUnavailable,
    InvalidCommand,
    LedgerError,
    NotFound,
    UnknownEventType,
)

# One table from error to exit code (STYLE.md section 6).
EXIT_CODES: tuple[tuple[type[LedgerError], int], ...] = (
    (InvalidCommand, 2),
    (NotFound, 3),
    (UnknownEventType, 2),
    (ConcurrencyConflict, 4),
    (DatabaseUnavailable, 5),
    (LedgerError, 1),
)
EXIT_SETUP = 6  # the environment, not the command: see startup.problem
EXIT_STDOUT_CLOSED = 141  # 128 + SIGPIPE: what a shell reports when the reader of a pipe left

Handler = Callable[[argparse.Namespace], int]

DESCRIPTION = """\
memledger keeps what your agents hear as an append-only ledger in PostgreSQL
and gives it back as memory: a context block for a request, search, a graph of
who uses what, and where every item came from. Without DATABASE_URL it starts
an embedded PostgreSQL of its own (data in $MEMLEDGER_HOME).

Start with `memledger demo`. Each command takes --help."""

EPILOG = """\
exit codes: 0 done; 1 a check failed; 2 bad arguments; 3 not found;
4 a concurrent write came first; 5 the database is unavailable;
6 memledger cannot start here (a setting, DATABASE_URL or MEMLEDGER_HOME);
130 interrupted."""


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    parser = argparse.ArgumentParser(
        prog="memledger",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(title="commands", dest="command", required=True, metavar="COMMAND")
    demo.register(commands)
    db_commands.register(commands)
    events_commands.register(commands)
    projections_commands.register(commands)
    extraction_commands.register(commands)
    context_commands.register(commands)
    stats_commands.register(commands)
    maintenance_commands.register(commands)
    serve_commands.register(commands)
    integrity_commands.register(commands)
    erasure_commands.register(commands)
    settings_commands.register(commands)
    scope_commands.register(commands)
    check_commands.register(commands)
    import_commands.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code. A reader that stops early (``| head``)
    closes stdout: Python then raises BrokenPipeError from a print, or from its flush
    at exit (a traceback); the output is no longer wanted, so the command ends quietly."""
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # here, not in Python's flush at exit, so a closed pipe is caught
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_STDOUT_CLOSED


def _discard_stdout() -> None:
    """Point stdout at the null device: what is still buffered goes nowhere at exit,
    instead of raising BrokenPipeError again (the recipe of Python's ``signal`` docs)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if context_commands.asks_replay_help(words):
        print(context_commands.REPLAY_HELP, end="")
        return 0
    parser = build_parser()
    args, extra = parser.parse_known_args(words)
    late_id = extra and not extra[0].startswith("-") and getattr(args, "event_id", "") is None
    if late_id and getattr(args, "request", None) == "replay":
        # "context replay --tenant T ID": argparse hands out the positionals before the
        # options, so the id after them is left over; it is the replay's.
        args.event_id, extra = extra[0], extra[1:]
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    handler: Handler = args.handler
    problem = startup.problem()
    if problem is not None:
        print(f"memledger: {problem}", file=sys.stderr)
        return EXIT_SETUP
    try:
        return handler(args)
    except LedgerError as e:
        return _report(e)
    except BrokenPipeError:  # stdout closed (main ends quietly), not a driver's error
        raise
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # an interrupt, or a refused connection, surfaces as a driver error
        if _interrupted(e):
            return 130
        failure = startup.connection_failure(e)
        if failure is None:
            raise
        return _report(DatabaseUnavailable(failure))


def _report(error: LedgerError) -> int:
    """Print ``memledger: Kind: message`` on one line; return the error's exit code."""
    print(f"memledger: {type(error).__name__}: {startup.one_line(str(error))}", file=sys.stderr)
    return next(code for kind, code in EXIT_CODES if isinstance(error, kind))


def _interrupted(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


if __name__ == "__main__":
    sys.exit(main())
