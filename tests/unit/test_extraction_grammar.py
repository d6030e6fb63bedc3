"""The heuristic extractor reads sentence shapes, not only listed names: unknown names
typed by their slot, passive and "is where" frames, appositions, and clauses that
assert nothing now (negated, rejected, hypothetical, under evaluation, past only).

Every name below is invented for this file; none is in the extractor's word lists,
so each case fails if the rule it names is removed.
"""

from __future__ import annotations

import pytest

from memledger.extraction import polarity
from memledger.extraction.heuristic import extract_text
from memledger.extraction.patterns import tokenize

Edge = tuple[str, str, str]


def edges(text: str) -> set[Edge]:
    found = extract_text(text, "user")
    return {(r.source_name, r.relation, r.target_name) for r in found.relationships}


def entities(text: str) -> set[tuple[str, str]]:
    return {(e.name, e.entity_type) for e in extract_text(text, "user").entities}


@pytest.mark.parametrize(
    ("text", "name", "entity_type"),
    [
        ("Quorvane is written in Rust.", "Quorvane", "project"),
        ("Tsiry is on the billing team.", "Tsiry", "person"),
        ("Velmora Works is where Tsiry works.", "Velmora Works", "organization"),
        ("We adopted Prillo last spring.", "Prillo", "tool"),
        ("I keep all my notes in Drovel now.", "Drovel", "tool"),
        ("Quorvane is maintained by Ysolde Brack.", "Ysolde Brack", "person"),
        ("We use Kestrow, Pavlune and Ombrix in production.", "Pavlune", "tool"),
    ],
)
def test_an_unknown_name_takes_the_type_its_slot_wants(text: str, name: str, entity_type: str) -> None:
    assert (name, entity_type) in entities(text)


def test_a_name_in_a_slot_no_frame_explains_is_only_guessed_and_stays_unsettled() -> None:
    found = extract_text("Honestly Quelmar was fine.", "user")
    assert all(e.confidence < 0.7 for e in found.entities), "a guess from spelling must not pass for a slot's answer"
    assert "Quelmar" in found.unsettled, "a hybrid tenant must still ask the model about a guessed name"
    assert entities("On Fridays we deploy.") == set()
    assert entities("Honestly Brisk was fine.") == set(), "an ordinary English word is no name by its spelling"


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Kafka is used by the ingestion jobs.", ("user", "USES", "Kafka")),
        ("Payments are handled by Stripe.", ("user", "USES", "Stripe")),
        ("Quorvane is maintained by Ysolde Brack.", ("Ysolde Brack", "WORKS_ON", "Quorvane")),
        ("Velmora Works is where Tsiry works.", ("Tsiry", "PART_OF", "Velmora Works")),
        ("Quorvane is written in Rust.", ("Quorvane", "USES", "Rust")),
        ("My physio, Dr. Oyelaran Bisi, sent me new exercises.", ("user", "KNOWS", "Oyelaran Bisi")),
        ("My cousins Amadou and Teodric are visiting.", ("user", "KNOWS", "Teodric")),
    ],
)
def test_passive_copula_and_appositive_frames_state_relationships(text: str, edge: Edge) -> None:
    assert edge in edges(text)


def test_a_role_names_the_name_after_it_not_the_one_before() -> None:
    found = edges("My invoices go through Drovel, my partner Graciana keeps the budget.")
    assert ("user", "KNOWS", "Graciana") in found
    assert all(target != "Drovel" or relation == "USES" for _, relation, target in found)
    assert not any(target == "Obrecht" for _, _, target in edges("Mr. Obrecht is my son's maths teacher."))


@pytest.mark.parametrize(
    "text",
    [
        "We are not moving to Kubernetes this year.",
        "We decided against Cassandra.",
        "i kinda miss writing Haskell",
        "It's not true that Quorvane depends on Kafka.",
        "If we moved to Azure, would the bill drop?",
        "We're looking at Terraform for the new setup.",
        "Back in college I used Matlab for everything.",
    ],
)
def test_a_clause_that_asserts_nothing_now_states_no_relationship(text: str) -> None:
    assert edges(text) == set()


def test_the_asserting_clause_of_a_sentence_keeps_its_relationship() -> None:
    assert ("user", "USES", "Podman") in edges("We use Podman, not Docker.")
    assert ("user", "USES", "Podman") in edges("We don't use Docker anymore, we use Podman.")
    assert ("user", "DECIDED", "Vue") in edges("After comparing React and Vue we went with Vue.")
    assert ("user", "KNOWS", "Teodric") in edges("I really miss my brother Teodric.")
    assert ("user", "USES", "PostgreSQL") in edges("We run the tests against a fresh PostgreSQL database.")


@pytest.mark.parametrize(
    ("text", "unsaid", "reason"),
    [
        ("we are not adopting GraphQL", "graphql", "negated"),
        ("we voted against Snowflake", "snowflake", "rejected"),
        ("we are considering Linear", "linear", "unsettled"),
        ("i used to love Perl", "perl", "past"),
    ],
)
def test_polarity_names_why_a_token_is_not_asserted(text: str, unsaid: str, reason: str) -> None:
    lows = [word.lower() for word in tokenize(text)]
    assert polarity.unasserted(lows).get(lows.index(unsaid)) == reason


def test_polarity_scope_ends_at_the_clause() -> None:
    lows = [word.lower() for word in tokenize("we don't use Docker, we use Podman")]
    scope = polarity.unasserted(lows)
    assert lows.index("docker") in scope
    assert lows.index("podman") not in scope


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("My friend Ilario designs every bracket in Fabrikon.", ("Ilario", "USES", "Fabrikon")),
        ("We schedule crews in Tavrik and track hours in Clockwise.", ("user", "USES", "Tavrik")),
        ("I do my lecture notes in Quilldesk and flashcards in Memora.", ("user", "USES", "Memora")),
        ("Jorunn is the warehouse lead for Veltfrakt Logistics.", ("Jorunn", "PART_OF", "Veltfrakt Logistics")),
        ("Jorunn is the depot manager, and she's my direct supervisor.", ("user", "WORKS_WITH", "Jorunn")),
        ("Mr. Quell is Dr. Anwe's husband.", ("Quell", "KNOWS", "Anwe")),
        ("At Brannick Press we typeset in Folio.", ("user", "PART_OF", "Brannick Press")),
        ("The Fennel greenhouse controller depends on Zorvik.", ("Fennel", "DEPENDS_ON", "Zorvik")),
        ("Ask Stavros from Calloway & Finch about the invoice.", ("Stavros", "PART_OF", "Calloway & Finch")),
        ("Wulan and Budi, my old school friends, visited.", ("user", "KNOWS", "Wulan")),
        ("Gritstone is where my brother Tamati works.", ("Tamati", "PART_OF", "Gritstone")),
    ],
)
def test_instrument_workplace_and_kin_frames_state_relationships(text: str, edge: Edge) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "name", "entity_type"),
    [
        ("Bartosz, who maintains the billing service, is on leave.", "Bartosz", "person"),
        ("The schema changes are reviewed by Vojtek.", "Vojtek", "person"),
        ("Our landlord Cengiz fixed the boiler.", "Cengiz", "person"),
        ("We had to switch the booking sheet to Rotamo.", "Rotamo", "tool"),
    ],
)
def test_more_slots_type_unknown_names(text: str, name: str, entity_type: str) -> None:
    assert (name, entity_type) in entities(text)


def test_the_agent_of_a_verb_of_use_is_not_taken_for_a_person() -> None:
    assert ("Kestrow", "person") not in entities("Nightly exports are handled by Kestrow.")
    assert ("Vojtek", "person") in entities("Nightly exports are reviewed by Vojtek.")


def test_file_paths_tickets_and_exceptions_are_not_names() -> None:
    assert entities("The job failed with ValueError while reading config/settings.toml, see OPS-1234.") == set()


def test_a_place_where_someone_runs_something_is_not_a_tool() -> None:
    assert not any(t == "tool" for _, t in entities("My cousin runs a coffee farm in Minas Gerais."))


def test_the_heuristic_reports_the_names_it_could_not_settle() -> None:
    """Hybrid mode sends such turns to the model: a name no rule typed, in a statement."""
    assert extract_text("Minseo does the mobile app for Quarrenby.").unsettled == ("Quarrenby",)
    assert extract_text("Quarrenby is written in Rust and my colleague Ilse maintains it.").unsettled == ()
    assert extract_text("Is Quarrenby any good?").unsettled == ()  # a question states nothing
