"""Release 30: a new subject after "and", relative clauses left without "that", what a
cue's scope reaches past a comma or a label, the refused side of "over", bodies of
people named, plans for a coming month, mandative "that" clauses. Names are invented;
each case failed on release 29 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("We keep the rota in Shiftmoor and the doctors are using Trolleyline for the beds.", "Trolleyline"),
        ("I moved our books to Ledgerwick, and now the Quaymark app depends on Paywharf.", "Paywharf"),
        ("I study nursing at Harrowgate College, and all the lectures there are on Lumenboard.", "Lumenboard"),
    ],
)
def test_a_noun_phrase_after_and_opens_a_clause_of_its_own(text: str, target: str) -> None:
    assert ("user", "USES", target) not in edges(text)


def test_subjects_joined_without_a_verb_share_it() -> None:
    assert ("user", "USES", "Tessellary") in edges("My team and the designers use Tessellary.")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Our shop is built on Cartwheel, and the checkout is Tillfinch.",
        "We deploy with Harbourline and the cluster runs on Tillfinch.",
    ],
)
def test_what_is_ours_goes_on_after_the_and(text: str) -> None:
    assert ("user", "USES", "Tillfinch") in edges(text)  # a guard


def test_people_after_the_and_are_others_even_after_our() -> None:
    found = edges("Our team uses Jirafold and the other teams use Trellwick.")
    assert ("user", "USES", "Jirafold") in found
    assert ("user", "USES", "Trellwick") not in found


def test_a_name_and_itself_is_the_subject() -> None:
    found = edges("I use Lampwick for the garden lights, and Lampwick itself depends on a Brindle hub.")
    assert ("Lampwick", "DEPENDS_ON", "Brindle") in found
    assert ("user", "USES", "Brindle") not in found


@pytest.mark.parametrize(
    "text",
    [
        "The dentist I go to moved every appointment to Smilequay last spring.",
        "The people I climb with prefer Cragbook.",
    ],
)
def test_a_relative_clause_ending_in_a_preposition_names_the_subject(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user"}


@pytest.mark.parametrize(
    "text",
    [
        "At the allotment we are not using anymore the Growly sensors, the Soilbeam kit or the old Thermwell.",
        "In my old job we were using Dockwell, Quarrytask and Inkmoor, but now I only teach.",
    ],
)
def test_a_cue_reaches_over_the_rest_of_its_list(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user" and e[1] == "USES"}


def test_a_list_after_the_cue_that_asserts_again_stays() -> None:
    found = edges("We don't use Dockwell, we use Quarrytask.")
    assert ("user", "USES", "Quarrytask") in found  # a guard


@pytest.mark.parametrize(
    "text",
    ["Apps to cancel: Streamly, Fitquill, Moodnest.", "Accounts to close: Fitquill, Moodnest.", "To remove: Fitquill."],
)
def test_a_label_of_things_to_end_lists_no_uses(text: str) -> None:
    assert not edges(text)


@pytest.mark.parametrize("text", ["Apps: Streamly, Fitquill.", "Apps to keep: Streamly, Fitquill."])
def test_a_label_of_tools_kept_still_lists_uses(text: str) -> None:
    assert ("user", "USES", "Streamly") in edges(text)  # a guard


def test_over_as_a_particle_refuses_nothing() -> None:
    assert ("user", "USES", "Tillfinch") in edges("I took over running payroll on Tillfinch.")  # a guard


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("Bramblecloud costs more, but I'd take it over running Logspire myself again.", "Logspire"),
        ("I'd pick Quillpad over using Notewharf any day.", "Notewharf"),
    ],
)
def test_a_verb_of_use_after_over_is_the_refused_side(text: str, refused: str) -> None:
    assert not {e for e in edges(text) if e[2] == refused}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My aunt sings in a choir called the Velvet Gulls.", "Velvet Gulls"),
        ("I play the oboe in a youth orchestra, Sinfonia Valbrena, since two years.", "Sinfonia Valbrena"),
        ("We swim with a masters team called the Gannets.", "Gannets"),
    ],
)
def test_a_body_of_people_names_an_organization(text: str, name: str) -> None:
    assert entities(text).get(name) == "organization"
    assert not {e for e in edges(text) if e[1] == "USES" and e[2] == name}


def test_a_possessive_opening_the_sentence_is_no_name_before_the_verb() -> None:
    text = "The wedding photos went through Snapquill, and my pension goes through Fernvault."
    assert ("user", "USES", "Fernvault") in edges(text)  # a guard: the owned subject's instrument


def test_decided_against_it_is_no_decision() -> None:
    found = edges("Microfrontends sounded clever at the meetup, but we decided against it for now.")
    assert not {e for e in found if e[1] == "DECIDED"}


@pytest.mark.parametrize(
    "text",
    [
        "The caterer we went with in Porto ran everything off Tablewise and Orderhub.",
        "The agency we work with uses Briefwell.",
    ],
)
def test_a_verb_left_with_its_preposition_in_a_relative_clause_has_no_object_after(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user"}


def test_a_verb_with_its_own_object_after_a_phrase_of_time_stays() -> None:
    found = edges("In the end we settled on Harvestly for the farm shop.")
    assert ("user", "DECIDED", "Harvestly") in found  # a guard


def test_called_is_never_the_name_of_a_project() -> None:
    found = entities("We are building a project called Wrenfield.")
    assert found.get("Wrenfield") == "project"
    assert "called" not in found


def test_a_noun_with_called_before_the_name_leaves_the_slot_open() -> None:
    assert ("user", "PART_OF", "Brightwave") in edges("I work at a company called Brightwave.")


@pytest.mark.parametrize(
    "text",
    ["Before, I was using Sleepwell for my insomnia, but now nothing.", "Originally, we built it on Railsby."],
)
def test_a_former_time_adverb_puts_the_clause_after_it_in_the_past(text: str) -> None:
    assert not edges(text)


@pytest.mark.parametrize(
    "text",
    ["From next month we use Checkwise for the audits.", "We use Inkwarden next summer for the festival tickets."],
)
def test_a_calendar_span_to_come_is_a_plan(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user"}


def test_next_time_with_a_preference_still_prefers() -> None:
    found = edges("Next time I'd rather hire a Brightcut saw than borrow that thing again.")
    assert ("user", "PREFERS", "Brightcut") in found  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "My physio suggested that I use Stridely for the exercises.",
        "Our accountant recommends that we move to Tallyhaven.",
    ],
)
def test_a_mandative_that_clause_is_wished_not_done(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user"}


def test_a_wish_done_now_is_a_use() -> None:
    assert ("user", "USES", "Stridely") in edges("My physio suggested that I use Stridely, and now I do.")  # a guard
