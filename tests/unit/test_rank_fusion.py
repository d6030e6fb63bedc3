"""Reciprocal rank fusion's constant: how much a channel's first places count."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memledger.selection.rank import RRF_K, Candidate, fuse, relevant
from memledger.selection.types import SelectedItem
from memledger.service import search
from memledger.service.search import SEARCH_RRF_K


def _turn(item_id: str, **ranks: int) -> Candidate:
    item = SelectedItem(item_id=item_id, kind="turn", text=item_id, confidence=1.0, score=0.0, source_turns=(item_id,))
    return Candidate(item=item, ranks=dict(ranks))


def _order(rrf_k: int) -> list[str]:
    pool = [_turn("first-by-words", text=1), _turn("low-in-both", text=30, vector=12)]
    return [c.item.item_id for c in fuse(pool, datetime.now(UTC), rrf_k=rrf_k)]


def test_with_search_constant_a_channel_first_place_beats_low_places_in_two() -> None:
    assert _order(SEARCH_RRF_K) == ["first-by-words", "low-in-both"]


def test_with_selection_constant_two_low_places_beat_one_first_place() -> None:
    assert _order(RRF_K) == ["low-in-both", "first-by-words"]


@pytest.mark.parametrize("rrf_k", [5, SEARCH_RRF_K, 30, RRF_K])
def test_first_place_in_one_channel_scores_between_0_4_and_0_5_whatever_the_constant(rrf_k: int) -> None:
    [only] = fuse([_turn("t", text=1)], datetime.now(UTC), rrf_k=rrf_k)
    assert only.item.score - 0.05 == pytest.approx(rrf_k / (2 * (rrf_k + 1)), abs=1e-6)  # 0.05: confidence
    assert 0.4 < only.item.score - 0.05 < 0.5


def _cites(item_id: str, kind: str, *turns: str) -> Candidate:
    item = SelectedItem(item_id=item_id, kind=kind, text=item_id, confidence=1.0, score=0.0, source_turns=turns)  # type: ignore[arg-type]
    return Candidate(item=item)


def test_search_moves_items_citing_only_turns_already_cited_after_the_rest() -> None:
    ranked = [
        _cites("fact-a", "fact", "t1"),
        _cites("t1", "turn", "t1"),  # says what fact-a says
        _cites("entity-x", "entity", "t1", "t2"),  # brings t2
        _cites("fact-b", "fact", "t2"),  # t2 is cited above now
        _cites("t3", "turn", "t3"),
        _cites("no-turns", "entity"),  # cites nothing: nothing to repeat
    ]
    order = [c.item.item_id for c in search._new_evidence_first(ranked)]
    assert order == ["fact-a", "entity-x", "t3", "no-turns", "t1", "fact-b"]
    assert sorted(order) == sorted(c.item.item_id for c in ranked)  # nothing dropped


def test_a_repeated_item_with_evidence_still_comes_before_edges_only_the_walk_reached() -> None:
    """The audit's case: the entity "Kubernetes" cites the turn of the fact "We decided to
    deploy Phoenix on Kubernetes."; the fact, matched by the query's words, must not fall
    behind PREFERS edges two hops away that share no word with the query."""
    evidenced = [_cites("kubernetes", "entity", "t1"), _cites("fact-k8s", "fact", "t1")]
    walked = [_cites(f"edge-{n}", "relationship", f"t{n + 2}") for n in range(6)]
    order = [c.item.item_id for c in search._new_evidence_first(evidenced, walked)]
    assert order.index("fact-k8s") < order.index("edge-0")
    assert order[:2] == ["kubernetes", "fact-k8s"]
    repeated_walk = [_cites("edge-again", "relationship", "t1")]  # says nothing new: last
    assert [c.item.item_id for c in search._new_evidence_first(evidenced, walked + repeated_walk)][-1] == "edge-again"


# --- what may answer a general request ------------------------------------------------------


def _fact(item_id: str, *channels: str, conflict: str | None = None) -> Candidate:
    item = SelectedItem(
        item_id=item_id,
        kind="fact",
        text=item_id,
        confidence=0.9,
        score=0.0,
        conflicted=bool(conflict),
        conflict_id=conflict,
    )
    return Candidate(item=item, ranks=dict.fromkeys(channels, 1))


def _ids(found: list[Candidate]) -> list[str]:
    return [c.item.item_id for c in found]


@pytest.mark.parametrize(
    "request_text",
    ["What is the capital of Mongolia?", "Write a haiku about autumn.", "Find the derivative of x squared."],
)
def test_a_request_about_something_else_keeps_no_fact_found_only_for_being_recent(request_text: str) -> None:
    assert _ids(relevant([_fact("birthday", "recent")], request_text, "general")) == []


def test_a_general_request_about_something_else_takes_no_fact_found_only_for_being_recent() -> None:
    pool = [
        _fact("birthday", "recent"),
        _fact("capital", "text", "recent"),
        _fact("near", "vector"),
        _fact("side-a", "recent", conflict="c1"),
        _fact("side-b", "conflict", conflict="c1"),
        _fact("side-c", "text", conflict="c2"),
        _fact("side-d", "conflict", conflict="c2"),
    ]
    kept = _ids(relevant(pool, "What is the capital of Mongolia?", "general"))
    assert kept == ["capital", "near", "side-c", "side-d"]  # a relevant fact's conflict partner stays


@pytest.mark.parametrize(
    ("request_text", "category"),
    [
        ("Write my status update.", "general"),
        ("What is the capital of Mongolia?", "coding"),
        ("Book a table for dinner.", "general"),
        ("Could you please recommend a restaurant for Friday?", "general"),
    ],
)
def test_a_request_about_the_person_or_of_a_kind_keeps_what_is_recent(request_text: str, category: str) -> None:
    pool = [_fact("birthday", "recent"), _fact("capital", "text")]
    assert _ids(relevant(pool, request_text, category)) == ["birthday", "capital"]
