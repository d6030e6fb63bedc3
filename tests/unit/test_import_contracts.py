"""The import contracts (``[tool.importlinter]`` in pyproject.toml) cover the whole package:
a module no contract names is one whose imports nobody checks, so adding one (an ``ids.py``,
a new command module) without placing it in the layers fails here."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "memledger"


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _named(field: str, contracts: list[dict[str, object]]) -> set[str]:
    """Every module a contract names in ``field`` (a layer may list siblings with | or :)."""
    names: set[str] = set()
    for contract in contracts:
        for entry in contract.get(field, []):  # type: ignore[attr-defined]
            names.update(part.strip() for part in str(entry).replace(":", "|").split("|"))
    return names


def _modules(under: Path) -> list[str]:
    """The dotted names of the package's modules and subpackages under ``under``."""
    found = []
    for path in sorted(under.iterdir()):
        if path.name.startswith(("_", ".")) or not (path.suffix == ".py" or (path / "__init__.py").exists()):
            continue
        found.append(".".join(("memledger", *path.relative_to(PACKAGE).with_suffix("").parts)))
    return found


def test_every_top_level_module_has_a_layer() -> None:
    layers = _named("layers", _contracts())
    missing = [name for name in _modules(PACKAGE) if name not in layers]
    assert not missing, f"modules in no layer of the layers contract: {missing}"


@pytest.mark.parametrize(("folder", "suffixes"), [("api", ("routes_",)), ("cli", ("_commands", "demo"))])
def test_every_route_and_command_module_is_in_its_independence_contract(folder: str, suffixes: tuple[str, ...]) -> None:
    independent = _named("modules", [c for c in _contracts() if c["type"] == "independence"])
    entrypoints = [
        name
        for name in _modules(PACKAGE / folder)
        if any(name.rsplit(".", 1)[1].startswith(s) or name.endswith(s) for s in suffixes)
    ]
    assert entrypoints, f"no route or command module found in {folder}/"
    missing = [name for name in entrypoints if name not in independent]
    assert not missing, f"modules in no independence contract: {missing}"


def test_surfaces_and_selection_each_have_a_forbidden_contract() -> None:
    sources = _named("source_modules", [c for c in _contracts() if c["type"] == "forbidden"])
    expected = {"memledger.api", "memledger.cli", "memledger.mcp_server", "memledger.library", "memledger.selection"}
    assert expected <= sources, f"no forbidden contract for: {sorted(expected - sources)}"


def test_the_contracts_are_kept() -> None:
    # In a process of its own: lint-imports configures logging (dictConfig), which would
    # disable every logger this test process holds, and the tests after it see no logs.
    linter = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_package_ships_in_the_wheel() -> None:
    """The wheel lists its packages (pyproject ``[tool.setuptools] packages``); a
    subpackage missing there installs without its modules and fails only off an editable
    install."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    packages = {
        ".".join(("memledger", *init.parent.relative_to(PACKAGE).parts)) for init in PACKAGE.rglob("__init__.py")
    }
    assert packages - listed == set()
