"""Release 61: the forty-second set's first look. A word of deciding governs the uses after
it in its clause, not those before ("N runs payroll through X, and for invoicing we decided
on Y"); ", and <Name> is ..." opens a clause of its own; "he'd", "she'd" stand for the
person named before. Names are invented; each case failed on release 60 unless marked a
guard."""

from __future__ import annotations

from tests.unit.extracted import edges


def test_a_decision_after_a_use_does_not_make_it_a_choice() -> None:
    found = edges("My partner Rahim Okafor runs payroll through Paylark, and for invoicing we decided on Billow.")
    assert ("Rahim Okafor", "USES", "Paylark") in found
    assert ("Rahim Okafor", "DECIDED", "Paylark") not in found
    assert ("user", "DECIDED", "Billow") in found


def test_a_decision_before_a_use_is_a_choice() -> None:
    assert ("user", "DECIDED", "Paylark") in edges("We decided to use Paylark.")  # a guard


def test_a_name_with_its_own_copula_after_and_is_no_object_of_the_choice() -> None:
    found = edges("Our team settled on Traceline for tracing, and Glowhive is where the traces end up.")
    assert ("user", "DECIDED", "Traceline") in found
    assert ("user", "DECIDED", "Glowhive") not in found


def test_hed_stands_for_the_person() -> None:
    found = edges("The Nightjar billing project is maintained by Babatunde, and he'd rather use Provecheck.")
    assert ("Babatunde", "PREFERS", "Provecheck") in found
    assert ("Nightjar", "PREFERS", "Provecheck") not in found
