"""A piece of work described by the tool it is made in: "Birdnest, a little Elm app",
"Larkspur is a Flutter app". The work uses the tool; the noun after the tool must name a
work or a tool's kind (not "a Python course", "a Notion clone", "a Jira killer"). Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction.patterns import PROJECT_NOUNS, Edge, Mention, Party, word_set

_ARTICLES: Final = word_set("a an")
_LINKS: Final = word_set(", is 's")
_CONFIDENCE: Final = 0.75
_LIKENED: Final = ("-like", "-style", "-esque", "-ish", "-inspired")
_DESCRIBING_WORDS: Final = 2  # "a tiny", "an old internal": the adjectives before the tool


def made_in_edges(lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "<work>, a/an [adjectives] <tool> <noun>" or "<work> is a <tool> <noun>"."""
    by_start = {m.start: m for m in mentions}
    edges: list[Edge] = []
    for work in mentions:
        k = work.end
        if work.entity_type != "project" or lows[k : k + 1] == [] or lows[k] not in _LINKS:
            continue
        if lows[k + 1 : k + 2] == [] or lows[k + 1] not in _ARTICLES:
            continue
        j = k + 2
        while j < len(lows) and j - (k + 2) < _DESCRIBING_WORDS and lows[j].isalpha() and j not in by_start:
            j += 1
        tool = by_start.get(j)
        head = lows[tool.end] if tool is not None and tool.end < len(lows) else ""
        noun = head in PROJECT_NOUNS or head in gz.TOOL_KIND_NOUNS  # "an Elm app"; not "a Python course"
        likened = tool is not None and lows[tool.end - 1].endswith(_LIKENED)  # "a Notion-like app"
        if tool is not None and tool.entity_type == "tool" and noun and not likened:
            edges.append(Edge(Party.of(work), "USES", Party.of(tool), _CONFIDENCE))
    return edges
