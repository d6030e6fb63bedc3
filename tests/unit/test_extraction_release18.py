"""Release 18: a preposition's object is not the role that opens the next clause, short
common words written oddly are no products, "<Institution> of <Name>" is an
organization, a turn gives a name one type, a sentence can open with a full name, and a
role after "the" or in brackets types its name. Names are invented; each case failed on
release 17 unless marked a guard."""

from __future__ import annotations

import pytest

from memledger.extraction.heuristic import extract_text
from tests.unit.extracted import edges, entities


def test_a_role_opening_the_next_clause_is_not_the_preceding_places() -> None:
    text = "When I trained at the Institute of Marrowby my supervisor was very patient."
    assert entities(text).get("Institute of Marrowby") == "organization"
    assert not {e for e in edges(text) if e[2] == "Institute of Marrowby"}


def test_a_role_right_after_a_name_still_names_it() -> None:
    assert ("user", "KNOWS", "Tavita") in edges("Me n Tavita my sister went hiking.")  # a guard


def test_a_short_common_word_written_oddly_is_no_product() -> None:
    found = extract_text("I finished my PhD last spring.", "user")
    assert not found.entities and not found.relationships


def test_a_camel_cased_compound_is_still_a_product() -> None:
    assert entities("Dunmore still types on his BlackBerry.").get("BlackBerry") == "tool"  # a guard


def test_an_institution_of_a_name_is_an_organization() -> None:
    assert entities("I went to the College of Orrin Vale.").get("College of Orrin Vale") == "organization"


def test_a_name_has_one_type_in_a_turn() -> None:
    text = "My partner Tavake and I settled on a swim school, since the coach there taught Tavake years ago."
    types = [e.entity_type for e in extract_text(text, "user").entities if e.name == "Tavake"]
    assert types == ["person"]


def test_a_sentence_can_open_with_a_full_name() -> None:
    assert entities("Kaimana Ruatapu said she would come.").get("Kaimana Ruatapu") == "person"


def test_an_imperative_opening_a_sentence_is_no_part_of_the_name() -> None:
    assert "Fatou" in entities("Tell Fatou the shed is locked.")  # a guard


def test_a_role_after_the_or_in_brackets_types_the_name() -> None:
    assert entities("Anewa Rangi, the contractor, never came back.").get("Anewa Rangi") == "person"
    assert entities("Mon/Wed me, Tue/Thu Yerlan (neighbour).").get("Yerlan") == "person"


def test_a_role_after_the_is_not_the_speakers() -> None:
    assert not edges("Anewa Rangi, the contractor, never came back.")  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Started using Pebblenote.", ("user", "USES", "Pebblenote")),
        ("Kept using Trellomax after the trial.", ("user", "USES", "Trellomax")),
        ("Recorded the whole demo in Ardour.", ("user", "USES", "Ardour")),
        ("Started tracking my sleep with a Fitbit.", ("user", "USES", "Fitbit")),
        ("Paid the plumber via Monzo.", ("user", "USES", "Monzo")),
        ("My niece Lagi drew the poster in Procreate.", ("Lagi", "USES", "Procreate")),
        ("my cousin Tevita got me on Strava last spring.", ("user", "USES", "Strava")),
    ],
)
def test_an_unsaid_or_irregular_doer_is_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text",
    ["Obsessed with Wordle lately.", "Done with Trello, honestly."],
)
def test_a_feeling_about_a_tool_states_no_use(text: str) -> None:
    assert not {e for e in edges(text) if e[1] == "USES"}  # a guard


def test_a_recipient_is_not_put_on_the_tool() -> None:
    assert ("Hina", "USES", "WhatsApp") in edges("Hina sent me the photos on WhatsApp.")


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Back at my first job we ran everything on Netlify.", ("user", "USES", "Netlify")),
        ("When I was at uni I ran everything on a ThinkPad.", ("user", "USES", "ThinkPad")),
        ("Before I was using Fitbit, but now I don't track anything.", ("user", "USES", "Fitbit")),
        ("We tried Pulumi last year, and Sefa wrote most stacks in Go.", ("Sefa", "USES", "Go")),
        ("Coding in Haskell was such fun, and I miss it.", ("user", "USES", "Haskell")),
        ("Not adopting: Bazel, Pants.", ("user", "USES", "Bazel")),
        ("Our lead Ingrid says we must use Jira for everything.", ("user", "USES", "Jira")),
        ("Laila and I decided on a daycare near the station.", ("user", "WORKS_WITH", "Laila")),
        ("Support: the Yoto Player my niece bought doesn't work.", ("user", "KNOWS", "Yoto Player")),
    ],
)
def test_what_the_sentence_does_not_assert_now_is_not_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("We tried Pulumi last year, but in the end we stayed with Terraform.", ("user", "USES", "Terraform")),
        ("My mentor taught me to write in LaTeX, which I still do.", ("user", "USES", "LaTeX")),
        ("We use Jira, and I miss it when I'm away.", ("user", "USES", "Jira")),
        ("Amir and I pair on Kestrel most mornings.", ("user", "WORKS_WITH", "Amir")),
        ("Priya, who leads the insights team, wants Dagster.", ("Priya", "WORKS_ON", "insights team")),
    ],
)
def test_what_holds_now_is_still_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # guards


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("My brother-in-law Kwame swears by Cozi.", ("Kwame", "PREFERS", "Cozi")),
        (
            "The Harbour Rowing Club voted to move bookings from Teamup to Matchi.",
            ("Harbour Rowing Club", "DECIDED", "Matchi"),
        ),
        ("My piano teacher makes me record every scale in GarageBand.", ("user", "USES", "GarageBand")),
        (
            "The Tamsin Food Co-op, where I volunteer, takes cards through Zettle.",
            ("user", "PART_OF", "Tamsin Food Co-op"),
        ),
        ("Brindle Bakery, which I manage, buys flour from Wessex Mill.", ("user", "PART_OF", "Brindle Bakery")),
        ("The tiles came from Casa Orla, the shop where Odile works.", ("Odile", "PART_OF", "Casa Orla")),
        ("Kojo Boateng, who now runs Driftwood Systems, called.", ("Kojo Boateng", "PART_OF", "Driftwood Systems")),
    ],
)
def test_a_stated_relation_is_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_swearing_by_a_tool_is_a_preference_not_a_use() -> None:
    assert ("Kwame", "USES", "Cozi") not in edges("My brother-in-law Kwame swears by Cozi.")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Coinpurse, the billing module, is maintained by Thiago.", "Coinpurse"),
        ("Jelena helps me on Fridays, mostly on the Skylark search rewrite.", "Skylark"),
    ],
)
def test_a_name_beside_a_noun_for_work_is_a_project(text: str, name: str) -> None:
    assert entities(text).get(name) == "project"


def test_a_name_beside_a_bought_in_component_is_no_project() -> None:
    text = "The Quill editor plugin is a dependency of the Inkwell app."
    assert entities(text).get("Quill") != "project"  # a guard
