"""Release 73: the fifty-third set's first look. "my tech lead on P" puts the speaker on P;
a title-cased work's name keeps its ordinary words before a lower-case noun of work ("the
Sepsis Quick Response project"); "..., which I now regret" keeps a past use past; "we are
not renewing our X" reports no fault. Names are invented; each case failed on release 72
unless marked a guard."""

from __future__ import annotations

from tests.unit.extracted import edges, entities


def test_my_colleagues_role_on_a_project_puts_me_on_it() -> None:
    assert ("user", "WORKS_ON", "Cobalt Wharf") in edges("Ferdinand Osei-Bonsu is my tech lead on Cobalt Wharf.")


def test_my_friend_on_a_project_does_not() -> None:
    assert ("user", "WORKS_ON", "Atlasby") not in edges("My friend on Atlasby is great.")  # a guard


def test_a_title_cased_works_name_keeps_its_ordinary_words() -> None:
    text = "Dr. Imogen Achebe-Rowntree leads the Sepsis Quick Response project at Northfield Infirmary."
    assert entities(text).get("Sepsis Quick Response") == "project"
    assert ("Imogen Achebe-Rowntree", "WORKS_ON", "Sepsis Quick Response") in edges(text)


def test_a_regret_now_keeps_a_past_use_past() -> None:
    assert not edges("Back in 2016 I wrote everything in CoffeeScript, which I now regret deeply.")


def test_a_use_now_keeps_a_past_use_going() -> None:
    text = "Back in 2016 I started writing everything in Elixir, which I still use."
    assert ("user", "USES", "Elixir") in edges(text)  # a guard


def test_not_renewing_our_licences_reports_no_fault() -> None:
    text = "We are not renewing our Toggl Track licences; please switch auto-renew off."
    assert ("user", "USES", "Toggl Track") not in edges(text)
