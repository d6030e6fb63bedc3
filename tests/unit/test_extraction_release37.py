"""Release 37: what a sentence states, not what it implies (a fault in a tool not called
the writer's, a doing of the past, a participle whose subject is another's), a note's
heading over its bullets, "dependent on", choices and preferences said with the thing
first. Names are invented; each case failed on release 36 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


@pytest.mark.parametrize(
    "text",
    [
        "Packwise is not connecting with my calendar since last week, I tried everything.",
        "The Tallyho app crashed halfway through the sleeve and took my row count with it.",
    ],
)
def test_a_fault_in_a_tool_not_called_the_writers_states_no_use(text: str) -> None:
    assert not speakers(text, "USES")


def test_a_fault_in_the_writers_own_tool_is_still_a_use() -> None:
    assert "Garmin Venu" in speakers("My Garmin Venu won't sync since the update.", "USES")  # a guard


def test_a_participle_whose_main_clause_is_someone_elses_is_not_the_speakers() -> None:
    text = "Since upgrading to Meilisearch 1.x, the Larchmont storefront search returns empty results."
    assert "Meilisearch" not in speakers(text, "USES")


def test_a_participle_whose_main_clause_is_ours_is_the_speakers() -> None:
    text = "After upgrading to Caddy 2.8, our proxy returns 502 for every websocket route."
    assert "Caddy" in speakers(text, "USES")  # a guard


def test_a_partner_at_work_set_after_the_name_is_a_colleague() -> None:
    found = edges("Kojo Mensah-Baird, my business partner, wants us to look at Pennywise.")
    assert ("user", "WORKS_WITH", "Kojo Mensah-Baird") in found


def test_a_doing_said_in_the_past_is_no_use_now() -> None:
    text = "Writing CoffeeScript on the old Larkspur dashboard was weirdly pleasant, and part of me misses it."
    assert "CoffeeScript" not in speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Moving to Linear was the best thing we did.", "Linear"),
        ("Using Notion is great.", "Notion"),
    ],
)
def test_a_change_made_or_a_doing_now_still_holds(text: str, tool: str) -> None:
    assert tool in speakers(text, "USES")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Trip checklist:\n- lounge: Priority Pass\n- trains: Railwise notes printed",
        "Stack shortlist (nothing decided):\n- Kotlin + Ktor\n- Turso for storage",
        "Savings plan, Q3:\n- move the emergency fund to Chipper\n- ask Ola about the pension",
    ],
)
def test_bullets_under_a_plan_or_a_shortlist_state_no_use(text: str) -> None:
    assert not speakers(text, "USES")


def test_bullets_under_decisions_are_choices() -> None:
    text = "Decisions:\n- go with Valkey for caching\n- Ruff for linting"
    assert "Ruff" in speakers(text, "DECIDED")
    assert "Ruff" not in speakers(text, "USES")


def test_a_change_done_under_a_plain_heading_still_holds() -> None:
    assert "Ghost" in speakers("Done this week:\n- moved the blog to Ghost", "USES")  # a guard


@pytest.mark.parametrize(
    ("text", "source", "target"),
    [
        ("The Tidemark app is dependent on Capacitor.", "Tidemark", "Capacitor"),
        ("Kestrel has dependencies on Redis and Kafka.", "Kestrel", "Kafka"),
    ],
)
def test_dependent_on_states_a_dependency(text: str, source: str, target: str) -> None:
    assert (source, "DEPENDS_ON", target) in edges(text)


def test_the_speakers_co_subjects_are_each_a_colleague_not_each_others() -> None:
    found = edges("Rhiannon, Dafydd and I coach the under-10s together on Sunday mornings.")
    assert ("user", "WORKS_WITH", "Dafydd") in found
    assert ("Rhiannon", "WORKS_WITH", "Dafydd") not in found


def test_people_who_work_together_still_do() -> None:
    assert ("Dmitri", "WORKS_WITH", "Olga") in edges("Dmitri and Olga work together on Kestrel.")  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Brightpenny Business is what we chose for the shop account.", ("user", "DECIDED", "Brightpenny Business")),
        ("Hostelhop is what my partner Akua prefers.", ("Akua", "PREFERS", "Hostelhop")),
        ("Ardour is my favourite by a mile.", ("user", "PREFERS", "Ardour")),
        ("Pulumi over OpenTofu for me, every time.", ("user", "PREFERS", "Pulumi")),
        ("For guided stuff it's Headspace for me, not Calm.", ("user", "PREFERS", "Headspace")),
        ("Notion works for us.", ("user", "USES", "Notion")),
    ],
)
def test_a_choice_preference_or_use_said_with_the_thing_first(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text",
    ["Mum is my favourite person.", "Notion doesn't work for me.", "Slack is what my boss wants."],
)
def test_no_thing_first_reading_without_a_thing_or_an_assertion(text: str) -> None:
    assert not speakers(text, "PREFERS") | speakers(text, "USES")  # a guard


def test_a_choice_to_keep_a_tool_is_a_choice_only() -> None:
    text = "We decided to stick with Relativity for the disclosure review."
    assert "Relativity" in speakers(text, "DECIDED")
    assert "Relativity" not in speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "relation", "tool"),
    [
        ("We lost two days of data after migrating to Postgres, sadly.", "USES", "Postgres"),
        ("Something was off with our Sonos all week.", "USES", "Sonos"),
        ("Sticking with Ubuntu was the right call for the lab machines.", "USES", "Ubuntu"),
    ],
)
def test_readings_the_new_rules_leave_alone(text: str, relation: str, tool: str) -> None:
    assert tool in speakers(text, relation)  # a guard


@pytest.mark.parametrize("text", ["Lisbon is my favourite city.", "Ardour was my favourite as a teenager."])
def test_a_favourite_of_another_kind_or_of_the_past_is_no_preference(text: str) -> None:
    assert not speakers(text, "PREFERS")  # a guard


def test_a_former_partner_at_work_states_nothing() -> None:
    found = edges("Kofi, my former business partner, now runs a bakery.")
    assert not {e for e in found if e[0] == "user" and e[2] == "Kofi"}


def test_bullets_under_decisions_still_open_are_no_choices() -> None:
    text = "Decisions pending:\n- Valkey for caching\n- Ruff for linting"
    assert not speakers(text, "DECIDED") | speakers(text, "USES")
