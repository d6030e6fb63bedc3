"""Release 72: the fifty-second set's first look. A capitalised "Project" after a verb
opens the next name, so the name before the verb is no project ("Hoang leads Project
Bramble"); ", which Ama runs at the library," makes Ama work on the project; "I'm on the X
project with N" makes N the speaker's colleague. Names are invented; each case failed on
release 71 unless marked a guard."""

from __future__ import annotations

from tests.unit.extracted import edges, entities


def test_a_name_before_a_verb_and_project_is_a_person() -> None:
    text = "Hoang Minh Chau leads Project Bramblewick, the clinic move onto Athenahealth."
    assert entities(text).get("Hoang Minh Chau") == "person"
    assert ("Hoang Minh Chau", "WORKS_ON", "Bramblewick") in edges(text)


def test_a_name_before_a_lower_case_work_noun_is_a_project() -> None:
    assert entities("Standup: me: Ravensgill auth refactor.").get("Ravensgill") == "project"  # a guard


def test_which_n_runs_makes_n_work_on_the_project() -> None:
    text = "The Tesselby Reading Project, which Ama Owusu runs at the county library, tracks minutes with Beanstack."
    assert ("Ama Owusu", "WORKS_ON", "Tesselby Reading Project") in edges(text)


def test_on_a_project_with_a_person_makes_a_colleague() -> None:
    text = "I'm on the Quayside Orchard project with Signe, mapping which growers supply which restaurants."
    assert ("user", "WORKS_WITH", "Signe") in edges(text)
