"""The package is wired explicitly (``bootstrap.App``): no module rebinds a global, and only
the settings (pydantic-settings, read once by an entrypoint) and litellm's import read or
write the environment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "memledger"
# litellm reads where its model map comes from only from the environment, at its import.
ENVIRONMENT_ALLOWED = {"adapters/litellm_import.py"}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _environment_uses(tree: ast.AST) -> list[int]:
    """Lines that touch ``os.environ``, ``os.getenv`` or ``os.putenv``."""
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in {"environ", "getenv", "putenv", "unsetenv"}
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_rebinds_a_global_or_touches_the_environment(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rebound = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Global)]
    assert rebound == [], f"{path}: `global` at lines {rebound}"
    if str(path.relative_to(SRC)) not in ENVIRONMENT_ALLOWED:
        assert _environment_uses(tree) == [], f"{path}: the environment is read or written at these lines"


def test_the_scan_finds_what_it_forbids() -> None:
    tree = ast.parse("import os\nglobal x\nos.environ.setdefault('A', 'B')\nos.getenv('C')\n")
    assert _environment_uses(tree) == [3, 4]
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Global)] == [2]
