"""Facts for the heuristic extractor: a category, a scope and a key per statement. Pure.

The key names the *subject* of a fact so that a later fact on the same subject
conflicts with or supersedes it:

- tools: the tool's kind from the gazetteer ("I use Vim", later "I switched to
  Emacs" both key "editor"); a named project prefixes it ("apollo: database");
  a tool the gazetteer does not know keys on its own name;
- preferences: "preferred <kind>" for tools, else a dimension ("ui theme" for dark
  or light mode, "indentation" for tabs or spaces), else "preference: <object>";
  the speaker's own are prefixed with the speaker ("ada: preferred editor") when the
  turn names its user: a shared project holds every member's words, and Grace's
  "I prefer Vim" must not supersede Ada's "I prefer Emacs", only Grace's older one;
- personal facts ("I'm allergic to ...", "my name is ...", "I work at ..."): their
  kind, prefixed with the speaker as preferences are ("ada: allergies");
- decisions, constraints, goals, procedures, terms and task updates: their kind
  and topic ("decision: database", "constraint: deploy", "task: onboarding docs").

Scopes: preferences and personal facts "user"; decisions, constraints and facts
about a named project "project"; task updates "session".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Final

import msgspec

from memledger.events.catalogue import FactCategory, ScopeKind
from memledger.extraction import gazetteer as gz
from memledger.extraction.patterns import Sentence, word_set
from memledger.extraction.protocol import FactCandidate
from memledger.extraction.senses import defined_term, inferred, not_a_taste

if TYPE_CHECKING:
    from memledger.extraction.patterns import Edge

_STOP: Final = word_set(
    "the a an our my your their his her its to for of in on with and or at by from this "
    "that these those all some any it them is are be been"
)
_DIMENSIONS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (key, re.compile(pattern))
    for key, pattern in (
        ("ui theme", r"\b(dark|light) (?:mode|theme)\b"),
        ("indentation", r"\b(tabs|spaces|\d spaces)\b"),
        ("quote style", r"\b(single|double) quotes\b"),
        (
            "answer style",
            r"\b(concise|brief|short|detailed|verbose|thorough|bullet points|"
            r"step by step|skip the basics)\b",
        ),
        (
            "response language",
            r"\b(?:answer|respond|reply|write|speak)\w* (?:\w+ )?in "
            r"((?:british |american )?(?:english|spanish|french|german|"
            r"portuguese|italian|dutch|japanese|chinese|korean|hindi|arabic))",
        ),
        ("meeting time", r"\b(morning|afternoon|evening|early|late) meetings\b"),
        ("working hours", r"\bworking (?:in the )?(mornings|evenings|afternoons|at night|late)"),
        ("units", r"\b(metric|imperial) units\b"),
        ("time format", r"\b(24-hour|12-hour) (?:time|clock)\b"),
    )
)
_PREFERS = re.compile(
    r"\b(?:i|we)\b(?:'d| would| really| strongly| generally| usually| much| always)* "
    r"(?:prefer|like|love|want|hate|dislike|can't stand)|\bplease (?:always|never)\b|"
    r"\balways (?:answer|respond|reply|use)\b"
)
_PERSONAL: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (key, re.compile(pattern))
    for key, pattern in (
        # What no longer holds, on the same key, so it supersedes what did. First: a
        # sentence saying both ("I'm not vegetarian anymore, I'm vegan now") keeps the later.
        (
            "diet",
            r"\bi(?:'m| am) ((?:no longer|not) (?:a |an )?(?:vegetarian|vegan|pescatarian|gluten-free|"
            r"lactose intolerant|halal|kosher))",
        ),
        ("avoids", r"\bi (?:(?:don't|do not|never|can't|cannot|can not) eat|avoid eating) ([^,.;!]+)"),
        ("allergy", r"\bi(?:'m| am) ((?:no longer|not) allergic to [^,.;!]+)"),
        ("home location", r"\bi ((?:no longer|don't|do not) live in [^,.;!]+)"),
        ("allergy", r"\bi(?:'m| am) allergic to ([^,.;!]+)"),
        (
            "diet",
            r"\bi(?:'m| am) (?:a |an )?(vegetarian|vegan|pescatarian|gluten-free|"
            r"lactose intolerant|halal|kosher)",
        ),
        ("home location", r"\bi (?:live|am based|'m based|moved) (?:from [^,.;!]{1,80}? )?(?:in|to) ([^,.;!]+)"),
        ("hometown", r"\bi(?:'m| am) (?:originally )?from ([^,.;!]+)"),
        ("name", r"\b(?:my name is|call me) ([^,.;!]+)"),
        (
            "occupation",
            r"\bi(?:'m| am) an? ((?:[\w-]+ ){0,3}(?:engineer|developer|dev|designer|"
            r"manager|scientist|researcher|analyst|consultant|nurse|doctor|teacher|"
            r"student|founder|pm|lead|writer|architect|sre|accountant|lawyer))\b",
        ),
        ("birthday", r"\bmy birthday is ([^,.;!]+)"),
        (
            "family",
            r"\bi have (?:a |an |one |two |three |four |\d+ )?((?:kids?|children|sons?|"
            r"daughters?|twins))\b",
        ),
        ("pets", r"\bi have (?:a |an |one |two |three |\d+ )?((?:dogs?|cats?|pets?))\b"),
    )
)
# The people (and pets) of the speaker's life, by the word the speaker uses: "My manager
# is Tom.", "Tom Baker is my manager.", "My daughter's name is Mia.", "I report to Tom."
_PEOPLE: Final = (
    r"manager|boss|team lead|tech lead|mentor|partner|wife|husband|spouse|girlfriend|boyfriend|"
    r"fianc[eé]e?|daughter|son|mother|mom|mum|father|dad|sister|brother|doctor|dentist|"
    r"therapist|landlord|assistant|co-?founder|dog|cat"
)
_SAME_PERSON: Final = {"boss": "manager", "mom": "mother", "mum": "mother", "dad": "father", "cofounder": "co-founder"}
_NAME: Final = r"([a-z][\w.'-]*(?: (?!and\b|but\b|who\b|since\b|because\b)[a-z][\w.'-]*){0,2})"
_NAME_ENDS: Final = r"\s*(?:$|[,.;!)]| (?:and|but|who|since|because|as|in|on|at|for|from) )"
_MY_PERSON = re.compile(
    rf"\bmy (?:new |current )?({_PEOPLE})(?:'s name)? is (?:now )?(?P<named>called |named )?{_NAME}{_NAME_ENDS}"
)
# Where the speaker works, when no relationship says it ("I changed jobs: I now work at
# Globex"), and that they left ("I left Acme.", superseding it on the same key).
_WORK_AT = re.compile(
    rf"\bi (?:now |currently |still )?work (?:at|for) {_NAME}{_NAME_ENDS}"
    rf"|\bi (?:just )?(?:left|quit) {_NAME}{_NAME_ENDS}"
)
_PERSON_IS_MY = re.compile(rf"(?:^|[,;:] )(?:and )?{_NAME} is my ({_PEOPLE})\b")
# "I'm Sam.", "Hi, I am Sam Lee!": the whole sentence introduces the speaker.
_I_AM = re.compile(r"^(?:(?:hi|hello|hey),? )?i(?:'m| am) ([a-z][\w'-]*(?: [a-z][\w'-]*)?)[.!]?$")
_REPORT_TO = re.compile(rf"\bi (?:report|reported) (?:directly )?to {_NAME}{_NAME_ENDS}")
# Keyed by what, so each adds to the others: an allergy to peanuts and one to shellfish
# are two facts, and "I'm no longer allergic to peanuts" supersedes the first alone.
_ITEMISED: Final = frozenset({"allergy", "avoids"})
_NEGATED: Final = re.compile(r"^(?:not |no longer )?(?:allergic to )?", re.IGNORECASE)
_CONSTRAINT = re.compile(
    r"\b(?:we|it|all|everything|data|[a-z]+ data|the [a-z]+|this|that)\s+(?:must not|must|cannot|"
    r"can't|can not|have to|has to|needs? to|should never|is not allowed to|are not allowed to|"
    r"may not)\s+(\w+(?: \w+){0,3})|^(?:never|always|don't ever|do not ever)\s+(\w+(?: \w+){0,2})|"
    r"\bhard constraint:?\s*(.+)"
)
# "Phoenix must not store personal data in logs.": a rule whose subject is the project the
# sentence opens with (tried only then; "Sarah must ..." is no rule of the project's).
_PROJECT_RULE = re.compile(
    r"^(?:project\s+)?[\w-]+\s+(?:must not|must|cannot|can't|can not|has to|needs to|should never|"
    r"is not allowed to|may not)\s+(\w+(?: \w+){0,3})"
)
# Runs of words before a cue word are bounded ({1,40}, {1,80}): unbounded, a long run
# without the cue is scanned again from each word boundary in it (quadratic, for a
# hostile turn). Keys use three words of a topic anyway.
_BUDGET = re.compile(
    r"\bbudget(?: for (?:the )?([\w -]{1,80}?))? (?:is|of|capped at|:)\s*"
    r"(?:capped at\s*)?([$€£]?\s?[\d.,]+\s?[kKmM]?)"
)
# "The deadline for Phoenix is December 15.", "The Phoenix deadline is now January 20.",
# "The deadline for Phoenix moved to January 20.": one key, "deadline: phoenix".
_DEADLINE = re.compile(
    r"\b(?:(?:the|our|my|a) )?(?:(?P<before>[\w-]{1,40}) )?deadline(?: for (?:the )?(?P<after>[\w -]{1,80}?))?"
    r" (?:is(?: now)?|(?:has been |was |got |is being )?(?:moved|pushed|changed|extended|set|shifted)"
    r"(?: back| out)? to)\s+(?:now )?(?P<value>[^,.;!]+)"
)
_NOT_A_TOPIC: Final = word_set("new final hard soft next current same project release real actual")
_GOAL = re.compile(
    r"\b(?:my|our) goal(?: for [\w ]{1,80}?)? is to ([^,.;!]+)|\b(?:i|we)(?:'m| am|'re| are)? "
    r"(?:want|trying|hoping|planning|plan|aim|aiming) to ((?:learn|get better at|become|build|"
    r"finish|read|run|improve|master|start|launch|ship|reach|save|lose)[^,.;!]*)"
)
_PROCEDURE = re.compile(
    r"\b([\w-]{1,40}) (?:process|procedure|checklist|steps)(?: is)?:\s*(.+)|"
    r"\bto ([\w-]{1,40})(?: [\w-]{1,40})?, (?:first |you )?(?:run|use|call|do|open)\b"
)
# Only a cue for ``senses.defined_term``, which reads the definition and its term.
_TERM = re.compile(r"\b(?:means|stands for|is short for|refers to|we mean|we call)\b")
_TASK = re.compile(
    r"\b(?:i|we)(?:'ve| have)? (?:just |finally )?(finished|completed|fixed|shipped|merged|"
    r"deployed|released|closed|wrapped up|started on|started working on)\s+([^,.;!]+)|"
    r"\b(?:i'm|i am|we're|we are) (?:still )?(blocked on|blocked by|stuck on)\s+([^,.;!]+)|"
    r"^(?:just )?(finished|done with|fixed|shipped|merged)\s+([^,.;!]+)"
)
_DECISION = re.compile(
    r"\b(?:we|i)(?:'ve| have)? (?:decided|agreed) (?:to |on |against )?"
    r"([^,.;!]+)|\bdecision:\s*([^.;!]+)"
)


# Words one of which every match of a pattern contains, read off the pattern: a sentence
# holding none of them is not searched. Most sentences state no rule, plan, preference
# or personal fact, and a substring test costs a fraction of a search (the searches
# are a large share of the extractor's time).
_NEEDS: Final[dict[re.Pattern[str], tuple[str, ...]]] = {
    _PREFERS: ("prefer", "like", "love", "want", "hate", "can't", "please", "always"),
    _PROJECT_RULE: (
        "must",
        "cannot",
        "can't",
        "can not",
        "has to",
        "needs to",
        "should never",
        "not allowed",
        "may not",
    ),
    _CONSTRAINT: (
        "must",
        "cannot",
        "can't",
        "can not",
        "have to",
        "has to",
        "need",
        "never",
        "not allowed",
        "may not",
        "always",
        "don't ever",
        "do not ever",
        "hard constraint",
    ),
    _BUDGET: ("budget",),
    _DEADLINE: ("deadline",),
    _GOAL: ("goal", "want", "trying", "hoping", "plan", "aim"),
    _PROCEDURE: (":", ", "),
    _TERM: ("means", "stands for", "short for", "refers to", "we mean", "we call"),
    _TASK: (
        "finished",
        "completed",
        "fixed",
        "shipped",
        "merged",
        "deployed",
        "released",
        "closed",
        "wrapped up",
        "started",
        "blocked",
        "stuck on",
        "done with",
    ),
    _DECISION: ("decided", "agreed", "decision:"),
    **{
        pattern: needs
        for (key, pattern), needs in zip(
            _PERSONAL,
            (
                ("no longer", "not"),
                ("eat",),
                ("allergic",),
                ("live in",),
                ("allergic",),
                ("vegetarian", "vegan", "pescatarian", "gluten-free", "lactose intolerant", "halal", "kosher"),
                ("live", "based", "moved"),
                ("from",),
                ("my name is", "call me"),
                ("i'm a", "i am a"),
                ("my birthday is",),
                ("i have",),
                ("i have",),
            ),
            strict=True,
        )
    },
}


def _search(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern.search(text)``, skipped when ``text`` lacks every word the pattern needs."""
    for need in _NEEDS.get(pattern, ("",)):  # a loop: cheaper than any() over a generator
        if need in text:
            return pattern.search(text)
    return None


def facts_for_sentence(sentence: Sentence, edges: Sequence[Edge], speaker: str = "") -> list[FactCandidate]:
    """The facts one (non-question) sentence states, given the edges read from it.
    ``speaker`` prefixes the keys of the speaker's own preferences and personal facts
    ("ada: "; "" when the turn names no user)."""
    confidence = 0.6 if sentence.hedged else 0.85
    statement = sentence.text[:1000]  # the patterns read what is stored, no more
    facts = list(_edge_facts(statement, edges, speaker))
    categories, keys = {fact.category for fact in facts}, {fact.key for fact in facts}
    # A pattern's fact gives way to an edge's of its category, unless it is a personal
    # fact on another key: "I live in Berlin and I work at Acme" is a home and an employer.
    facts.extend(
        fact
        for fact in _pattern_facts(statement, confidence, speaker, project_first=_opens_with_project(sentence))
        if fact.category not in categories or (fact.category == "personal_fact" and fact.key not in keys)
    )
    return _each_in_its_clause(statement, facts)


# Where a sentence's next clause starts with a subject of its own: "I'm vegetarian, and I'm
# allergic to peanuts" is two clauses; "I use Vim and Emacs" one.
_SUBJECT_CLAUSE: Final = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|while|though|plus|also)\s+(?=(?:i|i'm|i've|my|we|we're|we've|our)\b)|"
    r",\s+(?=(?:i|i'm|i've|my|we|we're|we've|our)\b)",
    re.IGNORECASE,
)
_LISTED: Final = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)


def _each_in_its_clause(statement: str, facts: list[FactCandidate]) -> list[FactCandidate]:
    """Facts on two or more keys quote each its own clause, where one holds its value alone.

    A sentence's facts are replaced one at a time: after "I'm vegetarian, and I'm allergic
    to peanuts." and later "I'm pescatarian now.", the allergy still holds and must not
    bring back the old diet with it. "I prefer dark mode and tabs over spaces." shares its
    verb: each preference quotes it with its own object ("I prefer tabs over spaces.").
    A fact whose value no single clause holds keeps the whole sentence."""
    if len({fact.key for fact in facts}) < 2 or _QUALIFIED.search(statement):
        return facts
    clauses = _clauses(statement)
    needles = [_needle(fact) for fact in facts]
    # A clause that states none of the facts qualifies them ("..., especially at night"):
    # quoted apart, the facts would lose it, so the sentence stays whole.
    if len(clauses) < 2 or not all(any(n and n in c.lower() for n in needles) for c in clauses):
        return facts
    return [_in_clause(fact, clauses, statement) for fact in facts]


# "If I'm vegetarian, I'm allergic to peanuts.", "... except on Fridays": a condition or an
# exception holds for the whole sentence, so its facts quote it whole.
_QUALIFIED: Final = re.compile(
    r"\b(?:if|unless|except|excepting|when|whenever|only|until|provided|as long as|otherwise)\b", re.IGNORECASE
)


def _needle(fact: FactCandidate) -> str:
    """What a clause must hold to state ``fact``: its value, else its key's topic."""
    return (fact.value or fact.key.rpartition(": ")[2]).lower()


def _clauses(statement: str) -> list[str]:
    """The statement's clauses: split where a new subject starts, else, after a verb of
    preference, its listed objects, each with the verb ("I prefer" + "dark mode")."""
    body = statement.rstrip(" .!")
    clauses = [part for part in _SUBJECT_CLAUSE.split(body) if part.strip()]
    if len(clauses) > 1:
        return clauses
    verb = _PREFERS.search(body.lower())
    if verb is None:
        return clauses
    head = body[: verb.end()]
    return [f"{head} {item}" for item in _LISTED.split(body[verb.end() :].strip()) if item.strip()]


def _in_clause(fact: FactCandidate, clauses: list[str], statement: str) -> FactCandidate:
    value = _needle(fact)  # "preference: dark themes" has no value: "dark themes"
    holding = [clause for clause in clauses if value and value in clause.lower()]
    if len(holding) != 1:
        return fact
    clause = holding[0].strip()
    end = statement.rstrip()[-1:] if statement.rstrip()[-1:] in ("!", ".") else "."
    return msgspec.structs.replace(fact, statement=clause[:1].upper() + clause[1:] + end)


def _edge_facts(statement: str, edges: Sequence[Edge], speaker: str) -> Iterator[FactCandidate]:
    grouped: dict[tuple[str, FactCategory, ScopeKind], list[Edge]] = {}
    singular = _SINGULAR.search(statement) is not None and _PLURAL.search(statement) is None
    for edge in edges:
        slot = _slot(edge, speaker, singular=singular)
        if slot is not None:
            grouped.setdefault(slot, []).append(edge)
    for (key, category, scope), group in grouped.items():
        kept = [edge for edge in group if not edge.retracted]
        value = ", ".join(dict.fromkeys(edge.target.name for edge in kept)) or None
        confidence = min(0.85, max(edge.confidence for edge in group))
        yield FactCandidate(
            key=key,
            statement=statement,
            category=category,
            confidence=confidence,
            scope=scope,
            value=value,
            about_speaker=_own(key, category, speaker),
        )


# "I use Neovim" is the speaker's; "we use Postgres" the team's (keyed by its subject alone).
_SINGULAR: Final = re.compile(r"\b(?:i|i'm|i've|i'd|my|me)\b", re.IGNORECASE)
_PLURAL: Final = re.compile(r"\b(?:we|we're|we've|we'd|our|us)\b", re.IGNORECASE)


def _own(key: str, category: FactCategory, speaker: str) -> bool:
    """Whether a fact is the speaker's own personal fact or preference, said by them."""
    return bool(speaker) and key.startswith(speaker) and category in ("personal_fact", "preference")


def _slot(edge: Edge, speaker: str, *, singular: bool = False) -> tuple[str, FactCategory, ScopeKind] | None:
    target = edge.target
    subject = _subject(edge)
    kind = gz.tool_kind(target.name) if target.kind == "tool" else None
    topic = kind or target.name.lower()
    scope: ScopeKind = "project" if edge.source.kind == "project" else "user"
    if edge.relation == "USES":
        owner = subject or (speaker if singular else "")  # Grace's "I use Vim" is not Ada's editor
        return f"{owner}{topic}", "technical_fact", scope
    if edge.relation == "PREFERS" and not edge.retracted:
        owner = subject or speaker
        return (f"{owner}preferred {kind}" if kind else f"{owner}preference: {topic}", "preference", "user")
    if edge.relation == "DECIDED" and not edge.retracted:
        return f"{subject}{topic}" if kind else f"{subject}decision: {topic}", "decision", "project"
    if edge.relation == "PART_OF" and edge.source.kind == "user" and target.kind == "organization":
        return f"{speaker}employer", "personal_fact", "user"
    if edge.relation == "DEPENDS_ON" and not edge.retracted:
        return f"{subject}depends on {target.name.lower()}", "technical_fact", scope
    return None


def _subject(edge: Edge) -> str:
    return "" if edge.source.kind == "user" else f"{edge.source.name.lower()}: "


def _opens_with_project(sentence: Sentence) -> bool:
    """Whether the sentence's subject is a project it names first ("Phoenix must ...",
    "Project Phoenix must ...")."""
    first = sentence.mentions[0] if sentence.mentions else None
    if first is None or first.entity_type != "project":
        return False
    return first.start == 0 or (first.start == 1 and sentence.lows[0] == "project")


def _pattern_facts(
    statement: str, confidence: float, speaker: str, *, project_first: bool = False
) -> Iterator[FactCandidate]:
    lowered = statement.lower()
    preference = _preference(lowered, statement, confidence, speaker)
    yield from preference
    for key, pattern in _PERSONAL:
        match = _search(pattern, lowered)
        if match:
            # As typed, unless lower-casing changed the length ("İ" is two characters lower-cased).
            aligned = len(lowered) == len(statement)
            value = _clause(statement[match.start(1) : match.end(1)] if aligned else match.group(1))
            on = f"{key}: {_topic(_NEGATED.sub('', value))}" if key in _ITEMISED else key
            yield _fact(f"{speaker}{on}", statement, "personal_fact", confidence, "user", value, speaker=speaker)
    yield from _people(lowered, statement, confidence, speaker)
    yield from _rules(lowered, statement, confidence, project_first=project_first)
    if not preference:
        yield from _plans(lowered, statement, confidence)


def _preference(lowered: str, statement: str, confidence: float, speaker: str) -> list[FactCandidate]:
    """The speaker's preferences ("I prefer ...", "please always ..."): a dimension's,
    else one keyed by the object; keys start with ``speaker``."""
    if not _search(_PREFERS, lowered):
        return []
    found = [
        _fact(f"{speaker}{key}", statement, "preference", confidence, "user", match.group(1), speaker=speaker)
        for key, pattern in _DIMENSIONS
        if (match := pattern.search(lowered))
    ]
    if found:
        return found
    match = _search(_PREFERS, lowered)
    rest = _SUBJECT_CLAUSE.split(lowered[match.end() :], maxsplit=1)[0] if match else ""
    topic = _topic(rest)
    if not topic or (match and not_a_taste(match.group(0), rest)):
        return []
    return [_fact(f"{speaker}preference: {topic}", statement, "preference", confidence, "user", speaker=speaker)]


_NEXT_CLAUSE: Final = re.compile(
    r"\s+(?:(?:and|but|because|since|so|while|though)\s+(?=(?:i|i'm|we|my|he|she|they|it)\b)|where\s|who\s)",
    re.IGNORECASE,
)


def _clause(value: str) -> str:
    """A value up to the next clause: "Berlin and I work at Acme" gives "Berlin"."""
    return _NEXT_CLAUSE.split(value, maxsplit=1)[0].strip()


def _people(lowered: str, statement: str, confidence: float, speaker: str) -> Iterator[FactCandidate]:
    """Who the speaker's manager, partner, daughter ... is, and where they work: one fact
    per role, keyed "ada: manager", its value the name as typed."""
    if "my " not in lowered and not _ABOUT_SELF.search(lowered):
        return
    aligned = len(lowered) == len(statement)  # as typed, unless lower-casing changed the length
    if not aligned:
        return  # a name is told by its capitals, which a changed length no longer lines up
    found: dict[str, str] = {}
    for match in _MY_PERSON.finditer(lowered):
        _add(found, match.group(1), _person(statement, match.span(3), named=bool(match.group("named"))))
    for match in _PERSON_IS_MY.finditer(lowered):
        _add(found, match.group(2), _person(statement, match.span(1)))
    if (reports := _REPORT_TO.search(lowered)) is not None:
        _add(found, "manager", _person(statement, reports.span(1)))
    if (introduced := _I_AM.match(lowered)) is not None:
        _add(found, "name", _person(statement, introduced.span(1)))
    if (works := _WORK_AT.search(lowered)) is not None:
        place = _organisation(statement, works.span(1) if works.group(1) else works.span(2))
        if place and works.group(1):
            _add(found, "employer", place)
        elif place:  # "I left Acme.": on the employer's key, saying so
            _add(found, "employer", f"left {place}")
    for role, name in found.items():
        said_as = _SAME_PERSON.get(role.replace("-", ""), role)
        yield _fact(f"{speaker}{said_as}", statement, "personal_fact", confidence, "user", name, speaker=speaker)


def _add(found: dict[str, str], role: str, name: str | None) -> None:
    if name:
        found.setdefault(role, name)


def _capitalised(statement: str, span: tuple[int, int]) -> str:
    """The words of ``span`` up to the first one not typed capitalised ("Berlin last
    year" gives "Berlin"; "out sick" gives "")."""
    words = statement[span[0] : span[1]].rstrip(".'").split()
    return " ".join(itertools.takewhile(lambda w: w[:1].isupper(), words))


def _person(statement: str, span: tuple[int, int], *, named: bool = False) -> str | None:
    """A person's (or pet's) name: a known given name first ("Tom", "Laura Chen"), or two
    capitalised words ("Dana O'Neil"), or anything capitalised after "called"/"named";
    "My wife is Japanese." and "I'm French." name nobody."""
    name = _capitalised(statement, span)
    first = name.split()[0].lower() if name else ""
    if not first or first in _NOT_A_NAME or first in gz.PLACES:
        return None
    return name if named or gz.is_given_name(first) or len(name.split()) >= 2 else None


def _organisation(statement: str, span: tuple[int, int]) -> str | None:
    """Where the speaker works: capitalised, not a place ("I left Berlin last year") nor
    a tool ("I quit Slack")."""
    name = _capitalised(statement, span)
    low = name.lower()
    if not name or low in _NOT_A_NAME or low in gz.PLACES or gz.tool_kind(low):
        return None
    return name


_ABOUT_SELF: Final = re.compile(r"\b(?:report|work|left|quit)\b|^(?:hi|hello|hey|i)\b")
_NOT_A_NAME: Final = word_set("it this that he she they who what i a an the not also here there")


def _rules(lowered: str, statement: str, confidence: float, *, project_first: bool = False) -> Iterator[FactCandidate]:
    budget = _search(_BUDGET, lowered)
    if budget:
        key = f"budget: {_topic(budget.group(1))}" if budget.group(1) else "budget"
        yield _fact(key, statement, "constraint", confidence, "project", budget.group(2))
    deadline = _search(_DEADLINE, lowered)
    if deadline:
        before = deadline.group("before")
        topic = _topic(deadline.group("after") or (before if before not in _NOT_A_TOPIC else None))
        key = f"deadline: {topic}" if topic else "deadline"
        yield _fact(key, statement, "constraint", confidence, "project", deadline.group("value"))
    constraint = _search(_CONSTRAINT, lowered) or (_search(_PROJECT_RULE, lowered) if project_first else None)
    if constraint and inferred(constraint):
        constraint = None
    if constraint and not budget and not deadline:
        topic = _topic(next(group for group in constraint.groups() if group))
        if topic:
            yield _fact(f"constraint: {topic}", statement, "constraint", confidence, "project")
    term = defined_term(statement) if _search(_TERM, lowered) else None
    if term:
        yield _fact(f"term: {term.lower()}", statement, "terminology", confidence, "project")
    procedure = _search(_PROCEDURE, lowered)
    if procedure:
        topic = procedure.group(1) or procedure.group(3)
        yield _fact(f"procedure: {topic}", statement, "procedure", confidence, "project")


def _plans(lowered: str, statement: str, confidence: float) -> Iterator[FactCandidate]:
    plans: tuple[tuple[re.Pattern[str], FactCategory, ScopeKind, str], ...] = (
        (_GOAL, "goal", "user", "goal"),
        (_TASK, "task_update", "session", "task"),
        (_DECISION, "decision", "project", "decision"),
    )
    for pattern, category, scope, prefix in plans:
        match = _search(pattern, lowered)
        if match is None:
            continue
        groups = [group for group in match.groups() if group]
        topic = _topic(groups[-1])
        if topic:
            value = groups[0] if category == "task_update" else None
            yield _fact(f"{prefix}: {topic}", statement, category, confidence, scope, value)


def _topic(text: str | None, words: int = 3) -> str:
    """The first few content words of ``text``: the subject a key names."""
    if not text:
        return ""
    content = [w for w in re.findall(r"[\w#+.-]+", text.lower()) if w not in _STOP]
    return " ".join(content[:words]).strip(".")


def _fact(
    key: str,
    statement: str,
    category: FactCategory,
    confidence: float,
    scope: ScopeKind,
    value: str | None = None,
    *,
    speaker: str = "",
) -> FactCandidate:
    """A candidate; ``speaker`` when ``key`` may start with the speaker's name (see ``_own``)."""
    return FactCandidate(
        key=key[:200],
        statement=statement,
        category=category,
        confidence=confidence,
        scope=scope,
        value=value.strip() if value else None,
        about_speaker=_own(key, category, speaker),
    )
