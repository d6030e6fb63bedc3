"""Release 20: co-subjects working on a thing a noun for work names are colleagues. Names
are invented; each case failed on release 19 unless marked a guard."""

from __future__ import annotations

from tests.unit.extracted import edges


def test_co_subjects_shipping_a_work_are_colleagues() -> None:
    assert ("user", "WORKS_WITH", "Amaru") in edges("Amaru and I ship the Android app.")


def test_co_subjects_sharing_a_thing_at_home_are_not() -> None:
    assert ("user", "WORKS_WITH", "Laila") not in edges("Laila and I decided on a daycare.")  # a guard
