"""Named mentions in a sentence: the heuristic extractor's entity recogniser. Pure.

Searched in order: multi-word team names ("the backend team"), the gazetteer
(longest match first), then capitalised or oddly shaped words classified by the
words around them (a role word before a name, "project X", "X Labs", "at X",
CamelCase, "X said"). A word that no cue explains is left out: precision first,
as DESIGN.md asks.
"""

from __future__ import annotations

from memledger.extraction import gazetteer as gz
from memledger.extraction import name_guess, slots
from memledger.extraction.patterns import (
    BUILT,
    CALLED_ORG,
    CALLED_PROJECT,
    CAME,
    CLIENT_NOUNS,
    COMMON_GIVEN,
    HEDGES,
    HONORIFICS,
    HYPHEN_SUFFIXES,
    INITIAL_OK,
    LIST_JOINERS,
    LOOKING,
    LOWER_PERSON_NEXT,
    NOT_PROJECT_NAMES,
    ORG_PREV,
    PERSON_NEXT,
    PERSON_PREV,
    PROJECT_CUES,
    PROJECT_NOUNS,
    PROJECT_VERBS,
    SWITCH_VERBS,
    TEAM_NOUNS,
    TEAM_OWNERS,
    TEAM_SKIP,
    TO_PERSON,
    TOOL_PREV,
    WORK_FOR,
    WORKED,
    Mention,
    Sentence,
    is_question,
    tokenize,
)
from memledger.extraction.roles import any_role_after, any_role_before, role_after, role_before
from memledger.extraction.shapes import common_word, name_like, odd_shape

MAX_SENTENCE_TOKENS = 256
"""Tokens of a sentence that are read. Reading a clause looks back from each trigger,
so a sentence costs the square of its length; prose sentences are far shorter
(the labelled corpus's longest has 26), a hostile or pasted run is cut here."""


def analyse(text: str, project: str = "") -> Sentence:
    """Tokens (the first :data:`MAX_SENTENCE_TOKENS`), mentions and mood (question,
    hedge) of one sentence; ``project`` is the turn's project scope key, if any."""
    words = tokenize(text)[:MAX_SENTENCE_TOKENS]
    lows = [word.lower() for word in words]
    lowered = text.lower()
    mentions, unsettled = find_names(words, lows, project)
    return Sentence(
        text=text,
        words=words,
        lows=lows,
        mentions=mentions,
        question=is_question(lowered, lows),
        hedged=HEDGES.search(lowered) is not None,
        unsettled=unsettled,
    )


class _Finder:
    """Finds the mentions of one sentence; one instance per sentence."""

    def __init__(self, words: list[str], lows: list[str]) -> None:
        self.words = words
        self.lows = lows
        self.taken = [False] * len(words)
        self.found: list[Mention] = []
        self.initial = _initials(lows)

    def add(self, mention: Mention) -> None:
        for i in range(mention.start, mention.end):
            self.taken[i] = True
        self.found.append(mention)

    def prev(self, i: int, back: int = 1) -> str:
        return self.lows[i - back] if i - back >= 0 else ""

    def next(self, i: int, ahead: int = 0) -> str:
        return self.lows[i + ahead] if i + ahead < len(self.lows) else ""


def _initials(lows: list[str]) -> set[int]:
    """The tokens that open the sentence (after bullets, quotes, a label's colon).

    One pass: looking back from each token would be quadratic in a long run of
    punctuation, which a hostile turn can be."""
    found: set[int] = set()
    opening = True
    for i, low in enumerate(lows):
        if opening:
            found.add(i)
        if low == ":":
            opening = True
        elif low[:1].isalnum():
            opening = False
    return found


def find_names(words: list[str], lows: list[str], project: str = "") -> tuple[list[Mention], tuple[str, ...]]:
    """Every explicitly named entity of a tokenized sentence, in token order (a
    capitalised word naming ``project``, the turn's project scope key, is that project),
    and the name-shaped spans no rule could type: what the heuristic leaves unsettled."""
    finder = _Finder(words, lows)
    _find_own_project(finder, project.lower())
    _find_teams(finder)
    _find_known(finder)
    unknown = _find_capitalised(finder)
    slots.type_by_slot(words, lows, unknown, finder.add, finder.initial, finder.taken, finder.found)
    _find_lowercase_projects(finder)
    _find_lowercase_people(finder)
    _propagate_lists(finder, unknown)
    unsettled = tuple(
        " ".join(words[start:end])
        for start, end in unknown
        if start not in finder.initial and not any(finder.taken[start:end])
    )
    _guess_unknown(finder, unknown)
    _owned_roles(finder)
    finder.found.sort(key=lambda mention: mention.start)
    return finder.found, unsettled


def _find_own_project(f: _Finder, project: str) -> None:
    """ "Atlas uses MongoDB." said in project atlas is about the project, which its
    members name bare. A name the gazetteer knows (a project keyed "redis") keeps its kind."""
    if not project.isalpha() or _is_known(project):
        return
    for i, low in enumerate(f.lows):
        if low == project and f.words[i][:1].isupper():
            f.add(Mention(f.words[i], "project", 0.85, i, i + 1))


def _find_teams(f: _Finder) -> None:
    for i, low in enumerate(f.lows):
        if low not in TEAM_NOUNS or i == 0:
            continue
        j = i
        while j > 0 and i - j < 3 and f.lows[j - 1].isalpha() and f.lows[j - 1] not in TEAM_SKIP:
            j -= 1
        if j < i and f.prev(j) in TEAM_OWNERS and not any(f.taken[j : i + 1]):
            f.add(Mention(" ".join(f.words[j : i + 1]), "organization", 0.8, j, i + 1))


def _find_known(f: _Finder) -> None:
    i = 0
    while i < len(f.lows):
        match = _longest_known(f, i)
        if match is None:
            i += 1
            continue
        length, mention = match
        f.add(mention)
        i += length


def _longest_known(f: _Finder, i: int) -> tuple[int, Mention] | None:
    low = f.lows[i]
    if f.taken[i]:
        return None
    for length in gz.known_lengths(f.lows, i):
        phrase = " ".join(f.lows[i : i + length]) if length > 1 else low
        if any(f.taken[i : i + length]):
            continue
        surface = " ".join(f.words[i : i + length])
        if phrase in gz.NEEDS_CAPITAL and not _capital_ok(f, i, length, surface):
            continue
        mention = _known_mention(f, phrase, surface, i, i + length)
        if mention.entity_type == "tool" and surface[:1].isupper():
            mention = _extended(f, mention)
        return mention.end - i, mention
    if "-" in low:
        head, _, tail = low.partition("-")
        if tail in HYPHEN_SUFFIXES and _is_known(head):
            return 1, _known_mention(f, head, f.words[i].split("-")[0], i, i + 1)
    return None


def _extended(f: _Finder, mention: Mention) -> Mention:
    """A known name followed by capitalised words no list knows is one longer name:
    "AWS Secrets Manager", not "AWS"; one that ends in a kind of institution is an
    organization's ("Mistral Bakery")."""
    end = mention.end
    while end < len(f.words) and end - mention.end < 3 and not f.taken[end]:
        word, low = f.words[end], f.lows[end]
        if not word[:1].isupper() or common_word(low) or _is_known(low) or gz.is_given_name(low) or low in gz.PLACES:
            break
        end += 1
    while end > mention.end and _plural(f.lows[end - 1]):
        end -= 1  # "Kubernetes Deployments": a common noun after the name
    if end == mention.end:
        return mention
    name = " ".join(f.words[mention.start : end])
    if f.lows[end - 1] in gz.ORG_SUFFIXES:
        return Mention(name, "organization", mention.confidence, mention.start, end)
    return Mention(name, mention.entity_type, mention.confidence, mention.start, end, kind=mention.kind)


def _plural(low: str) -> bool:
    return low.endswith("s") and not low.endswith(("ss", "us", "is"))


def _is_known(phrase: str) -> bool:
    return phrase in gz.TOOL_KIND or phrase in gz.ORGANIZATIONS or phrase in gz.CONCEPTS


def _capital_ok(f: _Finder, i: int, length: int, surface: str) -> bool:
    if surface.islower():
        return f.prev(i) in TOOL_PREV
    following = f.next(i, length)
    return i not in f.initial or following in INITIAL_OK or following[:1].isdigit() or not following


def _known_mention(f: _Finder, phrase: str, surface: str, start: int, end: int) -> Mention:
    if gz.is_given_name(phrase) and _person_cue(f, start, end):
        return Mention(surface, "person", 0.8, start, end)
    if f.prev(start) in ("project", "codename") or f.next(end) in ("project", "repo", "codebase"):
        return Mention(surface, "project", 0.8, start, end)
    kind = gz.TOOL_KIND.get(phrase)
    if phrase in gz.ORGANIZATIONS and (kind is None or _org_cue(f, start, end)):
        return Mention(surface, "organization", 0.9, start, end)
    if phrase in gz.PRIMARILY_ORGANIZATIONS:
        return Mention(surface, "organization", 0.9, start, end)
    if kind is not None:
        return Mention(surface, "tool", 0.9, start, end, kind=kind)
    return Mention(surface, "concept", 0.85, start, end)


def _person_cue(f: _Finder, start: int, end: int) -> bool:
    before = f.prev(start)
    if before == "." and f.prev(start, 2) in HONORIFICS:
        before = f.prev(start, 2)  # "Dr. Oyelaran"
    return (
        before in PERSON_PREV
        or before in gz.ROLES
        or before in HONORIFICS
        or f.next(end) in PERSON_NEXT
        or (f.next(end) == "and" and f.next(end, 1) == "i")
        or f.next(end) in ("she", "he", "she's", "he's")
        or (before == "with" and f.prev(start, 2) in ("lunch", "dinner", "coffee", "drinks"))
    )


def _org_cue(f: _Finder, start: int, end: int) -> bool:
    before = f.prev(start)
    return (
        (before in ORG_PREV and f.prev(start, 2) not in LOOKING)
        or (before == "from" and f.prev(start, 2) in CAME)
        or (before == "for" and f.prev(start, 2) in WORK_FOR)
        or (before == "by" and f.prev(start, 2) == "acquired")
        or (before == "from" and start >= 2 and f.taken[start - 2])
        or (f.next(end) == "'s" and f.next(end, 1) in ("ceo", "cto", "office", "engineers"))
    )


def _find_capitalised(f: _Finder) -> list[tuple[int, int]]:
    """Classify capitalised or oddly shaped words; return the spans left unexplained."""
    unknown: list[tuple[int, int]] = []
    i = 0
    while i < len(f.words):
        if f.taken[i] or not name_like(f.words[i]) or common_word(f.lows[i]):
            i += 1
            continue
        end = _chunk_end(f, i)
        if i in f.initial and end - i > 1 and not _known_word(f.lows[i]):
            unknown.append((i, end))  # named only if its slot says so ("Hollow Pine is where ...")
            i += 1  # "Tell Fatima": an imperative verb, capitalised because it opens the sentence
            continue
        mention = _classify(f, i, end)
        if mention is not None:
            f.add(mention)
        elif f.lows[i] not in gz.PLACES:
            unknown.append((i, end))
        i = end
    return unknown


def _known_word(low: str) -> bool:
    known = gz.is_given_name(low) or low in gz.FIRST_WORDS or low in gz.ORG_SUFFIXES
    return known or name_guess.is_world_name(low)


def _chunk_end(f: _Finder, i: int) -> int:
    end = i + 1
    while end < len(f.words) and end - i < 4 and not f.taken[end]:
        word, low = f.words[end], f.lows[end]
        if word == "&" and end + 1 < len(f.words) and f.words[end + 1][:1].isupper():
            end += 1  # "Calloway & Finch": one firm's name
            continue
        if not word[0].isupper():
            break
        if low in gz.NOT_NAMES and not _closing_noun(low):
            break
        end += 1
    return end


def _closing_noun(low: str) -> bool:
    return low in gz.ORG_SUFFIXES or low in PROJECT_NOUNS


def _classify(f: _Finder, start: int, end: int) -> Mention | None:
    name = " ".join(f.words[start:end])
    last = f.lows[end - 1]
    if "&" in f.words[start:end]:
        return Mention(name, "organization", 0.8, start, end)
    if end - start > 1 and last in gz.ORG_SUFFIXES:
        return Mention(name, "organization", 0.85, start, end)
    if end - start > 1 and last in PROJECT_NOUNS:
        return Mention(name, "project", 0.8, start, end)
    for rule in (_as_person_by_role, _as_project, _as_org, _as_person, _as_tool):
        mention = rule(f, name, start, end)
        if mention is not None:
            return mention
    return None


def _as_person_by_role(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    role, mine = role_before(f.lows, start)
    if role is None:
        role, mine = role_after(f.words, f.lows, end)
    if role is None:
        return None
    return Mention(name, "person", 0.9, start, end, role=role, mine=mine)


def _as_project(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    before, after = f.prev(start), f.next(end)
    subject_of = after in PROJECT_VERBS or (after == "is" and f.next(end, 1) in ("part", "a"))
    worked_on = before == "on" and f.prev(start, 2) in WORKED
    cued = before in PROJECT_CUES or after in PROJECT_NOUNS or _called(f, start, CALLED_PROJECT)
    cued = cued or worked_on or _migrated(f, start, end)
    if cued or (subject_of and f.next(end, 1) != "a") or _part_of_dependency(f, after, end):
        return Mention(name, "project", 0.8, start, end)
    return None


def _migrated(f: _Finder, start: int, end: int) -> bool:
    """ "We migrated Atlas from MySQL to ...", "we moved Atlas to Postgres": what is
    moved off or onto a known tool is a project (not a person or a place: "we moved
    Sarah to ..." keeps its name unexplained)."""
    if f.prev(start) not in SWITCH_VERBS or f.next(end) not in ("from", "off", "to", "onto"):
        return False
    if gz.is_given_name(f.lows[start]) or f.lows[start] in gz.PLACES:
        return False
    return any(m.start == end + 1 and m.entity_type == "tool" for m in f.found)


def _part_of_dependency(f: _Finder, after: str, end: int) -> bool:
    return after == "is" and f.next(end, 1) == "a" and f.next(end, 2) == "dependency"


def _called(f: _Finder, start: int, nouns: frozenset[str]) -> bool:
    if f.prev(start) in ("called", "named"):
        return any(f.prev(start, back) in nouns for back in range(2, 7))
    appositive = f.prev(start) == "," and f.prev(start, 2) in nouns
    return appositive and nouns is CALLED_ORG


def _as_org(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    low = name.lower()
    if low in gz.PLACES or gz.is_given_name(f.lows[start]):
        return None
    client = f.prev(start) == "is" and f.prev(start, 2) in CLIENT_NOUNS
    if _org_cue(f, start, end) or _called(f, start, CALLED_ORG) or client:
        return Mention(name, "organization", 0.8, start, end)
    return None


def _as_person(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    first = f.lows[start]
    if gz.is_given_name(first) and (first not in COMMON_GIVEN or start not in f.initial):
        return Mention(name, "person", 0.85, start, end)
    if _person_cue(f, start, end) or (f.prev(start) == "to" and f.prev(start, 2) in TO_PERSON):
        return Mention(name, "person", 0.75, start, end)
    return None


def _as_tool(f: _Finder, name: str, start: int, end: int) -> Mention | None:
    if name.lower() in gz.PLACES:
        return None
    if odd_shape(f.words[start]) and end - start == 1:
        return Mention(name, "tool", 0.75, start, end)
    before, before2 = f.prev(start), f.prev(start, 2)
    cued = (
        before in TOOL_PREV
        or (before == "to" and before2 in SWITCH_VERBS)
        or (before in ("in", "with") and before2 in BUILT)
    )
    switched = (
        before == "to"
        and "from" in f.lows[max(0, start - 8) : start]
        and any(low in SWITCH_VERBS for low in f.lows[max(0, start - 10) : start])
    )
    if (cued or switched) and start not in f.initial:
        return Mention(name, "tool", 0.7, start, end)
    return None


def _find_lowercase_projects(f: _Finder) -> None:
    for i, low in enumerate(f.lows):
        if f.taken[i] or not low[0].isalpha() or low in gz.NOT_NAMES:
            continue
        called = f.prev(i) in ("called", "named") and _called(f, i, CALLED_PROJECT)
        labelled = f.prev(i) == ":" and f.prev(i, 2) in ("repo", "repository", "project")
        named = f.prev(i) == "project" and low.isalpha() and low not in NOT_PROJECT_NAMES
        if called or labelled or named:
            f.add(Mention(f.words[i], "project", 0.8, i, i + 1))


def _find_lowercase_people(f: _Finder) -> None:
    """ "sofia uses ubuntu", "hannah from finance needs ...": a lower-case given name."""
    for i, low in enumerate(f.lows):
        if f.taken[i] or len(low) < 4 or low in COMMON_GIVEN or low in gz.NOT_NAMES:
            continue
        if gz.is_given_name(low) and f.next(i, 1) in LOWER_PERSON_NEXT:
            f.add(Mention(f.words[i], "person", 0.7, i, i + 1))


def _guess_unknown(f: _Finder, unknown: list[tuple[int, int]]) -> None:
    """Type what is still unexplained by its spelling (``name_guess``), at low confidence;
    it stays in the unsettled names, so a hybrid tenant still asks the model."""
    for start, end in unknown:
        if any(f.taken[start:end]) or f.lows[start] in gz.PLACES:
            continue
        entity_type = name_guess.guess(f.words[start:end], f.prev(start))
        if entity_type is not None:
            f.add(Mention(" ".join(f.words[start:end]), entity_type, name_guess.GUESS_CONFIDENCE, start, end))


def _owned_roles(f: _Finder) -> None:
    """A person's role the lists do not know, said the speaker's ("our landlord Cengiz",
    "Ebru is my financial planner"): the possessive makes it a role."""
    for mention in f.found:
        if mention.entity_type != "person" or mention.role is not None:
            continue
        role = any_role_before(f.lows, mention.start) or any_role_after(f.words, f.lows, mention.end)
        if role is not None:
            mention.role, mention.mine = role, True


def _propagate_lists(f: _Finder, unknown: list[tuple[int, int]]) -> None:
    """An unexplained name listed beside a typed one ("Wei and Fatima") takes its type;
    one typed this way types the next ("runs Zephyr, Quoll and Brindle")."""
    by_end = {m.end: m for m in f.found}
    by_start = {m.start: m for m in f.found}
    for start, end in unknown:
        if any(f.taken[start:end]):
            continue
        left = by_end.get(start - 1) if f.prev(start) in LIST_JOINERS else None
        right = by_start.get(end + 1) if f.next(end) in LIST_JOINERS else None
        neighbour = left or right
        if start in f.initial and not (right is not None and right.entity_type == "person" and f.next(end) == "and"):
            continue  # an opening word is listed only as "Wulan and Budi ..."
        if neighbour is not None and neighbour.entity_type != "concept":
            name = " ".join(f.words[start:end])
            mention = Mention(name, neighbour.entity_type, 0.7, start, end)
            f.add(mention)
            by_end[end] = by_start[start] = mention
