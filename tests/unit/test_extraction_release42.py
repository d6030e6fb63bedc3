"""Release 42: a dependency said as what cannot work without a thing, and "depend of" in
non-native English. Names are invented; each case failed on release 41 unless marked a
guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    ("text", "source", "target"),
    [
        ("Without PyTorch Lightning the ML side of Sablewood wouldn't run at all.", "Sablewood", "PyTorch Lightning"),
        ("Our project Lindenholm, it is written in Scala and it depend of Camunda.", "Lindenholm", "Camunda"),
    ],
)
def test_what_cannot_work_without_a_tool_depends_on_it(text: str, source: str, target: str) -> None:
    assert (source, "DEPENDS_ON", target) in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "The Sablewood app can run without PyTorch now.",
        "If the Sablewood app can't run without PyTorch, we are stuck.",
    ],
)
def test_what_can_work_without_a_tool_or_a_supposition_states_no_dependency(text: str) -> None:
    assert not {e for e in edges(text) if e[1] == "DEPENDS_ON"}  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Dana from Kestrel can't work without Slack.",
        "Tom uses Kestrel and can't work without Notion.",
        "Without Redis, Kestrel runs fine but Heron can't start.",
        "At Kestrel I personally can't work without Notion.",
    ],
)
def test_a_person_or_another_clause_is_no_dependent(text: str) -> None:
    assert not {e for e in edges(text) if e[1] == "DEPENDS_ON" and e[0] == "Kestrel"}  # a guard
