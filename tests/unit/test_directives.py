"""Memory directives in user turns: "<kind> [(<scope>)]: <statement>". Pure."""

from __future__ import annotations

import pytest

from memledger.extraction.directives import parse_directives, with_directives
from memledger.extraction.protocol import DirectiveCandidate, FactCandidate, TurnExtraction


def one(text: str) -> DirectiveCandidate:
    (found,) = parse_directives(text)
    return found


def test_preference_without_scope() -> None:
    d = one("preference: tabs over spaces")
    assert (d.kind, d.scope, d.statement) == ("preference", None, "tabs over spaces")
    assert d.key == "preference: spaces vs tabs"


def test_decision_with_project_scope() -> None:
    d = one("decision (project): we ship on Fridays.")
    assert (d.kind, d.scope, d.statement) == ("decision", "project", "we ship on Fridays")


def test_terminology_with_user_scope_is_keyed_by_the_term() -> None:
    d = one("terminology (user): 'the box' means the build server")
    assert (d.kind, d.scope) == ("terminology", "user")
    assert d.statement == "'the box' means the build server"
    assert d.key == "terminology: the box"


def test_a_later_directive_on_the_same_subject_has_the_same_key() -> None:
    assert one("preference: spaces over tabs").key == one("Preference: tabs over spaces").key
    assert one("terminology: 'The Box' means the CI server").key == one("term: the box means the build server").key


@pytest.mark.parametrize(
    ("text", "kind", "scope"),
    [
        ("Preference (ORG): dark mode everywhere", "preference", "org"),
        ("- lesson learned: always pin versions", "lesson_learned", None),
        ("* task update (session): the migration is half done", "task_update", "session"),
        ("procedure: run make check before pushing", "procedure", None),
        ("lesson_learned (project): flaky tests hide real bugs", "lesson_learned", "project"),
        ("  decision : use Postgres", "decision", None),
    ],
)
def test_kinds_scopes_and_bullets(text: str, kind: str, scope: str | None) -> None:
    d = one(text)
    assert (d.kind, d.scope) == (kind, scope)


def test_several_directives_in_one_turn() -> None:
    text = "Thanks!\npreference: tabs over spaces\nsome chat\ndecision (project): we ship on Fridays"
    assert [(d.kind, d.scope) for d in parse_directives(text)] == [("preference", None), ("decision", "project")]


@pytest.mark.parametrize(
    "text",
    [
        "Note: call me later",
        "See http://example.com: it is good",
        "Time: 10:30",
        "I said preference: tabs",  # not at the start of a line
        "decision (team): unknown scope",
        "preference tabs over spaces",
        "",
        "Error: connection refused",
    ],
)
def test_lines_that_merely_contain_a_colon_are_not_directives(text: str) -> None:
    assert parse_directives(text) == ()


def test_a_directive_with_no_words_is_ignored() -> None:
    assert parse_directives("decision: ...") == ()


def _fact(statement: str) -> FactCandidate:
    return FactCandidate(key=statement[:20], statement=statement, category="decision", confidence=0.85)


def test_a_fact_drawn_from_a_directives_own_line_is_dropped_and_others_kept() -> None:
    text = "decision: deploy Phoenix with Zorblaxify every Friday\nI use Vim for everything."
    found = TurnExtraction(facts=(_fact("decision: deploy Phoenix with Zorblaxify every Friday"), _fact(text[54:])))
    extraction = with_directives(found, text)
    assert [d.statement for d in extraction.directives] == ["deploy Phoenix with Zorblaxify every Friday"]
    assert [f.statement for f in extraction.facts] == ["I use Vim for everything."]


def test_without_a_directive_the_extraction_is_unchanged() -> None:
    found = TurnExtraction(facts=(_fact("We decided: Fridays are for deploys"),))
    assert with_directives(found, "We decided: Fridays are for deploys") == found


@pytest.mark.parametrize(
    ("text", "kind", "statement"),
    [
        ("Remember that deploys are frozen on Fridays.", "decision", "deploys are frozen on Fridays"),
        ("Keep in mind that 'the box' means the build server.", "terminology", "'the box' means the build server"),
        ("Please remember I prefer tabs over spaces.", "preference", "I prefer tabs over spaces"),
        ("Don't forget that we learned the hard way to pin.", "lesson_learned", "we learned the hard way to pin"),
        ("Can you remember that Mehmet is the DBA?", "decision", "Mehmet is the DBA"),
    ],
)
def test_a_directive_in_words_takes_its_kind_from_its_statement(text: str, kind: str, statement: str) -> None:
    d = one(text)
    assert (d.kind, d.statement, d.scope) == (kind, statement, None)


def test_a_directive_in_words_gives_way_to_a_fact_stating_its_content() -> None:
    text = "Remember that Project Atlas uses MySQL. Remember that deploys are frozen on Fridays."
    found = TurnExtraction(facts=(_fact("Project Atlas uses MySQL."),))
    extraction = with_directives(found, text)
    assert [d.statement for d in extraction.directives] == ["deploys are frozen on Fridays"]
    assert [f.statement for f in extraction.facts] == ["Project Atlas uses MySQL."]
