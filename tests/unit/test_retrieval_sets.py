"""The conversation sets retrieval is measured on (scripts/eval_retrieval.py) are whole:
every question's answer turns exist, in its tenant. The held-out, fresh and unseen sets ask every
question from a session no turn was said in; the built one asks about a session's own
task updates from within that session (15 questions), as they are visible nowhere else."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize(
    ("name", "fresh_sessions"),
    [
        ("retrieval_set.jsonl", False),
        ("retrieval_holdout.jsonl", True),
        ("retrieval_fresh.jsonl", True),
        ("retrieval_unseen.jsonl", True),
        ("retrieval_fifth.jsonl", True),
    ],
)
def test_every_answer_turn_exists_in_the_question_tenant(name: str, fresh_sessions: bool) -> None:
    rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]
    turns = [r for r in rows if r["type"] == "turn"]
    questions = [r for r in rows if r["type"] == "question"]
    assert len(turns) + len(questions) == len(rows)
    assert len(questions) >= 120
    tenant_of = {t["turn_id"]: t["tenant"] for t in turns}
    assert len(tenant_of) == len(turns), "a turn id is used twice"
    sessions = {t["scopes"]["session"] for t in turns}
    for q in questions:
        assert q["answer_turns"], q["id"]
        assert {tenant_of.get(a) for a in q["answer_turns"]} == {q["tenant"]}, q["id"]
        assert not fresh_sessions or q["scopes"]["session"] not in sessions, q["id"]
    assert len({q["id"] for q in questions}) == len(questions)


@pytest.mark.parametrize(
    "name",
    [
        "retrieval_set.jsonl",
        "retrieval_holdout.jsonl",
        "retrieval_fresh.jsonl",
        "retrieval_unseen.jsonl",
        "retrieval_fifth.jsonl",
    ],
)
def test_the_turns_of_a_session_are_in_time_order(name: str) -> None:
    rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]
    last: dict[tuple[str, str], datetime] = {}
    per_session: Counter[tuple[str, str]] = Counter()
    for t in (r for r in rows if r["type"] == "turn"):
        key = (t["tenant"], t["scopes"]["session"])
        at = datetime.fromisoformat(t["occurred_at"])
        assert at.tzinfo is not None, t["turn_id"]
        assert key not in last or at >= last[key], t["turn_id"]
        last[key] = at
        per_session[key] += 1
    assert len(per_session) >= 30
