"""Release 32: a list of names after a plural role, ">" in a preference, packing lists
that go on after their plan word, verbs after "project", relative clauses after longer
or hyphenated noun phrases, and a note's bare "depends on". Names are invented; each
case failed on release 31 unless marked a guard."""

from __future__ import annotations

from tests.unit.extracted import edges, entities


def test_names_listed_after_a_plural_role_share_it() -> None:
    found = edges("Night crew: my colleagues Tamsin, Orla Vance and Bex.")
    assert {("user", "WORKS_WITH", name) for name in ("Tamsin", "Orla Vance", "Bex")} <= found
    assert not {e for e in found if e[1] == "KNOWS"}


def test_an_earlier_name_is_no_role_for_the_next() -> None:
    assert ("user", "KNOWS", "Cengiz") in edges("Our landlord Cengiz fixed the boiler.")  # a guard


def test_the_side_after_a_greater_than_sign_is_not_preferred() -> None:
    found = edges("prefer: Strava > Garmin Connect")
    assert ("user", "PREFERS", "Strava") in found
    assert ("user", "PREFERS", "Garmin Connect") not in found


def test_a_packing_list_that_goes_on_lists_no_uses() -> None:
    assert not edges("Packing list so far: Kindle, AirPods, a Petzl headlamp.")


def test_a_verb_after_project_is_no_projects_name() -> None:
    text = "Our Juniper orchard project relies on Fieldwick for the soil maps."
    assert "relies" not in entities(text)
    assert ("Juniper", "DEPENDS_ON", "Fieldwick") in edges(text)


def test_a_lower_case_project_after_project_is_still_named() -> None:
    assert ("user", "WORKS_ON", "atlas") in edges("working on project atlas now")  # a guard


def test_a_relative_clause_after_four_words_is_said_of_the_name() -> None:
    found = edges("The Wayfinder orienteering app we made for the scouts depends on Google Maps.")
    assert ("Wayfinder", "DEPENDS_ON", "Google Maps") in found
    assert ("user", "USES", "Google Maps") not in found


def test_hyphenated_words_stay_in_the_noun_phrase() -> None:
    found = edges("The Thimble custom-order tool we built depends on Shopify Payments.")
    assert ("user", "USES", "Shopify Payments") not in found


def test_a_notes_bare_depends_on_is_no_use_of_the_writers() -> None:
    assert not {e for e in edges("Bramble build:\n- depends on: Jotform, Stripe\n- owner: Ilse") if e[0] == "user"}


def test_the_speaker_relying_on_a_thing_depends_on_it() -> None:
    assert ("user", "DEPENDS_ON", "Notion") in edges("We rely on Notion for everything.")  # a guard


def test_a_second_verb_after_and_ends_the_objects() -> None:
    found = edges("Hartwell depends on Vipsly for thumbnails and crashes with Segvault on some files.")
    assert ("Hartwell", "DEPENDS_ON", "Vipsly") in found
    assert ("Hartwell", "DEPENDS_ON", "Segvault") not in found


def test_a_notes_first_person_reliance_is_the_writers() -> None:
    assert ("user", "DEPENDS_ON", "Dropwell") in edges("Still relying on Dropwell for backups.")  # a guard


def test_a_project_named_by_a_bare_verb_keeps_its_name() -> None:
    assert ("build", "DEPENDS_ON", "Bazel") in edges("project build relies on Bazel")  # a guard
