"""The offline heuristic extractor: the issue's examples, purity, and corpus scores."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memledger.events.catalogue import Scopes
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.protocol import TurnExtraction, TurnText

ROOT = Path(__file__).resolve().parents[2]
EVAL = ROOT / "scripts" / "eval_extraction.py"


def turn(text: str, *, role: str = "user", user: str | None = None, turn_id: str = "t1") -> TurnText:
    return TurnText(
        tenant_id="acme",
        turn_id=turn_id,
        event_id=f"e-{turn_id}",
        role=role,  # type: ignore[arg-type]
        text=text,
        scopes=Scopes(user=user),
        occurred_at=datetime(2024, 5, 1, tzinfo=UTC),
    )


def extract(text: str, **kwargs: str) -> TurnExtraction:
    result = HeuristicExtractor().extract([turn(text, **kwargs)])
    return result.get("t1", TurnExtraction())


def entities(result: TurnExtraction) -> set[tuple[str, str]]:
    return {(e.name, e.entity_type) for e in result.entities}


def edges(result: TurnExtraction) -> set[tuple[str, str, str]]:
    return {(r.source_name, r.relation, r.target_name) for r in result.relationships}


def test_extractor_names_itself_for_event_metadata() -> None:
    extractor = HeuristicExtractor()
    assert (extractor.name, extractor.version) == ("heuristic", "80")


def test_fastapi_phoenix_sarah_are_a_tool_a_project_and_a_person() -> None:
    result = extract("I'm using FastAPI for project Phoenix with my colleague Sarah")
    assert entities(result) == {
        ("FastAPI", "tool"),
        ("Phoenix", "project"),
        ("Sarah", "person"),
    }
    assert {
        ("user", "USES", "FastAPI"),
        ("Phoenix", "USES", "FastAPI"),
        ("user", "WORKS_WITH", "Sarah"),
    } <= edges(result)


def test_manager_dave_is_a_person_with_the_role_as_context() -> None:
    result = extract("My manager Dave approved the budget")
    [dave] = result.entities
    assert (dave.name, dave.entity_type, dave.context) == ("Dave", "person", "manager")


def test_project_apollo_uses_postgresql_from_the_project() -> None:
    result = extract("Project Apollo uses PostgreSQL")
    [edge] = result.relationships
    assert (edge.source_name, edge.source_type, edge.relation) == ("Apollo", "project", "USES")
    assert (edge.target_name, edge.target_type) == ("PostgreSQL", "tool")
    [fact] = result.facts
    assert (fact.key, fact.scope, fact.value) == ("apollo: database", "project", "PostgreSQL")


def test_user_sourced_edges_start_from_the_user_scope_key() -> None:
    result = extract("I use Neovim every day", user="u-42")
    [edge] = result.relationships
    assert (edge.source_name, edge.source_type, edge.target_name) == ("u-42", "user", "Neovim")


def test_switch_retracts_the_old_tool_and_uses_the_new_one() -> None:
    result = extract("I switched from React to Vue")
    [retraction] = result.retractions
    assert (retraction.source_type, retraction.relation, retraction.target_name) == (
        "user",
        "USES",
        "React",
    )
    assert edges(result) == {("user", "USES", "Vue")}
    [fact] = result.facts
    assert (fact.key, fact.value, fact.scope) == ("frontend framework", "Vue", "user")


@pytest.mark.parametrize(
    "text",
    [
        "I don't use Docker anymore",
        "I stopped using Docker",
        "We no longer use Docker",
    ],
)
def test_saying_a_tool_is_no_longer_used_retracts_it(text: str) -> None:
    result = extract(text)
    assert [(r.relation, r.target_name) for r in result.retractions] == [("USES", "Docker")]
    assert result.relationships == ()


def test_prefers_records_what_it_is_preferred_over() -> None:
    result = extract("I prefer Python over JavaScript")
    [edge] = result.relationships
    assert (edge.relation, edge.target_name, edge.context) == (
        "PREFERS",
        "Python",
        "over JavaScript",
    )
    [fact] = result.facts
    assert (fact.category, fact.key, fact.value) == (
        "preference",
        "preferred programming language",
        "Python",
    )


def test_a_question_names_entities_but_states_no_use_and_no_fact() -> None:
    result = extract("Should I use Redis for caching?")
    assert entities(result) == {("Redis", "tool")}
    assert result.relationships == ()
    assert result.facts == ()


def test_hedged_statements_get_lower_confidence() -> None:
    sure = extract("We use Terraform for the infra").relationships[0].confidence
    hedged = extract("I think we use Terraform for the infra").relationships[0].confidence
    assert sure >= 0.85
    assert 0.5 <= hedged <= 0.65


def test_pronouns_and_unnamed_roles_are_not_entities() -> None:
    result = extract("He told me that my manager wants it done. She agreed with them.")
    assert result.entities == ()


def test_sentence_openers_days_and_greetings_are_not_people() -> None:
    result = extract("Hey! Monday I'll start on it. Thanks, that worked. January is slow.")
    assert result.entities == ()


def test_dark_and_light_mode_share_one_preference_key() -> None:
    dark = extract("I prefer dark mode").facts
    light = extract("I prefer light mode in every editor").facts
    assert [(f.key, f.category, f.scope) for f in dark] == [("ui theme", "preference", "user")]
    assert [f.key for f in light] == ["ui theme"]
    assert (dark[0].value, light[0].value) == ("dark", "light")


def test_tools_of_one_kind_share_a_key_so_a_later_choice_supersedes() -> None:
    vim = extract("I use Vim").facts
    emacs = extract("I switched to Emacs last week").facts
    assert [f.key for f in vim] == [f.key for f in emacs] == ["editor"]


def test_decisions_are_project_scoped_and_task_updates_session_scoped() -> None:
    decision = extract("We decided to go with MongoDB").facts
    task = extract("I finished the onboarding docs").facts
    assert [(f.category, f.scope) for f in decision] == [("decision", "project")]
    assert [(f.category, f.scope, f.key) for f in task] == [
        ("task_update", "session", "task: onboarding docs"),
    ]


def test_people_relations_from_roles_and_organisations() -> None:
    result = extract("My sister Mei started at Google. Ivan from Yandex met me there.")
    assert {("user", "KNOWS", "Mei"), ("Mei", "PART_OF", "Google"), ("Ivan", "PART_OF", "Yandex")} <= edges(result)


def test_assistant_turns_yield_nothing() -> None:
    assistant = turn("You could use Redis with FastAPI.", role="assistant", turn_id="a1")
    user = turn("We use Redis.", turn_id="u1")
    result = HeuristicExtractor().extract([assistant, user])
    assert set(result) == {"u1"}


def test_memory_directives_are_left_to_the_directive_parser() -> None:
    assert extract("preference: tabs over spaces").directives == ()


def test_extraction_is_deterministic() -> None:
    text = "We moved from Jenkins to GitHub Actions; Kenji, my teammate, set it up."
    assert extract(text) == extract(text)


_VOCABULARY = (
    "I we my our use using switched from to prefer over decided depends on part of at the a "
    "and , . ? : - Sarah Phoenix Google React Vue Kafka project team manager me Acme Labs "
    "introduced don't anymore"
)
_WORDS = st.sampled_from(_VOCABULARY.split())


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=120), st.lists(_WORDS, max_size=30).map(" ".join)))
def test_any_text_gives_well_formed_candidates_without_raising(text: str) -> None:
    result = extract(text)
    assert all(e.name.strip() and 0.5 <= e.confidence <= 1 for e in result.entities)
    assert all(r.source_name and r.target_name and r.source_name != r.target_name for r in result.relationships)
    assert all(f.key and f.statement for f in result.facts)


def test_corpus_meets_the_extraction_targets() -> None:
    done = subprocess.run(
        [sys.executable, str(EVAL), "--show", "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    scores = json.loads(done.stdout.strip().splitlines()[-1])
    assert scores["turns"] >= 200
    assert scores["entity_precision"] >= 0.80
    assert scores["entity_recall"] >= 0.70
    assert scores["relationship_precision"] >= 0.75
    assert scores["relationship_recall"] >= 0.60
