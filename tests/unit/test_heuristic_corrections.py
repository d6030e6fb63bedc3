"""What the offline extractor makes of directives in words, migrations of a project and
one member's preferences in a shared project: the candidates, the events the policy
makes of them, and the facts those events fold into. Pure; no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memledger.events.catalogue import FactExtracted, MemoryPromoted, MemoryRetracted, Scopes
from memledger.events.envelope import NewEvent, Recorded
from memledger.events.keys import relationship_key
from memledger.extraction.directives import forget_topic, with_directives
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.policy import Counts, Policy, to_events
from memledger.extraction.protocol import TurnExtraction, TurnText
from memledger.projectors.facts import projector as facts
from memledger.projectors.facts.fold import FactRow, FactsState

T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)


def turn(text: str, *, user: str | None, turn_id: str = "t1", at: datetime = T0) -> TurnText:
    return TurnText(
        tenant_id="acme",
        turn_id=turn_id,
        event_id=f"e-{turn_id}",
        role="user",
        text=text,
        scopes=Scopes(session=f"s-{turn_id}", project="apollo", user=user),
        occurred_at=at,
    )


def extraction(text: str, *, user: str | None = "ada") -> TurnExtraction:
    """The heuristic candidates with the directives added, as the worker has them."""
    found = HeuristicExtractor().extract([turn(text, user=user)]).get("t1", TurnExtraction())
    return with_directives(found, text)


def events(
    text: str, *, user: str | None = "ada", turn_id: str = "t1", at: datetime = T0, auto_promote: bool = False
) -> list[tuple[str, NewEvent]]:
    """The events the worker would append for one user turn."""
    said = turn(text, user=user, turn_id=turn_id, at=at)
    found = with_directives(HeuristicExtractor().extract([said]).get(turn_id, TurnExtraction()), text)
    policy = Policy(auto_promote=auto_promote)
    return to_events(said, found, Counts(), policy, extractor="heuristic", version="1")


def fold(*turns: tuple[str, str | None]) -> dict[str, FactRow]:
    """The facts projection after (text, user) turns said an hour apart, by statement."""
    records: list[Recorded] = []
    for n, (text, user) in enumerate(turns):
        for stream, new in events(text, user=user, turn_id=f"t{n}", at=T0 + timedelta(hours=n)):
            position = len(records) + 1
            records.append(
                Recorded(
                    tenant_id="acme",
                    position=position,
                    tx_id=1000 + position,
                    stream_id=stream,
                    stream_version=1,
                    event_id=new.event_id,
                    occurred_at=new.occurred_at,
                    recorded_at=new.occurred_at,
                    metadata=new.metadata,
                    event=new.event,
                )
            )
    rows, _ = facts.fold(FactsState(), records)
    return {row.statement: row for row in rows}


def facts_of(pairs: list[tuple[str, NewEvent]]) -> list[FactExtracted]:
    return [new.event for _, new in pairs if isinstance(new.event, FactExtracted)]


# --- directives in words ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("Remember that deploys are frozen on Fridays.", "deploys are frozen on Fridays"),
        ("Note for the future: our fiscal year starts in April.", "our fiscal year starts in April"),
        ("Please remember the staging cluster is shared with QA.", "the staging cluster is shared with QA"),
        ("Keep in mind that invoices go out on the 5th.", "invoices go out on the 5th"),
        ("For future reference, the VPN config lives in the wiki.", "the VPN config lives in the wiki"),
        ("Don't forget that the office closes at 6pm.", "the office closes at 6pm"),
        ("Thanks! Remember that deploys are frozen on Fridays.", "deploys are frozen on Fridays"),
    ],
)
def test_a_directive_in_words_becomes_a_project_fact_of_what_follows_it(text: str, statement: str) -> None:
    (fact,) = facts_of(events(text))
    assert (fact.statement, fact.scope, fact.scope_key) == (statement, "project", "apollo")
    assert fact.confidence == pytest.approx(0.9)


def test_with_auto_promote_a_directive_in_words_is_promoted() -> None:
    pairs = events("Remember that deploys are frozen on Fridays.", auto_promote=True)
    (promoted,) = [new.event for _, new in pairs if isinstance(new.event, MemoryPromoted)]
    assert promoted.statement == "deploys are frozen on Fridays"
    assert (promoted.scope, promoted.kind) == ("project", "decision")
    assert facts_of(pairs) == []


def test_a_directive_stating_a_keyed_fact_keeps_the_facts_key() -> None:
    """ "Remember that Project Atlas uses MySQL": one fact, keyed as "Project Atlas uses
    MySQL" alone is (so a migration supersedes it), quoting what follows the phrase."""
    found = extraction("Remember that Project Atlas uses MySQL.")
    assert found.directives == ()
    assert [(f.key, f.statement) for f in found.facts] == [("atlas: database", "Project Atlas uses MySQL.")]


@pytest.mark.parametrize(
    "text",
    [
        "I can't remember the password.",
        "Remember when we broke prod?",
        "Remember that time we broke prod?",
        "Please remember to water the plants.",
        "Do you remember that bug?",
        "Note: call me later",
        "Forget what I said about British English.",
        "We talked about it, remember that?",
    ],
)
def test_sentences_that_are_no_directive_give_none(text: str) -> None:
    assert extraction(text).directives == ()
    assert all(fact.statement == text for fact in facts_of(events(text)))  # none quotes a part as kept


# --- a project's migration --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Actually we moved from MySQL to PostgreSQL for Project Atlas.",
        "We migrated Atlas from MySQL to PostgreSQL last night.",
        "We switched Project Atlas from MySQL to PostgreSQL.",
        "We replaced MySQL with PostgreSQL in Project Atlas.",
    ],
)
def test_a_projects_migration_retracts_the_projects_edge_and_keys_on_the_project(text: str) -> None:
    found = extraction(text)
    assert [(r.source_type, r.source_name, r.target_name) for r in found.retractions] == [("project", "Atlas", "MySQL")]
    assert [(r.source_type, r.relation, r.target_name) for r in found.relationships] == [
        ("project", "USES", "PostgreSQL")
    ]
    original = extraction("Project Atlas uses MySQL.")
    assert [(f.key, f.scope) for f in found.facts] == [(f.key, f.scope) for f in original.facts]
    (retracted,) = [new.event for _, new in events(text) if isinstance(new.event, MemoryRetracted)]
    assert retracted.item_id == relationship_key("project", "Atlas", "USES", "tool", "MySQL")


@pytest.mark.parametrize(
    "text",
    [
        "We migrated Atlas from MySQL to PostgreSQL last night.",
        "Actually we moved from MySQL to PostgreSQL for Project Atlas.",
    ],
)
def test_a_projects_migration_supersedes_what_the_project_used(text: str) -> None:
    rows = fold(("Project Atlas uses MySQL.", "ada"), (text, "grace"))
    old, new = rows["Project Atlas uses MySQL."], rows[text]
    assert (new.status, old.status, old.superseded_by) == ("active", "superseded", new.memory_id)


def test_the_speakers_own_migration_still_retracts_the_speakers_edge() -> None:
    found = extraction("We moved from MySQL to PostgreSQL.")
    assert [(r.source_type, r.target_name) for r in found.retractions] == [("user", "MySQL")]


@pytest.mark.parametrize(
    "text",
    [
        "We moved the meeting from Monday to Tuesday.",
        "We moved Project Atlas from the old office to the new one.",
        "We moved from MySQL to PostgreSQL after Project Atlas failed.",
    ],
)
def test_moves_that_change_no_projects_tools_touch_no_project_key(text: str) -> None:
    found = extraction(text)
    assert not [f for f in found.facts if f.key.startswith("atlas")]
    assert not [r for r in (*found.relationships, *found.retractions) if r.source_type == "project"]


# --- one member's preferences -----------------------------------------------------------


def test_members_preferences_in_one_project_do_not_supersede_each_other() -> None:
    rows = fold(("I prefer Emacs over Vim.", "ada"), ("I prefer Vim over Emacs.", "grace"))
    ada, grace = rows["I prefer Emacs over Vim."], rows["I prefer Vim over Emacs."]
    assert (ada.scope, ada.scope_key, grace.scope, grace.scope_key) == ("user", "ada", "user", "grace")
    assert (ada.status, grace.status) == ("active", "active")
    assert not ada.conflicted


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I prefer Emacs over Vim.", "I prefer Vim over Emacs."),
        ("Please always answer in British English.", "Please always answer in Spanish."),
        ("I prefer dark mode.", "I prefer light mode."),
    ],
)
def test_a_members_newer_preference_supersedes_their_older_one(older: str, newer: str) -> None:
    rows = fold((older, "ada"), (newer, "ada"))
    assert (rows[older].status, rows[older].superseded_by) == ("superseded", rows[newer].memory_id)


def test_a_first_person_preference_is_keyed_by_its_speaker() -> None:
    assert [f.key for f in extraction("I prefer Emacs over Vim.", user="ada").facts] == ["ada: preferred editor"]
    assert [f.key for f in extraction("Please always answer in British English.", user="ada").facts] == [
        "ada: response language"
    ]
    assert [f.key for f in extraction("Sarah prefers Vim.", user="ada").facts] == ["sarah: preferred editor"]


def test_without_a_user_a_preference_keeps_its_plain_key() -> None:
    assert [f.key for f in extraction("I prefer Emacs over Vim.", user=None).facts] == ["preferred editor"]
    rows = fold(("I prefer Emacs over Vim.", None), ("I prefer Vim over Emacs.", None))
    assert rows["I prefer Emacs over Vim."].status == "superseded"


def test_a_hashed_user_id_names_the_speaker_by_its_first_eight_digits() -> None:
    hashed = "hid.user.30c03654" + "0" * 24
    assert [f.key for f in extraction("I prefer Emacs over Vim.", user=hashed).facts] == ["30c03654: preferred editor"]


# --- one member's personal facts ---------------------------------------------------------


@pytest.mark.parametrize(
    ("ada_said", "grace_said"),
    [
        ("I'm allergic to peanuts.", "I'm allergic to shellfish."),
        ("My name is Ada Lovelace.", "My name is Grace Hopper."),
        ("I live in London.", "I live in Arlington."),
        ("I'm a backend engineer.", "I'm a data scientist."),
    ],
)
def test_members_personal_facts_in_one_project_do_not_supersede_each_other(ada_said: str, grace_said: str) -> None:
    rows = fold((ada_said, "ada"), (grace_said, "grace"))
    ada, grace = rows[ada_said], rows[grace_said]
    assert (ada.scope, ada.scope_key, grace.scope_key) == ("user", "ada", "grace")
    assert (ada.status, grace.status) == ("active", "active")
    assert not ada.conflicted


def test_a_members_newer_personal_fact_supersedes_their_older_one() -> None:
    rows = fold(("I live in London.", "ada"), ("I moved to Berlin.", "ada"))
    assert rows["I live in London."].status == "superseded"
    assert rows["I live in London."].superseded_by == rows["I moved to Berlin."].memory_id


def test_a_personal_fact_is_keyed_by_its_speaker() -> None:
    assert [f.key for f in extraction("I'm allergic to peanuts.", user="ada").facts] == ["ada: allergy: peanuts"]
    assert [f.key for f in extraction("I'm allergic to peanuts.", user=None).facts] == ["allergy: peanuts"]


# --- a sentence of two facts ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "statements"),
    [
        (
            "I'm vegetarian, and I'm allergic to peanuts.",
            {"ada: diet": "I'm vegetarian.", "ada: allergy: peanuts": "I'm allergic to peanuts."},
        ),
        (
            "I live in Berlin and I work at Acme as a backend engineer.",
            {"ada: home location": "I live in Berlin.", "ada: employer": "I work at Acme as a backend engineer."},
        ),
        (
            "I prefer dark mode and tabs over spaces!",
            {"ada: ui theme": "I prefer dark mode!", "ada: indentation": "I prefer tabs over spaces!"},
        ),
        (
            "I like dark themes and I use Vim.",
            {"ada: preference: dark themes": "I like dark themes.", "ada: editor": "I use Vim."},
        ),
    ],
)
def test_each_fact_of_a_sentence_of_two_quotes_its_own_clause(said: str, statements: dict[str, str]) -> None:
    assert {f.key: f.statement for f in extraction(said).facts} == statements


@pytest.mark.parametrize(
    "said",
    [
        "I'm not vegetarian anymore, I'm pescatarian now.",  # one key: the sentence
        "I prefer concise answers with bullet points.",  # one key, two words for it
        "I use Vim and Emacs.",  # one key, two values
        "I prefer dark mode and tabs over spaces, except on Fridays.",  # the exception holds for both
        "If I'm vegetarian, I'm allergic to peanuts.",  # a condition
        "I prefer dark mode and tabs over spaces, especially at night.",  # a clause stating neither
    ],
)
def test_a_sentence_of_one_fact_or_a_qualified_one_is_quoted_whole(said: str) -> None:
    assert {f.statement for f in extraction(said).facts} == {said}


def test_replacing_one_fact_of_a_sentence_leaves_the_other_without_the_replaced_words() -> None:
    """The dinner booking must not read "I'm vegetarian" once the speaker said they no longer are."""
    rows = fold(("I'm vegetarian, and I'm allergic to peanuts.", "ada"), ("I'm pescatarian now.", "ada"))
    assert rows["I'm vegetarian."].superseded_by == rows["I'm pescatarian now."].memory_id
    assert rows["I'm allergic to peanuts."].status == "active"
    live = " ".join(statement for statement, row in rows.items() if row.status == "active")
    assert "vegetarian" not in live


# --- the turn's project named bare ---------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "key", "category"),
    [
        ("Apollo uses MongoDB.", "apollo: database", "technical_fact"),
        ("Apollo runs on MongoDB for storage.", "apollo: database", "technical_fact"),
        ("Apollo must not store personal data in logs.", "constraint: store personal data", "constraint"),
        ("Project Apollo has to support SSO.", "constraint: support sso", "constraint"),
        ("Apollo decided to use FastAPI.", "apollo: backend framework", "decision"),
        ("Apollo prefers Vim over Emacs.", "apollo: preferred editor", "preference"),
    ],
)
def test_the_turns_project_named_bare_is_the_subject_of_a_project_fact(said: str, key: str, category: str) -> None:
    (fact,) = facts_of(events(said))
    assert (fact.key, fact.category, fact.scope, fact.scope_key) == (key, category, "project", "apollo")


def test_a_bare_name_is_a_project_only_in_that_projects_turns() -> None:
    """The same words said in another project name nothing known: no guess at "Apollo"."""
    said = TurnText(
        tenant_id="acme",
        turn_id="t1",
        event_id="e-t1",
        role="user",
        text="Apollo uses MongoDB.",
        scopes=Scopes(session="s", project="hermes", user="ada"),
        occurred_at=T0,
    )
    found = HeuristicExtractor().extract([said]).get("t1", TurnExtraction())
    assert [f.key for f in found.facts if f.key.startswith("apollo")] == []


@pytest.mark.parametrize("said", ["Sarah must finish the slides.", "Apollo's logo must be blue, Sarah said."])
def test_a_rule_is_the_projects_only_when_the_project_is_its_subject(said: str) -> None:
    assert [f for f in facts_of(events(said)) if f.category == "constraint"] == []


# --- the people of the speaker's life ------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "key", "value"),
    [
        ("My manager is Tom.", "ada: manager", "Tom"),
        ("Tom Baker is my manager.", "ada: manager", "Tom Baker"),
        ("My boss is Tom Baker, he runs the platform team.", "ada: manager", "Tom Baker"),
        ("I report to Dana O'Neil.", "ada: manager", "Dana O'Neil"),
        ("My daughter's name is Mia.", "ada: daughter", "Mia"),
        ("My dog is called Rex.", "ada: dog", "Rex"),
        ("My manager is Tom and he is great.", "ada: manager", "Tom"),
    ],
)
def test_who_the_speakers_manager_or_family_is_becomes_a_personal_fact(said: str, key: str, value: str) -> None:
    facts = [f for f in extraction(said).facts if f.category == "personal_fact"]
    assert [(f.key, f.value, f.scope) for f in facts] == [(key, value, "user")]


@pytest.mark.parametrize(
    "said", ["My manager is out sick today.", "My mom is visiting.", "My son is 5.", "It is my dog."]
)
def test_a_role_without_a_name_makes_no_personal_fact(said: str) -> None:
    assert [f for f in extraction(said).facts if f.category == "personal_fact"] == []


def test_a_new_manager_supersedes_the_old_one() -> None:
    rows = fold(("My manager is Tom.", "ada"), ("Sarah Chen is my manager now.", "ada"))
    assert rows["My manager is Tom."].superseded_by == rows["Sarah Chen is my manager now."].memory_id


# --- asked to forget ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "Forget that I use Vim.",
        "Please forget that I'm allergic to peanuts.",
        "Oh, and forget that my manager is Tom.",
        "Can you forget that I live in London?",
        "Stop remembering that I prefer dark mode.",
    ],
)
def test_what_the_speaker_asks_to_forget_is_not_remembered(said: str) -> None:
    found = extraction(said)
    assert (found.facts, found.relationships, found.directives) == ((), (), ())


def test_the_sentence_after_a_request_to_forget_is_read_as_ever() -> None:
    found = extraction("Forget that I live in London. I live in Berlin now.")
    assert [(f.key, f.value) for f in found.facts] == [("ada: home location", "Berlin now")]


@pytest.mark.parametrize("said", ["Forget it, we use Postgres.", "I forget which editor I use, probably Vim."])
def test_forget_as_a_figure_of_speech_is_no_request(said: str) -> None:
    assert extraction(said).relationships


def test_dont_forget_that_still_asks_to_remember() -> None:
    assert [d.statement for d in extraction("Don't forget that deploys are frozen on Fridays.").directives] == [
        "deploys are frozen on Fridays"
    ]


# --- where a person's own words are kept ---------------------------------------------------


@pytest.mark.parametrize("said", ["I'm vegetarian.", "I prefer tabs over spaces.", "My manager is Tom."])
def test_a_persons_own_fact_or_preference_goes_to_their_user_scope(said: str) -> None:
    """Their next conversation (another session, no project) reads the user scope."""
    [fact] = facts_of(events(said, user="ada"))
    assert (fact.scope, fact.scope_key) == ("user", "ada")


def test_without_a_user_a_persons_fact_stays_in_the_project() -> None:
    [fact] = facts_of(events("I'm vegetarian.", user=None))
    assert (fact.scope, fact.scope_key) == ("project", "apollo")


def test_a_tool_a_person_uses_is_theirs_and_a_tool_the_team_uses_is_the_teams() -> None:
    [mine] = facts_of(events("I use Neovim.", user="ada"))
    [ours] = facts_of(events("We use Postgres.", user="ada"))
    assert (mine.key, mine.scope) == ("ada: editor", "project")  # a tool, not a personal fact
    assert (ours.key, ours.scope) == ("database", "project")
    rows = fold(("I use Neovim.", "sam"), ("I use Emacs.", "raj"))
    assert (rows["I use Neovim."].status, rows["I use Emacs."].status) == ("active", "active")


@pytest.mark.parametrize(
    ("said", "topic"),
    [
        ("Please forget what I said about my birthday.", "my birthday"),
        ("Forget that I use Vim.", "I use Vim"),
        ("Can you forget what I told you about Tom?", "Tom"),
        ("Delete what I said about my diet.", "my diet"),
        ("Forget everything I said about Berlin.", "Berlin"),
        ("Forget it.", None),
        ("Don't forget that deploys are frozen on Fridays.", None),
    ],
)
def test_what_a_request_to_forget_names(said: str, topic: str | None) -> None:
    assert forget_topic(said) == topic


# --- more of what people say about themselves --------------------------------------------


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("I live in Berlin and I work at Acme.", {("ada: home location", "Berlin"), ("ada: employer", "Acme")}),
        ("I'm from Lagos but I live in Paris.", {("ada: hometown", "Lagos"), ("ada: home location", "Paris")}),
        ("I'm allergic to peanuts and shellfish.", {("ada: allergy: peanuts shellfish", "peanuts and shellfish")}),
        ("I'm Sam.", {("ada: name", "Sam")}),
        ("Hi, I am Sam Lee!", {("ada: name", "Sam Lee")}),
        ("I don't eat meat.", {("ada: avoids: meat", "meat")}),
        ("I'm not vegetarian anymore.", {("ada: diet", "not vegetarian")}),
        ("I no longer live in Berlin.", {("ada: home location", "no longer live in Berlin")}),
        ("I'm fine.", set()),
    ],
)
def test_what_a_person_says_of_themself(said: str, expected: set[tuple[str, str]]) -> None:
    found = {(f.key, f.value) for f in extraction(said).facts if f.category == "personal_fact"}
    assert found == expected


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I'm vegetarian.", "I'm not vegetarian anymore."),
        ("I live in Berlin.", "I no longer live in Berlin."),
        ("The deadline for Phoenix is December 15.", "The Phoenix deadline is now January 20."),
        ("The deadline for Phoenix is December 15.", "The deadline for Phoenix moved to January 20."),
    ],
)
def test_what_no_longer_holds_supersedes_what_did(older: str, newer: str) -> None:
    rows = fold((older, "ada"), (newer, "ada"))
    assert (rows[older].status, rows[older].superseded_by) == ("superseded", rows[newer].memory_id)


def test_allergies_and_foods_avoided_add_up_and_each_can_be_undone() -> None:
    rows = fold(
        ("I'm allergic to peanuts.", "ada"),
        ("I'm allergic to shellfish.", "ada"),
        ("I can't eat gluten.", "ada"),
        ("I'm vegetarian.", "ada"),
        ("I'm no longer allergic to peanuts.", "ada"),
    )
    live = {statement for statement, row in rows.items() if row.status == "active"}
    assert live == {
        "I'm allergic to shellfish.",
        "I can't eat gluten.",
        "I'm vegetarian.",
        "I'm no longer allergic to peanuts.",
    }


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("I changed jobs: I now work at Globex as a staff engineer.", {("ada: employer", "Globex")}),
        ("I left Acme.", {("ada: employer", None)}),  # the employer's key, no employer now
        ("I left Google.", {("ada: employer", None)}),  # a known name reads the same
        ("I left Berlin last year.", set()),  # a place, not a job
        ("I'm French.", set()),
        ("My wife is Japanese.", set()),
        ("I'm not vegetarian anymore, I'm vegan now.", {("ada: diet", "vegan")}),
        ("I don't live in Berlin, I live in Munich.", {("ada: home location", "Munich")}),
        ("I quit Slack.", set()),  # a tool, not a job
        ("My new manager is Laura Chen since Tom left.", {("ada: manager", "Laura Chen")}),
        ("I moved from Berlin to Munich.", {("ada: home location", "Munich")}),
    ],
)
def test_what_changed_in_a_persons_life(said: str, expected: set[tuple[str, str | None]]) -> None:
    found = {(f.key, f.value) for f in extraction(said).facts if f.category == "personal_fact"}
    assert found == expected


def test_a_new_job_supersedes_the_old_one() -> None:
    rows = fold(("I work at Acme.", "ada"), ("I changed jobs: I now work at Globex as a staff engineer.", "ada"))
    assert rows["I work at Acme."].status == "superseded"
