"""The named objects a clause's verb takes, with the words before each: which project a
switch moved, and where a contrast ("over Y") starts. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from memledger.extraction.patterns import Edge, Mention, Party
from memledger.extraction.triggers import CONTRAST, Item


@dataclass(slots=True)
class ClauseObject:
    """A named object after a trigger, with the words between it and what came before."""

    target: Party | None  # None: "me"/"us", the speaker
    mention: Mention | None
    gap: list[str]


def moved_project(objects: list[ClauseObject]) -> Party | None:
    """The project a switch moved: "we migrated Atlas from MySQL to PostgreSQL", "we
    moved from MySQL to PostgreSQL for Project Atlas". The project's tools changed, not
    the speaker's: its edge "Atlas USES MySQL" is the one withdrawn, and the new fact
    keys on the project ("atlas: database") like "Project Atlas uses MySQL" did."""
    for obj in objects:
        if obj.target is not None and obj.target.kind == "project" and set(obj.gap) <= _PROJECT_FRAME:
            return obj.target
    return None


_PROJECT_FRAME = frozenset(("the", "our", "my", "project", "for", "in", "on", "of", "within", "across"))


def split_contrast(
    objects: list[ClauseObject], *, preferring: bool = False
) -> tuple[list[ClauseObject], list[ClauseObject]]:
    """The objects a clause asserts and those it contrasts them with; after a verb of
    preference a later "to" contrasts too ("prefers it to EndNote")."""
    for index, obj in enumerate(objects):
        led = "to" in obj.gap  # "the Cyclonix 12 to the Hoovex", "X bulbs to the cheap Y ones"
        if any(word in CONTRAST for word in obj.gap) or (preferring and index and led):
            return objects[:index], objects[index:]
    return objects, []


def contrast_context(contrast: list[ClauseObject]) -> str | None:
    names = [obj.target.name for obj in contrast if obj.target is not None]
    return f"over {', '.join(names)}" if names else None


def project_frame(items: list[Item], words: list[str], edges: list[Edge], confidence: float) -> list[Edge]:
    """ "I use FastAPI for project Phoenix": Phoenix uses FastAPI too."""
    projects = [
        item
        for index, item in enumerate(items)
        if isinstance(item, Mention) and item.entity_type == "project" and _framed(words, index)
    ]
    tools = [edge.target for edge in edges if edge.relation == "USES"]
    return [Edge(Party.of(project), "USES", tool, confidence) for project in projects for tool in tools]


def _framed(words: list[str], index: int) -> bool:
    before = [w for w in words[max(0, index - 3) : index] if w not in ("the", "project")]
    return bool(before) and before[-1] in ("for", "in", "called")
