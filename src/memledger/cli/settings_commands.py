"""``memledger settings --tenant T [--extraction-mode MODE] [--capture on|off] ...``:
read a tenant's switches, or change them (each change is an event of the tenant)."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_tenant
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import tenant_settings

ON_OFF = {"on": True, "off": False}
SWITCH_HELP = {
    "capture": "record this tenant's turns",
    "recall": "serve this tenant memory in context blocks",
    "auto_promote": "promote memory directives ('decision: ...') at once",
    "broad_scope_writes": "let extraction write the user and org scopes",
}


def register(commands: Any) -> None:
    """Add ``settings`` to the parser."""
    parser = commands.add_parser("settings", help="show or change a tenant's switches, e.g. its extraction mode")
    add_tenant(parser)
    parser.add_argument(
        "--extraction-mode",
        choices=tenant_settings.EXTRACTION_MODES,
        help="how the worker extracts this tenant's turns from now on: heuristic (offline), llm (every turn to"
        " the model) or hybrid (the heuristic, and the model only for turns it left unsettled); llm and"
        " hybrid need MEMLEDGER_LLM_MODEL (default: unchanged; at first MEMLEDGER_EXTRACTOR's mode)",
    )
    for name, text in SWITCH_HELP.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}", choices=ON_OFF, help=f"{text}: on or off (default: unchanged)"
        )
    parser.add_argument("--actor", help="who changed them, for the record (default: none)")
    add_json(parser, "the settings as one JSON object")
    parser.set_defaults(handler=settings_command)


def settings_command(args: argparse.Namespace) -> int:
    """Change the switches named, if any; print the settings in force."""
    asked: dict[str, object] = {name: ON_OFF[v] for name in SWITCH_HELP if (v := getattr(args, name)) is not None}
    if args.extraction_mode:
        asked["extraction_mode"] = args.extraction_mode
    database = bootstrap.connect(Settings())
    try:
        engine = database.for_tenant(args.tenant)
        if asked:
            change = msgspec.structs.replace(tenant_settings.switches_change(asked), changed_by=args.actor)
            current = tenant_settings.change(engine, args.tenant, change, actor=args.actor)
        else:
            current = tenant_settings.current(engine, args.tenant)
        default_mode = database.settings.extractor
    finally:
        database.close()
    shown = msgspec.to_builtins(current)
    if args.json:
        print(json_line(shown))
        return 0
    for name, value in shown.items():
        if name == "extraction_mode":
            print(f"extraction_mode: {value or f'{default_mode} (the default, MEMLEDGER_EXTRACTOR)'}")
        else:
            print(f"{name}: {'on' if value else 'off'}")
    return 0
