"""The merge rules: near-equal names, aliases and initials merge; people who share only
a first name, entities of two types, and entities a split kept apart never do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memledger.projectors.entities.merges import EntityVectors, MergeInput
from memledger.projectors.relationships.graph_aging import Aging, edge_weight, is_pruned
from memledger.service.maintenance_rules import find_candidates, name_key


def _entity(
    kind: str,
    name: str,
    *,
    mentions: int = 1,
    aliases: tuple[str, ...] = (),
    status: str = "active",
    merged_into: str | None = None,
    apart: tuple[str, ...] = (),
    first: int = 0,
) -> MergeInput:
    return MergeInput(
        entity_id=f"{kind}:{name.casefold()}",
        entity_type=kind,
        name=name,
        aliases=list(aliases),
        mention_count=mentions,
        first_position=first,
        status=status,
        merged_into=merged_into,
        kept_apart=list(apart),
    )


def _groups(*rows: MergeInput) -> list[tuple[str, tuple[str, ...], str]]:
    return [(c.kept_entity_id, c.merged_entity_ids, c.rule) for c in find_candidates(rows)]


@pytest.mark.parametrize(
    ("name", "kind", "key"),
    [
        ("Acme Inc.", "organization", "acme"),
        ("ACME, Ltd", "organization", "acme"),
        ("Müller GmbH", "organization", "muller"),
        ("  José   García ", "person", "jose garcia"),
        ("O'Brien-Smith", "person", "o brien smith"),
        ("Acme Inc.", "tool", "acme inc"),  # legal forms are dropped for organisations only
        ("Inc", "organization", "inc"),  # a name that is nothing but a legal form keeps it
    ],
)
def test_name_key_sets_aside_case_diacritics_punctuation_and_legal_forms(name: str, kind: str, key: str) -> None:
    assert name_key(name, kind) == key


def test_near_equal_organisation_names_merge_into_the_most_mentioned() -> None:
    found = _groups(
        _entity("organization", "Acme Inc.", mentions=2),
        _entity("organization", "ACME", mentions=5),
        _entity("organization", "Acmé Ltd"),
        _entity("organization", "Acme Labs"),
    )
    assert found == [("organization:acme", ("organization:acme inc.", "organization:acmé ltd"), "normalised_name")]


def test_people_who_share_only_a_first_name_are_never_merged() -> None:
    assert _groups(_entity("person", "Ada"), _entity("person", "Ada Lovelace"), _entity("person", "ada.")) == []
    assert _groups(_entity("person", "John Smith"), _entity("person", "John Doe")) == []


def test_a_one_word_alias_of_a_person_does_not_merge_them_with_that_person() -> None:
    robert = _entity("person", "Robert Okoye", aliases=("Bob",))
    assert _groups(robert, _entity("person", "Bob")) == []


def test_a_full_name_alias_merges() -> None:
    robert = _entity("person", "Robert Okoye", mentions=3, aliases=("Bob Okoye",))
    assert _groups(robert, _entity("person", "Bob Okoye")) == [("person:robert okoye", ("person:bob okoye",), "alias")]


def test_an_initial_merges_only_when_one_person_fits_it() -> None:
    john, initial = _entity("person", "John Smith", mentions=2), _entity("person", "J. Smith")
    assert _groups(john, initial) == [("person:john smith", ("person:j. smith",), "initials")]
    assert _groups(john, initial, _entity("person", "Jane Smith")) == []


def test_entities_of_two_types_are_not_merged() -> None:
    assert _groups(_entity("tool", "Postgres"), _entity("concept", "postgres.")) == []


def test_retracted_merged_and_kept_apart_entities_are_not_proposed() -> None:
    assert _groups(_entity("tool", "Go"), _entity("tool", "go.", status="retracted")) == []
    assert _groups(_entity("tool", "Go"), _entity("tool", "go.", merged_into="tool:rust")) == []
    apart = _entity("tool", "go.", apart=("tool:go",))
    assert _groups(_entity("tool", "Go"), apart) == []


def test_an_entity_kept_by_an_earlier_merge_stays_the_kept_one() -> None:
    found = _groups(
        _entity("tool", "Kafka", mentions=1),
        _entity("tool", "kafka.", mentions=9),
        _entity("tool", "KAFKA!", merged_into="tool:kafka"),
    )
    assert found == [("tool:kafka", ("tool:kafka.",), "normalised_name")]


def test_the_weakest_rule_of_a_group_is_its_evidence() -> None:
    found = find_candidates(
        [
            _entity("person", "John Smith", mentions=4, aliases=("Johnny Smith",)),
            _entity("person", "john smith."),
            _entity("person", "Johnny Smith"),
            _entity("person", "J Smith"),
        ]
    )
    # "J Smith" fits two full names (John and Johnny): ambiguous, so it stays apart.
    assert len(found) == 1
    assert (found[0].rule, found[0].score) == ("alias", 0.9)
    assert found[0].merged_entity_ids == ("person:john smith.", "person:johnny smith")


def _vectors(**by_id: tuple[float, float, float]) -> EntityVectors:
    return EntityVectors(len(by_id), list(by_id), np.array(list(by_id.values()), dtype=np.float32))


def test_vectors_closer_than_the_threshold_merge_within_a_type_but_never_people() -> None:
    rows = [
        _entity("tool", "Kube cluster", mentions=3),
        _entity("tool", "Kubernetes clusters"),
        _entity("tool", "Docker"),
        _entity("concept", "Kube things"),
        _entity("person", "Jon Smyth"),
        _entity("person", "John Smith"),
    ]
    vectors = _vectors(
        **{
            "tool:kube cluster": (1.0, 0.0, 0.0),
            "tool:kubernetes clusters": (0.99, 0.1, 0.0),  # cosine 0.995
            "tool:docker": (0.9, 0.44, 0.0),  # cosine 0.898: apart
            "concept:kube things": (1.0, 0.0, 0.0),  # the same vector, another type
            "person:jon smyth": (0.0, 0.0, 1.0),
            "person:john smith": (0.0, 0.01, 1.0),
        }
    )
    found = find_candidates(rows, vectors)
    assert [(c.kept_entity_id, c.merged_entity_ids, c.rule, c.score) for c in found] == [
        ("tool:kube cluster", ("tool:kubernetes clusters",), "embedding", 0.995)
    ]
    assert find_candidates(rows) == []  # without vectors, no rule matches these names


def test_edge_weight_halves_every_half_life_and_never_grows() -> None:
    seen = datetime(2026, 1, 1, tzinfo=UTC)
    assert edge_weight(0.8, seen, seen, 90) == 0.8
    assert edge_weight(0.8, seen, seen + timedelta(days=90), 90) == 0.4
    assert edge_weight(0.8, seen, seen + timedelta(days=180), 90) == 0.2
    assert edge_weight(0.8, seen, seen - timedelta(days=5), 90) == 0.8  # read before it was reinforced


def test_is_pruned_needs_few_mentions_and_nothing_recent() -> None:
    aging = Aging(min_mentions=2, recent_days=30)
    since = datetime(2026, 3, 1, tzinfo=UTC)
    old, recent = since - timedelta(days=1), since + timedelta(days=1)
    assert is_pruned(1, old, None, since, aging)
    assert is_pruned(1, old, old, since, aging)
    assert not is_pruned(2, old, None, since, aging)
    assert not is_pruned(1, recent, None, since, aging)
    assert not is_pruned(1, old, recent, since, aging)
    assert not is_pruned(1, old, None, since, Aging(min_mentions=0))
