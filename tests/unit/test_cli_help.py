"""The command line's help reads as prose for people, and says what each option does
and what it is when not given."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from memledger.cli import main


def subcommands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every (command path, parser) below ``parser``, e.g. ("projections rebuild", ...)."""
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((" ".join((*path, name)), sub))
                found += subcommands(sub, (*path, name))
    return found


def options() -> list[tuple[str, argparse.Action]]:
    return [
        (f"{command} {action.option_strings[-1]}", action)
        for command, parser in subcommands(main.build_parser())
        for action in parser._actions
        if action.option_strings and not isinstance(action, argparse._HelpAction) and action.help != argparse.SUPPRESS
    ]


def help_of(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        assert main.main(list(argv)) == 0
    return out.getvalue()


@pytest.mark.parametrize(("option", "action"), options(), ids=[name for name, _ in options()])
def test_every_option_says_what_it_does_and_its_default(option: str, action: argparse.Action) -> None:
    assert action.help, f"{option} has no help"
    assert "default" in action.help or "required" in action.help, f"{option}: {action.help!r}"


def test_every_argument_has_help() -> None:
    bare = [
        f"{command} {action.dest}"
        for command, parser in subcommands(main.build_parser())
        for action in parser._actions
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert bare == []


def test_the_main_help_is_prose_not_a_docstring() -> None:
    text = help_of("--help")
    assert "``" not in text and "LedgerError" not in text
    assert "memledger demo" in text and "exit codes" in text


def test_context_replay_help_is_replays_own() -> None:
    text = help_of("context", "replay", "--help")
    assert "EVENT_ID" in text and "--tenant" in text
    assert "--style" not in text and "--budget" not in text


def test_context_help_after_the_replay_options_is_replays_too() -> None:
    assert help_of("context", "replay", "--tenant", "t", "-h") == help_of("context", "replay", "--help")


def test_a_request_saying_replay_keeps_the_context_help() -> None:
    assert "--style" in help_of("context", "--request", "replay", "--help")
