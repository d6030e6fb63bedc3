"""Entry point of the ``memledger`` command: parses arguments, maps errors to exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from memledger.cli import (
    context_commands,
    db_commands,
    demo,
    erasure_commands,
    events_commands,
    extraction_commands,
    integrity_commands,
    projections_commands,
    serve_commands,
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

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    parser = argparse.ArgumentParser(prog="memledger", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo.register(commands)
    db_commands.register(commands)
    events_commands.register(commands)
    projections_commands.register(commands)
    extraction_commands.register(commands)
    context_commands.register(commands)
    serve_commands.register(commands)
    integrity_commands.register(commands)
    erasure_commands.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code."""
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except LedgerError as e:
        code = next(code for kind, code in EXIT_CODES if isinstance(e, kind))
        print(f"memledger: {type(e).__name__}: {e}", file=sys.stderr)
        return code
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # an interrupt can surface wrapped in a driver error
        if _interrupted(e):
            return 130
        raise


def _interrupted(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


if __name__ == "__main__":
    sys.exit(main())
