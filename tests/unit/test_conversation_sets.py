"""The conversation sets of ``scripts/eval_conversations.py`` (issue 23) are made by
``scripts/conversation_set.py`` and frozen: each file is what the generator makes, byte
for byte, and the test split shares no content word with the development split."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETS = {"dev": ROOT / "tests/data/conversations_dev.jsonl", "test": ROOT / "tests/data/conversations_test.jsonl"}


@pytest.mark.parametrize("split", sorted(SETS))
def test_each_set_is_what_the_generator_makes(split: str) -> None:
    command = [sys.executable, str(ROOT / "scripts/conversation_set.py"), "--split", split, "--out", str(SETS[split])]
    done = subprocess.run([*command, "--check"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("split", sorted(SETS))
def test_each_set_is_as_large_as_the_issue_asks(split: str) -> None:
    conversations = [json.loads(line) for line in SETS[split].read_text(encoding="utf-8").splitlines()]
    assert len(conversations) >= 6
    for conversation in conversations:
        assert len(conversation["sessions"]) >= 10
        assert sum(len(s["turns"]) for s in conversation["sessions"]) >= 150
    questions = [q for c in conversations for q in c["questions"]]
    assert len(questions) >= 300
    kinds = {q["category"] for q in questions}
    assert kinds == {"single-hop", "multi-hop", "temporal", "open-domain", "unanswerable"}
    turn_ids = {t["turn_id"] for c in conversations for s in c["sessions"] for t in s["turns"]}
    assert all(set(q["evidence"]) <= turn_ids for q in questions)
    assert all(not q["evidence"] for q in questions if q["category"] == "unanswerable")
