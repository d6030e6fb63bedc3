"""Readings the rules of releases 8 to 11 must not make: a fault word that reports no
fault, someone else's doing read as the speaker's, a name before "and I" that is not a
co-subject, a known product before a method's noun, a title before an ordinary word,
and a company compared by "than". Each case failed on a first draft of its rule."""

from __future__ import annotations

from tests.unit.extracted import edges, entities


def test_a_negated_auxiliary_before_a_noun_phrase_reports_no_fault() -> None:
    assert ("user", "USES", "Jira") not in edges("Jira isn't something we use.")
    assert ("user", "USES", "Trello") not in edges("Trello is not what we picked.")
    assert ("user", "USES", "Zotero") in edges("My Zotero is down again today.")


def test_a_fault_in_a_condition_or_in_someone_elses_words_is_no_use() -> None:
    assert ("user", "USES", "Zwift") not in edges("If the Zwift app freezes again I'll cancel.")
    assert ("user", "USES", "Strava") not in edges("My friend says the Strava app crashes constantly.")
    assert ("user", "USES", "Notion") not in edges("Notion will launch new features next month.")


def test_someone_elses_doing_is_not_a_notes_reduced_passive() -> None:
    assert ("user", "USES", "Lightroom") not in edges("They edited it in Lightroom.")
    assert ("user", "USES", "Reaper") not in edges("Mum recorded it in Reaper.")


def test_a_name_inside_the_clause_before_and_i_is_no_co_subject() -> None:
    assert ("Priya", "USES", "Lightroom") not in edges("I met Priya and I edit in Lightroom.")


def test_a_known_product_before_a_methods_noun_stays_a_product() -> None:
    assert entities("We have a Slack rule for standups.").get("Slack") == "tool"


def test_a_role_before_an_ordinary_word_is_no_title() -> None:
    assert entities("I emailed Student Services.") == {"Student Services": "organization"}


def test_a_company_compared_by_than_stays_a_company() -> None:
    assert entities("Microsoft pays more than Google does.").get("Google") == "organization"
