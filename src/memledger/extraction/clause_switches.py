"""What a clause that withdraws or switches says: "we stopped using X" withdraws X; "we
moved from A to B" withdraws A and states B (or decides it, after a word of deciding),
for the project moved if one is named, else for the subjects. Pure."""

from __future__ import annotations

from memledger.extraction.clause_objects import ClauseObject, moved_project, split_contrast
from memledger.extraction.patterns import Edge, Party, named_team
from memledger.extraction.triggers import MODALS, Trigger, switch_side

_REPLACING = frozenset(("replaced", "replace", "replacing", "swapped", "swap", "swapping", "traded"))


def retractions(kind: str, subjects: list[Party], objects: list[ClauseObject], confidence: float) -> list[Edge]:
    """A negated use or preference: each subject's edge to each tool, withdrawn."""
    if kind not in ("USE", "BE", "KEEP", "ON", "PREFER", "LIKE"):
        return []
    relation = "PREFERS" if kind in ("PREFER", "LIKE") else "USES"
    main, _ = split_contrast(objects)
    return [
        Edge(subject, relation, obj.target, confidence, retracted=True)
        for subject in subjects
        for obj in main
        if obj.target is not None and obj.target.kind == "tool"
    ]


_NOT_YET_OR_BEFORE = frozenset(("going", "gonna", "had"))


def switched(
    kind: str,
    last: Trigger,
    subjects: list[Party],
    objects: list[ClauseObject],
    words: list[str],
    *,
    decision: bool,
    confidence: float,
) -> list[Edge]:
    """The edges of a switch ("SWITCH"), a stop ("RETRACT") or a leaving ("LEAVE") whose
    last trigger is ``last``: the "from" side withdrawn, the "to" side stated."""
    proposed = any(w in MODALS for w in words[max(0, last.start - 3) : last.start])
    not_now = not _NOT_YET_OR_BEFORE.isdisjoint(words[max(0, last.start - 3) : last.start])  # "is going to", "had"
    side = "from" if kind != "SWITCH" else ""
    if words[last.end - 1] in ("to", "onto"):
        side = "to"
    project = None if decision else moved_project(objects)
    users = [project] if project is not None else subjects  # whose tools changed
    edges: list[Edge] = []
    for obj in objects:
        side = switch_side(kind, side, obj.gap, replacing=words[last.start] in _REPLACING)
        if obj.target is None:
            continue
        if side == "" and kind == "RETRACT" and obj.gap and obj.target.kind == "tool" and not proposed:
            edges.extend(Edge(s, "USES", obj.target, confidence) for s in users)  # "... via Doctolo"
        if side == "":
            continue
        if kind == "LEAVE" and obj.target.kind == "organization":
            edges.extend(Edge(s, "PART_OF", obj.target, confidence, retracted=True) for s in subjects)
        if kind == "SWITCH" and side == "to" and obj.target.kind == "organization" and not (proposed or not_now):
            # "Thandiwe has moved to Brennan College": a person's new workplace, not a provider;
            # "moved to the mobile team": their work, as "on the X team" says
            movers = [s for s in subjects if s.kind == "person"]
            relation = "WORKS_ON" if named_team(obj.target.name) else "PART_OF"
            edges.extend(Edge(s, relation, obj.target, confidence) for s in movers)
        if obj.target.kind not in ("tool", "concept"):
            continue
        relation = "DECIDED" if decision and side == "to" else "USES"
        if proposed and side == "from":
            continue  # "we should drop X": not dropped yet
        edges.extend(Edge(s, relation, obj.target, confidence, retracted=side == "from") for s in users)
    return edges
