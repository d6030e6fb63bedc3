"""Release 36: product names that hold an ordinary word a gazetteer knows, institutions
named in lower case, a name set beside the speaker's piece of work, roles of shared work,
plans given up before "and", a product's maker, labels of other people's lists, and the
business the speaker runs. Names are invented; each case failed on release 35 unless
marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I got an Arduino Nano for the weather station.", "Arduino Nano"),
        ("The rota lives in Linux Mint on the old laptop.", "Linux Mint"),
        ("My coffee comes out of a Breville Barista Express.", "Breville Barista Express"),
        ("We bought an Amazon Echo Show for gran.", "Amazon Echo Show"),
        ("Our shop depends on Cricut Design Space, which crashes.", "Cricut Design Space"),
    ],
)
def test_an_ordinary_word_inside_a_product_name_stays_in_it(text: str, name: str) -> None:
    assert entities(text).get(name) == "tool"


def test_a_language_and_a_framework_side_by_side_stay_two_names() -> None:
    found = entities("We built it with Python Flask.")  # a guard
    assert found.get("Python") == "tool" and found.get("Flask") == "tool"


def test_a_club_named_around_a_known_word_is_one_organization() -> None:
    found = edges("Ines from Bramblecote Kayak Club lent me a paddle.")
    assert ("Ines", "PART_OF", "Bramblecote Kayak Club") in found


@pytest.mark.parametrize(
    ("text", "org"),
    [
        ("i volunteer at pennyhill dog rescue on sundays", "pennyhill dog rescue"),
        ("im a member of the kestrel vale tennis club", "kestrel vale tennis club"),
    ],
)
def test_a_lower_case_institution_runs_to_its_kind(text: str, org: str) -> None:
    assert ("user", "PART_OF", org) in edges(text)


def test_a_lower_case_institution_ends_at_its_kind() -> None:
    found = entities("im at larchmont college doing carpentry level 2")  # a guard
    assert found.get("larchmont college") == "organization"


@pytest.mark.parametrize(
    ("text", "project", "tool"),
    [
        ("Beacon, my weather station project, depends on a Raspberry Pi.", "Beacon", "Raspberry Pi"),
        ("Larkin, our club's booking app, depends on Stripe.", "Larkin", "Stripe"),
    ],
)
def test_a_name_beside_the_speakers_work_is_the_subject(text: str, project: str, tool: str) -> None:
    found = edges(text)
    assert (project, "DEPENDS_ON", tool) in found
    assert ("user", "USES", tool) not in found


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("Ama, my lab partner, is doing the titrations.", "Ama"),
        ("My bandmate Oskar swears by his Boss pedal.", "Oskar"),
        ("our admin Sunil set up the printer for the office.", "Sunil"),
        ("Our receptionist Delphine is on holiday this week.", "Delphine"),
    ],
)
def test_roles_of_shared_work_are_colleagues(text: str, person: str) -> None:
    assert ("user", "WORKS_WITH", person) in edges(text)


def test_a_name_beside_the_speakers_work_is_typed_as_that_work() -> None:
    text = "Re: order 5 - Glowworm, my home lighting project, depends on the Philips Hue bridge."
    assert entities(text).get("Glowworm") == "project"


def test_a_landlord_is_still_an_acquaintance() -> None:
    assert ("user", "KNOWS", "Cengiz") in edges("Our landlord Cengiz fixed the boiler.")  # a guard


def test_a_second_verb_of_a_plan_given_up_is_no_use() -> None:
    text = "I was going to sign up for the half marathon and use the Kinetix app for a plan, but my knee went."
    assert ("user", "USES", "Kinetix") not in edges(text)


def test_a_use_after_a_new_subject_stands() -> None:
    assert ("user", "USES", "Todoist") in edges("I was going to quit, and I use Todoist daily.")  # a guard


def test_a_products_maker_is_not_chosen() -> None:
    found = edges("We decided to go with Fleetwise from Tarnover after a long fight.")
    assert ("user", "DECIDED", "Fleetwise") in found
    assert ("user", "DECIDED", "Tarnover") not in found


def test_a_lower_case_brand_and_model_are_one_choice() -> None:
    assert ("user", "DECIDED", "ikea kallax") in edges("we decided on the ikea kallax for the kids room")


def test_a_label_of_someone_elses_list_lists_no_use_of_the_speakers() -> None:
    found = edges("My sister's recs: Hozelock for hoses, Westland for compost.")
    assert not {e for e in found if e[0] == "user" and e[1] == "USES"}


def test_a_label_of_people_lists_no_use() -> None:
    found = edges("Volunteers this week: Odile, Kwame, Ruslan.")  # a guard
    assert not {e for e in found if e[1] == "USES"}


@pytest.mark.parametrize(
    ("text", "org"),
    [
        ("I manage Lantern Yard Dance Studio.", "Lantern Yard Dance Studio"),
        ("Hello, I run Thimble & Moss, a small craft shop, and orders aren't syncing.", "Thimble & Moss"),
    ],
)
def test_the_business_the_speaker_runs_is_their_workplace(text: str, org: str) -> None:
    assert ("user", "PART_OF", org) in edges(text)


def test_running_a_tool_and_leading_a_team_read_as_before() -> None:
    assert ("user", "USES", "Kafka") in edges("We run Kafka on Confluent Cloud.")  # a guard
    assert ("user", "WORKS_ON", "data team") in edges("I lead the data team.")  # a guard
