"""Which parts of a sentence assert something now. Pure.

A relationship holds only where the sentence asserts it: not inside a negated
clause ("we are not adopting GraphQL", "it's not true that Atlas depends on
Spark"), a rejection ("decided against Snowflake"), a hypothetical ("if we moved
to Azure, we would ..."), a plan under evaluation ("we're looking at Linear") or
a statement about the past only ("i kinda miss writing ruby", "back in college I
used Matlab") or about a time to come ("from next month we use X"). Scope is the
clause: the tokens between two boundaries (a comma, a conjunction that opens a
clause, the end of the sentence); a complement clause ("that ...") takes the scope of
the clause it completes.
"""

from __future__ import annotations

from itertools import pairwise, takewhile
from typing import Final

from memledger.extraction import lexicon
from memledger.extraction.episodes import (
    TIME_NOUNS,
    finished_at,
    narrated_past,
    past_tense,
    sets_the_past,
    still_so,
)
from memledger.extraction.patterns import word_set
from memledger.extraction.triggers import PAST_FORMS, find_triggers, finite_form, is_filler

_WORDS: Final = lexicon.sections("frame_words.txt")


def _pairs(name: str) -> frozenset[tuple[str, str]]:
    """A list of two-word phrases as (first, second) pairs."""
    return frozenset((first, second) for first, second in (entry.split() for entry in _WORDS[name]))


NEGATORS: Final = word_set(
    "not never no nobody nothing neither nor none don't dont doesn't doesnt didn't didnt "
    "won't wont isn't isnt aren't arent wasn't wasnt weren't werent can't cant cannot "
    "couldn't shouldn't wouldn't haven't hasn't hadn't ain't n't"
)
# "not only", "not just", "not sure": the clause still asserts (or only hedges) what it says.
_NOT_NEGATING: Final = word_set("only just sure certain that too")
# Words that reject what follows them in the clause.
REJECTIONS: Final = frozenset(_WORDS["REJECTIONS"])
# "against" rejects only as the complement of a choice ("decided against X"), not in
# "run the tests against a fresh database".
_CHOOSING: Final = frozenset(_WORDS["CHOOSING"])
REJECTION_PHRASES: Final = _pairs("REJECTION_PHRASES")
# Words that make the rest of the clause hypothetical or still under evaluation.
UNSETTLED: Final = frozenset(_WORDS["UNSETTLED"])
UNSETTLED_PHRASES: Final = _pairs("UNSETTLED_PHRASES")
# Words that put the clause in the past only, or in longing for it.
PAST_ONLY: Final = frozenset(_WORDS["PAST_ONLY"])
PAST_PHRASES: Final = _pairs("PAST_PHRASES")
_WISHING: Final = frozenset(_WORDS["WISHING"])  # "she want that I write it in X": a wish
_CHANGE_VERBS: Final = frozenset(_WORDS["CHANGE_VERBS"])
_HAD_CONTRACTED: Final = word_set("i'd we'd they'd he'd she'd you'd")  # "we'd been using X"
_WILL_CONTRACTED: Final = word_set("i'll we'll ill")
# After "I'd": preferences and sayings, which state something now ("I'd rather use X").
_WOULD_SAY: Final = word_set("rather prefer like love recommend say guess never always also still definitely")
CLAUSE_BREAKS: Final = word_set(", ; : . ! ? ( ) but because although though while whereas so yet since instead -") | {
    "\u2014",
    "\u2013",
}
_RELATIVES: Final = word_set("who which")
_SUBJECTS: Final = word_set("i i'm i've i'd we we're we've we'd he she they it you")
_SUPPOSED_MODALS: Final = word_set("will would must should could might can")  # after an "if" clause
_POSSESSIVE_OPENERS: Final = word_set("our my his her their")
_OBJECT_TOO: Final = word_set("it you")
_NOUN_OPENERS: Final = word_set("the this that a an")
_AUXILIARIES: Final = word_set("is are was were has have had will keeps kept")
_OPENERS: Final = word_set("and or but so then because , ;")
_DOUBLE_NEGATIVE: Final = word_set("without")
_ALMOST: Final = word_set("almost nearly")
_VERSUS: Final = word_set("vs versus")
NAME_STAND_IN: Final = "name"
"""What stands for each word of a name of several words while the cues are read."""
_MAYBE: Final = word_set("maybe perhaps")
# The words a cue of ``_reason`` can open with: a cue word, or a phrase's first word.
_CUE_WORDS: Final = (
    _ALMOST
    | _VERSUS
    | _MAYBE
    | NEGATORS
    | _CHOOSING
    | REJECTIONS
    | UNSETTLED
    | PAST_ONLY
    | {first for first, _ in REJECTION_PHRASES | UNSETTLED_PHRASES | PAST_PHRASES}
    | {"must", "should", "had", "next", "spent"}
    | _HAD_CONTRACTED
    | _WISHING
)
# "we've had", "she's had": a present perfect, not a past before the past.
_HAVE: Final = word_set("have has 've 's i've we've you've they've she's he's it's")
# "Dmitrii says we must use X": a duty someone else reports, not what the speaker does.
_REPORTING: Final = word_set(
    "say says saying said insist insists insisted think thinks want wants told tell tells telling"
)
_WHOLE_CLAUSE: Final = frozenset(("negated", "past", "future"))
_CALENDAR: Final = frozenset(_WORDS["CALENDAR_SPANS"])
TIMELESS: Final = frozenset(("KNOWS",))
"""Relations time does not bound: one still knows a friend one misses, or will visit."""
TIMED: Final = frozenset(("past", "future"))
"""The reasons that only place a clause in time, which ``TIMELESS`` relations outlast."""


def unasserted(lows: list[str], named: frozenset[int] = frozenset()) -> dict[int, str]:
    """The tokens in clauses that assert nothing now, each with why: "negated",
    "rejected", "unsettled", "past" or "future"; ``named`` are the tokens of names."""
    out: dict[int, str] = {}
    previous: str | None = None
    story = False  # a clause has dated the sentence in a finished past
    label: str | None = None  # why a note's label ("Not adopting:") asserts nothing of its list
    listing: str | None = None  # why a list's first item asserts nothing, for the items after it
    clauses = _clauses(lows, named)
    for index, (start, end) in enumerate(clauses):
        found = _reason(lows[start:end])
        if found is None and _carried(lows, start, previous):
            found = (0, str(previous))
        listed = found is None and listing is not None and lows[start - 1] == "," and _list_item(lows[start:end])
        if listed and listing is not None:
            found = (0, listing)  # "not using X, Y or Z anymore": the list goes on past the comma
        if label is not None and (lows[start - 1] == "but" or not _SUBJECTS.isdisjoint(lows[start:end])):
            label = None  # "Not adopting: Bazel, but we use Gradle": the list has ended
        if found is None and label is not None:
            found = (0, label)
        if found is not None and end < len(lows) and lows[end] == ":":
            label = found[1]
        after = lows[slice(*clauses[index + 1])] if index + 1 < len(clauses) else []
        supposed = previous == "unsettled" or after[:1] in (["if"], ["unless"])
        if found is None and supposed and _would(lows[start : start + 2]):
            found = (0, "unsettled")  # "If the grant comes, I'd move it onto X": what would be done
        if found is None and story and narrated_past(lows[start:end]):
            found = (0, "past")
        later = range(*clauses[index + 1]) if index + 1 < len(clauses) else range(0)
        if found is None and _progressive_past(lows[start:end]) and _replaced_now(after, named.intersection(later)):
            found = (0, "past")  # "We was using X but now we change to Y"
        held = still_so(after) and NEGATORS.isdisjoint(after) and _reason(after) is None  # not "back when it still ..."
        if found is not None and found[1] in ("past", "unsettled") and held:
            found = None  # "he taught me X, which I still do"; "she suggested that I use X, and now I do"
        story = story or (found is not None and found[1] == "past") or (index == 0 and sets_the_past(lows[start:end]))
        reason = found[1] if found else None
        going_on = end < len(lows) and lows[end] == "," and not (listed and _LIST_ENDS.intersection(lows[start:end]))
        listing = reason if going_on else None
        if found is not None:
            out.update(dict.fromkeys(range(*_scope(lows, start, start + found[0], end, found[1])), found[1]))
            told = lows[slice(*clauses[index - 1])] if index else []
            # "Playing X with the old guild, I miss that"; not "Using X now, ...", "..., so I still play"
            gerund = told[:1] != [] and told[0].endswith("ing") and _NOW.isdisjoint(told) and "still" not in lows[end:]
            if told and _missed_back(lows[start + found[0] : end]) and (narrated_past(told) or gerund):
                out.update(dict.fromkeys(range(*clauses[index - 1]), "past"))
        previous = reason
    return out


def _carried(lows: list[str], start: int, previous: str | None) -> bool:
    """Whether the clause at ``start`` says what the one before says of now: a "that"
    clause ("it's not true that ..."), or a restrictive relative clause under a negation
    ("I don't know anyone who uses X"; not ", who uses X", said apart)."""
    if previous is None:
        return False
    restrictive = lows[start] in _RELATIVES and start > 0 and lows[start - 1] != ","
    return lows[start] == "that" or (previous == "negated" and restrictive)


_NOW: Final = frozenset(("now", "still", "nowadays", "currently"))
_NOW_AGAINST: Final = frozenset(("now", "nowadays"))  # "we were using X, but now ...": then against now
_NOW_OR_AFTER: Final = _NOW | {"before", "until", "then"}  # "I had used X before switching to Y"


_LIST_ENDS: Final = word_set("and or nor")
_NOT_LISTED: Final = word_set("just only but instead rather except apart now still also")
_PHRASE_PREPOSITIONS: Final = word_set("for to in on at with from")


def _list_item(words: list[str]) -> bool:
    """Whether a clause only goes on with a list ("the Chessnut Air or the old Novag"): no
    subject, verb or contrast of its own."""
    item = list(takewhile(lambda w: w not in _PHRASE_PREPOSITIONS, words))  # "Z app for learn kanji": Z
    if not item or len(item) > 8 or item[0] in _NOT_LISTED:
        return False
    if not _SUBJECTS.isdisjoint(words) or not _AUXILIARIES.isdisjoint(words) or "be" in words:
        return False
    told = any(w in PAST_FORMS or (w.endswith("ed") and len(w) > 4) for w in words)  # "Ana argued for X"
    return not told and not find_triggers(words)


def _replaced_now(after: list[str], names: set[int] | frozenset[int]) -> bool:
    """Whether the clause after, which has ``names`` in it, says something else is used
    now ("but now we change to Y"), not the same thing more or less ("now I'm using Y
    too", "now we run 22.04", "now only for calls")."""
    told = bool(_NOW_AGAINST.intersection(after)) and bool(names) and _STILL_TOO.isdisjoint(after)
    return told and _reason(after) is None  # not "but now we are thinking about Y"


_STILL_TOO: Final = word_set("still too also well only both")
# Verbs of losing or leaving after a refusal, which then keeps the thing: "I refuse to let go of X".
_LOSING: Final = word_set("let part without stop give lose quit abandon drop ditch leave")


def _progressive_past(words: list[str]) -> bool:
    """Whether a clause tells what was going on then: "we were using X"."""
    return any(w in ("was", "were") and n.endswith("ing") and len(n) > 4 for w, n in pairwise(words))


def _missed_back(words: list[str]) -> bool:
    """ "Writing X was such fun, and I miss it": longing for what the clause before told."""
    back = words[:1] in (["miss"], ["missed"]) and words[1:2] in (["it"], ["them"], ["that"], ["those"])
    return back and (len(words) == 2 or not words[2].isalpha())  # not "I miss that Notion had ..."


def _contrasted(lows: list[str], cue: int) -> bool:
    """ "use Grab and not the taxi", "depends on X and has no tests": a negation joined by
    "and"/"or", alone or after a second verb of the same subject, denies only what follows."""
    if cue < 1 or lows[cue] not in NEGATORS:
        return False
    joined = cue - 1 if lows[cue - 1] not in _SECOND_VERBS else cue - 2
    return joined >= 0 and lows[joined] in ("and", "or")


_SECOND_VERBS: Final = word_set("has have had is are was were does do did")


def _scope(lows: list[str], start: int, cue: int, end: int, reason: str) -> tuple[int, int]:
    """The tokens a cue at ``cue`` leaves unasserted in the clause ``start:end``: the whole
    clause for a negation or the past; from the cue on for a negation joined by "and"/"or"
    ("use Grab and not the taxi"), a wish ("wants that we use X") and a pluperfect, which
    ends where the story reaches now ("Marta had told me about X and now I use it"); for a
    rejection or an evaluation, from the cue to the next subject ("after comparing A and
    B we went with B")."""
    if lows[cue] == "had" or lows[cue] in _HAD_CONTRACTED:
        return cue, next((i for i in range(cue + 2, end) if _opens_subject(lows, i) or lows[i] in _NOW_OR_AFTER), end)
    if lows[cue] in _WISHING and lows[cue + 1 : cue + 2] == ["that"]:
        return cue, end
    if reason in _WHOLE_CLAUSE:
        return (cue if _contrasted(lows, cue) else start), end
    # to the next subject, or a verb of its own after "and"/"but" ("decided against X and went with Y")
    return cue, next((i for i in range(cue + 1, end) if _opens_subject(lows, i) or _verb_joined(lows, i)), end)


def _verb_joined(lows: list[str], i: int) -> bool:
    """Whether "and"/"but" at ``i`` joins a second verb, not a second object ("against X and Y")."""
    if lows[i] not in ("and", "but") or i + 1 >= len(lows):
        return False
    return any(t.start == 0 for t in find_triggers(lows[i + 1 : i + 4])) and lows[i + 1] in PAST_FORMS | _JOINED_VERBS


_JOINED_VERBS: Final = word_set("went chose picked opted settled")


def _opens_subject(lows: list[str], i: int) -> bool:
    """Whether a subject opens at ``i``: "looking at doing it online": "it" after a verb is its object."""
    return lows[i] in _SUBJECTS and (lows[i] not in _OBJECT_TOO or lows[i - 1] in _OPENERS)


def _pluperfect(words: list[str], i: int) -> bool:
    """ "Khalid had used it before", "we had been using X", "we'd been using X": a past
    before the past, over by the time of telling; not "had to" (a duty), "had a chat" (a
    plain past), a change that still holds ("had switched to X"), nor a present perfect
    ("we've had")."""
    following = words[i + 1] if i + 1 < len(words) else ""
    if words[i] in _HAD_CONTRACTED and following == "been":
        return "still" not in words  # "'d been" is "had been" ("would" takes "have been")
    if words[i] != "had" or (i and words[i - 1] in _HAVE):
        return False
    if following in _CHANGE_VERBS:
        return False  # "I had switched to X years ago": the change still holds
    participle = finite_form(following) or (following.endswith("en") and len(following) > 3)  # "taken"
    return following.isalpha() and participle and not following.endswith("s")


def _clauses(lows: list[str], named: frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for i, low in enumerate(lows):
        # a relative clause is one of its own ("nags anyone who doesn't reply" negates only the reply)
        relative = low in _RELATIVES and i > 0
        # "a connector that nobody wants", "loaders nobody remembers": a clause of their own
        if low == "that" and i > 0 and lows[i + 1 : i + 2] in _RELATIVE_SUBJECTS:
            relative = _noun_before(lows, i - 1) and lows[i - 1] not in _WISHING  # not "want that we"
        elif low == "that" and i > 0 and lows[i + 1 : i + 3] == ["used", "to"]:
            relative = lows[i - 1].isalpha() and lows[i - 1] not in _NOT_NOUNS  # "jobs that ... be in X"
        relative = relative or (low == "nobody" and i > 0 and _noun_before(lows, i - 1))
        stated = low == "that" and i > 0 and lows[i - 1] in ("true", "case", "fact")
        abbreviated = low == "." and lows[i - 1 : i] in (["vs"], ["versus"])  # "X vs. Y" goes on
        opens = (low in CLAUSE_BREAKS and not abbreviated) or relative or stated
        joined = low in ("and", "or") and (_subject_follows(lows, i + 1) or _named_subject(lows, start, i, named))
        if opens or joined:
            if i > start:
                spans.append((start, i))
            start = i + 1 if low != "that" and not relative else i
    if start < len(lows):
        spans.append((start, len(lows)))
    return spans


def _named_subject(lows: list[str], start: int, i: int, named: frozenset[int]) -> bool:
    """Whether "and" at ``i`` opens a clause with a name for its subject ("I'm at O and T
    won't ..."): after a clause with a subject of its own, not "on X and Y didn't ..."."""
    return _name_says(lows, i + 1, named) and not _SUBJECTS.isdisjoint(lows[start:i])


def _name_says(lows: list[str], k: int, named: frozenset[int]) -> bool:
    """Whether a name opens at ``k`` as the subject of its own verb ("... at O and Onfleet
    isn't assigning routes"): an auxiliary or a negation right after it."""
    if k not in named:
        return False
    while k in named:
        k += 1
    return _verb_of_its_own(lows, k)


def _verb_of_its_own(lows: list[str], k: int) -> bool:
    """Whether an auxiliary or a negation at ``k`` or right after it shows that the words
    before it are a new clause's subject ("the reader won't", "Onfleet isn't")."""
    return any(low in NEGATORS or low in _AUXILIARIES for low in lows[k : k + 2])


def _noun_before(lows: list[str], k: int) -> bool:
    """Whether the word at ``k`` may end the noun phrase a relative clause describes ("a
    pile of loaders nobody remembers"): a plain word, no verb or function word ("told
    nobody"), or a word in -s after a determiner ("of scripts", "the loaders")."""
    low = lows[k]
    if not low.isalpha() or low.endswith("ed") or low in _NOT_NOUNS:
        return False
    return not finite_form(low) or (k > 0 and lows[k - 1] in _BEFORE_PLURALS)


_BEFORE_PLURALS: Final = word_set("of the some many few those these all my our their its")


_RELATIVE_SUBJECTS: Final = tuple([w] for w in ("we", "i", "you", "they", "he", "she", "nobody", "everyone", "no"))
_NOT_NOUNS: Final = word_set(
    "and or but so that because if when then now still just really also even there here tell ask is are was were be "
    "to for of with by at on in from about than like"
)


def _subject_follows(lows: list[str], i: int) -> bool:
    """Whether a subject opens at ``i``, after any adverbs ("and honestly I'm ...")."""
    while i < len(lows) and is_filler(lows[i]):
        i += 1
    if i < len(lows) and lows[i] in _NOUN_OPENERS:  # "and the reader won't connect"
        return _verb_of_its_own(lows, i + 2)
    return i < len(lows) and (lows[i] in _SUBJECTS or lows[i] in _POSSESSIVE_OPENERS)


def _reason(words: list[str]) -> tuple[int, str] | None:
    """Where the clause's first cue is, and what it says."""
    for i, word in enumerate(words):
        if word not in _CUE_WORDS:
            continue  # no rule below reads a word outside them
        following = words[i + 1] if i + 1 < len(words) else ""
        pair = (word, following)
        if word in NEGATORS and following not in _NOT_NEGATING and not _DOUBLE_NEGATIVE & set(words[i:]):
            return i, "negated"
        hedged = _hedged(words, i)
        if hedged is not None:
            return hedged
        chosen_against = word in _CHOOSING and following == "against"
        kept = word in REJECTIONS and not _LOSING.isdisjoint(words[i + 1 : i + 5])  # "I refuse to part with X"
        if (word in REJECTIONS and not kept) or pair in REJECTION_PHRASES or chosen_against:
            return i, "rejected"
        if word in UNSETTLED or pair in UNSETTLED_PHRASES:
            return i, "unsettled"
        if pair == ("thinking", "to") and words[i + 2 : i + 3] not in (["keep"], ["stay"], ["continue"], ["stick"]):
            return i, "unsettled"  # non-native "thinking to change to X"; not "thinking to keep using X"
        if word in ("must", "should") and i >= 2 and words[i - 1] in _SUBJECTS and words[i - 2] in _REPORTING:
            return i, "unsettled"
        if word in _WISHING and following == "that":
            return i, "unsettled"  # "she want that I write it in LaTeX": the "that" clause is wished
        if word in PAST_ONLY or pair in PAST_PHRASES or _pluperfect(words, i) or _spent_doing(words, i):
            return i, "past"
        if word == "next" and following in _CALENDAR and not past_tense(words):
            return i, "future"  # "from next month we use X": a plan
    if _gerund_in_the_past(words):
        return 0, "past"  # "Writing X on the old dashboard was pleasant": a doing now over
    finished = finished_at(words)
    return None if finished is None else (finished, "past")


def _hedged(words: list[str], i: int) -> tuple[int, str] | None:
    """What "almost", "maybe" or "vs." at ``i`` leaves unasserted: "we almost joined X"
    (it did not happen), "maybe we go with X" (a choice not made), "decide X vs. Y" (both
    still in the running, unless a choice was made before it)."""
    word, following = words[i], words[i + 1] if i + 1 < len(words) else ""
    if word in _ALMOST and (following in PAST_FORMS or (following.endswith("ed") and following.isalpha())):
        return i, "negated"
    if word in _MAYBE and (choice := _choice_after(words, i)) is not None:
        return choice, "unsettled"
    if word in _VERSUS and _JOINED_VERBS.isdisjoint(words[:i]) and i > 0:
        first = i - 1  # from the first thing compared on: "my brother Tom argues about X vs. Y" knows Tom
        while first > 0 and words[first] == NAME_STAND_IN and words[first - 1] == NAME_STAND_IN:
            first -= 1
        return first, "unsettled"
    return None


def _choice_after(words: list[str], i: int) -> int | None:
    """Where a choice or a switch follows "maybe" at ``i`` in the clause, within its
    subject's reach ("maybe we go with X", "perhaps I'll switch to Y"); None if none does."""
    start = i + 1
    return next((start + t.start for t in find_triggers(words[start : start + 5]) if t.kind in _CHOICES), None)


_CHOICES: Final = frozenset(("DECIDE", "SWITCH"))


def _spent_doing(words: list[str], i: int) -> bool:
    """Whether "spent" at ``i`` spans a time of doing or of being somewhere ("I spent twelve
    years driving for X", "six years at Y"): a stretch of the past, over."""
    if words[i] != "spent":
        return False
    for k in range(i + 1, min(i + 5, len(words) - 1)):
        if words[k] in TIME_NOUNS:  # years of it; not "spent the weekend putting up shelves with X"
            doing = (words[k + 1].endswith("ing") and len(words[k + 1]) > 4) or words[k + 1] in ("at", "with")
            return words[k] in _LONG_SPANS and doing  # "spent six years at Ravenshaw Solicitors"
    return False


_LONG_SPANS: Final = frozenset(_WORDS["LONG_SPANS"])


def _would(opening: list[str]) -> bool:
    """Whether a clause opens with "I'd"/"we'd" and a plain verb, "would": "we'd run",
    "I'd move"; not a preference ("I'd rather"), nor "had" ("I'd been", "I'd used"); or
    with "I'll"/"we'll", what will be done."""
    if opening[:1] and opening[0] in _WILL_CONTRACTED:
        return True  # "If I get a darkroom, I'll try X": what will be done if it comes
    if len(opening) == 2 and opening[0] in ("i", "we") and opening[1] in _SUPPOSED_MODALS:
        return True  # "If the client accept, we will rewrite it in X", "..., we must to cancel it on Y"
    if len(opening) < 2 or opening[0] not in _HAD_CONTRACTED:
        return False
    verb = opening[1]
    had = verb in PAST_FORMS or verb.endswith(("ed", "en"))
    adverb = is_filler(verb)  # "I'd already moved", "we'd normally use": had, or a habit
    return verb.isalpha() and not had and not adverb and verb not in _WOULD_SAY


def _gerund_in_the_past(words: list[str]) -> bool:
    """Whether a clause's subject is a doing ("Writing X ...") whose verb is "was"/"were",
    with no subject of its own between them; a change made or a thing kept ("Moving to X
    was the best thing we did") holds on, as does one said to go on ("still")."""
    if not words or not words[0].endswith("ing") or _NOW.intersection(words):
        return False  # "Tracking X was a habit I still keep": so now too
    doing = [t for t in find_triggers(words[:3]) if t.start == 0]
    if not doing or any(t.kind in ("SWITCH", "DECIDE", "KEEP") for t in doing):
        return False  # "Something was off", "Sticking with X was the right call"
    for word in words[1:12]:
        if word in ("was", "were"):
            return True
        if word in _SUBJECTS or word in ("is", "are", ",", "and", "but"):
            return False
    return False
