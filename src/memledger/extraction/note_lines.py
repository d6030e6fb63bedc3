"""Tool lines of notes, written without verbs: "Payments: GoCardless", "Camera gear:
Olympus OM-1, Lightroom for edits", "Stack (Inkwell): Django + HTMX", "docs in
iManage, billing in Clio", "Tendai -> Showbie". Each item a label lists names what the
note's writer (or the project named in the label, or the person before an arrow) uses,
unless the line weighs options. Pure."""

from __future__ import annotations

from dataclasses import replace
from itertools import takewhile
from typing import Final

from memledger.extraction.owned_subjects import names_people
from memledger.extraction.patterns import (
    BULLETS,
    ITEM_STATUS_UNSETTLED,
    PLANNED_NOTES,
    PROBLEM_LABELS,
    PROJECT_NOUNS,
    TICKET_LABELS,
    UNSETTLED_NOTES,
    Edge,
    Mention,
    Party,
    Sentence,
)
from memledger.extraction.polarity import unasserted
from memledger.extraction.triggers import (
    ARROWS,
    DECISION_WORDS,
    INTENTS,
    PAST_FORMS,
    STACK_LABELS,
    SUBJECT_PRONOUNS,
    THIRD_PERSON,
    find_triggers,
    is_bare,
)

_CONFIDENCE: Final = 0.75
_ENDING: Final = frozenset(("RETRACT", "LEAVE"))  # a label's verb that ends what it lists
_NOTE_LEADS: Final = frozenset((":", "in", "via", "=", *ARROWS))
_LABEL_MARKS: Final = frozenset((":", "-", "\u2013", "\u2014", *ARROWS))
_LABEL_ENDS: Final = frozenset((":", "\u2013", "\u2014"))
ITEM_BREAKS: Final = frozenset((",", ";", "+", "&", "/", "and"))
"""What separates the items a note line lists: "Postgres + Redis", "Kotlin, Ktor"."""
_BEFORE_NAME: Final = frozenset(("the", "a", "an", "my", "our"))
# Subjects a note leaves out; after a label they open sentences of prose.
_PROSE_SUBJECTS: Final = (SUBJECT_PRONOUNS | THIRD_PERSON) - {"it", "its", "his", "her", "their", "them", "you"}


def follows_notes(labelled: list[tuple[str, Sentence]], sentence: Sentence) -> bool:
    """Whether a line before ``sentence`` was labelled, in a turn that is no ticket: its
    fragments are notes too ("Thesis: ch.3 to Prof. L. Refs in X.")."""
    labels = {label for label, line in labelled if line is not sentence}
    return bool(labels) and TICKET_LABELS.isdisjoint(labels)


def note_uses(speaker: Party, sentence: Sentence, *, in_notes: bool = False) -> list[Edge]:
    """What a note line without verbs says is used; ``in_notes`` when a line before it in
    the turn was labelled, so that its fragments are notes too ("Thesis: ... Refs in X.")."""
    lows = sentence.lows
    if sentence.question or any(low.startswith(("depend", "dep")) for low in lows):
        return []  # "Phoenix -> Auth Service -> Keycloak" is a chain of dependencies
    label_end = _label_end(lows)
    if any(not is_bare(t) and t.start > label_end for t in find_triggers(lows)) or UNSETTLED_NOTES.intersection(lows):
        return []  # a verb after the label: the clause reader's
    if _planned(lows, label_end):
        return []  # "Packing: X, passport": what to take, not what is used
    if not _PROSE_SUBJECTS.isdisjoint(lows[label_end + 1 :]) or "please" in lows[label_end + 1 :]:
        return []  # "Bit of context: I'm a site manager, ...": prose; "Request: please add X": a request
    label = lows[1 if lows[:1] and lows[0] in BULLETS else 0 : max(label_end, 0)]
    if _problem_field(label or lows) and ":" in lows:
        return []  # "Subject: Webhook signature mismatch", "Regression in X 5.2: ...": a ticket's problem
    # "Volunteers this week: Ekow, ...", "Neighbour's recs: X": others', not the writer's
    others = _lists_people(label) or _someone_elses(label)
    owner = _label_owner(sentence.mentions, lows, label_end) or (None if others else speaker)
    relation = "DECIDED" if DECISION_WORDS.intersection(lows[: max(label_end, 0)]) else "USES"
    noted_style = in_notes or label_end >= 0 or any(low in _LABEL_MARKS for low in lows)
    by_end = {m.end: m for m in sentence.mentions}
    edges: list[Edge] = []
    for tool in sentence.mentions:
        lead = _lead(lows, tool.start)
        if tool.entity_type not in ("tool", "concept") or lead < 0 or lead < label_end or ranked(sentence, tool):
            continue
        listed = label_end >= 0 and (lead == label_end or lows[lead] in ITEM_BREAKS) and not _told(lows, tool.end)
        listed = listed and not on_trial(lows, tool.end) and not _left(lows, label_end, tool.end)
        listed = listed and not _compared(lows, label_end, tool.start)
        led = lows[lead] in _NOTE_LEADS and (noted_style or lows[lead] not in ("in", "via")) and lows[lead] != ":"
        if listed or led:
            person = by_end.get(lead)
            arrowed = lows[lead] in ARROWS and person is not None and person.entity_type == "person"
            user = Party.of(person) if arrowed and person is not None else owner
            if user is not None:
                edges.append(Edge(user, relation, Party.of(tool), _CONFIDENCE))
    return edges


def _problem_field(words: list[str]) -> bool:
    """Whether a line opens with a ticket's problem field: the word alone ("Subject:",
    "Bug:") or with what it is about ("Bug report:", "Regression in X:"); not a tool's
    field named with it ("Issue tracker:", "Site builder:")."""
    if not words or words[0] not in PROBLEM_LABELS:
        return False
    return len(words) == 1 or words[1] in (":", "report", "in", "with", "on")


def heading_mode(lows: list[str]) -> str | None:
    """What a note's heading line ("Trip checklist:", "Stack shortlist (nothing decided):",
    "Decisions:", "Tooling preferences (team vote)") makes of the bullets under it:
    "planned" or "unsettled" (no use of the writer's yet), "decided" (a choice each),
    "preferred" (a preference each), "noted" (as each bullet says), or None for a line that
    is no heading. A short line without a colon or a verb heads its bullets only when it
    says one of the first four ("Xmas gifts", "Garden - decisions")."""
    if not lows or len(lows) > 12:
        return None
    if lows[-1] != ":":
        return _titled_mode(lows) if len(lows) <= 6 and not find_triggers(lows) else None
    return _labelled_mode(lows[1 if lows[0] in BULLETS else 0 : -1])


def _titled_mode(lows: list[str]) -> str | None:
    """The mode a short title line without a colon gives its bullets: a plan ("Xmas
    gifts"), things still open ("TODO"), or decisions or preferences named by its last
    word ("Garden - decisions", "Tooling preferences (team vote)")."""
    if _planned([*lows, ":"], len(lows)):
        return "planned"
    words = [w for w in lows if w.isalpha()]
    if words and (len(words) == 1 or words[-1] == "todo") and words[-1] in UNSETTLED_NOTES:
        return "unsettled"  # "TODO", "Options": nothing of these is done yet; not "Options trading setup"
    last = next((w for w in reversed(lows[: lows.index("(")] if "(" in lows else lows) if w.isalpha()), "")
    if last in DECISION_WORDS or last.removesuffix("s") in DECISION_WORDS:
        return "decided"
    return "preferred" if last in _PREFERENCE_HEADS else None


def _labelled_mode(label: list[str]) -> str:
    """The mode a heading's words give its bullets (``heading_mode``)."""
    if _planned([*label, ":"], len(label)) or "to-do" in label or label[-2:] == ["to", "do"]:
        return "planned"
    open_ = UNSETTLED_NOTES.intersection(label) or _STILL_OPEN.intersection(label)  # "Decisions pending:"
    wished = unasserted(label) or not INTENTS.isdisjoint(label)  # "Rejected stack:", "Stack I want to try:"
    if open_ or wished or label[-3:-1] == ["nothing", "decided"]:
        return "unsettled"
    if any(w in DECISION_WORDS or w.removesuffix("s") in DECISION_WORDS for w in label):
        return "decided"  # "Decisions:", "Decided:"
    if not _PREFERENCE_HEADS.isdisjoint(label):
        return "preferred"  # "Tooling preferences (team vote)"
    return "noted"


def heading_owner(sentence: Sentence) -> Party | None:
    """Whose things a note's heading says its bullets list, when not the writer's: the
    project it names ("Stack (Moonwort):", "arch notes: Harrowgate service"), or whose
    stack it is ("Kestrel stack:")."""
    lows = sentence.lows
    if lows[-1:] != [":"]:
        return _titled_project(sentence)
    return (
        stack_owner(sentence)
        if not STACK_LABELS.isdisjoint(lows)
        else _label_owner(sentence.mentions, lows, len(lows) - 1)
    )


def _titled_project(sentence: Sentence) -> Party | None:
    """The project a note's title line names as its label's whole value: "arch notes:
    Harrowgate service"."""
    lows, label_end = sentence.lows, _label_end(sentence.lows)
    named = [m for m in sentence.mentions if m.start > label_end]
    if label_end < 0 or len(named) != 1 or named[0].entity_type != "project" or named[0].start != label_end + 1:
        return None
    rest = lows[named[0].end :]
    return Party.of(named[0]) if rest == [] or (len(rest) == 1 and rest[0] in PROJECT_NOUNS) else None


def stack_owner(sentence: Sentence) -> Party | None:
    """Whose stack a heading lists: a project it names ("Stack for Kestrel:"), or the name
    before the stack word or its "'s" ("Moonwort stack:", "Anika's stack:")."""
    lows = sentence.lows
    projects = [m for m in sentence.mentions if m.entity_type == "project"]
    if projects:
        return Party.of(projects[0])
    for mention in sentence.mentions:
        after = lows[mention.end] if mention.end < len(lows) else ""
        if after == "'s" or (after in STACK_LABELS and mention.entity_type != "person"):
            return Party.of(mention)
    return None


def owned_uses(speaker: Party, owner: Party, edges: list[Edge]) -> list[Edge]:
    """``edges`` with the writer's uses given to ``owner``, the project a heading names."""
    return [replace(e, source=owner) if e.source == speaker and e.relation == "USES" else e for e in edges]


def under_heading(speaker: Party, mode: str, lows: list[str], edges: list[Edge]) -> list[Edge]:
    """A bullet's edges under a heading of ``mode``: the writer's uses, choices and
    preferences withdrawn under a plan or a shortlist, or where the bullet opens with a
    bare verb, a thing to do ("- move the fund to X"); a use listed under decisions is a
    choice."""
    if (mode == "noted" and not _to_do_item(lows)) or not _SAID_BY_ME.isdisjoint(lows[1:3]):
        return edges  # "- I use Ocado for the weekly shop": a statement, whatever the heading
    if mode in _ADOPTING:
        relation = _ADOPTING[mode]
        return [replace(e, relation=relation) if e.source == speaker and e.relation == "USES" else e for e in edges]
    return [e for e in edges if not (e.source == speaker and e.relation in _ADOPTED)]


_SAID_BY_ME: Final = frozenset(("i", "we", "i'm", "we're", "i've", "we've"))
_ADOPTING: Final = {"decided": "DECIDED", "preferred": "PREFERS"}  # what a heading makes of a bullet's use
_PREFERENCE_HEADS: Final = frozenset(("preferences", "favourites", "favorites"))


def _to_do_item(lows: list[str]) -> bool:
    """Whether a bullet opens with a verb of change in its bare form: "- move X to Y",
    "- cancel Z", "- go with W"; not "- moved X to Y", nor "- use X for Y", which notes
    what is used."""
    verb = lows[1] if len(lows) > 1 else ""
    bare = verb.isalpha() and not verb.endswith(("ed", "ing")) and verb not in PAST_FORMS
    return bare and any(t.start == 0 and t.kind in _CHANGES for t in find_triggers(lows[1:3]))


_CHANGES: Final = frozenset(("SWITCH", "RETRACT", "LEAVE", "DECIDE"))
_ADOPTED: Final = frozenset(("USES", "DECIDED", "PREFERS"))
_STILL_OPEN: Final = frozenset(("undecided", "pending", "open", "tbd", "against"))


def _compared(lows: list[str], label_end: int, start: int) -> bool:
    """Whether the item naming a tool at ``start`` is what another is compared with
    ("Kontist (cheaper than Tide and Qonto)"): a "than", "vs" or "instead of" before it in
    its item."""
    for k in range(start - 1, label_end, -1):
        if lows[k] in (",", ";", ":", "-", ")") or lows[k] in BULLETS:
            return False
        if lows[k] == "and" and lows[label_end:k].count("(") <= lows[label_end:k].count(")"):
            return False  # "X instead of Y and Z for tasks": Z is an item of its own, outside brackets
        if lows[k] in ("than", "vs", "vs.", "instead"):
            return True
    return False


def _lists_people(label: list[str]) -> bool:
    """Whether a label opens with a plural noun for people ("Volunteers this week",
    "Guests"), not one owning what follows ("Kids' school stuff")."""
    first = label[0] if label else ""
    return first.endswith("s") and names_people(first) and label[1:2] not in (["'s"], ["'"])


def _someone_elses(label: list[str]) -> bool:
    """Whether a label says whose the items are, someone's other than the writer's:
    "Neighbour's recs", "Mum's meds"."""
    return any(w in ("'s", "'") and k and names_people(label[k - 1]) for k, w in enumerate(label))


def _planned(lows: list[str], label_end: int) -> bool:
    """Whether the label plans what to take, get or end: ends in a plan word ("Trip checklist",
    "To buy"), or a list of one ("Shopping list"), or opens with one ("Packing for Lisbon"),
    or has a verb of ending ("Subscriptions to cancel");
    not a thing named for it ("Checklist app", "Shopping cart service", "Buy now pay later")."""
    label = lows[1 if lows[:1] and lows[0] in BULLETS else 0 : max(label_end, 0)]
    if "for" in label[1:]:
        label = label[: label.index("for", 1)]  # "Onboarding checklist for Ruairí": a checklist
    if not label:
        return False
    last = label[-1] in PLANNED_NOTES or (label[-1] == "list" and not PLANNED_NOTES.isdisjoint(label))
    ending = any(t.kind in _ENDING for t in find_triggers(label))  # "Subscriptions to cancel:", "To replace:"
    opening = label[0] in PLANNED_NOTES and label[1:2] in ([], ["for"], ["list"])  # "Packing list so far:"
    return last or ending or _to_do(label) or opening


def _to_do(label: list[str]) -> bool:
    """Whether a label is a list of things to do something with: "To remove", "Accounts
    to close" (an infinitive after a plural); not "Path to prod", "Moved to", nor what is
    kept in use ("To keep")."""
    if any(t.kind in ("KEEP", "USE") for t in find_triggers(label[-1:])):
        return False  # "Subscriptions to keep": what stays in use
    if label[:1] == ["to"]:
        return len(label) == 2
    return len(label) >= 3 and label[-2] == "to" and label[-3].endswith("s") and not label[-3].endswith("ss")


def preferred_in_note(sentence: Sentence, tool: Mention) -> bool:
    """Whether a note ranks the name first: "Yousician > Fender Play", and in a labelled
    line without verbs "prefs: Aeroplan over Avios"."""
    lows = sentence.lows
    noun = tool.end + 1 < len(lows) and lows[tool.end].isalpha() and lows[tool.end + 1] in ("over", ">")
    end = tool.end + noun  # "Fish shell over zsh", "the X app > ...": the name's noun, then the rival
    after = lows[end : end + 1]
    if after != ["over"]:
        return after == [">"]
    rival = any(m.start == end + 1 for m in sentence.mentions)
    return rival and _verbless_note(lows)


def _verbless_note(lows: list[str]) -> bool:
    return _label_end(lows) >= 0 and not find_triggers(lows)


def ranked(sentence: Sentence, tool: Mention) -> bool:
    """ "Zed > Sublime Text", "prefs: Aeroplan over Avios": a preference, read elsewhere,
    not a use of either."""
    lows = sentence.lows
    before = lows[tool.start - 1] if tool.start > 0 else ""
    ranked_after = before == "over" and _verbless_note(lows)
    return before == ">" or ranked_after or preferred_in_note(sentence, tool)


def _left(lows: list[str], label_end: int, end: int) -> bool:
    """Whether a name before an arrow under a label of change or choice is the one left
    ("Switched: Evernote -> Obsidian", "Decided: MySQL -> TiDB")."""
    label = lows[:label_end]
    changed = any(t.kind in ("SWITCH", "LEAVE", "RETRACT", "DECIDE") for t in find_triggers(label))
    return changed and lows[end : end + 1] != [] and lows[end] in ARROWS


def on_trial(lows: list[str], end: int) -> bool:
    """Whether brackets right after a name mark it as not adopted yet: "Klaviyo (trial)",
    "X (on trial, undecided)"; not "(trial balance exports)", "(pending config)"."""
    if lows[end : end + 1] != ["("]:
        return False
    inside = list(takewhile(lambda w: w != ")", lows[end + 1 : end + 6]))
    return any(
        w in ITEM_STATUS_UNSETTLED and inside[k + 1 : k + 2] in ([], [","], ["only"]) for k, w in enumerate(inside)
    )


def _told(lows: list[str], end: int) -> bool:
    """Whether the item that a name opens goes on as a sentence ("Ticket: the X controller
    shows error E-04 on every firing"), longer than a note's item."""
    k = end
    while k < len(lows) and lows[k] not in ITEM_BREAKS and lows[k] not in (".", ";", "(", "!", "?"):
        k += 1
    return k - end > 4


def _lead(lows: list[str], start: int) -> int:
    """The token before a name, past a determiner."""
    k = start - 1
    while k >= 0 and lows[k] in _BEFORE_NAME:
        k -= 1
    return k


def _label_end(lows: list[str]) -> int:
    """Where a label opening the line ends ("Camera gear:", "Stack (Inkwell):",
    "Invoices —"): the index of its colon or dash, or -1."""
    start = 1 if lows[:1] and lows[0] in BULLETS else 0
    depth = 0
    for i in range(start, min(len(lows), start + 6)):
        low = lows[i]
        if low in ("(", ")"):
            depth = depth + 1 if low == "(" else max(0, depth - 1)
        elif depth:
            continue
        elif low in _LABEL_ENDS:
            return i if i > start else -1
        elif not (low.isalpha() or low in ("'s", "'")):
            return -1
    return -1


def _label_owner(mentions: list[Mention], lows: list[str], label_end: int) -> Party | None:
    """The project a label names ("Stack (Inkwell):"), whose tools the line lists, or the
    organization a label says uses them ("Riverbend Allotments uses:")."""
    named = [m for m in mentions if m.end <= label_end and m.entity_type == "project"]
    if named:
        return Party.of(named[0])
    using = lows[label_end - 1 : label_end] in (["uses"], ["use"])
    owners = [m for m in mentions if m.end == label_end - 1 and m.entity_type == "organization"]
    return Party.of(owners[0]) if using and owners else None
