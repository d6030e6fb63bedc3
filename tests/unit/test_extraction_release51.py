"""Release 51: the thirty-third set's first look. "at my old job" dates a clause; a
function "for the P cluster" handled by a tool is P's; a ticket's "Username:" names no
tool; "Me and my colleague N" do it together; "N, the <role> at O, is my manager"; "who
runs the <kind> <noun> O". Names are invented; each case failed on release 50 unless
marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


def test_a_clause_set_at_an_old_job_states_nothing_now() -> None:
    found = edges("At my old job at Brinmoor Freight we planned every route in Roadwise.")
    assert not any(source == "user" and rel in ("USES", "PART_OF") for source, rel, _ in found)


def test_at_my_job_is_still_now() -> None:
    assert "Jira" in speakers("At my job we use Jira.", "USES")  # a guard


def test_a_function_of_a_named_work_handled_by_a_tool_is_not_the_speakers() -> None:
    assert not speakers("Deploys for the Sandmoor cluster are handled by Shipwheel.", "USES")


@pytest.mark.parametrize(
    ("text", "tool"),
    [("Billing is handled by Stripe.", "Stripe"), ("The app's auth is handled by Auth0.", "Auth0")],
)
def test_a_passive_about_the_speakers_things_is_still_theirs(text: str, tool: str) -> None:
    assert tool in speakers(text, "USES")  # guards, the second from the review


def test_an_account_field_of_a_ticket_names_no_tool() -> None:
    text = "Account issue: the members area still shows me as a guest. Username: p.wulan"
    assert not speakers(text, "USES")
    assert "Okta" in speakers("Login: Okta SSO", "USES")  # a guard from the review


def test_me_and_my_colleague_do_it_together() -> None:
    found = edges("Me and my colleague Aleksandra Wójcik are doing the inventory every Monday in Sortly.")
    assert ("user", "USES", "Sortly") in found and ("Aleksandra Wójcik", "USES", "Sortly") in found


@pytest.mark.parametrize(
    "text",
    [
        "My colleague Aleksandra does the inventory in Sortly.",
        "Me and my colleague Ken are going to do the reports in Excel.",
        "me and my colleague Ken were doing the reports in Excel before we switched",
    ],
)
def test_a_colleague_alone_a_plan_or_a_past_doing_is_no_use_of_the_speakers(text: str) -> None:
    assert not speakers(text, "USES")  # guards, the last two from the review


def test_a_role_said_past_an_apposition_is_the_speakers() -> None:
    text = "Ikaika Kahananui, the SRE lead at Glimmerhook Games, is my new manager."
    assert "Ikaika Kahananui" in speakers(text, "WORKS_WITH")


@pytest.mark.parametrize(
    "text",
    [
        "Wiremu Tane, the contractor, fixed it.",
        "Dana, the recruiter at Stripe, was my manager at my old job.",
        "Kiri, the former head of sales, is my ex-manager.",
    ],
)
def test_an_apposition_alone_or_a_past_role_gives_no_colleague(text: str) -> None:
    assert not speakers(text, "WORKS_WITH")  # guards, the last two from the review


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        (
            "Bogdana, who runs the pottery studio Kiln & Clay Collective, lent me her wheel.",
            ("Bogdana", "PART_OF", "Kiln & Clay Collective"),
        ),
        ("Kofi runs the little bakery Crumb & Co.", ("Kofi", "PART_OF", "Crumb & Co")),
    ],
)
def test_running_a_described_business_is_part_of_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)
