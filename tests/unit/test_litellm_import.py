"""litellm is imported one way by every adapter: with its bundled model map, no banner."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from memledger.adapters.litellm_import import LOCAL_MODEL_MAP, import_litellm


def test_import_litellm_tells_litellm_to_read_its_bundled_model_map(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCAL_MODEL_MAP, raising=False)
    litellm = import_litellm()
    assert os.environ[LOCAL_MODEL_MAP] == "True"
    assert litellm.suppress_debug_info is True
    assert callable(litellm.embedding) and callable(litellm.completion)


def test_import_litellm_keeps_an_operators_own_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCAL_MODEL_MAP, "true")
    import_litellm()
    assert os.environ[LOCAL_MODEL_MAP] == "true"


def test_the_variable_is_set_before_litellm_first_loads() -> None:
    """In a fresh process, litellm sees the variable while it imports (it reads it then)."""
    env = {k: v for k, v in os.environ.items() if k != LOCAL_MODEL_MAP}
    probe = (
        "import builtins, os\n"
        "seen = []\n"
        "real = builtins.__import__\n"
        "def spy(name, *a, **k):\n"
        "    if name == 'litellm' and not seen:\n"
        f"        seen.append(os.environ.get({LOCAL_MODEL_MAP!r}))\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = spy\n"
        "from memledger.adapters.litellm_import import import_litellm\n"
        "import_litellm()\n"
        "print(seen[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "True"
