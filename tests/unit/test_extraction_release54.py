"""Release 54: the thirty-sixth set's first look. "X is a dependency of Y" is Y's; "can't
<do a thing> without X" and "won't even start without X" are dependencies; a comparison
the speaker makes ("I'm more comfortable in X than Y", "X feels nicer to me than Y")
prefers the first; a name before an apposition with a clause of its own ("X, the tool
Ayelet and I maintain, relies on Y") is the verb's subject; a negation inside a relative
clause does not reach back over the clause it follows, and a negated clause reaches into
a restrictive one; "X is a <noun> that ..." is X's. Names are invented; each case failed
on release 53 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


def test_a_dependency_of_a_project_is_the_projects() -> None:
    found = edges("A forked version of Hono is a hard dependency of the Saltings API.")
    assert ("Saltings API", "DEPENDS_ON", "Hono") in found and ("Hono", "DEPENDS_ON", "Saltings API") not in found


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Copperleaf won't even start without DuckDB.", ("Copperleaf", "DEPENDS_ON", "DuckDB")),
        ("Bluefern can't run its analytics without ClickHouse.", ("Bluefern", "DEPENDS_ON", "ClickHouse")),
        (
            "Pellow & Rook can't dispatch a single van without its Vantrak units.",
            ("Pellow & Rook", "DEPENDS_ON", "Vantrak"),
        ),
    ],
)
def test_what_cannot_be_done_without_a_tool_depends_on_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text", ["Ana can't sleep without Calm.", "If Copperleaf can't start without DuckDB, we'll know."]
)
def test_a_persons_habit_or_a_supposition_is_no_dependency(text: str) -> None:
    assert not any(rel == "DEPENDS_ON" for _, rel, _ in edges(text))  # guards


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I'm more comfortable in Sage than Xero for the farm accounts.", "Sage"),
        ("For Go, OGS feels nicer to me than KGS.", "OGS"),
        ("For photography I am liking more Capture One than Lightroom.", "Capture One"),
        ("Handwritten notes with the Cornell method work better for me than typing into Notion.", "Cornell method"),
    ],
)
def test_a_comparison_the_speaker_makes_prefers_the_first(text: str, tool: str) -> None:
    assert tool in speakers(text, "PREFERS")


@pytest.mark.parametrize(
    "text",
    [
        "I use Notion more than 3 hours a day.",
        "I don't like Sage more than Xero.",
        "My wife likes Sage more than Xero.",
        "I've been told by Youssef that Nginx is faster than Apache.",
        "I spend more time in Zoho Books than at the wheel.",
        "My manager chose Monday.com and it's honestly slower than the whiteboard.",
    ],
)
def test_a_count_a_negation_someone_elses_or_a_plain_comparison_prefers_nothing(text: str) -> None:
    assert not speakers(text, "PREFERS")  # guards


def test_a_name_before_an_apposition_with_its_own_clause_is_the_subject() -> None:
    found = edges("Harbourline, the billing tool Ayelet and I maintain, relies on Temporal for retries.")
    assert ("Harbourline", "DEPENDS_ON", "Temporal") in found and ("user", "DEPENDS_ON", "Temporal") not in found


def test_a_name_with_an_article_before_an_apposition_is_the_subject() -> None:
    found = edges("The Marrow Pilots, the covers band I play bass in, depends on a Behringer X32.")
    assert ("Marrow Pilots", "DEPENDS_ON", "Behringer X32") in found  # a guard


def test_a_negation_in_a_relative_clause_leaves_the_clause_before() -> None:
    found = edges("Dorcas keeps the fixture list in TeamSnap and nags anyone who doesn't reply.")
    assert ("Dorcas", "USES", "TeamSnap") in found


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I don't know anyone who uses Zed.", ("user", "USES", "Zed")),
        ("It's not true that we use Zed.", ("user", "USES", "Zed")),
    ],
)
def test_a_negation_reaches_into_a_restrictive_clause(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)  # guards


def test_a_clause_set_apart_after_a_negation_still_holds() -> None:
    assert ("Ana", "USES", "Zed") in edges("I never met Ana, who uses Zed.")  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Moorlight is an R package that depends on tidync.", ("Moorlight", "DEPENDS_ON", "tidync")),
        ("ok so Brisholm is just a thin wrapper that depends on httpx", ("Brisholm", "DEPENDS_ON", "httpx")),
        ("Ana is a designer who uses Figma.", ("Ana", "USES", "Figma")),
    ],
)
def test_a_relative_clause_after_is_a_noun_is_the_names(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_a_relative_clause_about_someone_unnamed_is_no_ones() -> None:
    assert not edges("The guy who did our loft uses Trello.")  # a guard
