"""Shapes read since release 9: notes' labelled lists, faults reported in a tool,
permissions and recommendations, what the speaker owns inside a preference, who does
what a clause says, "and the X won't ...", relatives named by title. Every name is
invented, so each case fails if the rule it names is removed."""

from __future__ import annotations

from tests.unit.extracted import edges


def test_a_labelled_note_lists_what_is_used() -> None:
    found = edges("Photo workflow: Lightroom for edits, Dropbox for backups")
    assert {("user", "USES", "Lightroom"), ("user", "USES", "Dropbox")} <= found
    assert ("user", "USES", "FreshBooks") in edges("Invoices — FreshBooks.")


def test_a_project_named_in_the_label_owns_the_listed_tools() -> None:
    found = edges("Stack (Quellmark): Django + HTMX + SQLite")
    assert {("Quellmark", "USES", "Django"), ("Quellmark", "USES", "SQLite")} <= found
    assert not any(source == "user" for source, _, _ in found)


def test_a_decision_label_decides_what_it_lists() -> None:
    found = edges("Decision (ADR-9): Temporal for workflows, not Prefect.")
    assert ("user", "DECIDED", "Temporal") in found
    assert ("user", "USES", "Temporal") not in found


def test_a_note_weighing_options_or_preferences_records_no_use() -> None:
    assert not any(rel == "USES" for _, rel, _ in edges("Gym options: Pulsefit vs Anytime Fitness"))
    assert ("user", "USES", "Sublime Text") not in edges("Prefs: Zed > Sublime Text; Ruff for lint")


def test_a_fault_reported_in_the_writers_own_tool_says_the_speaker_uses_it() -> None:
    assert ("user", "USES", "Zwift") in edges("My Zwift app freezes when I pair my trainer.")
    assert ("user", "USES", "Zotero") in edges("Our Zotero library is not syncing with the group.")


def test_a_fault_in_a_tool_not_said_to_be_the_writers_states_no_use() -> None:
    # a fault states a fault, not a use: the labelling guide counts what is stated
    assert ("user", "USES", "Zotero") not in edges("Zotero is not syncing my library with the group.")


def test_a_fault_that_made_the_speaker_leave_is_no_use() -> None:
    found = edges("We moved our CI from CircleCI to Buildkite because the macOS runners kept timing out.")
    assert ("user", "USES", "macOS") not in found


def test_a_fault_after_and_is_not_read_as_the_subject_of_a_new_name() -> None:
    found = edges("a weekend on Skyscanner and Rome2rio didn't sound so bad")
    assert ("user", "USES", "Rome2rio") not in found


def test_permission_and_advice_are_no_use() -> None:
    assert ("user", "USES", "Desmos") not in edges("Professor Adeyemi said we can use Desmos on the midterm.")
    assert ("user", "USES", "TaxAct") not in edges("A friend recommended I use TaxAct.")


def test_what_the_speaker_owns_inside_a_preference_is_preferred_not_used() -> None:
    found = edges("I prefer my old Miele to the Dyson.")
    assert ("user", "PREFERS", "Miele") in found
    assert ("user", "USES", "Miele") not in found
    assert ("user", "USES", "Kindle") in edges("I read it on my old Kindle.")


def test_a_person_on_a_team_is_the_subject_not_the_team() -> None:
    found = edges("Ji-woo on the payments team wrote the retry logic in Kotlin.")
    assert ("Ji-woo", "USES", "Kotlin") in found
    assert ("payments team", "USES", "Kotlin") not in found


def test_a_compared_name_is_not_a_co_subject() -> None:
    found = edges("I prefer Pentax than Canon and I edit in RawTherapee.")
    assert ("user", "USES", "RawTherapee") in found
    assert ("Canon", "USES", "RawTherapee") not in found


def test_and_before_a_new_subject_ends_the_clause_a_negation_scopes() -> None:
    assert ("user", "USES", "Square") in edges("We use Square and the reader won't connect.")
    assert ("user", "USES", "Jira") not in edges("We don't use Jira and the team is happy.")


def test_a_relatives_word_as_a_title_names_the_speakers_relative() -> None:
    assert ("user", "KNOWS", "Rosa") in edges("We visited Aunt Rosa in May.")
    assert ("user", "KNOWS", "Rosa") not in edges("His aunt Rosa called.")
    assert not any(rel == "KNOWS" for _, rel, _ in edges("I emailed Professor Hemi Walker."))
