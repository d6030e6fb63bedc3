"""Release 46: the twenty-ninth set's first look. A one-word verb after an article is a
noun, "I'd/we'd do" under a supposition, headings of decisions or preferences without a
colon, things named with a thing's noun or a kin word after an article. Names are
invented; each case failed on release 45 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


def test_a_verb_after_an_article_is_a_noun() -> None:
    found = edges("My piano teacher, Mrs. Oyunbileg, makes me record every practice in the Tonewise app.")
    assert ("Oyunbileg", "USES", "Tonewise") not in found
    assert ("user", "USES", "Tonewise") in found  # a guard: made to, the speaker does it


@pytest.mark.parametrize(
    "text",
    [
        "If head office ever approves it, we'd run the whole floor on Kanbanize instead of the weekly plan.",
        "If the grant comes through, I'd move the whole lab workflow onto Benchling.",
        "We'd use Notion if it had a proper offline mode.",
    ],
)
def test_what_would_be_done_under_a_supposition_is_no_use(text: str) -> None:
    assert not speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "thing"),
    [("I'd pick Svelte over React any day.", "Svelte"), ("I'd much rather revise with Anki than reread.", "Anki")],
)
def test_what_the_speaker_would_rather_is_still_a_preference(text: str, thing: str) -> None:
    assert thing in speakers(text, "PREFERS")  # a guard


def test_a_heading_of_decisions_without_a_colon_makes_its_bullets_choices() -> None:
    text = "Garden - decisions\n- tracking: Seedtime\n- compost: Hotbin"
    assert speakers(text, "DECIDED") == {"Seedtime", "Hotbin"}
    assert not speakers(text, "USES")


def test_a_heading_of_preferences_makes_its_bullets_preferences() -> None:
    text = "Tooling preferences (team vote)\n- CI: Buildkite over GitHub Actions\n- logs: Loki, nothing heavier"
    assert speakers(text, "PREFERS") == {"Buildkite", "Loki"}
    assert not speakers(text, "USES")


def test_a_short_heading_that_says_nothing_of_its_bullets_changes_nothing() -> None:
    assert "Netlify" in speakers("Home network\n- hosting: Netlify", "USES")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "In the warehouse our system Skladovik is depending completely from Odoo.",
        "The head chef labels every allergen tray with a Brother QL printer.",
    ],
)
def test_a_things_noun_or_a_kin_word_in_a_product_names_no_one_known(text: str) -> None:
    assert not speakers(text, "KNOWS")
