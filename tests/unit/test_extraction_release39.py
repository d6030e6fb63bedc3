"""Release 39: a model code counting dimensions closes a product's name, and a note's
item compared with others names no use or choice of them. Names are invented; each case
failed on release 38 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import entities, speakers


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I decided to use Planner 5D for the new room.", "Planner 5D"),
        ("I'm planning the kitchen in Sweet Home 3D.", "Sweet Home 3D"),
    ],
)
def test_a_model_code_counting_dimensions_closes_a_name(text: str, name: str) -> None:
    assert entities(text).get(name) == "tool"


@pytest.mark.parametrize(
    ("text", "name"),
    [("Call with Priya 3PM tomorrow.", "Priya"), ("We moved Notion 3 times this year.", "Notion")],
)
def test_a_time_or_a_count_after_a_name_stays_out_of_it(text: str, name: str) -> None:
    assert name in entities(text)  # a guard


def test_a_note_item_compared_with_others_names_no_choice_of_them() -> None:
    text = "Decided: Kontiq for the freelance account (cheaper than Tidewell and Qontra for my volume)."
    assert not {"Qontra", "Tidewell"} & speakers(text, "DECIDED")


def test_an_item_after_a_comparison_is_listed() -> None:
    assert "Todoist" in speakers("Setup: Obsidian instead of Notion and Todoist for tasks", "USES")  # a guard
