"""Sentence shapes the extractor reads without any list knowing the names: a name
modifying a noun, a lower-case product in a tool's slot, a passive's agent, who's-who
lines, a subject before a comma or a pronoun, a speaker's job and groups. Every name is
invented, so each case fails if the rule it names is removed."""

from __future__ import annotations

import pytest

from memledger.extraction import gazetteer as gz
from tests.unit.extracted import edges, entities


def test_a_name_that_modifies_a_noun_after_an_article_is_a_product() -> None:
    assert entities("We mounted a Vexlo thermostat in the hall.") == {"Vexlo": "tool"}
    assert entities("The Quarnby pipeline is slow today.").get("Quarnby") == "project"


def test_a_name_that_modifies_a_noun_is_never_guessed_a_person() -> None:
    assert entities("I charge the Ulvano strap every night.").get("Ulvano") != "person"


def test_a_lower_case_word_no_dictionary_knows_in_a_tools_slot_is_a_tool() -> None:
    assert ("user", "USES", "zorbix") in edges("we moved the backups to zorbix last week")


def test_a_lower_case_english_word_in_a_tools_slot_is_not_a_tool() -> None:
    assert "flaky" not in entities("we moved the backups to flaky storage last week")


def test_the_agent_of_a_verb_of_use_is_a_tool_unless_a_persons_name() -> None:
    assert entities("Our invoices are handled by Zentrix.") == {"Zentrix": "tool"}
    assert ("user", "USES", "Zentrix") in edges("Our invoices are handled by Zentrix.")
    assert entities("Our invoices are handled by Priya.") == {"Priya": "person"}


def test_a_whos_who_line_names_work_and_the_people_on_it() -> None:
    text = "Team list - Marrowby: me, Ilse and Tomasz; Quillsey: Ravi."
    assert entities(text)["Marrowby"] == "project"
    assert {
        ("user", "WORKS_ON", "Marrowby"),
        ("Ilse", "WORKS_ON", "Marrowby"),
        ("Tomasz", "WORKS_ON", "Marrowby"),
        ("Ravi", "WORKS_ON", "Quillsey"),
    } <= edges(text)


def test_an_ordinary_word_before_a_colon_is_no_roster() -> None:
    assert edges("Lunch: Tom and me.") == set()


def test_two_given_names_joined_by_an_ampersand_are_two_people() -> None:
    found = entities("We met Harpreet & Iker at the fair.")
    assert found == {"Harpreet": "person", "Iker": "person"}


def test_work_done_with_me_is_the_speakers_work_too() -> None:
    found = edges("Oskar works on Brindlewood with me.")
    assert {("user", "WORKS_ON", "Brindlewood"), ("user", "WORKS_WITH", "Oskar")} <= found


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("My neighbour, Radomir, sells his honey through Etsy.", ("Radomir", "USES", "Etsy")),
        ("My aunt Ilse does her accounts in GnuCash.", ("Ilse", "USES", "GnuCash")),
        ("My uncle Teodor he keeps his recipes in Paprika.", ("Teodor", "USES", "Paprika")),
    ],
)
def test_the_subject_of_an_instrument_phrase_past_a_comma_or_a_pronoun(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_what_someone_wants_done_in_a_tool_is_not_their_use_of_it() -> None:
    assert not any(
        r == "USES" and s == "Ilse Brandt" for s, r, _ in edges("My boss, Ilse Brandt, wants the slides in Keynote.")
    )


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Zawadi - site foreman at Orrin Freight.", ("Zawadi", "PART_OF", "Orrin Freight")),
        ("ask Leonor (Mistral Bakery) about the order.", ("Leonor", "PART_OF", "Mistral Bakery")),
        ("I'm a nurse at Kestwell Clinic.", ("user", "PART_OF", "Kestwell Clinic")),
        ("My choir, the Larkfield Singers, meets on Tuesdays.", ("user", "PART_OF", "Larkfield Singers")),
        ("I'm on the billing squad with Chidi and Ane.", ("user", "WORKS_WITH", "Ane")),
    ],
)
def test_who_belongs_where_and_with_whom(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_being_a_customer_somewhere_is_no_membership() -> None:
    assert not any(r == "PART_OF" for _, r, _ in edges("I'm a regular at Kestwell Clinic."))


def test_it_carries_the_subject_of_the_clause_before() -> None:
    text = "The Brindle platform is used by three teams, and it depends on StarRocks."
    assert ("Brindle", "DEPENDS_ON", "StarRocks") in edges(text)


def test_a_project_may_depend_on_an_organization() -> None:
    text = "The Hollyhock garden depends on the Ashgrove Foundation."
    assert ("Hollyhock", "DEPENDS_ON", "Ashgrove Foundation") in edges(text)


def test_a_co_role_is_a_colleagues() -> None:
    assert "co-host" not in gz.WORK_ROLES
    assert ("user", "WORKS_WITH", "Rhodri") in edges("Podcast notes: my co-host Rhodri edits.")


def test_organising_something_together_is_working_on_it() -> None:
    found = edges("Thandiwe and I organise Quernfest every summer.")
    assert {("user", "WORKS_ON", "Quernfest"), ("Thandiwe", "WORKS_ON", "Quernfest")} <= found


def test_a_writer_who_capitalises_nothing_still_names_people_and_places_of_work() -> None:
    text = "my mate idil works at skyvale airways so she's getting us tix"
    assert entities(text) == {"idil": "person", "skyvale airways": "organization"}
    assert ("idil", "PART_OF", "skyvale airways") in edges(text)


def test_a_misspelt_english_word_is_no_name() -> None:
    assert entities("we pickd the cheap one over the fancy one") == {}


def test_informal_with_reads_as_with() -> None:
    assert entities("i sync my notes w/ zorbix every night") == {"zorbix": "tool"}


def test_english_words_run_together_name_a_product_not_a_person() -> None:
    assert entities("I book every train on Gullpost.") == {"Gullpost": "tool"}
    assert ("user", "USES", "Gullpost") in edges("I book every train on Gullpost.")


def test_an_english_word_opening_a_question_is_no_person() -> None:
    assert "Anyone" not in entities("Anyone know if Gullpost works offline?")


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("We chose Quillbase last year and now our scans won't open in it.", ("user", "DECIDED", "Quillbase")),
        ("We decided to use Grab and not the taxi.", ("user", "DECIDED", "Grab")),
    ],
)
def test_a_negation_denies_only_its_own_clause(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_a_negation_still_denies_what_it_governs() -> None:
    assert edges("We are not adopting Quillbase and Zorbix.") == set()


def test_he_she_and_it_take_the_last_person_and_thing_named() -> None:
    text = "My lab partner Chiamaka swears Zotero saved her thesis, and she prefers it to EndNote."
    found = edges(text)
    assert ("Chiamaka", "PREFERS", "Zotero") in found
    assert ("Chiamaka", "PREFERS", "EndNote") not in found


def test_a_greater_than_sign_states_a_preference() -> None:
    assert ("user", "PREFERS", "Kanban") in edges("Retro: Kanban > fixed sprints for us.")


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        (
            "My accountant, Olusegun Bankole at Ledgerwise & Co, files my returns.",
            ("Olusegun Bankole", "PART_OF", "Ledgerwise & Co"),
        ),
        ("Our ward at Mercy Vale Hospital is short of nurses.", ("user", "PART_OF", "Mercy Vale Hospital")),
        ("At Coldharbour Farm we've moved the herd records to Herdwatch.", ("user", "PART_OF", "Coldharbour Farm")),
    ],
)
def test_who_is_part_of_an_organization(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_an_appointment_somewhere_is_no_membership() -> None:
    assert not any(r == "PART_OF" for _, r, _ in edges("I had my appointment at Riverbend Clinic."))


def test_what_the_speaker_has_one_of_is_a_product_and_their_own_work_a_project() -> None:
    assert entities("Please cancel my Quellon membership.") == {"Quellon": "tool"}
    assert entities("Our Tidewell pipelines are slow.") == {"Tidewell": "project"}


def test_what_a_switch_leaves_is_a_tool_too() -> None:
    assert entities("We moved from Quillbase to Zorbix.") == {"Quillbase": "tool", "Zorbix": "tool"}


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Payments: Gullpost. Invoices: Zorbix.", ("user", "USES", "Zorbix")),
        ("Kids: Tendai → Showbie.", ("Tendai", "USES", "Showbie")),
        ("Case notes — docs in iManage, billing in Clio.", ("user", "USES", "iManage")),
    ],
)
def test_a_note_without_verbs_names_what_is_used(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_a_chain_of_dependencies_is_no_note_of_use() -> None:
    assert not any(r == "USES" for _, r, _ in edges("Dependency chain: Phoenix -> Gullpost -> Zorbix."))


def test_a_name_ending_in_a_plural_noun_is_a_group() -> None:
    assert entities("Someone from the Quarrow Foxes lent me a paddle.") == {"Quarrow Foxes": "organization"}


def test_whom_one_buys_or_books_from_is_a_business() -> None:
    assert entities("The drill I ordered from Toolhaus Direct arrived broken.") == {"Toolhaus Direct": "organization"}


def test_a_partner_in_the_work_works_on_it_too() -> None:
    found = edges("I maintain the Petrel project with my colleague Shirin Farahani.")
    assert ("Shirin Farahani", "WORKS_ON", "Petrel") in found
    assert ("Leo", "WORKS_ON", "Compass") not in edges("I'm the PM for the Compass project, working with Leo.")


def test_pairing_on_something_is_working_on_it() -> None:
    found = edges("Valeria and I have been pairing on the new Skylark checkout flow all week.")
    assert {("user", "WORKS_ON", "Skylark"), ("Valeria", "WORKS_ON", "Skylark")} <= found
