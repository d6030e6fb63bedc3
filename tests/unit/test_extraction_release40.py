"""Release 40: a verb offered as an alternative after "or" is no use, and the speaker's
co-workers named as "my co-..." are the speaker's, not each other's. Names are invented;
each case failed on release 39 unless marked a guard."""

from __future__ import annotations

from tests.unit.extracted import edges, speakers


def test_a_verb_offered_after_or_is_no_use() -> None:
    text = "Vue 2 is end of life, we need to upgrade to Vue 3 or rewrite in Svelte."
    assert "Svelte" not in speakers(text, "USES")


def test_a_verb_of_its_own_still_states_a_use() -> None:
    assert "Obsidian" in speakers("I write in Obsidian every morning.", "USES")  # a guard


def test_my_co_workers_are_mine_not_each_others() -> None:
    found = edges("Selin and Marek are my co-maintainers on the open source project Larkspur.")
    assert ("Selin", "WORKS_WITH", "Marek") not in found


def test_people_who_co_lead_work_with_each_other() -> None:
    assert ("Dmitri", "WORKS_WITH", "Olga") in edges("Dmitri and Olga co-lead the Mumbai team.")  # a guard
