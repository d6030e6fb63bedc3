"""Named mentions in a sentence: the heuristic extractor's entity recogniser. Pure.

Searched in order: multi-word team names ("the backend team"), the gazetteer
(longest match first), then capitalised or oddly shaped words classified by the
words around them (``cued_names``), by their slot (``slots``) and, last and at low
confidence, by their spelling (``name_guess``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import name_guess, noun_types, slots
from memledger.extraction.cued_names import find_capitalised, named_as, org_cue, person_cue
from memledger.extraction.name_chunks import model_number
from memledger.extraction.name_finder import NameFinder
from memledger.extraction.patterns import (
    APP_NOUNS,
    BUILT,
    CALLED_PROJECT,
    COMMON_GIVEN,
    HEDGES,
    HONORIFICS,
    HYPHEN_SUFFIXES,
    INITIAL_OK,
    KNOWN_CONFIDENCE,
    LIST_JOINERS,
    LOWER_PERSON_NEXT,
    METHOD_LEADS,
    METHOD_NOUNS,
    NOT_PROJECT_NAMES,
    SWITCH_VERBS,
    TEAM_NOUNS,
    TEAM_OWNERS,
    TEAM_SKIP,
    TOOL_PREV,
    VERB_PARTICLES,
    Mention,
    Sentence,
    is_question,
    span_text,
    tokenize,
    word_set,
)
from memledger.extraction.roles import any_role_after, any_role_before, opens_next_clause, owned_by_speaker
from memledger.extraction.shapes import common_word
from memledger.extraction.triggers import INFORMAL, PREPOSITIONS, find_triggers, finite_form, is_filler

MAX_SENTENCE_TOKENS = 256
"""Tokens of a sentence that are read. Reading a clause looks back from each trigger,
so a sentence costs the square of its length; prose sentences are far shorter
(the labelled corpus's longest has 26), a hostile or pasted run is cut here."""


def analyse(text: str, project: str = "", *, lowercase: bool = False) -> Sentence:
    """Tokens (the first :data:`MAX_SENTENCE_TOKENS`), mentions and mood (question,
    hedge) of one sentence; ``project`` is the turn's project scope key, if any;
    ``lowercase`` says the writer capitalises nothing, so names are found by spelling."""
    written = tokenize(text)[:MAX_SENTENCE_TOKENS]
    words = name_guess.truecased(written) if lowercase else written
    lows = [_read_as(word) for word in words]
    lowered = text.lower()
    mentions, unsettled = find_names(words, lows, project)
    if lowercase:
        for mention in mentions:
            mention.name = " ".join(written[mention.start : mention.end])  # named as written
    return Sentence(
        text=text,
        words=words,
        lows=lows,
        mentions=mentions,
        question=is_question(lowered, lows),
        hedged=HEDGES.search(lowered) is not None,
        unsettled=unsettled,
    )


def _read_as(word: str) -> str:
    """A token lower-cased, and read as the word it stands for if written without capitals
    ("w/", "n", "@"): a capitalised "N" is a name's initial."""
    low = word.lower()
    return INFORMAL.get(low, low) if low == word else low


def find_names(words: list[str], lows: list[str], project: str = "") -> tuple[list[Mention], tuple[str, ...]]:
    """Every explicitly named entity of a tokenized sentence, in token order (a
    capitalised word naming ``project``, the turn's project scope key, is that project),
    and the name-shaped spans no rule could type: what the heuristic leaves unsettled."""
    finder = NameFinder(words, lows)
    _find_own_project(finder, project.lower())
    _find_teams(finder)
    _find_methods(finder)
    _find_known(finder)
    unknown = find_capitalised(finder)
    slots.type_by_slot(words, lows, unknown, finder.add, finder.initial, finder.taken, finder.found)
    slots.lowercase_tools(words, lows, finder.taken, finder.add)
    _find_lowercase_projects(finder)
    _find_lowercase_people(finder)
    _propagate_lists(finder, unknown)
    unsettled = tuple(
        span_text(words[start:end])
        for start, end in unknown
        if start not in finder.initial and not any(finder.taken[start:end])
    )
    _guess_unknown(finder, unknown, spelled_only=True)
    _propagate_lists(finder, unknown, LIST_JOINERS - {","})  # a guess types its coordinates, as weakly
    _guess_unknown(finder, unknown, spelled_only=False)  # "Dorcas, Fintan and Yevgenia": listed first
    _propagate_lists(finder, unknown, LIST_JOINERS - {","})
    _owned_roles(finder)
    finder.found.sort(key=lambda mention: mention.start)
    return finder.found, unsettled


def _find_own_project(f: NameFinder, project: str) -> None:
    """ "Atlas uses MongoDB." said in project atlas is about the project, which its
    members name bare. A name the gazetteer knows (a project keyed "redis") keeps its kind."""
    if not project.isalpha() or _is_known(project):
        return
    for i, low in enumerate(f.lows):
        if low == project and f.words[i][:1].isupper():
            f.add(Mention(f.words[i], "project", 0.85, i, i + 1))


def _find_teams(f: NameFinder) -> None:
    for i, low in enumerate(f.lows):
        if low not in TEAM_NOUNS or i == 0:
            continue
        j = i
        while j > 0 and i - j < 3 and f.lows[j - 1].isalpha() and f.lows[j - 1] not in TEAM_SKIP:
            j -= 1
        if j < i and f.prev(j) in TEAM_OWNERS and not any(f.taken[j : i + 1]):
            f.add(Mention(" ".join(f.words[j : i + 1]), "organization", 0.8, j, i + 1))


def _find_methods(f: NameFinder) -> None:
    """ "the Pomodoro technique", "the tartine method": a name (capitalised inside the
    sentence, or no English word) before a noun for a way of doing things is a method."""
    for i, low in enumerate(f.lows):
        if low not in METHOD_NOUNS or i == 0:
            continue
        start = i
        while start > 0 and i - start < 2 and _method_name(f, start - 1):
            start -= 1
        named = " ".join(f.lows[start:i])
        known_thing = named in gz.TOOL_KIND or named in gz.ORGANIZATIONS  # "the Notion approach"
        lead = f.prev(start)
        if low in _DESIGNS and (lead != "the" or _modifies_next(f, i)):
            continue  # "the saga pattern"; not "a Burda pattern", "the Stitchly pattern app"
        if start < i and lead in METHOD_LEADS and not known_thing and not any(f.taken[start : i + 1]):
            f.add(Mention(" ".join(f.words[start : i + 1]), "concept", 0.8, start, i + 1))


def _modifies_next(f: NameFinder, i: int) -> bool:
    """Whether the noun at ``i`` modifies a lower-case noun after it ("pattern app")."""
    following = f.next(i, 1)
    noun = following.isalpha() and noun_types.common_noun(following) and not is_filler(following)
    noun = noun and not finite_form(following)  # "the 2-minute rule helps", not a noun
    return noun and following not in PREPOSITIONS and following not in gz.NOT_NAMES


def _method_name(f: NameFinder, i: int) -> bool:
    word, low = f.words[i], f.lows[i]
    if _compound(low):
        return f.prev(i) == "the"  # "the box-rotation method", "the 30-day rule"; not "a step-by-step approach"
    if not low.isalpha() or low in gz.NOT_NAMES:
        return False
    if word[:1].isupper():
        return i not in f.initial
    return not name_guess.english(low) and not common_word(low)


# Endings of a compound that describes rather than names: participles and adjectives.
_DESIGNS: Final = word_set("pattern architecture")  # also a product's or a sewing kit's
_DESCRIBING_ENDS: Final = ("ing", "ed", "free", "friendly", "style", "proof", "wise", "only")
_COUNTS: Final = word_set("no zero one two three four five six seven eight nine ten twelve fifty hundred")


def _compound(low: str) -> bool:
    """Whether a word is a coined hyphenated compound of two parts or more, letters or
    digits, not ending in a participle."""
    parts = low.split("-")
    first, last = parts[0], parts[-1]
    if len(parts) < 2 or not all(p.isalnum() for p in parts) or last.endswith(_DESCRIBING_ENDS):
        return False  # not "the slow-cooking method", "the plant-based diet", "the gluten-free diet"
    counted = first.isdigit() or first in _COUNTS  # "the 30-day rule", "the no-dig method"
    if first == last or last in VERB_PARTICLES or last in ("on", "in") or "to" in parts[1:-1]:
        return counted  # not "step-by-step", "hands-on", "top-down", "back-to-basics"
    gradable = name_guess.english(first + "est") or name_guess.english(first.removesuffix("e") + "est")
    plain = gradable and all(name_guess.english(p) for p in parts[1:])  # "long-term", not "low-FODMAP"
    return counted or (first.isalpha() and not plain)


def _find_known(f: NameFinder) -> None:
    i = 0
    while i < len(f.lows):
        low = f.lows[i]
        if low not in gz.KNOWN_FIRST_TOKENS and "-" not in low:
            i += 1  # most tokens: no known name starts here, nor a hyphenated one
            continue
        match = _longest_known(f, i)
        if match is None:
            i += 1
            continue
        length, mention = match
        f.add(mention)
        i += length


def _longest_known(f: NameFinder, i: int) -> tuple[int, Mention] | None:
    low = f.lows[i]
    if f.taken[i] or _inside_a_name(f, i):
        return None
    for length in gz.known_lengths(f.lows, i):
        phrase = " ".join(f.lows[i : i + length]) if length > 1 else low
        if any(f.taken[i : i + length]):
            continue
        surface = " ".join(f.words[i : i + length])
        if phrase in gz.NEEDS_CAPITAL and not _capital_ok(f, i, length, surface):
            continue
        if _firm_goes_on(f, i + length):
            return None  # "Hinge & Hammer": a firm's name, though it opens with a known one
        mention = _known_mention(f, phrase, surface, i, i + length)
        following = f.words[i + length] if i + length < len(f.words) else ""
        if mention.entity_type in ("tool", "organization") and (surface[:1].isupper() or following[:1].isupper()):
            mention = _extended(f, mention)  # "ikea Kallax": a lower-case writer's name, capitalised as unknown
        return mention.end - i, mention
    if "-" in low:
        head, _, tail = low.partition("-")
        if tail in HYPHEN_SUFFIXES and _is_known(head):
            return 1, _known_mention(f, head, f.words[i].split("-")[0], i, i + 1)
    return None


def _firm_goes_on(f: NameFinder, k: int) -> bool:
    """Whether "&" at ``k`` joins a capitalised word no list knows to the name before it:
    one firm's name ("Hinge & Hammer"), not two known names ("Slack & Notion")."""
    after = f.words[k + 1] if k + 1 < len(f.words) else ""
    return f.words[k : k + 1] == ["&"] and after[:1].isupper() and not _is_known(after.lower())


def _extended(f: NameFinder, mention: Mention) -> Mention:
    """A known name followed by capitalised words or a model code is one longer name:
    "AWS Secrets Manager", not "AWS"; a company's name so extended names its product
    ("Google Maps", "Sony A6400"), unless it ends in a kind of institution ("Mistral Bakery")."""
    end = mention.end
    while end < len(f.words) and end - mention.end < 3 and not f.taken[end]:
        word, low = f.words[end], f.lows[end]
        if _model_code(word) or model_number(f, end, mention.start):
            end += 1
            break
        known_apart = _is_known(low) and not _model_word(mention, low)
        plain = common_word(low) and not _name_goes_on(f, end + 1)  # "Cricut Design Space": a name goes on
        if not word[:1].isupper() or plain or known_apart or gz.is_given_name(low) or low in gz.PLACES:
            break
        end += 1
    if mention.kind is not None and end == mention.end + 1 and _plural(f.lows[end - 1]):
        end -= 1  # "Kubernetes Deployments": a common noun after a tool's name, not "Google Maps"
    if end == mention.end:
        return mention
    name = " ".join(f.words[mention.start : end])
    if f.lows[end - 1] in gz.ORG_SUFFIXES:
        return Mention(name, "organization", mention.confidence, mention.start, end)
    return Mention(name, "tool", mention.confidence, mention.start, end, kind=mention.kind)


def _name_goes_on(f: NameFinder, k: int) -> bool:
    """Whether the token at ``k`` is a capitalised word that is no common one, so that the
    capitalised common word before it is inside a product's name."""
    word = f.words[k] if k < len(f.words) else ""
    return word[:1].isupper() and word.isalpha() and not common_word(f.lows[k]) and not f.taken[k]


def _inside_a_name(f: NameFinder, i: int) -> bool:
    """Whether a known name that is also an ordinary word ("Express", "Chef") continues the
    capitalised name before it mid-sentence ("Breville Barista Express", "Mindful Chef")."""
    j = i - 1
    if j < 0 or f.taken[j] or not name_guess.common(f.lows[i]):
        return False
    start = j
    while (
        start > 0 and f.words[start - 1][:1].isupper() and not f.taken[start - 1] and not common_word(f.lows[start - 1])
    ):
        start -= 1
    if start in f.initial:
        return False  # "Breville Barista Express, Niche Zero" opening a line: the known name anchors the list
    before = f.words[j]
    return before[:1].isupper() and before != "I" and not common_word(f.lows[j])


def _model_word(mention: Mention, low: str) -> bool:
    """Whether a known name that is also an ordinary word names a model of the maker's,
    device's or system's name before it ("Arduino Nano", "Linux Mint", "Amazon Echo"), or a
    product of the same kind's family ("Grafana Loki"); after an app of another kind it is
    another app ("Slack Notion", "Jira Confluence")."""
    kind = gz.TOOL_KIND.get(mention.name.lower())
    maker = (mention.name.lower() in gz.ORGANIZATIONS and kind is None) or kind in _MODEL_KINDS
    family = kind is not None and gz.TOOL_KIND.get(low) == kind  # "Grafana Loki"
    return (maker or family) and name_guess.common(low)


# Kinds of tools whose makers name models after them.
_MODEL_KINDS: Final = frozenset(
    ("hardware", "operating system", "+gadget", "+smart home", "+home appliance", "+health device", "fitness tracker")
)


def _model_code(word: str) -> bool:
    """A product's model code: letters then digits ("A6400", "K1000", "XM5")."""
    letters = word.rstrip("0123456789")
    return 0 < len(letters) <= 3 and len(word) - len(letters) >= 2 and letters.isalpha()


def _plural(low: str) -> bool:
    return low.endswith("s") and not low.endswith(("ss", "us", "is"))


def _is_known(phrase: str) -> bool:
    return phrase in gz.TOOL_KIND or phrase in gz.ORGANIZATIONS or phrase in gz.CONCEPTS


def _capital_ok(f: NameFinder, i: int, length: int, surface: str) -> bool:
    if surface.islower():
        return _tool_context(f, i, length)
    following = f.next(i, length)
    return i not in f.initial or following in INITIAL_OK or following[:1].isdigit() or not following


def _tool_context(f: NameFinder, i: int, length: int) -> bool:
    """Whether a lower-case name that is also an English word ("yarn", "windows") stands
    where a tool does: after a verb of use, moved to or from, written in, or beside
    another tool's name ("pnpm vs yarn", "uv instead of pip", "dbt n snowflake")."""
    lows, before = f.lows, f.prev(i)
    if before in TOOL_PREV or before in _DOING:
        return True  # "use yarn", "learning java"
    if before in ("in", "with", "on") and not _DOING.isdisjoint(lows[max(0, i - 5) : i - 1]):
        return True  # "we built the frontend in react", "I keep my budget in excel"
    if before in ("to", "from", "off", "onto") and not SWITCH_VERBS.isdisjoint(lows[max(0, i - 5) : i - 1]):
        return True
    if f.next(i + length) in _PARTICLES:
        return False  # "drop GraphQL and go back to REST": a verb beside the name
    k = i - 1
    while k >= 0 and i - k <= 2 and lows[k] in _BESIDE:
        k -= 1
    if k < i - 1 and any(m.end == k + 1 and m.entity_type == "tool" for m in f.found):
        return True
    j = i + length
    while j < len(lows) and j - (i + length) < 2 and lows[j] in _BESIDE:
        j += 1
    return j > i + length and j < len(lows) and lows[j] in gz.TOOL_KIND


_BESIDE: Final = LIST_JOINERS | {"n", "instead", "of"}
# Verbs of making, keeping or learning something with a tool.
_DOING: Final = BUILT | word_set(
    "build building keep keeps kept track tracks tracked tracking learn learns learning learned learnt "
    "study studying program programming coded coding run runs running design designed designing"
)
_PARTICLES: Final = VERB_PARTICLES | word_set("ahead around through")


def _known_mention(f: NameFinder, phrase: str, surface: str, start: int, end: int) -> Mention:
    if gz.is_given_name(phrase) and person_cue(f, start, end):
        return Mention(surface, "person", 0.8, start, end)
    if f.prev(start) in ("project", "codename") or f.next(end) in ("project", "repo", "codebase"):
        return Mention(surface, "project", 0.8, start, end)
    kind = gz.TOOL_KIND.get(phrase)
    compared = f.prev(start) in _SERVICE_USE or f.next(end) in _COMPARED or f.next(end) in APP_NOUNS  # "the X app"
    if phrase in gz.ORGANIZATIONS and compared and not org_cue(f, start, end):
        return Mention(surface, "tool", 0.8, start, end)  # "sells her bowls on Etsy": the company's service
    if phrase in gz.ORGANIZATIONS and (kind is None or org_cue(f, start, end)):
        return Mention(surface, "organization", KNOWN_CONFIDENCE, start, end)
    if phrase in gz.PRIMARILY_ORGANIZATIONS:
        return Mention(surface, "organization", KNOWN_CONFIDENCE, start, end)
    if kind is not None:
        return Mention(surface, "tool", KNOWN_CONFIDENCE, start, end, kind=kind)
    return Mention(surface, "concept", 0.85, start, end)


# Words around a company's name that make it the service it sells, used or preferred
# ("sells on Etsy", "picked Booking.com over Airbnb").
_SERVICE_USE = word_set("use uses using used via through on over prefer prefers preferred")
_COMPARED = word_set("over vs")


_PROJECT_CUE_WORDS: Final = frozenset(("called", "named", ":", "project"))


def _find_lowercase_projects(f: NameFinder) -> None:
    for i, low in enumerate(f.lows):
        if not i or f.lows[i - 1] not in _PROJECT_CUE_WORDS:
            continue  # each rule below needs one of these words before the name
        if f.taken[i] or not low[0].isalpha() or low in gz.NOT_NAMES:
            continue
        called = f.prev(i) in ("called", "named") and named_as(f, i, CALLED_PROJECT)
        labelled = f.prev(i) == ":" and f.prev(i, 2) in ("repo", "repository", "project")
        headed = i >= 2 and f.words[i - 2][:1].isupper()  # "the Margarita project depends": a head noun
        named = f.prev(i) == "project" and low.isalpha() and low not in NOT_PROJECT_NAMES and not headed
        named = named and low not in gz.ROLES  # "my group project partner": a role, not a project's name
        named = named and low not in _PROJECT_CUE_WORDS and not _participle(low)  # "a project called X"
        named = named and not _third_person_verb(f.lows, i)  # "our vineyard project relies on X"
        if called or labelled or named:
            f.add(Mention(f.words[i], "project", 0.8, i, i + 1))


def _third_person_verb(lows: list[str], i: int) -> bool:
    """Whether the word at ``i`` opens a verb phrase in the third person ("relies on X");
    not "project build", "project atlas"."""
    low = lows[i]
    return low.endswith("s") and not low.endswith("ss") and any(t.start == 0 for t in find_triggers(lows[i : i + 3]))


def _participle(low: str) -> bool:
    """A verb's participle ("project based on", "project using X"), which names nothing."""
    return len(low) > 4 and low.endswith(("ed", "ing"))


def _find_lowercase_people(f: NameFinder) -> None:
    """ "sofia uses ubuntu", "hannah from finance needs ...": a lower-case given name;
    "my sis hyun-joo ...": a word no English after the speaker's role for someone."""
    for i, low in enumerate(f.lows):
        if f.taken[i] or len(low) < 3 or low in COMMON_GIVEN or low in gz.NOT_NAMES or low in HONORIFICS:
            continue  # "my boss Signora Castellucci": the title is no name
        if f.prev(i) in gz.ROLES and owned_by_speaker(f.lows, i - 1) and _foreign(low) and not _verb_after_role(f, i):
            f.add(Mention(f.words[i], "person", 0.7, i, i + 1))
        elif f.next(i, 1) in LOWER_PERSON_NEXT and len(low) >= 4 and gz.is_given_name(low):
            f.add(Mention(f.words[i], "person", 0.7, i, i + 1))  # the word after a name says it is a person's


def _verb_after_role(f: NameFinder, i: int) -> bool:
    """Whether the word after "my <role>" is its verb in -s, a preposition or an article
    after it ("my climbing partner belays for ..."); a known name stays a name ("carlos from")."""
    low = f.lows[i]
    verb_like = low.endswith("s") and not name_guess.is_world_name(low) and not gz.is_given_name(low)
    return verb_like and (f.next(i, 1) in PREPOSITIONS or f.next(i, 1) in ("the", "a", "an", "my", "our"))


def _foreign(low: str) -> bool:
    """A lower-case word that is no English, no known name of a thing and, with two vowels
    at least, no abbreviation ("afk", "cpap"): a name."""
    parts = low.split("-")  # "hyun-joo"
    if sum(c in "aeiouy" for c in low) < 2 or name_guess.english_form(low) or _is_known(low):
        return False
    return not any(name_guess.ordinary(p) for p in parts)


def _guess_unknown(f: NameFinder, unknown: list[tuple[int, int]], *, spelled_only: bool) -> None:
    """Type what is still unexplained by its spelling (``name_guess``), at low confidence;
    it stays in the unsettled names, so a hybrid tenant still asks the model. A name no
    spelling types is a product only after ``spelled_only`` passes, once lists have typed theirs."""
    for start, end in unknown:
        if any(f.taken[start:end]) or f.lows[start] in gz.PLACES:
            continue
        entity_type = name_guess.guess(f.words[start:end], f.prev(start))
        inside = start not in f.initial
        if entity_type is None and inside and not spelled_only and _unsure(f.words[start], f.prev(start)):
            entity_type = "tool"  # a word no list knows, inside a sentence: most often a product
        if not inside and _unsure(f.words[start], f.prev(start)):
            entity_type = noun_types.copula_type(f.lows, end) or entity_type  # "Kestrix is our main service"
        if entity_type == "person" and noun_types.attributive(f.words, f.lows, start, end):
            continue  # "a Tado thermostat": a name that modifies a noun names a thing
        if entity_type == "person" and f.next(end) == "," and f.next(end, 1) == "which":
            entity_type = "tool"  # "Loomis, which depends on X": "which" stands for a thing, "who" for a person
        if entity_type is not None:
            f.add(Mention(span_text(f.words[start:end]), entity_type, name_guess.GUESS_CONFIDENCE, start, end))


def _unsure(word: str, before: str) -> bool:
    """A word no list knows, whose spelling the guess could not type."""
    low = word.lower()
    if before == "the" and low.endswith("s"):
        return False  # "through the Vaskels": a region or a group, as "the Alps", "the Harriers"
    return not name_guess.ordinary(word, before) and not name_guess.is_world_name(low) and not name_guess.english(low)


def _named_before(f: NameFinder, start: int, places: Mapping[int, int]) -> bool:
    """Whether the word before the name at ``start``, past a comma, is part of another name
    than the place a role is held at ("my manager at Oxlade, Zuzana": ``places``)."""
    j = start - 1
    while j >= 0 and f.lows[j] in (",", "."):
        j -= 1
    return j >= 0 and f.taken[j] and j + 1 not in places


def _owned_roles(f: NameFinder) -> None:
    """A person's role the lists do not know, said the speaker's ("our landlord Cengiz",
    "Ebru is my financial planner"): the possessive makes it a role."""
    places = {m.end: m.start for m in f.found if m.entity_type == "organization"}
    for mention in f.found:
        if mention.entity_type != "person" or mention.role is not None:
            continue
        role = any_role_before(f.lows, mention.start, places)
        if role in noun_types.GROUP_NOUNS and f.prev(mention.start) == role and mention.confidence < KNOWN_CONFIDENCE:
            mention.entity_type = "organization"  # "our band Velvet Quarry": the group, guessed a person
            continue
        if role is not None and _named_before(f, mention.start, places):
            role = None  # "my colleagues Corvin, Wren Talbot": a list of names, no role "corvin"
        if role is None and not opens_next_clause(f.lows, mention.start, mention.end):
            role = any_role_after(f.words, f.lows, mention.end)
        if role is not None:
            mention.role, mention.mine = role, True


def _apposed(f: NameFinder, end: int) -> bool:
    """Whether a name closed by a comma goes on with the sentence's own words (", Wiremu
    Tane, left ..."): an apposition, not an item of a list ("A, B, and C", "A, B, C")."""
    after = f.next(end, 1)
    return (
        f.next(end) == ","
        and after.isalpha()
        and after not in LIST_JOINERS
        and not f.taken[end + 1]
        and (f.words[end + 1].islower())
    )


def _propagate_lists(f: NameFinder, unknown: list[tuple[int, int]], joiners: frozenset[str] = LIST_JOINERS) -> None:
    """An unexplained name listed beside a typed one ("Wei and Fatima") takes its type;
    one typed this way types the next ("runs Zephyr, Quoll and Brindle")."""
    by_end = {m.end: m for m in f.found}
    by_start = {m.start: m for m in f.found}
    for start, end in unknown:
        if any(f.taken[start:end]):
            continue
        left = by_end.get(start - 1) if f.prev(start) in joiners else None
        right = by_start.get(end + 1) if f.next(end) in joiners else None
        neighbour = left or right
        if start in f.initial and not (right is not None and right.entity_type == "person" and f.next(end) == "and"):
            continue  # an opening word is listed only as "Wulan and Budi ..."
        if neighbour is left and f.prev(start) == "," and _apposed(f, end):
            continue  # "Oakbeam Builders, Wiremu Tane, left ...": a name set beside the firm, not a list
        if neighbour is not None and neighbour.entity_type != "concept":
            name = span_text(f.words[start:end])
            mention = Mention(name, neighbour.entity_type, min(0.7, neighbour.confidence), start, end)
            f.add(mention)
            by_end[end] = by_start[start] = mention
