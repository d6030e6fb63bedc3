"""The cue patterns of the heuristic extractor's facts, and the facts they state:
preferences, personal facts, rules (budgets, deadlines, constraints, terms,
procedures) and plans (goals, task updates, decisions). Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from memledger.events.catalogue import FactCategory, ScopeKind
from memledger.extraction.fact_keys import candidate, topic_of
from memledger.extraction.fact_people import people
from memledger.extraction.patterns import word_set
from memledger.extraction.protocol import FactCandidate
from memledger.extraction.senses import defined_term, inferred, not_a_taste

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


# Any word one of the personal patterns needs: a sentence with none of them skips them all.
_PERSONAL_NEEDS: Final = sorted({need for _, pattern in _PERSONAL for need in _NEEDS.get(pattern, ("",))})
_ANY_PERSONAL_NEED: Final = re.compile("|".join(re.escape(need) for need in _PERSONAL_NEEDS))


def _search(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern.search(text)``, skipped when ``text`` lacks every word the pattern needs."""
    for need in _NEEDS.get(pattern, ("",)):  # a loop: cheaper than any() over a generator
        if need in text:
            return pattern.search(text)
    return None


# Where a sentence's next clause starts with a subject of its own: "I'm vegetarian, and I'm
# allergic to peanuts" is two clauses; "I use Vim and Emacs" one.
SUBJECT_CLAUSE: Final = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|while|though|plus|also)\s+(?=(?:i|i'm|i've|my|we|we're|we've|our)\b)|"
    r",\s+(?=(?:i|i'm|i've|my|we|we're|we've|our)\b)",
    re.IGNORECASE,
)


def preference_verb(text: str) -> re.Match[str] | None:
    """Where ``text`` says "I prefer", "please always" ...: its verb of preference."""
    return _PREFERS.search(text)


def pattern_facts(
    statement: str, confidence: float, speaker: str, *, project_first: bool = False
) -> Iterator[FactCandidate]:
    """The facts the cue patterns find in ``statement``; ``project_first`` when a project
    it names first is its subject (its rules are then the project's)."""
    lowered = statement.lower()
    preference = _preference(lowered, statement, confidence, speaker)
    yield from preference
    for key, pattern in _PERSONAL if _ANY_PERSONAL_NEED.search(lowered) else ():
        match = _search(pattern, lowered)
        if match:
            # As typed, unless lower-casing changed the length ("İ" is two characters lower-cased).
            aligned = len(lowered) == len(statement)
            value = _clause(statement[match.start(1) : match.end(1)] if aligned else match.group(1))
            on = f"{key}: {topic_of(_NEGATED.sub('', value))}" if key in _ITEMISED else key
            yield candidate(f"{speaker}{on}", statement, "personal_fact", confidence, "user", value, speaker=speaker)
    yield from people(lowered, statement, confidence, speaker)
    yield from _rules(lowered, statement, confidence, project_first=project_first)
    if not preference:
        yield from _plans(lowered, statement, confidence)


def _preference(lowered: str, statement: str, confidence: float, speaker: str) -> list[FactCandidate]:
    """The speaker's preferences ("I prefer ...", "please always ..."): a dimension's,
    else one keyed by the object; keys start with ``speaker``."""
    if not _search(_PREFERS, lowered):
        return []
    found = [
        candidate(f"{speaker}{key}", statement, "preference", confidence, "user", match.group(1), speaker=speaker)
        for key, pattern in _DIMENSIONS
        if (match := pattern.search(lowered))
    ]
    if found:
        return found
    match = _search(_PREFERS, lowered)
    rest = SUBJECT_CLAUSE.split(lowered[match.end() :], maxsplit=1)[0] if match else ""
    topic = topic_of(rest)
    if not topic or (match and not_a_taste(match.group(0), rest)):
        return []
    return [candidate(f"{speaker}preference: {topic}", statement, "preference", confidence, "user", speaker=speaker)]


_NEXT_CLAUSE: Final = re.compile(
    r"\s+(?:(?:and|but|because|since|so|while|though)\s+(?=(?:i|i'm|we|my|he|she|they|it)\b)|where\s|who\s)",
    re.IGNORECASE,
)


def _clause(value: str) -> str:
    """A value up to the next clause: "Berlin and I work at Acme" gives "Berlin"."""
    return _NEXT_CLAUSE.split(value, maxsplit=1)[0].strip()


def _rules(lowered: str, statement: str, confidence: float, *, project_first: bool = False) -> Iterator[FactCandidate]:
    budget = _search(_BUDGET, lowered)
    if budget:
        key = f"budget: {topic_of(budget.group(1))}" if budget.group(1) else "budget"
        yield candidate(key, statement, "constraint", confidence, "project", budget.group(2))
    deadline = _search(_DEADLINE, lowered)
    if deadline:
        before = deadline.group("before")
        topic = topic_of(deadline.group("after") or (before if before not in _NOT_A_TOPIC else None))
        key = f"deadline: {topic}" if topic else "deadline"
        yield candidate(key, statement, "constraint", confidence, "project", deadline.group("value"))
    constraint = _search(_CONSTRAINT, lowered) or (_search(_PROJECT_RULE, lowered) if project_first else None)
    if constraint and inferred(constraint):
        constraint = None
    if constraint and not budget and not deadline:
        topic = topic_of(next(group for group in constraint.groups() if group))
        if topic:
            yield candidate(f"constraint: {topic}", statement, "constraint", confidence, "project")
    term = defined_term(statement) if _search(_TERM, lowered) else None
    if term:
        yield candidate(f"term: {term.lower()}", statement, "terminology", confidence, "project")
    procedure = _search(_PROCEDURE, lowered)
    if procedure:
        topic = procedure.group(1) or procedure.group(3)
        yield candidate(f"procedure: {topic}", statement, "procedure", confidence, "project")


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
        topic = topic_of(groups[-1])
        if topic:
            value = groups[0] if category == "task_update" else None
            yield candidate(f"{prefix}: {topic}", statement, category, confidence, scope, value)
