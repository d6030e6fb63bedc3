"""The type a noun next to a name gives it: the noun it modifies ("a Tado thermostat",
"going to Fitinn gym"), the noun it is bracketed after ("Stack (Pipit):"), or the
speaker's institution or piece of work it names ("my running club, the Ferrous
Striders", "our app Lantern"). Pure."""

from __future__ import annotations

from typing import Final

from memledger.events.catalogue import EntityType
from memledger.extraction import gazetteer as gz
from memledger.extraction import name_guess
from memledger.extraction.finite_verbs import NOT_VERBS, PRONOUN_SUBJECTS
from memledger.extraction.patterns import (
    CLIENT_NOUNS,
    FORMER_WORDS,
    POSSESSIVES,
    PRODUCT_NOUNS,
    PROJECT_CUES,
    PROJECT_NOUNS,
    TEAM_NOUNS,
    UNDERTAKINGS,
    word_set,
)
from memledger.extraction.roles import owned_by_speaker, possessive_of
from memledger.extraction.triggers import INTENTS, PAST_FORMS, STACK_LABELS, WORK_VERBS, find_triggers

# Between a subject and its verb: "Lantern is also written in ...", "Mirela has been working at ...".
SUBJECT_GAP: Final = word_set("is are was were has have had been 's also still now both all already just")
_DETERMINERS: Final = word_set("a an the my our your their his her this that 's")
_INDEFINITE: Final = word_set("a an")
_OWNERS: Final = word_set("my our their his her 's")
# Nouns for a piece of work the speaker owns and names: "our app Lantern", "my product X".
OWNED_WORK: Final = PROJECT_NOUNS | PROJECT_CUES | {"product"}
# Nouns after a name that make it a place one goes to or a carrier one travels with.
_VENUES: Final = word_set(
    "gym clinic hospital school college university club studio salon surgery pharmacy bakery cafe café "
    "restaurant hotel shop store academy centre center library nursery"
)
_SERVICES: Final = word_set("bus buses ferry ferries flight flights airline")
# Nouns for where one works, before its name: "our company Dunvale Agro", "my firm, X".
_EMPLOYERS: Final = word_set("company firm employer agency business startup")
_OWN: Final = word_set("own small new family little tiny")
_BUSINESSES: Final = word_set("business company startup")


def common_noun(low: str) -> bool:
    """A lower-case word that can head a noun phrase: not a closed-class word, not a
    verb form in -ed or -ing; a hyphenated compound by its last part ("co-teacher")."""
    head = low.rsplit("-", 1)[-1]
    return (
        low.replace("-", "").isalpha()
        and len(head) > 2
        and head not in NOT_VERBS
        and low not in PRONOUN_SUBJECTS
        and not head.endswith(("ed", "ing", "ly"))
    )


def attributive(words: list[str], lows: list[str], start: int, end: int) -> bool:
    """Whether a name modifies the noun after it, behind a determiner ("a Tado thermostat",
    "the Bramble storefront"): a thing's name then, never a person's."""
    if start < 1 or lows[start - 1] not in _DETERMINERS or end >= len(lows):
        return False
    return words[end].islower() and common_noun(lows[end]) and lows[end] not in SUBJECT_GAP


def modifier_type(words: list[str], lows: list[str], start: int, end: int) -> EntityType | None:
    """The type a noun gives the name modifying it: an institution ("the Millhouse
    studio"), a product one can have one of ("a Hilti laser level", "my Peloton
    membership"), or the owner's piece of work ("our Tidewell pipelines")."""
    venue = end < len(lows) and words[end].islower() and (lows[end] in _VENUES or lows[end] in _SERVICES)
    last = venue and not (end + 1 < len(lows) and words[end + 1].islower() and common_noun(lows[end + 1]))
    if last and not name_guess.ordinary(words[start]):
        # "going to Fitinn gym", "on Arriva buses": a place or a carrier (not "Chess club",
        # "Booked Jet2 flights", "our Gitea studio instance")
        return "organization"
    if not attributive(words, lows, start, end):
        return None
    head = (
        lows[end + 1] if end + 1 < len(lows) and words[end + 1].islower() and common_noun(lows[end + 1]) else lows[end]
    )
    owner = lows[start - 1]
    if head in gz.ORG_SUFFIXES:
        return "organization"
    if head in gz.ROLES and name_guess.ordinary(words[start]):
        return None  # "my Turkish tutor", "our Sunday coach": a word describing a person
    if owner in _INDEFINITE or (head in PRODUCT_NOUNS and owner not in POSSESSIVES):
        return "tool"
    if owner not in _OWNERS:
        return None  # "the Rail Planner app": someone's work or a product, the noun cannot say
    return "project" if head in PROJECT_NOUNS or head.rstrip("s") in PROJECT_NOUNS else "tool"


def bracketed_type(lows: list[str], start: int, end: int) -> EntityType | None:
    """ "Stack (Pipit):", "Book club (Page Turners):": a bracketed name is its noun's thing;
    so is one a note's label gives "for" ("Stack for Merganser:"), and one a bracket after
    it describes ("Foxglove (our booking app)")."""
    labelled = start >= 2 and lows[start - 1] == "for" and lows[end : end + 1] == [":"]
    if labelled and lows[start - 2] in STACK_LABELS and not name_guess.english(lows[start]):
        return "project"  # not "Testing for Covid:", "Web for Kids:"
    opening = start == 0 or (start == 1 and not lows[0].isalnum())
    label = end + 1 < len(lows) and lows[end] in STACK_LABELS and lows[end + 1] == ":"
    if opening and label:
        return None if name_guess.common(lows[end - 1]) else "project"  # "Bellwether stack:"; not "Home stack:"
    if lows[end : end + 1] == ["("]:
        return _described_type(lows, end)
    if start < 2 or lows[start - 1] != "(" or lows[end : end + 1] != [")"]:
        return None
    noun = lows[start - 2]
    if noun in PROJECT_NOUNS or noun in PROJECT_CUES or noun in STACK_LABELS:
        return "project"
    if noun in TEAM_NOUNS or noun in gz.ORG_SUFFIXES:
        return "organization"
    return None


def _described_type(lows: list[str], opening: int) -> EntityType | None:
    """The type a bracket right after a name gives it by its head noun: "Foxglove (our
    booking app)" is a project, "Ferncastle (a small bakery)" an organization."""
    close = next((k for k in range(opening + 2, min(len(lows), opening + 7)) if lows[k] == ")"), None)
    if close is None or lows[opening + 1] not in _DETERMINERS:
        return None
    head = lows[close - 1]
    if head in PROJECT_NOUNS or head in PROJECT_CUES:
        return "project"
    if head in TEAM_NOUNS or head in gz.ORG_SUFFIXES:
        return "organization"
    return None


def copula_type(lows: list[str], end: int) -> EntityType | None:
    """The type a copula after a name gives it by the noun it is said to be: "Kestrix is
    our main service" (a project), "Kestrix is a budgeting app" (a tool), "Kestrix is a
    tiny bakery" (an organization); None when no such noun follows within a few words."""
    if lows[end : end + 1] not in (["is"], ["was"]) or lows[end + 1 : end + 2] not in _COPULA_DETERMINERS:
        return None
    owner = lows[end + 1]
    for low in lows[end + 2 : end + 6]:
        if not low.replace("-", "").isalpha():
            return None  # the noun phrase ended without a noun that types it
        if low in _SOFTWARE_OR_WORK:
            return None  # "my preferred program": software, or a programme of work
        product = low in PRODUCT_NOUNS or low in gz.TOOL_KIND_NOUNS  # "a budgeting app"; "our app" is work
        if low in PROJECT_NOUNS and (owner in _OWNERS or not product):
            return "project"
        if low in TEAM_NOUNS or low in gz.ORG_SUFFIXES:
            return "organization"
        if product:
            return "tool"
    return None


_COPULA_DETERMINERS: Final = (["a"], ["an"], ["our"], ["my"], ["their"])
_SOFTWARE_OR_WORK: Final = word_set("program programs")


def owned_institution(lows: list[str], start: int) -> bool:
    """Whether the name at ``start`` follows an institution the speaker belongs to: "my
    running club, the Ferrous Striders", "our debate club (the Kestrel Society)", "our
    company Dunvale Agro"."""
    j = start - 1
    if j >= 0 and lows[j] == "the":
        j -= 1
    if j >= 0 and lows[j] in (",", "("):
        j -= 1
    j = before_called(lows, j)
    if _worked_for(lows, j):
        return True  # "the law firm I temp for, X,"
    if j >= 1 and lows[j] in _EMPLOYERS:  # "our company X", "my own firm X"; not "my old company X"
        if lows[j - 1] in ("my", "our") or (j >= 2 and lows[j - 1] in _OWN and lows[j - 2] in ("my", "our")):
            return True
        between = lows[max(0, j - 3) : j]  # "our little pottery business X"; a firm so described may serve us
        return between[:1] == ["our"] and between[1] in _OWN and between[2].isalpha() and lows[j] in _BUSINESSES
    institution = lows[j] in gz.ORG_SUFFIXES or lows[j] in GROUP_NOUNS  # "our band X"
    if j < 1 or not institution or lows[j] in PROJECT_NOUNS:
        return False  # not "our ingestion service Lanternfish": a piece of work, no institution
    if j == start - 1 and name_guess.plural_noun(lows[j]):
        return False  # "our vets Nnamdi Oduya and ...": the people, not a practice
    return owned_by_speaker(lows, j - 1)


def before_called(lows: list[str], j: int) -> int:
    """Where the noun phrase ends that "is called" ending at ``j`` names ("my book club is
    called X" names the club as a comma would); ``j`` itself when no such words end there."""
    if j >= 2 and lows[j] in ("called", "named") and lows[j - 1] in NAMING_BE:
        return j - 2
    return j


NAMING_BE: Final = word_set("is 's are")
"""The verbs before "called"/"named" that tie a noun to the name after them."""


def _worked_for(lows: list[str], j: int) -> bool:
    """Whether "the <employer> I <verb> for|at" ends at ``j``: the speaker's workplace,
    whatever the verb ("the firm I temp for", "the agency I work at")."""
    if j < 4 or lows[j] not in ("for", "at") or lows[j - 2] != "i" or lows[j - 3] not in _EMPLOYERS:
        return False
    verb = lows[j - 1]
    now = verb.isalpha() and not verb.endswith("ed") and verb not in PAST_FORMS  # not "the firm I worked for"
    return now and lows[j - 4] not in FORMER_WORDS


def institution_after(lows: list[str], end: int) -> bool:
    """Whether the name ending at ``end`` is set beside an institution the speaker belongs
    to: "the Kettle Hill Wheelers, my cycling club,", "Harbourline CU (our credit union)"."""
    if lows[end : end + 1] not in ([","], ["("]) or lows[end + 1 : end + 2] not in (["my"], ["our"]):
        return False
    for k in range(end + 2, min(end + 5, len(lows))):
        if lows[k] in GROUPS or lows[k] in TEAM_NOUNS:
            return lows[k + 1 : k + 2] in ([","], [")"], ["."], [])
        if not lows[k].isalpha() or lows[k] in FORMER_WORDS:
            return False
    return False


# Bodies one is a member of, not a customer or a supporter of ("my bank", "my charity").
GROUPS: Final = word_set("club society association union league choir band group guild co-op cooperative orchestra")
"""Words that end the name of a group one belongs to: "the Ferrous Striders Running Club"."""
GROUP_NOUNS: Final = GROUPS | TEAM_NOUNS
"""Nouns for a body of people: "our band X", "my swim team X"."""


def owned_work(words: list[str], lows: list[str], start: int) -> bool:
    """Whether the name at ``start`` follows a piece of work the speaker owns: "my side
    project Quillmark", "our app, Lantern", "our product Orbweaver" (not "our Product
    Owner Marco", a job's title)."""
    j = _work_noun(words, lows, start)
    return j is not None and owned_by_speaker(lows, j - 1)


def own_work(words: list[str], lows: list[str], start: int) -> bool:
    """Whether the name at ``start`` follows a piece of work the speaker calls theirs
    alone ("my side project Quillmark"), which they work on; "our service Tern" is a
    team's, and the sentence says nothing of the speaker's part in it."""
    j = _work_noun(words, lows, start)
    return j is not None and possessive_of(lows, j - 1) == "my"


def _work_noun(words: list[str], lows: list[str], start: int) -> int | None:
    """Where the noun for a piece of work stands before the name at ``start``, past a comma."""
    j = before_called(lows, start - 1)
    if j >= 0 and lows[j] == ",":
        j -= 1
    if j < 1 or lows[j] not in OWNED_WORK or (lows[j] == "product" and words[j] != "product"):
        return None
    return j


def working_as(words: list[str]) -> bool:
    """Whether words end in someone working as something ("I work as a cook", "am working
    as a barista", "works like cook"): a job by its slot, whatever the noun."""
    for k, word in enumerate(words[:-2]):
        if word in WORK_VERBS and words[k + 1] in ("as", "like"):
            if k and (words[k - 1] == "to" or words[k - 1] in INTENTS):
                return False  # "I want to work as a pilot at X": a wish
            job = words[k + 3 :] if words[k + 2] in ("a", "an") else words[k + 2 :]
            return 1 <= len(job) <= 2 and all(w.isalpha() for w in job) and CLIENT_NOUNS.isdisjoint(job)
    return False


def work_described(lows: list[str], end: int) -> bool:
    """Whether the name ending at ``end`` is described as what the speaker works on or
    builds: "Lanternfish, the ingestion service I work on,", "Quarry is the search tool
    I'm building", "Foxglove, the loft conversion we're doing"."""
    k = end + 1
    if lows[end : end + 1] not in ([","], ["is"]) or lows[k : k + 1] not in (["the"], ["a"], ["an"], ["my"], ["our"]):
        return False
    if lows[k] == "my":
        return _my_work_apposed(lows, k + 1, copula=lows[end] == "is")  # "Pantrypilot, my little side project,"
    doer = speakers_clause(lows, k + 1, end + 6)
    if doer is None:
        return False
    head, k = doer - 1, doer
    k += 1
    while k < len(lows) and lows[k] in _DOING_AUX:
        k += 1
    doing = lows[k : k + 1] == ["doing"] and lows[k - 1] in ("we're", "are")  # not "the treatment I'm doing"
    on = lows[k : k + 1] == ["on"] and lows[k - 1] in ("i'm", "we're", "am", "are")  # "the project I'm on"
    on = on and (lows[head] in PROJECT_CUES or lows[head] == "codebase")  # not "the diet/app/team I'm on"
    return ((doing or on) and _closes(lows, k + 1)) or _worked_at(lows, k)


def _worked_at(lows: list[str], k: int) -> bool:
    """Whether a verb of working on or building something opens at ``k`` and ends its
    relative clause ("... I work on,", "... I'm building.")."""
    verbs = [t for t in find_triggers(lows[k : k + 3]) if t.start == 0 and t.kind in ("WORK_ON", "BUILD")]
    return bool(verbs) and _closes(lows, k + verbs[0].end)


def _closes(lows: list[str], after: int) -> bool:
    return after >= len(lows) or lows[after] in _CLAUSE_CLOSES


def speakers_clause(lows: list[str], start: int, last: int) -> int | None:
    """Where "I"/"we" opens a relative clause after the plain words of a noun phrase that
    begin at ``start`` ("the ingestion service | I work on"), at ``last`` at the latest."""
    k = start
    while k < len(lows) and k <= last and lows[k] not in SPEAKER_DOERS:
        if not (lows[k].isalpha() or "-" in lows[k]) or lows[k] in _NOT_DESCRIBING:
            return None
        k += 1
    return k if k > start and k < len(lows) and lows[k] in SPEAKER_DOERS else None


def _my_work_apposed(lows: list[str], k: int, *, copula: bool = False) -> bool:
    """Whether "my" before ``k`` opens a noun phrase for a piece of work that closes the
    apposition ("my little meal-planning side project,") or the copula's clause ("is my
    main project at work and ...")."""
    for j in range(k, min(k + 5, len(lows))):
        if lows[j] in (_COPULA_WORK if copula else OWNED_WORK):  # not "X is my go-to app"
            if copula and any(t.kind in ("PREFER", "LIKE") for t in find_triggers(lows[k:j])):
                return False  # "Krita is my preferred program": a thing liked, not worked on
            closes = _COPULA_CLOSES if copula else _APPOSITION_CLOSES
            return lows[j + 1 : j + 2] == [] or lows[j + 1] in closes
        if not (lows[j].isalpha() or "-" in lows[j]):
            return False
    return False


# The speaker as a clause's subject, with a contracted auxiliary or none.
SPEAKER_DOERS: Final = word_set("i we i'm we're i've we've")
_APPOSITION_CLOSES: Final = word_set(", . )")
_COPULA_WORK: Final = UNDERTAKINGS | PROJECT_CUES
_DOING_AUX: Final = word_set("am are been")
_NOT_DESCRIBING: Final = word_set("that which who where when and or but is was")
_CLAUSE_CLOSES: Final = word_set(", . ; : ! ? and at for with in - \u2014")
_COPULA_CLOSES: Final = _CLAUSE_CLOSES | word_set("this these now right ) !")  # "X is my project this year"
