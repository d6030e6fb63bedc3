"""Release 75: a standup's status lines. "- me: Ulverby migration", "- Uzoma: Kittering
upgrade": who opens the line works on the project it names next, in a fragment with no
verb of its own. Names are invented; each case failed on release 74 unless marked a
guard."""

from __future__ import annotations

from tests.unit.extracted import edges


def test_my_status_line_names_my_work() -> None:
    assert ("user", "WORKS_ON", "Ulverby") in edges("Standup:\n- me: Ulverby migration\n- Osvaldo: on-call")


def test_a_colleagues_status_line_names_their_work() -> None:
    text = "Standup notes\n- Aigerim: reviewing PRs\n- Luka: Puffinry release, blocked on QA"
    assert ("Luka", "WORKS_ON", "Puffinry") in edges(text)


def test_still_on_the_migration_keeps_its_worker() -> None:
    text = "standup:\n- me: reviewing PRs\n- Chidinma: still on the Grebeholt migration"
    assert ("Chidinma", "WORKS_ON", "Grebeholt") in edges(text)  # a guard


def test_a_line_with_a_verb_of_its_own_is_no_status() -> None:
    assert ("Priya", "WORKS_ON", "Atlasby") not in edges("Priya: Atlasby is down again.")  # a guard
