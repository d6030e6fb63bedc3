"""Release 69: the fiftieth set's first look. A word describing a person's role is no
name ("my Turkish tutor"); "of" after a titled name ends it; "I worked at X" is over;
"<Name> stack:" opening a note names the project its lines serve; ", Tuomas from X is
..." opens a clause; a note's later fragments are notes too; ", which keeps ... in X"
after a name is the named one's use. Names are invented; each case failed on release 68
unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_a_word_describing_a_role_is_no_name() -> None:
    text = "Selin, my Turkish tutor, sets homework through Quizlet every week."
    assert "Turkish" not in entities(text)
    assert ("user", "USES", "Turkish") not in edges(text)


def test_a_product_before_a_role_stays_a_product() -> None:
    assert entities("My Peloton instructor is great.").get("Peloton") == "tool"  # a guard


def test_of_after_a_titled_name_ends_it() -> None:
    found = edges("Our accountant, Ms. Delacroix-Webb of Penfold & Marsh, files everything through Xero.")
    assert ("Delacroix-Webb", "PART_OF", "Penfold & Marsh") in found
    assert ("Delacroix-Webb", "USES", "Xero") in found


def test_i_worked_at_is_over() -> None:
    assert not edges("I worked at Greystone Haulage for two years before the takeover.")


def test_ive_worked_at_goes_on() -> None:
    assert ("user", "PART_OF", "Greystone Haulage") in edges("I've worked at Greystone Haulage for years.")  # a guard


def test_a_named_stack_label_names_the_project() -> None:
    found = edges("Quenby stack: FastAPI, Pydantic, Postgres.")
    assert ("Quenby", "USES", "FastAPI") in found
    assert ("user", "USES", "FastAPI") not in found


def test_an_ordinary_word_before_a_stack_label_names_no_project() -> None:
    assert ("user", "USES", "Proxmox") in edges("Home stack: Proxmox, Pi-hole.")  # a guard


def test_a_name_from_a_workplace_opens_its_own_clause() -> None:
    text = (
        "Ama Ofori leads the SRE team, Rodrigo Peña owns the Beacon service, Tuomas from Vireo Systems is our contact."
    )
    found = edges(text)
    assert ("Rodrigo Peña", "WORKS_ON", "Vireo Systems") not in found
    assert ("Rodrigo Peña", "WORKS_ON", "Beacon") in found


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Thesis: ch.3 draft to Prof. Lindahl by Fri. Refs in Mendeley.", "Mendeley"),
        ("oncall: Thandiwe this wk, Arjun next. Escalation via PagerDuty.", "PagerDuty"),
    ],
)
def test_a_notes_later_fragments_are_notes(text: str, tool: str) -> None:
    assert ("user", "USES", tool) in edges(text)


def test_a_tickets_later_lines_are_prose() -> None:
    text = "Ticket: strap not pairing with the app. Tried: re-pair, reinstall. Strap shows up in the Bluetooth list."
    assert ("user", "USES", "Bluetooth") not in edges(text)  # a guard


def test_which_after_a_name_does_the_keeping() -> None:
    text = "Dario Lindqvist manages the milking shed at Fernvale Dairy, which keeps its herd records in DairyComp."
    assert ("Fernvale Dairy", "USES", "DairyComp") in edges(text)
