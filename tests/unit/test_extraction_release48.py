"""Release 48: the thirty-first set's first look. "favour", "in my book", "X it is", "N
is the captain of O", "N is with O", passive doers in a list and in the progressive, a
function "in P" handled by a tool, "hes"/"shes", titles in other European languages,
"can't run without X, Y and Z", "co-teaching with N", "change to X", "everything is in
X", "thinking to", plurals and verbs in -s that are no names, single letters, constants
in capitals, "pick up", "my favourite way to", "it's X over Y every time". Names are
invented; each case failed on release 47 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities, speakers


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Caddy's config is readable, so I favour it over Traefik.", "Caddy"),
        ("I favor Bitwarden for the family vault.", "Bitwarden"),
        ("Cronometer beats MacroFactor for micronutrients in my book.", "Cronometer"),
        ("Tiller's my favourite way to budget.", "Tiller"),
        ("Sweet Home 3D is my go-to over SketchUp for planning rooms.", "Sweet Home 3D"),
        ("Given the choice it's Minitab over JMP every time.", "Minitab"),
    ],
)
def test_preferences_said_with_other_words(text: str, thing: str) -> None:
    assert thing in speakers(text, "PREFERS")


@pytest.mark.parametrize("text", ["Do me a favour and check Jira.", "The ruling went in our favour at Lexcorp."])
def test_a_favour_as_a_noun_is_no_preference(text: str) -> None:
    assert not speakers(text, "PREFERS")  # guards


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Hubitat it is for the new house, we ruled out SmartThings.", "Hubitat"),
    ],
)
def test_decisions_said_with_other_words(text: str, thing: str) -> None:
    assert thing in speakers(text, "DECIDED")


@pytest.mark.parametrize("text", ["Hubitat it is not.", "We voted against Jira.", "We voted in the Notion poll."])
def test_a_refusal_is_no_decision(text: str) -> None:
    assert not speakers(text, "DECIDED")  # guards


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Aino Virtanen is the captain of the Harbour Hawks.", ("Aino Virtanen", "PART_OF", "Harbour Hawks")),
        ("Aino Virtanen is the director of Lakeside Clinic.", ("Aino Virtanen", "PART_OF", "Lakeside Clinic")),
        (
            "My accountant, Aino Virtanen, is with Birchwell & Partners.",
            ("Aino Virtanen", "PART_OF", "Birchwell & Partners"),
        ),
    ],
)
def test_an_office_or_being_with_an_organization_is_part_of_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text", ["Aino Virtanen was the director of Lakeside Clinic.", "Aino Virtanen is the client of Lakeside Bank."]
)
def test_a_former_office_or_a_client_is_not_part_of_it(text: str) -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges(text))  # guards


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ("The Harvest Line rollout is being led by Aino.", {"Aino"}),
        ("Harvest Line is maintained by Aino, Mikko and Tuuli.", {"Aino", "Mikko", "Tuuli"}),
    ],
)
def test_each_doer_of_a_passive_works_on_its_subject(text: str, people: set[str]) -> None:
    assert {source for source, rel, _ in edges(text) if rel == "WORKS_ON"} == people


def test_a_function_inside_a_work_handled_by_a_tool_is_not_the_speakers() -> None:
    assert not speakers("Logging for Foxwell is handled by Grafana Loki.", "USES")


def test_hes_without_an_apostrophe_stands_for_the_person_named_before() -> None:
    text = "I pair with Tomasz Wrona most days, hes on the billing team"
    assert ("Tomasz Wrona", "WORKS_ON", "billing team") in edges(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My professor Herr Dimitrov uses LaTeX for all slides.", "Dimitrov"),
        ("I went back to my teacher Frau Lindqvist.", "Lindqvist"),
        ("My boss Signora Castellucci decided we go on Kitchencut.", "Castellucci"),
    ],
)
def test_a_title_is_no_part_of_the_name(text: str, name: str) -> None:
    found = entities(text)
    assert found.get(name) == "person"
    assert not any(title in found for title in ("Herr Dimitrov", "Frau Lindqvist", "Signora", "Signora Castellucci"))


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ("Coldline can't run without Redis, Kafka and Onfleet.", {"Redis", "Kafka", "Onfleet"}),
        ("The Coldline project can't run without Redis.", {"Redis"}),
    ],
)
def test_each_thing_a_work_cannot_run_without_is_a_dependency(text: str, tools: set[str]) -> None:
    assert {target for _, rel, target in edges(text) if rel == "DEPENDS_ON"} == tools


def test_co_doing_with_someone_makes_them_a_colleague() -> None:
    found = edges("This term I'm co-teaching with Sione Taufa and Märta Lindholm.")
    assert ("user", "WORKS_WITH", "Sione Taufa") in found and ("user", "WORKS_WITH", "Märta Lindholm") in found
    assert ("user", "KNOWS", "Sione Taufa") not in found


def test_doing_with_someone_still_makes_them_known() -> None:
    assert "Jurgis" in speakers("I restarted the band with Jurgis.", "KNOWS")  # a guard


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("We was on Dropbox but now we change to OneDrive.", "OneDrive"),
        ("We don't use Redmine anymore, now everything is in YouTrack.", "YouTrack"),
        ("These days everything goes through Buildkite.", "Buildkite"),
    ],
)
def test_a_change_or_everything_kept_in_a_tool_is_a_use(text: str, thing: str) -> None:
    assert thing in speakers(text, "USES")


@pytest.mark.parametrize(
    "text",
    [
        "Everything was in Trello.",
        "In the hospital Santa Brígida everything is in Charthaven.",
        "We are thinking to change to Driftbase but nothing is decided.",
    ],
)
def test_a_past_someone_elses_or_a_thought_of_change_is_no_use(text: str) -> None:
    assert not speakers(text, "USES")  # guards of the two rules above


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("My climbing partner belays for the Granite Owls on weekends.", "belays"),
        ("the tuner keeps reading my low E as an F", "E"),
        ("Since updating, sync fails. Error: SYNC_CONFLICT_409.", "SYNC_CONFLICT_409"),
        ("I'd rather write my scrapers in Nim than Ruby.", "scrapers"),
    ],
)
def test_verbs_plurals_letters_and_constants_are_no_names(text: str, word: str) -> None:
    assert word not in entities(text)


def test_a_lower_case_name_after_a_role_is_still_a_name() -> None:
    assert entities("my friend carlos from work uses notion").get("carlos") == "person"  # a guard


def test_pick_up_is_no_choice() -> None:
    text = "- pick up cake from Crumbwell & Daughters\n- send Hiroshi the photos"
    assert not speakers(text, "PREFERS") and not speakers(text, "DECIDED")
    assert "Obsidian" in speakers("I picked Obsidian.", "DECIDED")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Tomasz did me a huge favour by lending me his Garmin.",
        "We bought party favours from Hobbycraft.",
        "Kindle is easier than paper for everyone in my book club.",
        "For my daughter it's Bluey over Peppa every time.",
        "It's Notion over Obsidian every time, says my boss, but I disagree.",
    ],
)
def test_a_favour_a_book_club_or_someone_elses_preference_is_none_of_the_speakers(text: str) -> None:
    assert not any(rel == "PREFERS" for _, rel, _ in edges(text))  # guards from the review


@pytest.mark.parametrize(
    "text",
    [
        "Ravi is the owner of the Tesla next door.",
        "Hamid is with Vodafone on a contract, not as an employee.",
        "Sofia is with Vodafone, I'm with EE.",
    ],
)
def test_owning_a_thing_or_being_a_customer_is_not_part_of_it(text: str) -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges(text))  # guards from the review


def test_being_with_an_employer_now_is_part_of_it() -> None:
    assert ("Svetlana", "PART_OF", "Deloitte") in edges("Svetlana is with Deloitte now.")


@pytest.mark.parametrize(
    "text",
    ["We co-parent with Daniel, my ex.", "I co-ordinate the carpool with Hana."],
)
def test_co_doings_that_are_no_work_leave_them_known(text: str) -> None:
    assert not speakers(text, "WORKS_WITH")  # guards from the review


@pytest.mark.parametrize(
    "text",
    [
        "Everything is in Notion for my sister's business.",
        "My dad says everything is in Excel at his office.",
        "Everything goes through Mum, she's the boss of Christmas.",
    ],
)
def test_everything_kept_for_someone_else_is_not_the_speakers(text: str) -> None:
    assert not speakers(text, "USES")  # guards from the review


def test_a_known_tool_with_a_function_handled_by_another_stays_the_speakers() -> None:
    assert "Restic" in speakers("Backups in Proxmox are handled by Restic.", "USES")  # a guard from the review


def test_a_list_after_without_stops_at_a_clause_of_its_own() -> None:
    found = edges("The Sundew app can't run without Firebase, and Mapbox is just nice to have.")
    assert ("Sundew", "DEPENDS_ON", "Mapbox") not in found  # a guard from the review
