"""Choices, preferences and uses said with the thing first: "Monzo Business is what we
chose", "Hostelworld is what my partner Akosua prefers", "Ardour is my favourite",
"Pulumi over OpenTofu for me", "podman works fine for me", "Hubitat it is", "Ravelry is
where all my patterns live", "now everything is in YouTrack". The name before "is what"
is the object of the verb after it, said of that clause's subject. Pure."""

from __future__ import annotations

from itertools import pairwise
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon
from memledger.extraction.noun_types import speakers_clause
from memledger.extraction.owned_subjects import someone
from memledger.extraction.patterns import CLIENT_NOUNS, PRODUCT_NOUNS, Edge, Mention, Party, Sentence, word_set
from memledger.extraction.triggers import PAST_FORMS, RELATIONS, find_triggers

_BE: Final = word_set("is was 's")
_FAVOURITES: Final = word_set("favourite favorite fave go-to preferred")
_FRONTED: Final = frozenset(("PREFER", "LIKE", "DECIDE", "USE", "KEEP"))
_THINGS: Final = frozenset(("tool", "concept", "organization"))
_CONFIDENCE: Final = 0.75
_CLAUSE_ENDS: Final = word_set("; . ! ? \u2014 \u2013 but and")


def cleft_edges(speaker: Party, sentence: Sentence) -> list[Edge]:
    """The edges of "X is what <subject> <verb>", "X is my favourite", "X was our pick",
    "X over Y for me" and their kin."""
    if sentence.question or not _HEDGES.isdisjoint(sentence.lows):
        return []  # "Maybe it's X for me", "Figma is what we almost chose"
    lows = sentence.lows
    edges: list[Edge] = []
    for thing in sentence.mentions:
        k = thing.end
        said = _said_first(lows, thing, sentence.mentions)
        if said is not None:
            edges.append(Edge(speaker, said, Party.of(thing), _CONFIDENCE))
            continue
        if thing.entity_type not in _THINGS or lows[k : k + 1] == [] or lows[k] not in _BE:
            continue
        if lows[k + 1 : k + 2] == ["what"]:
            edges.extend(_fronted(speaker, sentence, thing, k + 2))
        elif thing.entity_type == "tool" and lows[k] != "was" and _where_ours(lows, k + 1):
            edges.append(Edge(speaker, "USES", Party.of(thing), _CONFIDENCE))  # "Ravelry is where my patterns live"
        elif (clause := described_clause(lows, k)) is not None:
            edges.extend(_fronted(speaker, sentence, thing, clause))  # "Vega is the charting library we use"
        elif thing.entity_type == "tool" and favourite_said(lows, k):
            edges.append(Edge(speaker, "PREFERS", Party.of(thing), _CONFIDENCE))  # "Ardour is my favourite"
    return edges


def _said_first(lows: list[str], thing: Mention, mentions: list[Mention]) -> str | None:
    """The relation a phrase around the thing gives the speaker, the thing first: "X over
    Y for me", "Hubitat it is", "our choice was X", "X is way nicer than Y", "now
    everything is in X", "podman works fine for me"; None for any other."""
    if thing.entity_type in _THINGS:
        if _for_me(lows, thing, mentions) or _judged_better(lows, thing):
            return "PREFERS"
        if _it_is(lows, thing) or _our_choice(lows, thing):
            return "DECIDED"
    everything = _everything_in(lows, thing.start) and not _set_at_an_organization(lows, mentions)
    if thing.entity_type == "tool" and (everything or _works_for_us(lows, thing.end)):
        return "USES"
    return None


def described_clause(lows: list[str], k: int) -> int | None:
    """Where "I"/"we" opens the relative clause of "X is the <noun> I/we <verb>" after the
    name ending at ``k`` ("Vega is the charting library we use"), when its verb is one of
    use or choice; else None."""
    if lows[k : k + 1] not in (["is"], ["was"]) or lows[k + 1 : k + 2] not in (["the"], ["my"], ["our"]):
        return None
    j = speakers_clause(lows, k + 2, k + 6)
    if j is None:
        return None
    verbs = find_triggers(lows[j + 1 : j + 4])
    return j if verbs and verbs[0].start <= 1 and verbs[0].kind in _FRONTED else None


def favourite_said(lows: list[str], k: int) -> bool:
    """Whether "is my favourite" at ``k`` calls the name before it the speaker's favourite
    now, as such ("Ardour is my favourite by a mile", "X is still my favourite"); not "was",
    nor a favourite of a kind named after it ("Lisbon is my favourite city", "Taylor Swift
    is my favourite singer"), unless the kind is an app's or a tool's ("my preferred
    tracker", "my favourite editor", "my preferred battery platform")."""
    j = k + 1
    while j < len(lows) and lows[j] in _STILL:
        j += 1  # "X is still my favourite"
    said = (*lows[k : k + 1], *lows[j : j + 2]) in _CALLED_FAVOURITE
    kind = lows[j + 2] if j + 2 < len(lows) else ""
    tool_kind = not gz.TOOL_KIND_NOUNS.isdisjoint(lows[j + 2 : j + 4])
    return said and (tool_kind or not kind.isalpha() or kind in _NOT_A_KIND or kind in PRODUCT_NOUNS)


_STILL: Final = word_set("still definitely really honestly always")


_CALLED_FAVOURITE: Final = frozenset(
    (be, owner, word) for be in ("is", "'s") for owner in ("my", "our") for word in _FAVOURITES
)
_NOT_A_KIND: Final = word_set("by for of so and but now though too way over")  # "my favourite way to budget"
_HEDGES: Final = word_set("maybe perhaps hopefully almost nearly probably")
_WOULD_RATHER: Final = word_set("rather sooner prefer")  # "what I'd rather/prefer ...": a preference now


def _for_me(lows: list[str], thing: Mention, mentions: list[Mention]) -> bool:
    """ "Pulumi over OpenTofu for me", "X over Y for the kitchen, any day", "it's Headspace
    for me", "X suits me better", "X wins over Y": a preference with the name first."""
    if lows[max(0, thing.start - 2) : thing.start] == ["it", "is"] or lows[thing.start - 1 : thing.start] == ["it's"]:
        rival_after = lows[thing.end : thing.end + 1] == ["over"] and any(m.start == thing.end + 1 for m in mentions)
        others = ("for", "my") in pairwise(lows[: thing.start]) or not HEARSAY.isdisjoint(lows)  # "For my daughter"
        rival_after = rival_after and not others
        return lows[thing.end : thing.end + 2] == ["for", "me"] or (rival_after and _emphatic(lows[thing.end :]))
    after = lows[thing.end : thing.end + 3]
    first = thing.start == 0 or lows[thing.start - 1] in (",", ":", "-", "\u2014")  # not "my wife picked X over Y"
    first = first or lows[max(0, thing.start - 2) : thing.start] == [",", "and"]  # "Tabs over spaces, and X over Y"
    first = first or lows[max(0, thing.start - 2) : thing.start] == ["give", "me"]  # "Give me X over Y any day"
    if after[:2] in (["suits", "me"], ["suits", "us"]):
        return True
    if first and after[:1] == [","] and after[1:] in _EMPHATIC_PAIRS:  # "Wrenlang, hands down, for scripts"
        told = lows[thing.end + 3 : thing.end + 4]
        return told == [] or told[0] in (",", ".", "!", ";", "for")
    rest = lows[thing.end :]
    if after[:2] == ["wins", "over"]:  # "X wins over Y for me"; not "my sister says X wins over Y"
        return first and (not _FOR_US.isdisjoint(pairwise(rest)) or _emphatic(rest) or _in_my_book(rest))
    rival = next((m for m in mentions if m.start == thing.end + 1), None)
    if after[:1] == ["over"] and first and after[1:] in _ALL_OTHERS:  # "X over every other formatter"
        return True
    said_so = (_emphatic(rest) or _in_my_book(rest)) and HEARSAY.isdisjoint(lows)  # not "..., says my manager"
    if after[:1] == ["over"] and first and rival is None and said_so:
        return True  # "Litestream over plain nightly dumps, every time, if you ask me"
    if after[:1] != ["over"] or rival is None or not first:
        return False
    told = lows[rival.end : rival.end + 8]
    return told[:2] == ["for", "me"] or _emphatic(told) or _in_my_book(told)


def _emphatic(words: list[str]) -> bool:
    """Whether a preference is said as always so: "... every time", "... any day"."""
    return _ALWAYS.issubset(words) or _ANY_DAY.issubset(words) or _HANDS_DOWN.issubset(words)


def _it_is(lows: list[str], thing: Mention) -> bool:
    """ "Hubitat it is for the new house", "Arbor it is: ...": a choice announced, the name
    opening the sentence; not "Rust it is, says my boss"."""
    return thing.start == 0 and it_is_after(lows, thing.end) and HEARSAY.isdisjoint(lows)


def it_is_after(lows: list[str], end: int) -> bool:
    """Whether "it is" and the end of its clause (or "for", "then") follow the name ending at
    ``end``: "X it is for the rota", "X it is: ...", a choice announced; not "X it is?"."""
    said = lows[end : end + 2] in (["it", "is"], ["it", "'s"])
    after = lows[end + 2] if end + 2 < len(lows) else "."
    return said and after != "?" and (after in _CLAUSE_ENDS or after in (",", ":", "for", "then"))


def _our_choice(lows: list[str], thing: Mention) -> bool:
    """ "our choice was X", "X was our pick", "X won our vote": a choice of the speaker's
    group, named ("my pick" is a preference, which a group may overrule); not one
    overruled after "but"."""
    if "but" in lows[thing.end :]:
        return False
    before = tuple(lows[max(0, thing.start - 3) : thing.start])
    after = tuple(lows[thing.end : thing.end + 3])
    named_after = len(before) == 3 and before[2] in _BE and before[:2] in _OUR_CHOICES  # "our choice was X"
    named_after = named_after or _choice_for(lows, thing.start)  # "Our pick for the radiators was X"
    named_before = len(after) == 3 and after[0] in _CHOICE_BE and after[1:] in _OUR_CHOICES  # "X was our pick"
    won = after[:2] == ("won", "our")  # "X won our family vote", "X won our budget shoot-out"
    return named_after or named_before or won


_OUR_CHOICES: Final = frozenset((("our", "choice"), ("our", "pick")))
_CHOICE_BE: Final = _BE | {"were"}  # "X eSIMs were our pick"


def _choice_for(lows: list[str], start: int) -> bool:
    """Whether "our choice/pick for <a few words> was" stands right before the name at ``start``."""
    if start < 5 or lows[start - 1] not in _BE:
        return False
    k = next((k for k in range(start - 2, max(start - 7, 0), -1) if lows[k] == "for"), None)
    between = lows[k + 1 : start - 1] if k is not None else []
    return k is not None and tuple(lows[k - 2 : k]) in _OUR_CHOICES and all(w.isalpha() for w in between)


_FOR_US: Final = frozenset((("for", "me"), ("for", "us")))
_ALWAYS: Final = frozenset(("every", "time"))
_ANY_DAY: Final = frozenset(("any", "day"))
_HANDS_DOWN: Final = frozenset(("hands", "down"))
_ALL_OTHERS: Final = (["every", "other"], ["any", "other"], ["all", "other"])
_EMPHATIC_PAIRS: Final = (["hands", "down"], ["every", "time"], ["any", "day"])


def _judged_better(lows: list[str], thing: Mention) -> bool:
    """ "rye is so much faster than conda", "X beats Y for me", "X works better for me than
    Y": the speaker's verdict, the thing opening its clause; not one reported ("she says X
    is better"), past, or no verdict on a rival ("better than nothing", "than I expected")."""
    start = thing.start - (lows[thing.start - 1 : thing.start] == ["the"])
    before = lows[start - 1] if start else ""
    said_for_me = lows[max(0, start - 2) : start] == ["for", "me"] and start in (2, 3)  # "For me the X is ..."
    if (start and before not in _OPENINGS and not said_for_me) or not HEARSAY.isdisjoint(lows):
        return False  # not "Apparently X is faster", "X is cheaper than Y, my friend says"
    k = thing.end
    while k < len(lows) and k - thing.end < 2 and lows[k] not in _JUDGING and lows[k].isalpha():
        k += 1  # "pnpm workspaces r ...": the name's noun
    verb = lows[k] if k < len(lows) else ""
    if verb == "beats":
        rival = k + 1
        if lows[rival : rival + 1] in (["me"], ["us"], ["him"], ["her"], ["them"], ["it"]):
            return False
    else:
        if verb not in _JUDGING:
            return False
        k += 1
        while k < len(lows) and lows[k] in _DEGREE:
            k += 1
        if k >= len(lows) or lows[k] not in BETTER:
            return False
        k += 3 if lows[k + 1 : k + 3] in (["for", "me"], ["for", "us"]) else 1
        if lows[k : k + 1] != ["than"] or lows[k + 1 : k + 2] in _NO_RIVAL:
            return False
        rival = k + 1
    return not _FOR_US.isdisjoint(pairwise(lows[thing.end :])) or _in_my_book(lows) or not _qualified(lows, rival)


def _in_my_book(lows: list[str]) -> bool:
    """ "..., in my book", "..., in my opinion", "if you ask me": for me (not "my book club")."""
    if "ask" in lows and ("you", "ask", "me") in zip(lows, lows[1:], lows[2:], strict=False):
        return True
    return any(
        lows[k : k + 2] == ["in", "my"]
        and lows[k + 2 : k + 3] in (["book"], ["opinion"], ["view"])
        and (k + 3 >= len(lows) or not lows[k + 3].isalpha())
        for k in range(len(lows) - 2)
    )


def _qualified(lows: list[str], rival: int) -> bool:
    """Whether the comparison is limited to a respect or to others after the rival ("than
    C++ for beginners", "beats BMW on range", "than Bolt at night"): a fact, no verdict,
    unless said "for me"."""
    k = rival
    while k < len(lows) and lows[k] not in _QUALIFIERS and lows[k] not in _CLAUSE_ENDS and lows[k] != ",":
        k += 1
    return k < len(lows) and lows[k] in _QUALIFIERS and lows[k + 1 : k + 2] not in (["me"], ["us"])


_OPENINGS: Final = word_set(", : - ; tbh honestly imo ngl") | {"\u2014"}  # not "apparently"
_JUDGING: Final = word_set("is are r 's works work beats")
_DEGREE: Final = word_set("way much so far a lot miles just really definitely")
BETTER: Final = frozenset(lexicon.sections("frame_words.txt")["BETTER"])
"""Comparatives of praise ("faster", "easier"): what is said so is preferred."""
_NO_RIVAL: Final = (["nothing"], ["i"], ["we"], ["expected"], ["anyone"], ["before"])
_QUALIFIERS: Final = word_set("for on at in")
HEARSAY: Final = word_set("apparently says said say according reportedly read heard supposedly")
"""Words that report what someone else says: what follows is not the speaker's own."""


def _where_ours(lows: list[str], k: int) -> bool:
    """ "X is where we keep the specs", "X is where all my patterns live": the speaker's
    place for their things, said now; a tool's name before it makes it the speaker's tool."""
    if lows[k : k + 1] != ["where"]:
        return False
    rest = lows[k + 1 : k + 4]
    if rest[:1] == ["all"]:
        rest = rest[1:]
    if rest[:1] in (["i"], ["we"]):
        return True
    clause = lows[k + 1 : k + 7]
    with_me = ("and", "i") in pairwise(clause) or ("and", "we") in pairwise(clause)
    if rest[:1] not in (["my"], ["our"]) or len(rest) < 2 or not rest[1].isalpha() or not PAST_FORMS.isdisjoint(clause):
        return False  # not "where my old projects were"
    things = rest[1].endswith("s") and not rest[1].endswith("ss")  # "all my patterns live"; not "my boss posts"
    return with_me or (things and not someone(rest[1]))


def _everything_in(lows: list[str], start: int) -> bool:
    """ "now everything is in YouTrack", "everything's in Bitwarden": the speaker's things,
    all of them, kept in a tool; not someone else's ("for my sister", "my dad says")."""
    said = lows[max(0, start - 3) : start]
    if len(said) < 3 or said[0] != "everything" or said[1] not in _HELD or said[2] not in _KEPT_IN:
        return False
    for_someone = any(w == "for" and any(_someone_served(n) for n in lows[k + 1 : k + 4]) for k, w in enumerate(lows))
    told = not HEARSAY.isdisjoint(lows) or not _THEIRS.isdisjoint(lows)  # "my dad says ... at his office"
    return not for_someone and not told and lows[start] not in gz.ROLES  # not "for my sister", "goes through Mum"


def _someone_served(noun: str) -> bool:
    """Whether a noun names someone things are kept for: "for my sister", "for the client"."""
    return someone(noun) or noun in CLIENT_NOUNS


def _set_at_an_organization(lows: list[str], mentions: list[Mention]) -> bool:
    """Whether the sentence opens by setting itself at an organization ("In the hospital
    Santa Brígida everything is in X"): what is kept there is its own."""
    opening = lows[:1] in (["in"], ["at"])
    return opening and any(m.entity_type == "organization" and m.start <= 4 for m in mentions)


_HELD: Final = word_set("is 's lives goes runs")
_THEIRS: Final = word_set("his her their")
_KEPT_IN: Final = word_set("in on through into")


def _works_for_us(lows: list[str], k: int) -> bool:
    """ "X works fine for me", "X works for us": the speaker's tool, said of its use now."""
    if lows[k : k + 1] not in (["works"], ["work"]):
        return False
    rest = lows[k + 1 : k + 5]
    at = next((j for j, w in enumerate(rest) if w == "for"), None)
    return at is not None and at <= 2 and rest[at + 1 : at + 2] in (["me"], ["us"])


def _fronted(speaker: Party, sentence: Sentence, thing: Mention, start: int) -> list[Edge]:
    """The edge of the clause after "what" at ``start``, its object being ``thing``; only
    when the verb has no object of its own named after it."""
    lows = sentence.lows
    triggers = [t for t in find_triggers(lows[start : start + 6]) if t.kind in _FRONTED]
    if not triggers:
        return []
    verb = start + triggers[0].start
    ends = (k for k in range(verb, len(sentence.lows)) if sentence.lows[k] in _CLAUSE_ENDS)
    end = next(ends, len(sentence.lows))
    named_after = any(verb <= m.start < end for m in sentence.mentions)  # its own object, not the next clause's
    if sentence.lows[verb + 1 : verb + 2] == ["not"] or sentence.lows[verb + 1 : verb + 3] == ["to", "avoid"]:
        return []  # "Jira is what we'd prefer to avoid", "X is what I'd rather not touch"
    relation = RELATIONS[triggers[0].kind].get(thing.entity_type)
    subject = _subject(speaker, sentence, start, verb)
    if named_after or relation is None or subject is None:
        return []
    return [Edge(subject, relation, Party.of(thing), _CONFIDENCE)]


def _subject(speaker: Party, sentence: Sentence, start: int, verb: int) -> Party | None:
    """Who the clause between "what" and its verb names: the speaker ("we chose"), a named
    person or organization ("my partner Akosua prefers"), or no one it names ("my boss")."""
    named = [m for m in sentence.mentions if start <= m.start < verb and m.entity_type in ("person", "organization")]
    if named:
        return Party.of(named[-1])
    words = sentence.lows[start:verb]
    rather = not _WOULD_RATHER.isdisjoint(sentence.lows[start : verb + 1])  # not "what we'd choose"
    return speaker if words[:1] in (["i"], ["we"]) or (words[:1] in (["i'd"], ["we'd"]) and rather) else None
