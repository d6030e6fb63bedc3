"""Release 21: model numbers, "N from/of O" typing, decisions in a "that" clause, a
person's own tool, the speaker's own device in a fault report, "would rather", the
instrument passive of a place of work, and smaller readings. Names are invented; each
case failed on release 20 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My Vantorra Pulse 3 stopped syncing last night.", "Vantorra Pulse 3"),
        ("We bought a Bosch Serie 4 dishwasher.", "Bosch Serie 4"),
    ],
)
def test_a_model_number_ends_a_products_name(text: str, name: str) -> None:
    assert entities(text).get(name) == "tool"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I met Ana Lima 3 times.", "Ana Lima"),
        ("We still run Windows Server 2019.", "Windows Server"),
    ],
)
def test_a_count_or_a_year_is_no_model_number(text: str, name: str) -> None:
    assert name in entities(text)  # a guard


@pytest.mark.parametrize(
    ("text", "person", "org"),
    [
        ("Teodor from Brisklane Mobility says hi.", "Teodor", "Brisklane Mobility"),
        ("Yusra Al-Hariri of Quenby Bank reviews every change.", "Yusra Al-Hariri", "Quenby Bank"),
    ],
)
def test_a_person_from_or_of_a_firm_belongs_to_it(text: str, person: str, org: str) -> None:
    found = entities(text)
    assert found.get(person) == "person" and found.get(org) == "organization"
    assert (person, "PART_OF", org) in edges(text)


def test_an_institution_of_a_place_stays_one_name() -> None:
    assert entities("I bank with the Bank of Ireland.").get("Bank of Ireland") == "organization"  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("My boss Hoang decided that all drivers must use Routemark.", ("Hoang", "DECIDED", "Routemark")),
        ("We decided that we will use Routemark.", ("user", "DECIDED", "Routemark")),
        ("Bug report: the course I bought won't load its videos on my iPad.", ("user", "USES", "iPad")),
        ("My husband Tavita is fixing everything with his Metabo.", ("Tavita", "USES", "Metabo")),
        ("Grandma Ifeoma phones us from her Doro phone.", ("Ifeoma", "USES", "Doro")),
        (
            "My niece Ayelen, who's at Corrib College now, sends me voice notes.",
            ("Ayelen", "PART_OF", "Corrib College"),
        ),
        ("Our analytics crew leans on Airbyte for everything.", ("analytics crew", "DEPENDS_ON", "Airbyte")),
        ("Our product Quillhaven is depending on Supabase for sign-in.", ("Quillhaven", "DEPENDS_ON", "Supabase")),
        ("Grandad Obinna just wants a decent cup of tea.", ("user", "KNOWS", "Obinna")),
        ("I'd sooner take Flixbus overnight than pay for a hotel.", ("user", "PREFERS", "Flixbus")),
        ("I would rather use Vim than Emacs.", ("user", "PREFERS", "Vim")),
        ("My physio, Ragnhild, works out of Tidemark Rehab on the quay.", ("Ragnhild", "PART_OF", "Tidemark Rehab")),
        (
            "At Fernvale Logistics the pallets are scanned with Honeywell CK70 guns.",
            ("Fernvale Logistics", "USES", "Honeywell CK70"),
        ),
    ],
)
def test_a_stated_relation_is_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I gave up on the Oura Ring, it never agreed with me.", ("user", "USES", "Oura Ring")),
        ("My boss Hoang decided that all drivers must use Routemark.", ("Hoang", "USES", "Routemark")),
        ("I'd rather die than use Jira.", ("user", "PREFERS", "Jira")),
        ("Our app Lantern uses Supabase.", ("user", "KNOWS", "Lantern")),
    ],
)
def test_what_is_not_so_is_not_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Olumide lends me his Boss RC-505 looper for gigs.", ("Olumide", "USES", "Boss RC-505")),
        ("Tevita is on the combine, the agronomist comes with her Topcon tablet.", ("Tevita", "USES", "Topcon")),
        ("At Acme we were impressed with Notion.", ("Acme", "USES", "Notion")),
        ("I went for a run with Strava.", ("user", "DECIDED", "Strava")),
    ],
)
def test_what_the_new_readings_must_not_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)  # guards


def test_an_agent_noun_before_from_makes_the_name_a_firm() -> None:
    assert entities("The agronomist from Greenbrook Advisory comes on Tuesdays.").get("Greenbrook Advisory") == (
        "organization"
    )


def test_a_name_before_and_i_after_a_verb_is_its_object() -> None:
    assert entities("I spent years writing CoffeeScript and I don't miss it.").get("CoffeeScript") == "tool"


def test_co_subjects_before_and_i_are_still_people() -> None:
    assert entities("Last week, Tomasz and I wrote it.").get("Tomasz") == "person"  # a guard


def test_a_role_after_project_is_no_projects_name() -> None:
    assert "partner" not in entities("my group project partner sizwe is carrying us ngl")


@pytest.mark.parametrize(
    ("text", "name", "entity_type"),
    [
        ("I owe Lena Fischer 20.", "Lena Fischer", "person"),
        ("Google Drive 15 GB is not enough for my photos.", "Google Drive", "tool"),
        ("The product Ana built is amazing.", "Ana", "person"),
        ("Mum cooked for River and I last night.", "River", "person"),
    ],
)
def test_what_a_review_of_the_draft_found_is_read_as_before(text: str, name: str, entity_type: str) -> None:
    assert entities(text).get(name) == entity_type  # guards from the review


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Lena's son plays Fortnite on his Xbox every night.", ("Lena", "USES", "Xbox")),
        ("Kofi and his wife edit photos on her MacBook.", ("Kofi", "USES", "MacBook")),
        ("Dr Patel decided that I must keep using the Ventolin inhaler.", ("Patel", "USES", "Ventolin")),
        ("We went to Gran Canaria for the holidays.", ("user", "KNOWS", "Canaria")),
        ("At Acme people are impressed with Figma.", ("Acme", "USES", "Figma")),
        ("At Acme the customers are billed in GBP.", ("Acme", "USES", "GBP")),
        ("Kofi, who's at Starbucks right now, sent me the link.", ("Kofi", "PART_OF", "Starbucks")),
        ("Tbh I would rather die than go back to Acme.", ("user", "USES", "Acme")),
        ("I would prefer to pay by card at Tesco.", ("user", "PREFERS", "Tesco")),
        ("my wife afk for an hour", ("user", "KNOWS", "afk")),
        (
            "Hello, my partner Anjali Raghunathan needs admin access to our Xero.",
            ("Anjali Raghunathan", "USES", "Xero"),
        ),
    ],
)
def test_what_a_review_of_the_draft_found_is_not_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)  # guards from the review


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Dr Patel decided that I must keep using the Ventolin inhaler.", ("user", "USES", "Ventolin")),
        ("Priya leans on ChatGPT for her essays.", ("Priya", "USES", "ChatGPT")),
    ],
)
def test_what_a_review_of_the_draft_found_is_still_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I almost always use Vim.", ("user", "USES", "Vim")),
        ("Marco almost uses Vim exclusively now.", ("Marco", "USES", "Vim")),
    ],
)
def test_almost_before_a_use_keeps_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # guards from the second look at the draft


def test_a_title_after_product_is_no_project() -> None:
    assert "Owner Marco" not in entities("Our Product Owner Marco rejected the story.")
