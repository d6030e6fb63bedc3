"""Sentences that perform a social act or voice an unreal world, and so state nothing to
remember. Pure.

Told by grammar, never by the sentences themselves: a formula that opens its clause
(thanking, apologising, greeting, parting, wishing); the speaker's attitude towards the
listener ("I love how you ..."); the listener, or a bare demonstrative, as the subject of
an evaluation ("you must be exhausted", "that must have been hard"); an encouragement
aimed at "yourself"; and irrealis moods (a wish, "if only", a counterfactual condition,
"would have" done). A sentence is small talk when its first clause is such an act and no
later clause starts a statement of the speaker's own ("Thanks, I moved to Lisbon." is not).
"""

from __future__ import annotations

from typing import Final

from memledger.extraction.patterns import Sentence, word_set
from memledger.extraction.senses import epistemic, participle

_INTERJECTIONS: Final = word_set(
    "oh ohh ah ahh aw aww awww wow whoa woah yay yikes ugh oops haha hahaha hehe lol lmao omg "
    "gosh geez jeez hmm hm well ok okay yes yeah yep yup no nope nah wait huh oof phew hooray "
    "ooh hey hi hello hiya howdy yo dear"
)
# Formulae that perform their act by being said; matched where a clause starts.
_FORMULAE: Final = tuple(
    tuple(formula.split())
    for formula in (
        "thanks",
        "thank",
        "thx",
        "cheers",
        "congrats",
        "congratulations",
        "sorry",
        "apologies",
        "welcome",
        "bye",
        "goodbye",
        "good luck",
        "good morning",
        "good afternoon",
        "good evening",
        "good night",
        "best of luck",
        "best wishes",
        "see you",
        "see ya",
        "talk soon",
        "talk to you",
        "take care",
        "hope",
        "wish",
        "well done",
        "keep it up",
        "keep going",
        "hang in there",
        "you got this",
        "no worries",
        "same here",
        "me too",
        "likewise",
        "must be",
        "must have",
        "must've",
        "what a",
        "how",
    )
)
_FIRST_PERSON: Final = word_set("i i'm im i've ive i'd i'll we we're we've we'd we'll my our me us")
_SECOND_PERSON: Final = word_set("you you're youre you've you'll you'd your yours yourself yourselves")
_DEMONSTRATIVES: Final = word_set("that that's thats this it it's its")
_DEGREE: Final = word_set("so really truly very just such totally absolutely honestly genuinely")
# Verbs of attitude and expressives: said of the listener, they are the speaker's feelings
# about the conversation, not a taste or a fact.
_ATTITUDES: Final = word_set(
    "love like hate appreciate admire adore miss envy respect thank believe feel enjoyed loved"
)
# Adjectives of the expressive speech acts (apology, gladness, gratitude, sympathy).
_EXPRESSIVE: Final = word_set("sorry glad grateful thankful proud happy excited thrilled")
_EVALUATING: Final = word_set(
    "is are was were 's 're must has have had looks look sounds sound seems seem feels feel "
    "always never really so totally"
)
# Deontic modals before a verb other than a copula give the listener an instruction
# ("you should always answer in French"), which is no evaluation of them.
_DEONTIC: Final = word_set("should must need needs have has will 'll shall")
_COPULAS: Final = word_set("be been look sound seem feel")
_IRREALIS_MODALS: Final = word_set("would could might i'd we'd you'd he'd she'd they'd it'd")
_PERFECT_MODALS: Final = word_set("would could should might must")
_IRREALIS_HEADS: Final = _PERFECT_MODALS | {"wish", "if", "imagine"}
_CONDITIONS: Final = word_set("if unless")
_PAST: Final = word_set("were was had did could would knew i'd we'd you'd")
_CLAUSE_BREAKS: Final = word_set(", ; : ! . \u2014 \u2013")
_DEICTIC: Final = word_set(
    "that that's thats this it it's its you you're your he he's she she's they they're there there's"
)
# The formulae by their first word: a clause is compared only with those it can open.
_FORMULAE_BY_FIRST: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    first: tuple(formula for formula in _FORMULAE if formula[0] == first) for first in {f[0] for f in _FORMULAE}
}
_NAMED: Final = "\x00"  # stands in a clause's words for a named entity's tokens
_CONJUNCTIONS: Final = word_set("and but so because")


def is_small_talk(sentence: Sentence) -> bool:
    """Whether the (non-question) sentence only thanks, greets, sympathises, compliments,
    reacts, encourages or wishes: it states no fact, and its clauses no relationship."""
    lows = sentence.lows
    if _irrealis(lows):
        return True
    named = {i for mention in sentence.mentions for i in range(mention.start, mention.end)}
    judged = [words for words in (_content(lows, span, named) for span in _clauses(lows)) if words]
    if not judged:  # "Wow!", "Hey Marco!"; a bare name ("- Supabase") is no reaction
        return any(low in _INTERJECTIONS for low in lows)
    first, rest = judged[0], judged[1:]
    return _social(first) and not any(_states(words) for words in rest)


def _clauses(lows: list[str]) -> list[tuple[int, int]]:
    """Token spans of the clauses: cut at punctuation, and at a conjunction before a subject."""
    spans: list[tuple[int, int]] = []
    start = 0
    for i, low in enumerate(lows):
        following = lows[i + 1] if i + 1 < len(lows) else ""
        cut = low in _CLAUSE_BREAKS or (
            low in _CONJUNCTIONS and (following in _FIRST_PERSON or following in _SECOND_PERSON)
        )
        if cut:
            if i > start:
                spans.append((start, i))
            start = i + 1
    if start < len(lows):
        spans.append((start, len(lows)))
    return spans


def _content(lows: list[str], span: tuple[int, int], named: set[int]) -> list[str]:
    """The clause's words after leading interjections; none if only a name is left (a
    vocative: "..., Priya.")."""
    indices = list(range(*span))
    while indices and (lows[indices[0]] in _INTERJECTIONS or not lows[indices[0]][:1].isalnum()):
        indices.pop(0)
    if all(i in named for i in indices):
        return []
    if any(i in named for i in indices):
        return [_NAMED if i in named else lows[i] for i in indices]
    return [lows[i] for i in indices]


def _social(words: list[str]) -> bool:
    return (
        _formula(words)
        or _expressive(words)
        or _evaluates_listener(words)
        or _evaluates_that(words)
        or _encourages(words)
    )


def _states(words: list[str]) -> bool:
    """Whether a later clause states something: one not social whose subject is no
    pronoun of the conversation ("Thanks, the deadline is Friday."; not "..., she loved it")."""
    return not _social(words) and words[0] not in _DEICTIC


def _formula(words: list[str]) -> bool:
    if words[0] == "happy" and words[1:2] != ["to"]:
        return True  # "Happy birthday!", not "happy to report ..."
    if words[0] in ("sounds", "looks", "seems"):
        return words[1:2] != ["like"]  # "sounds great!", not "looks like we ..."
    return any(tuple(words[: len(formula)]) == formula for formula in _FORMULAE_BY_FIRST.get(words[0], ()))


def _expressive(words: list[str]) -> bool:
    """The speaker's feeling towards the listener: "I'm so sorry to hear ...", "I really
    appreciate you ...", "I love how you ...", "I'm proud of you"."""
    if not words or words[0] not in ("i", "i'm", "im", "we", "we're"):
        return False
    rest = [w for w in words[1:] if w not in _DEGREE and w not in ("am", "are")]
    if not rest:
        return False
    head, after = rest[0], rest[1:4]
    towards_listener = any(w in _SECOND_PERSON for w in after)
    if head == "hope":
        return after[:1] != ["to"]  # optative "I hope you ...", not "I hope to finish ..."
    if head in _EXPRESSIVE:
        return towards_listener or head in ("sorry", "grateful", "thankful") or after[:2] == ["to", "hear"]
    return head in _ATTITUDES and towards_listener


def _evaluates_listener(words: list[str]) -> bool:
    """The listener as the subject of an evaluation ("you're such a ...", "your garden
    looks ...", "you must be exhausted"), not of an instruction ("you should use ...")."""
    if words[0] not in _SECOND_PERSON:
        return False
    index = 1
    if words[0] in ("your", "yours"):  # "your (new) garden looks ...": past the noun phrase
        while index < len(words) and index < 4 and words[index] not in _EVALUATING:
            index += 1
    verb = words[index : index + 3]
    if not verb:
        return False
    if verb[0] in _DEONTIC and verb[0] != "have" and len(verb) > 1:
        following = verb[2] if verb[1] in ("to", "always", "never", "not") and len(verb) > 2 else verb[1]
        return following in _COPULAS or following == "have"
    return True


def _evaluates_that(words: list[str]) -> bool:
    """A bare demonstrative judged ("that's amazing", "that must have been hard"), naming
    nobody and nothing of the speaker's ("that's my sister Leila" states who she is)."""
    if words[0] not in _DEMONSTRATIVES or len(words) < 2:
        return False
    if _NAMED in words or any(w in _FIRST_PERSON for w in words):
        return False
    if words[0] not in ("that", "this", "it"):
        return True  # "that's ...", "it's ...": a copula
    verb, tail = words[1], words[2:]
    tail = tail[1:] if tail[:1] == ["to"] else tail  # "has to be"
    if verb in ("must", "has", "have", "can't", "cannot", "could", "might", "may"):
        return epistemic(words[0], tail)
    return verb in _EVALUATING or verb in _COPULAS


def _encourages(words: list[str]) -> bool:
    """An imperative aimed at the listener's self: "always believe in yourself"."""
    return any(w in ("yourself", "yourselves") for w in words) and words[0] not in _FIRST_PERSON


def _irrealis(lows: list[str]) -> bool:
    """A wish, "if only", "imagine if", or a counterfactual: an if-clause with a would/could
    in another clause, or a modal perfect ("would have gone")."""
    for i, low in enumerate(lows):
        if low not in _IRREALIS_HEADS:
            continue  # each rule below opens with one of these words
        before = lows[i - 1] if i else ""
        after = lows[i + 1] if i + 1 < len(lows) else ""
        if low == "wish" and (not before or before in _FIRST_PERSON or before in ("just", "really", "only")):
            return True
        if (low, after) in (("if", "only"), ("imagine", "if")):
            return True
        if low in _PERFECT_MODALS and after == "have" and i + 2 < len(lows) and participle(lows[i + 2]):
            return low != "must"  # "must have been" is an inference, told apart elsewhere
    return _counterfactual(lows)


def _counterfactual(lows: list[str]) -> bool:
    """An if-clause in a past form ("if I had", "if we lived", "if I were") with a would,
    could or might outside it: an unreal condition ("if it rains, we could ..." is real)."""
    for start, low in enumerate(lows):
        if low not in _CONDITIONS:
            continue
        end = next((i for i in range(start + 1, len(lows)) if lows[i] in _CLAUSE_BREAKS), len(lows))
        condition = lows[start + 2 : end] if lows[start + 1 : start + 2] != ["only"] else lows[start + 1 : end]
        main = lows[:start] + lows[end:]
        past = any(w in _PAST or participle(w) for w in condition[:4])
        if past and any(w in _IRREALIS_MODALS for w in main + condition[1:]):
            return True
    return False
