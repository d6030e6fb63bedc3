"""Release 43: a negation after a second verb, a job "from" an organization, the subject
past an apposition that names a workplace, work described by the speaker's relative
clause, a relative named with "his"/"her", verdicts with the thing first, "is used by",
choosing between options, a heading that names the project, and given names that are
rare English words. Names are invented; each case failed on release 42 unless marked a
guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities, speakers


def test_a_negation_after_a_second_verb_denies_only_that_verb() -> None:
    text = "The Tamsin service depends on a Qorvel cluster and has no tests at all."
    assert ("Tamsin", "DEPENDS_ON", "Qorvel") in edges(text)


@pytest.mark.parametrize(
    ("text", "person", "organization"),
    [
        (
            "Oyelaran Adeyemi, an engineer from Brackwater Partners, reviewed the plan.",
            "Oyelaran Adeyemi",
            "Brackwater Partners",
        ),
        ("Ilse Vantongeren, my tax adviser from Kestrelby Finance, filed it.", "Ilse Vantongeren", "Kestrelby Finance"),
    ],
)
def test_a_job_from_an_organization_is_membership(text: str, person: str, organization: str) -> None:
    assert (person, "PART_OF", organization) in edges(text)


def test_a_financial_adviser_is_known_not_worked_with() -> None:
    text = "My financial adviser Tavita Leaupepe wants me to open a pension."
    assert speakers(text, "KNOWS") == {"Tavita Leaupepe"}
    assert not speakers(text, "WORKS_WITH")


@pytest.mark.parametrize(
    "text",
    [
        "Mirela Constantin, the office manager at Hollowfield Dental, books every appointment in Dentally.",
        "Mirela Constantin from Hollowfield Dental books every appointment in Dentally.",
    ],
)
def test_the_person_before_a_workplace_is_the_subject(text: str) -> None:
    found = edges(text)
    assert ("Mirela Constantin", "USES", "Dentally") in found
    assert ("Hollowfield Dental", "USES", "Dentally") not in found


@pytest.mark.parametrize(
    ("text", "project"),
    [
        ("Saltwick, the booking service I work on, depends on Valkey.", "Saltwick"),
        ("Brindlewood is the scheduling tool I'm building, and it runs on Fly.io.", "Brindlewood"),
        ("Tansy, my little recipe-scaling side project, depends on Grocy.", "Tansy"),
        ("Project Harebell, the shed rebuild we're doing, depends on the timber arriving.", "Harebell"),
    ],
)
def test_work_the_speaker_describes_as_theirs_is_worked_on(text: str, project: str) -> None:
    assert ("user", "WORKS_ON", project) in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "Pulsewick, the heart-rate app my friend is building, depends on a Polar strap.",
        "Brindlewood is the scheduling tool I use at work.",
        "Saltwick, the booking service I complained about, depends on Valkey.",
    ],
)
def test_work_of_others_or_a_tool_used_is_no_work_of_the_speaker(text: str) -> None:
    assert not speakers(text, "WORKS_ON")  # a guard


def test_a_thing_first_keeps_its_verb_past_the_next_clause() -> None:
    text = "Tripscape is what we use for group itineraries now — Oyuki adds the restaurants."
    assert "Tripscape" in speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "first", "second"),
    [
        ("My cousin Oluchi and her husband Tendai are visiting in May.", "Oluchi", "Tendai"),
        ("I had dinner with Kwabena and his wife Abena.", "Kwabena", "Abena"),
        ("My cousin Anahid is getting married, and her fiancé Tigranuhi only uses Spotify.", "Anahid", "Tigranuhi"),
    ],
)
def test_a_relative_named_with_his_or_her_is_the_last_persons(text: str, first: str, second: str) -> None:
    assert (first, "KNOWS", second) in edges(text)


def test_the_speakers_own_relative_is_not_given_to_the_person_before() -> None:
    text = "I met Kwabena and then my wife Abena called."
    assert ("Kwabena", "KNOWS", "Abena") not in edges(text)  # a guard


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Obsidian is way nicer than Notion for me.", "Obsidian"),
        ("Todoist works better for me than Things.", "Todoist"),
        ("Obsidian beats Notion for me, every time.", "Obsidian"),
    ],
)
def test_a_verdict_with_the_thing_first_is_a_preference(text: str, thing: str) -> None:
    assert thing in speakers(text, "PREFERS")


@pytest.mark.parametrize(
    "text",
    [
        "Zwift is better than nothing.",
        "My brother says Obsidian is better than Notion.",
        "Obsidian is not better than Notion.",
        "Is Obsidian better than Notion?",
        "Kofi still beats me at FIFA.",
    ],
)
def test_no_verdict_of_the_speakers_is_no_preference(text: str) -> None:
    assert not speakers(text, "PREFERS")  # a guard


def test_what_is_used_by_an_app_is_that_apps() -> None:
    found = edges("The Kestrel API is used by the Marram mobile app.")
    assert ("Marram", "USES", "Kestrel API") in found
    assert ("Kestrel API", "USES", "Marram") not in found


@pytest.mark.parametrize(
    "text",
    [
        "I'm trying to choose between Lingvist, Clozemaster and the Busuu app for practising my Greek verbs.",
        "I am thinking to choose between Duolingo, Babbel and the Pimsleur app for learn the Korean alphabet.",
    ],
)
def test_choosing_between_options_is_no_choice_yet(text: str) -> None:
    assert not speakers(text, "DECIDED") and not speakers(text, "USES")


def test_a_heading_that_names_a_project_gives_it_the_bullets_tools() -> None:
    found = edges("Stack (Pebblemoor):\n- API: Litestar\n- DB: SQLite + Litestream")
    assert {("Pebblemoor", "USES", tool) for tool in ("Litestar", "SQLite", "Litestream")} <= found
    assert not {e for e in found if e[0] == "user"}


def test_a_bullet_under_a_stack_heading_lists_every_joined_item() -> None:
    assert ("Kestrel", "USES", "Redis") in edges("Stack for Kestrel:\n- Django\n- Postgres + Redis")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Nadia Okafor set up the rota in Deputy.", "Nadia Okafor"),
        ("Hamid set it up so I just pay whatever it says.", "Hamid"),
        ("We'll call Gideon about the boiler.", "Gideon"),
    ],
)
def test_a_given_name_that_is_a_rare_english_word_is_a_person(text: str, name: str) -> None:
    assert entities(text).get(name) == "person"


@pytest.mark.parametrize("text", ["I opened an ISA with Vanguard.", "Nan says hello."])
def test_an_abbreviation_or_a_relatives_word_is_no_person(text: str) -> None:
    assert "person" not in entities(text).values()  # a guard


def test_a_place_after_its_noun_is_no_doer() -> None:
    assert not edges("The hostel in Cusco handles everything through Cloudbeds.")


@pytest.mark.parametrize(
    ("text", "thing"),
    [("Vorlane is the charting library we use.", "Vorlane"), ("Strava is the app I use on every ride.", "Strava")],
)
def test_a_thing_the_speakers_relative_clause_uses_is_used(text: str, thing: str) -> None:
    assert thing in speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ("Sam Okoro, my former manager from Acme Logistics, retired.", ("Sam Okoro", "PART_OF", "Acme Logistics")),
        ("Priya told Sam about her husband Raj.", ("Sam", "KNOWS", "Raj")),
        ("Ana asked Tom to bring her husband Leo.", ("Tom", "KNOWS", "Leo")),
        ("Kale is my favourite vegetable.", ("user", "KNOWS", "Kale")),
        ("Invisalign, the treatment I'm doing, is expensive.", ("user", "WORKS_ON", "Invisalign")),
        ("Rejected stack:\n- Mongo + Express", ("user", "USES", "Express")),
        ("Anika's stack:\n- Vue + Nuxt", ("user", "USES", "Nuxt")),
    ],
)
def test_what_the_review_found_the_draft_read_wrongly_is_not_read(text: str, wrong: tuple[str, str, str]) -> None:
    assert wrong not in edges(text)  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Python is easier than C++ for beginners.",
        "Apparently Zed is faster than VS Code.",
        "Tesla beats BMW on range, I read.",
        "Uber is cheaper than Bolt at night, my friend says.",
    ],
)
def test_a_comparison_of_fact_or_hearsay_is_no_preference(text: str) -> None:
    assert not speakers(text, "PREFERS")  # a guard


@pytest.mark.parametrize(
    ("text", "name"),
    [("I drive a Kia and my wife drives a Honda.", "Kia"), ("Biscuit is what we named the puppy.", "Biscuit")],
)
def test_a_word_named_as_a_thing_is_no_person_or_tool(text: str, name: str) -> None:
    assert entities(text).get(name) != "person" and name not in speakers(text, "USES")  # a guard
