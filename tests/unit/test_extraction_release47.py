"""Release 47: the thirtieth set's first look. "X is my preferred <kind>", "X is what I'd
rather ...", "X is where my things live", the thing a relative "which" stands for,
"he's"/"she's" for the person named before, nouns of work on a project ("the maintainer
of P"), "keep <verb>ing" as a doing that goes on, years gone by, sites of an
organization, "our little <kind> business, O", names after a role that end at "of", "&"
inside a five-word name, "P, a <tool> <noun>", "it's" for a project, chat markers before a
bare verb, and lists of people typed before a guess. Names are invented; each case failed
on release 46 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities, speakers


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Todoist is my preferred app for chores.", "Todoist"),
        ("Tandoor's my preferred editor for the week's notes.", "Tandoor"),
        ("Ryobi One+ is my preferred battery platform because the packs fit.", "Ryobi One+"),
        ("Quillpad is my preferred notebook now, the sync just works.", "Quillpad"),
    ],
)
def test_my_preferred_kind_is_a_preference_whatever_the_kind(text: str, thing: str) -> None:
    assert thing in speakers(text, "PREFERS")


def test_a_tools_favourite_of_a_kind_the_lists_do_not_know_is_a_preference() -> None:
    # reversed at release 59: a name typed a tool, called "my favourite <noun>", is preferred
    assert "Obsidian" in speakers("Obsidian's my favourite notes tool.", "PREFERS")


@pytest.mark.parametrize(
    "text",
    [
        "Ericeira is my preferred surf spot.",
        "Brno is my preferred city for conferences.",
        "Physio Pro is my preferred clinic.",
    ],
)
def test_a_preferred_place_or_business_is_no_tool_preferred(text: str) -> None:
    assert not speakers(text, "PREFERS")  # guards from the review


@pytest.mark.parametrize(
    "text",
    ["Miro is what I'd rather sketch in.", "Excalidraw is what we'd rather draw the diagrams in, honestly."],
)
def test_what_i_would_rather_said_with_the_thing_first_is_a_preference(text: str) -> None:
    assert len(speakers(text, "PREFERS")) == 1


def test_what_i_would_do_under_a_supposition_with_the_thing_first_is_none() -> None:
    assert not speakers("Miro is what I'd use if it were free.", "PREFERS")  # a guard
    assert not speakers("Miro is what I'd use if it were free.", "USES")  # a guard
    assert not speakers("Postgres is what we'd choose for a new project.", "DECIDED")  # a guard from the review


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Ravelry is where all my patterns live.", "Ravelry"),
        ("Zotero is where we keep every reference for the thesis.", "Zotero"),
        ("Notion is where my partner and I plan our trips.", "Notion"),
    ],
)
def test_a_tool_that_is_where_the_speakers_things_are_is_used(text: str, thing: str) -> None:
    assert thing in speakers(text, "USES")


@pytest.mark.parametrize(
    "text",
    [
        "Figma was where we kept the designs.",
        "Is Notion where we keep specs?",
        "Orquesta Brisa is where my sister plays the cello.",
        "Moodle is where my teacher posts the homework.",
    ],
)
def test_a_past_question_or_someone_elses_place_is_no_use(text: str) -> None:
    assert not speakers(text, "USES")  # guards


@pytest.mark.parametrize(
    ("text", "preferred", "rival"),
    [
        ("I edit everything in Darktable, which I now prefer to Lightroom.", "Darktable", "Lightroom"),
        ("We moved the docs to Outline, which I like more than Confluence.", "Outline", "Confluence"),
    ],
)
def test_which_i_prefer_to_y_prefers_what_which_stands_for(text: str, preferred: str, rival: str) -> None:
    found = speakers(text, "PREFERS")
    assert preferred in found
    assert rival not in found


def test_which_i_use_uses_what_which_stands_for() -> None:
    assert "Kobo Libra" in speakers("I bought a Kobo Libra, which I use every night.", "USES")


@pytest.mark.parametrize(
    "text",
    [
        "Our on-call rotation lives in Pagerduty, which I actually like.",
        "We have Jira, which I hate.",
        "They moved to Asana, which I used to love.",
        "I spent the week digging trenches for the Rootline sensors, which I honestly prefer.",
    ],
)
def test_which_without_a_rival_or_about_a_doing_is_no_preference(text: str) -> None:
    assert not speakers(text, "PREFERS")  # guards


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Tomasz is my manager, and he's on the billing team.", ("Tomasz", "WORKS_ON", "billing team")),
        ("I pair with Tarik Hamdan most days; he's on the ranking team.", ("Tarik Hamdan", "WORKS_ON", "ranking team")),
        ("Ingrid Solberg is my mentor and she's on the growth team.", ("Ingrid Solberg", "WORKS_ON", "growth team")),
    ],
)
def test_hes_and_shes_stand_for_the_person_named_before(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Kofi Mensah is the maintainer of Pelican, a small Go library.", ("Kofi Mensah", "WORKS_ON", "Pelican")),
        ("Ruth Abebe is the lead of the platform team at Corvane.", ("Ruth Abebe", "WORKS_ON", "platform team")),
        ("Anouk, Bas and Femke Visser co-maintain Dovetail.", ("Bas", "WORKS_ON", "Dovetail")),
        ("I'm the co-maintainer of Hollowjack.", ("user", "WORKS_ON", "Hollowjack")),
    ],
)
def test_nouns_and_verbs_of_keeping_a_project_are_work_on_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "Tailscale is so underrated, and I will keep saying it.",
        "I keep forgetting to open Anki.",
        "I keep telling people about Obsidian.",
        "We keep going back and forth between Pipedrive and Attio.",
    ],
)
def test_keep_with_another_verb_in_ing_is_no_use(text: str) -> None:
    assert not speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("I keep using Anki for vocab.", "Anki"),
        ("We keep Redis for the locks.", "Redis"),
        ("I keep everything in Obsidian.", "Obsidian"),
        ("I keep logging my meals in MyFitnessPal.", "MyFitnessPal"),
    ],
)
def test_keep_using_and_keep_a_thing_are_still_uses(text: str, thing: str) -> None:
    assert thing in speakers(text, "USES")  # guards


@pytest.mark.parametrize(
    "text",
    [
        "I spent all of 2016 on Project Wayfell, a rewrite that never shipped.",
        "We spent all of 2019 on Tillpoint, and it never paid off.",  # a guard
    ],
)
def test_a_clause_dated_in_a_year_gone_by_states_nothing_now(text: str) -> None:
    assert not speakers(text, "WORKS_ON") and not speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Farrukh is working in the Tashkent office of Uzbektelecom.", ("Farrukh", "PART_OF", "Uzbektelecom")),
        ("Fionn Walsh runs the Dublin office of Brightwater.", ("Fionn Walsh", "PART_OF", "Brightwater")),
    ],
)
def test_a_site_of_an_organization_makes_its_worker_part_of_it(text: str, edge: tuple[str, str, str]) -> None:
    found = edges(text)
    assert edge in found
    assert not any(rel == "USES" for _, rel, _ in found)


def test_a_place_naming_a_site_is_no_tool() -> None:
    assert "Tashkent" not in entities("Farrukh is working in the Tashkent office of Uzbektelecom.")


@pytest.mark.parametrize(
    ("text", "org"),
    [
        ("Our small family company, Delacourt & Obi, uses Karbon.", "Delacourt & Obi"),
        ("Our little pottery business, Kiln & Clay, runs on Shopify.", "Kiln & Clay"),
    ],
)
def test_our_described_firm_is_the_speakers(text: str, org: str) -> None:
    assert org in speakers(text, "PART_OF")


@pytest.mark.parametrize(
    "text",
    [
        "My old company, Delacourt & Obi, uses Karbon.",
        "my phone company Vodafone overcharged me again",
        "Our accounting firm, Baker Tilly, does our payroll.",
        "Our energy company, Octopus, raised prices again.",
    ],
)
def test_a_former_firm_or_a_provider_is_not_the_speakers(text: str) -> None:
    assert not speakers(text, "PART_OF")  # guards


def test_an_institutions_name_after_a_role_keeps_its_of() -> None:
    assert entities("Our client, Bank of Ireland, wants weekly reports.") == {
        "Bank of Ireland": "organization"
    }  # a guard


def test_owning_a_thing_is_no_work_on_it() -> None:
    assert not speakers("I'm the owner of a Subaru Outback.", "WORKS_ON")  # a guard from the review


def test_a_name_after_a_role_ends_at_of() -> None:
    text = "My accountant, Venkatesh Raghunathan of Raghunathan & Vale, takes receipts through Dext."
    found = edges(text)
    assert ("user", "KNOWS", "Venkatesh Raghunathan") in found
    assert ("Venkatesh Raghunathan", "PART_OF", "Raghunathan & Vale") in found


def test_an_ampersand_does_not_count_among_a_names_four_words() -> None:
    assert "Brød & Taylor Folding Proofer" in entities("I prefer the Brød & Taylor Folding Proofer.")


def test_a_known_name_with_capitalised_words_and_a_plural_stays_whole() -> None:
    assert "Mistral Valley Growers" in entities("The farm co-op Mistral Valley Growers relies on Agworld.")
    assert "Kubernetes" in entities("We run Kubernetes Deployments for everything.")  # a guard


def test_a_relative_clause_after_a_common_noun_is_not_the_last_names() -> None:
    text = "Thanks to Alibek and Ngaio Te Rangi the rewrite landed, and I fixed the docs site, which runs on Zensical."
    assert not any(source in ("Alibek", "Ngaio Te Rangi") for source, _, _ in edges(text))


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Rahel maintains Wrenbook, a little Elm app for sharing recipes.", ("Wrenbook", "USES", "Elm")),
        ("Our app Larkspur is a Flutter app.", ("Larkspur", "USES", "Flutter")),
    ],
)
def test_a_work_described_by_its_tool_uses_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "Our app Larkspur is a Notion clone.",
        "If we ever get solar panels for Project Hearthway, a Tesla Powerwall is out of budget.",
    ],
)
def test_a_likeness_or_a_new_clause_is_no_tool_of_the_work(text: str) -> None:
    assert not any(rel == "USES" for _, rel, _ in edges(text))  # guards


def test_its_stands_for_the_project_named_before() -> None:
    text = "I work on Halyard, our internal billing service, and it's written in Kotlin."
    assert ("Halyard", "USES", "Kotlin") in edges(text)


def test_chat_discourse_markers_before_a_bare_verb_leave_the_speaker_its_subject() -> None:
    assert "Obsidian" in speakers("tbh prefer Obsidian over Notion", "PREFERS")


def test_a_name_listed_with_people_is_a_person_before_any_guess_of_a_product() -> None:
    assert entities("Dorcas, Fintan and Yevgenia from the old crew still send me memes.")["Yevgenia"] == "person"


@pytest.mark.parametrize(
    "text",
    [
        "Our small accounting firm, Moore Kingston, files our taxes.",
        "Our tiny removals firm, Lift & Shift, moved us last spring.",
    ],
)
def test_a_firm_so_described_may_serve_the_speaker(text: str) -> None:
    assert not speakers(text, "PART_OF")  # guards from the review


@pytest.mark.parametrize(
    "text",
    [
        "My project Saltmarsh is a Python course for retired teachers.",
        "I maintain Whimbrel, a Notion-like app for nurses.",
        "Our project Godwit, a Jira killer, is still in beta.",
    ],
)
def test_what_a_work_is_about_or_likened_to_is_not_its_tool(text: str) -> None:
    assert not any(rel == "USES" for _, rel, _ in edges(text))  # guards from the review


@pytest.mark.parametrize(
    "text",
    [
        "Google Drive is where my boss dumps all the files.",
        "GitHub is where my old projects were.",
        "Jira is what we'd prefer to avoid.",
    ],
)
def test_someone_elses_place_a_past_one_or_one_avoided_is_no_use_or_preference(text: str) -> None:
    assert not speakers(text, "USES") and not speakers(text, "PREFERS")  # guards from the review


@pytest.mark.parametrize(
    ("text", "thing"),
    [("I keep crashing Blender when I render.", "Blender"), ("we keep deploying to Vercel via Buildkite", "Buildkite")],
)
def test_keep_with_a_doing_of_the_tool_is_still_a_use(text: str, thing: str) -> None:
    assert thing in speakers(text, "USES")  # guards from the review
