"""Release 41: the speaker's post held in an organization, work at night at one, and
people listed before "from <organization>". Names are invented; each case failed on
release 40 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


@pytest.mark.parametrize(
    ("text", "org"),
    [
        ("I'm the treasurer of Greywhistle Cycling Club.", "Greywhistle Cycling Club"),
        ("I work nights at Duskmere Logistics.", "Duskmere Logistics"),
    ],
)
def test_a_post_or_shift_at_an_organization_makes_the_speaker_part_of_it(text: str, org: str) -> None:
    assert org in speakers(text, "PART_OF")


def test_a_fan_is_no_member() -> None:
    assert not speakers("I'm the biggest fan of Kestrel Rovers.", "PART_OF")  # a guard


def test_people_listed_before_from_an_organization_are_each_part_of_it() -> None:
    found = edges("Ikaika, Mirela and Tenzin from the Greyfriars Data Guild are giving the talk.")
    assert {(p, "PART_OF", "Greyfriars Data Guild") for p in ("Mirela", "Tenzin")} <= found


@pytest.mark.parametrize(
    "text",
    [
        "I'm the former treasurer of the Larkspur Rowing Club.",
        "Thanks Ama, Kofi from Lumenfold Software will call you tomorrow.",
        "Mum, Dad and Kofi from Lumenfold Software came to dinner.",
    ],
)
def test_a_former_post_an_addressed_name_or_kin_is_no_member(text: str) -> None:
    found = edges(text)
    assert not {e for e in found if e[1] == "PART_OF" and e[0] in ("user", "Ama", "Dad")}  # a guard
