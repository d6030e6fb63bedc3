"""Work done with someone: "Iker works on Juniper Sync with me" (the speaker works on it
too, with Iker), "I maintain Petrel with my colleague Shirin" (Shirin works on it too).
A verb's own "with" ("working with Leo") names a colleague, not a partner in the work.
Subjects that act together ("Chinedu and I pair on ...") work with each other. Pure."""

from __future__ import annotations

from memledger.extraction.patterns import PROJECT_NOUNS, Edge, Mention, Party, word_set
from memledger.extraction.roles import relation_of, role_words
from memledger.extraction.triggers import JOINT_VERBS, MODALS, Item, find_triggers


def shared_work(
    speaker: Party, items: list[Item], subjects: list[Party], edges: list[Edge], confidence: float
) -> list[Edge]:
    """The WORKS_ON (and WORKS_WITH) edges that a clause's "with" adds to its work ``edges``."""
    work = [e for e in edges if e.relation == "WORKS_ON"]
    if not work:
        return []
    added: list[Edge] = []
    for index, item in enumerate(items):
        if item != "with" or _verbs_own(items, index):
            continue
        following = items[index + 1 : index + 5]
        if following[:1] in (["me"], ["us"]) and speaker not in subjects:
            added += [Edge(speaker, "WORKS_ON", e.target, confidence) for e in work]
            added += [Edge(speaker, "WORKS_WITH", e.source, confidence) for e in work if e.source.kind == "person"]
        partner = _partner(following)
        if partner is not None:
            added += [Edge(partner, "WORKS_ON", e.target, confidence) for e in work if e.source != partner]
    return added


_PAST = word_set("was were used")


def on_it_with_me(
    speaker: Party, items: list[Item], subjects: list[Party], edges: list[Edge], confidence: float
) -> list[Edge]:
    """ "Ines is on the platform team with me": "with me" right after the work a person is on
    makes the speaker work on it too, beside them (no partner named after "with" is taken:
    "on the team ... arguing with Ayodele" is no work of Ayodele's)."""
    work = [e for e in edges if e.relation == "WORKS_ON"]
    if not work or speaker in subjects or not _PAST.isdisjoint(str(item) for item in items):
        return []  # not "Ines was on the platform team with me": said of the past
    targets = {e.target for e in work}
    ends = [k for k, item in enumerate(items) if isinstance(item, Mention) and Party.of(item) in targets]
    near = items[ends[-1] + 1 : ends[-1] + 4] if ends else []
    if _with_me(near) is None:
        return []
    added = [Edge(speaker, "WORKS_ON", e.target, confidence) for e in work]
    return added + [Edge(speaker, "WORKS_WITH", e.source, confidence) for e in work if e.source.kind == "person"]


def decided_with_me(
    speaker: Party, items: list[Item], subjects: list[Party], edges: list[Edge], confidence: float
) -> list[Edge]:
    """ "Mr. Nwachukwu decided together with me to go with X": the speaker made the choice too."""
    if speaker in subjects or not any(s.kind == "person" for s in subjects):
        return []
    words = [str(item) for item in items]
    at = _with_me(items)
    if at is None:
        return []
    end = next((k for k in range(at + 2, len(words)) if words[k] in (",", "and", ";", "but")), len(words))
    chosen = {Party.of(item) for item in items[at + 2 : end] if isinstance(item, Mention)}  # not "..., and then X"
    return [
        Edge(speaker, "DECIDED", e.target, confidence) for e in edges if e.relation == "DECIDED" and e.target in chosen
    ]


def _with_me(items: list[Item]) -> int | None:
    """Where "with me" or "with us" stands in ``items``, if anywhere."""
    words = [str(item) for item in items]
    return next((k for k in range(len(words) - 1) if words[k] == "with" and words[k + 1] in ("me", "us")), None)


def _verbs_own(items: list[Item], index: int) -> bool:
    before = items[index - 1] if index else ""
    return isinstance(before, str) and any(t.kind == "WORK_WITH" for t in find_triggers([before, "with"]))


def _partner(following: list[Item]) -> Party | None:
    """The person named at most two words after "with" ("my colleague Shirin"), if any."""
    named = next((i for i in following if isinstance(i, Mention)), None)
    if named is None or named.entity_type != "person":
        return None
    between = [str(w) for w in following[: following.index(named)]]
    return Party.of(named) if len(between) <= 2 and not {",", "and"} & set(between) else None


def shared_verb(words: list[str]) -> int | None:
    """Where the clause's first "co-" word stands ("co-authoring", "co-lead"), if any."""
    return next((k for k, w in enumerate(words) if w.startswith("co-") and w[3:].isalpha()), None)


def done_with_me(speaker: Party, words: list[str], shared: int, subjects: list[Party], confidence: float) -> list[Edge]:
    """ "Zuzana is co-authoring the paper with me": the ``subjects`` of the "co-" word at
    ``shared`` share a piece of work with the speaker, and so work with them."""
    if "with" not in words[shared:] or not MODALS.isdisjoint(words[max(0, shared - 3) : shared]):
        return []  # not "Salma might co-present it with me"
    w = words.index("with", shared)
    if words[w + 1 : w + 2] not in (["me"], ["us"]):
        return []
    return [Edge(speaker, "WORKS_WITH", s, confidence) for s in subjects if s.kind == "person"]


def co_subjects(speaker: Party, items: list[Item], words: list[str], confidence: float) -> list[Edge]:
    """ "Chinedu and I pair on ..." and "Dmitri and Olga work together"."""
    group = _leading_group(items)
    people = [m for m in group if isinstance(m, Mention) and m.entity_type == "person"]
    if not people:
        return []  # most clauses: no group of people leads them
    edges: list[Edge] = []
    together = any(w == "together" or w.startswith("co-") or w in JOINT_VERBS for w in words)
    mine = any(w.startswith("co-") and k and words[k - 1] in ("my", "our") for k, w in enumerate(words))
    at_work = (
        together
        or not _WORK_KINDS.isdisjoint(t.kind for t in find_triggers(words))
        or any(isinstance(i, Mention) and i.entity_type == "project" for i in items)  # "ship Pallas"
        or not PROJECT_NOUNS.isdisjoint(words)  # "Amir and I ship the Android app"
        or any(_work_role(words, j) for j in range(len(words)))  # "me n Dilnoza r lab partners"
    )
    if any(not isinstance(m, Mention) for m in group):
        for person in people:
            if person.role is not None:
                edges.append(Edge(speaker, relation_of(person.role), Party.of(person), confidence))
            elif at_work:  # not "Laila and I decided on a daycare": doing a thing together is no work
                edges.append(Edge(speaker, "WORKS_WITH", Party.of(person), confidence))
    # "Dmitri and Olga work together"; with the speaker among them each is the speaker's colleague
    joint = len(people) > 1 and together and len(people) == len(group) and not mine  # "are my co-maintainers"
    if joint:
        edges.extend(Edge(Party.of(people[0]), "WORKS_WITH", Party.of(other), confidence) for other in people[1:])
    return edges


_WORK_KINDS = frozenset(("WORK_ON", "WORK_WITH", "BUILD", "ON", "AT"))


def _work_role(words: list[str], j: int) -> bool:
    role, _ = role_words(words, j)
    return role is not None and relation_of(role) == "WORKS_WITH"


def _leading_group(items: list[Item]) -> list[Mention | str]:
    group: list[Mention | str] = []
    for item in items:
        if isinstance(item, Mention) or item in ("i", "me"):
            group.append(item)
        elif item not in (",", "and", "&"):
            break
    return group if len(group) > 1 else []
