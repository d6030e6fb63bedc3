"""The entities a request names are found however many others share its words.

``graph_queries.named_in`` finds entities by the request's words (in a name or a
description), then keeps those whose name or an alias appears in the request as
whole words. It reads at most 200 entities. In a tenant of many entities, a common
word of the request ("service", "billing") matched more than 200 better-known ones,
so a person named in the request was not among those read and was not found: "Who
works with Valentina Nguyen on the billing service?" found no Valentina.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memledger.events.catalogue import EntityObserved, Event
from memledger.projectors.relationships import graph_queries
from memledger.selection.words import query_words
from tests.conftest import project_events

SERVICES = 230  # more than named_in reads, each better known than the people


def _events() -> list[Event]:
    out: list[Event] = []
    for i in range(SERVICES):
        service = EntityObserved(
            name=f"Service {i}", entity_type="tool", confidence=0.9, description="the billing service of one region"
        )
        out += [service, service, service]  # mentioned three times each
    out.append(EntityObserved(name="Valentina Nguyen", entity_type="person", confidence=0.9))
    # Matched by a word of its description among the well-known services, kept by its alias.
    robert = EntityObserved(
        name="Robert Okoye", entity_type="person", confidence=0.9, aliases=("Bobby O",), description="billing on call"
    )
    out.append(robert)
    out.append(EntityObserved(name="Ada", entity_type="person", confidence=0.9, description="billing lead"))
    out.append(EntityObserved(name="Margaret Oduya", entity_type="person", confidence=0.9, aliases=("Peggy",)))
    return out


@pytest.fixture(scope="module")
def named(database: Any) -> tuple[Engine, str]:
    engine: Engine = database.engine
    return engine, project_events(engine, "named", _events(), ["entities"])


def _found(named: tuple[Engine, str], request: str) -> list[str]:
    engine, tenant = named
    with engine.connect() as conn:
        return [hit.entity_id for hit in graph_queries.named_in(conn, tenant, query_words(request), request)]


def test_a_person_named_beside_common_words_is_found(named: tuple[Engine, str]) -> None:
    assert _found(named, "Who works with Valentina Nguyen on the billing service?") == ["person:valentina nguyen"]


def test_a_name_in_other_casing_and_an_alias_are_found(named: tuple[Engine, str]) -> None:
    assert _found(named, "Ask VALENTINA NGUYEN about the billing service") == ["person:valentina nguyen"]
    assert _found(named, "Did Bobby O fix the billing service?") == ["person:robert okoye"]


def test_an_entity_named_by_an_alias_alone_is_found(named: tuple[Engine, str]) -> None:
    """Entities v2: the aliases' words are searched too (v1: the name and description only)."""
    assert _found(named, "What did Peggy decide?") == ["person:margaret oduya"]


def test_a_name_is_found_as_whole_words_only(named: tuple[Engine, str]) -> None:
    assert _found(named, "Is Adams on the billing service?") == []
    assert _found(named, "Is Ada on the billing service?") == ["person:ada"]
    assert _found(named, "What does Service 12 bill?") == ["tool:service 12"]
