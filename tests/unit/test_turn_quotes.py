"""Quoted turns in a block (issue 23): the part of a long turn that speaks to the
request, a share of the budget the facts leave to the best turns, the few turns
an item cites, and turns ranked by both of their channels' scores."""

from __future__ import annotations

import pytest

from memledger.selection.excerpts import EXCERPT_CHARS, best_cited, excerpt, turn_item
from memledger.selection.rank import MAX_TURNS, TURN_SHARE, add_turns, blend, estimate_chars, turn_reserve
from memledger.selection.types import SelectedItem
from memledger.service.episodes import without_names

LONG = " ".join(
    [f"Sentence {i} is about the weather and nothing else at all, really." for i in range(12)]
    + ["My sister Ines finally opened her bakery in Porto last spring."]
    + [f"Filler {i} talks about the traffic on the way home today." for i in range(12)]
)


def test_a_short_turn_is_quoted_whole() -> None:
    assert excerpt("  I adopted a beagle.  ", "what dog?") == "I adopted a beagle."


def test_a_long_turn_is_quoted_by_the_sentences_holding_the_requests_words() -> None:
    quoted = excerpt(LONG, "Where did Ines open her bakery?")
    assert "Ines finally opened her bakery in Porto" in quoted
    assert len(quoted) <= EXCERPT_CHARS + 2
    assert quoted.startswith("\u2026") and quoted.endswith("\u2026")


def test_a_long_turn_matching_nothing_is_quoted_from_its_start() -> None:
    quoted = excerpt(LONG, "zebra")
    assert quoted.startswith("Sentence 0") and quoted.endswith("\u2026")


def test_one_sentence_longer_than_the_limit_is_cut() -> None:
    quoted = excerpt("word " * 200, "word")
    assert len(quoted) <= EXCERPT_CHARS and quoted.endswith("\u2026")


def test_an_item_cites_the_turns_the_request_found_first_then_its_latest() -> None:
    cited = best_cited(["t1", "t2", "t3", "t4", "t5"], {"t4": 2, "t2": 1}, 3)
    assert cited == ("t2", "t4", "t5")
    assert best_cited(["t1", "t1", "t2"], {}, 3) == ("t2", "t1")


def _fact(item_id: str, chars: int) -> SelectedItem:
    return SelectedItem(item_id=item_id, kind="fact", text="x" * chars, confidence=0.9, score=1.0, source_turns=("f",))


def test_facts_leave_the_best_turns_their_share_and_turns_fill_what_is_left() -> None:
    turns = [turn_item(f"t{i}", f"turn number {i} " * 10, "turn") for i in range(20)]
    budget = 3000
    reserve = turn_reserve(turns, budget)
    assert 0 < reserve <= budget * TURN_SHARE
    facts = [_fact(f"f{i}", 200) for i in range(100)]
    room = budget - reserve
    chosen_facts: list[SelectedItem] = []
    for fact in facts:  # what ``choose`` would take in the room left
        if sum(map(estimate_chars, chosen_facts)) + estimate_chars(fact) > room:
            break
        chosen_facts.append(fact)
    chosen = add_turns(chosen_facts, turns, budget)
    quoted = [item for item in chosen if item.kind == "turn"]
    assert quoted and quoted[0].item_id == "t0", "the best turn is never crowded out"
    assert sum(map(estimate_chars, chosen)) <= budget
    assert len(quoted) <= MAX_TURNS


def test_a_turn_a_chosen_fact_cites_is_not_quoted_again() -> None:
    fact = SelectedItem(item_id="f", kind="fact", text="x", confidence=0.9, score=1.0, source_turns=("t0",))
    turns = [turn_item("t0", "said", "said"), turn_item("t1", "also said", "said")]
    assert [i.item_id for i in add_turns([fact], turns, 5000)] == ["f", "t1"]


def test_no_turns_reserve_nothing() -> None:
    assert turn_reserve([], 5000) == 0


def test_blend_keeps_a_turn_far_ahead_by_words_ahead_of_turns_near_only_by_meaning() -> None:
    words = {"answer": 11.0, **{f"name{i}": 0.7 for i in range(10)}}
    near = {f"name{i}": 0.40 + i * 0.01 for i in range(10)} | {"answer": 0.55}
    assert blend(words, near, 0.8)[0] == "answer"


def test_blend_ranks_by_meaning_alone_when_words_find_nothing_and_by_words_alone_without_vectors() -> None:
    assert blend({}, {"a": 0.5, "b": 0.2, "c": 0.3}, 0.8) == ["b", "c", "a"]
    assert blend({"a": 1.0, "b": 3.0}, {}, 0.8) == ["b", "a"]
    assert blend({"a": 1.0, "b": 1.0}, {}, 0.8) == ["a", "b"], "ties keep the text channel's order"


def test_blend_favours_the_turns_of_a_speaker_the_request_names() -> None:
    assert blend({"other": 2.0, "theirs": 2.0}, {}, 0.8) == ["other", "theirs"]
    assert blend({"other": 2.0, "theirs": 2.0}, {}, 0.8, favoured={"theirs"}) == ["theirs", "other"]
    # a bonus, not a filter: a turn far ahead by its words stays ahead
    assert blend({"other": 9.0, "theirs": 1.0}, {}, 0.8, favoured={"theirs"})[0] == "other"


@pytest.mark.parametrize(
    ("request_", "names", "left"),
    [
        ("What is the name of Noor's bird?", ["Noor"], "What is the name of bird?"),
        ("When did Mary-Jane O'Neil and Tomas go hiking?", ["Mary-Jane O'Neil", "Tomas"], "When did and go hiking?"),
        ("Noors and Noor\u2019s plans", ["Noor"], "Noors and plans"),
        ("Noor?", ["Noor"], "Noor?"),  # nothing else would be left
    ],
)
def test_a_speakers_name_is_taken_out_of_what_is_searched_by_meaning(
    request_: str, names: list[str], left: str
) -> None:
    assert without_names(request_, names) == left
