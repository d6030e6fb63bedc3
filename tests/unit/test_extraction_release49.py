"""Release 49: a described person's workplace is read only inside the description: "N,
our lawyer, reviewed the contract with O" is a doing with O after the apposition closed,
no job at O. Names are invented; each case failed on release 48 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    "text",
    [
        "Agnieszka, our lawyer, reviewed the contract with Umbrella Ltd.",
        "Tobiah, my accountant, sorted the dispute with Halden Bank.",
    ],
)
def test_a_doing_after_an_apposition_is_no_job_at_its_organization(text: str) -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges(text))


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Jonas - her manager, from Aurelian Insurance", ("Jonas", "PART_OF", "Aurelian Insurance")),
        ("Radka, a contractor from Halyard Digital, fixed it.", ("Radka", "PART_OF", "Halyard Digital")),
    ],
)
def test_a_workplace_inside_the_description_is_still_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # guards
