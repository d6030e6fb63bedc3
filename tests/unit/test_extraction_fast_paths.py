"""The extractor's shortcuts skip only work that could find nothing: each agrees with
the full rule it stands in front of."""

from __future__ import annotations

import pytest

from memledger.extraction import fact_patterns, gazetteer, polarity, shapes, speech_acts
from memledger.extraction.patterns import tokenize

SENTENCES = [
    "Thanks so much, see you on Friday!",
    "Good luck with the launch, Priya.",
    "We decided against MongoDB and went with Postgres.",
    "I'm not sure we should keep using Jenkins.",
    "I used to live in Lyon but moved to Berlin.",
    "I'm allergic to peanuts and I live in Oslo.",
    "My name is Ada and I'm a vegetarian.",
    "We use google cloud platform and fly.io for Atlas.",
    "macOS, nRF52 and GPT-4 are in the notes/app.py file.",
    "hopefully we'd have switched by now if only the budget allowed.",
    "I previously ran Grafana; back in 2019 we were evaluating Loki.",
    "The team vetoed Kafka and I miss my last laptop.",
]


def _reason_in_full(words: list[str]) -> tuple[int, str] | None:
    """``polarity._reason`` reading every word, without its cue-word shortcut."""
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        pair = (word, following)
        if (
            word in polarity.NEGATORS
            and following not in polarity._NOT_NEGATING
            and not polarity._DOUBLE_NEGATIVE & set(words[i:])
        ):
            return i, "negated"
        if (
            word in polarity.REJECTIONS
            or pair in polarity.REJECTION_PHRASES
            or (word in polarity._CHOOSING and following == "against")
        ):
            return i, "rejected"
        if word in polarity.UNSETTLED or pair in polarity.UNSETTLED_PHRASES:
            return i, "unsettled"
        if word in polarity.PAST_ONLY or pair in polarity.PAST_PHRASES:
            return i, "past"
    return None


@pytest.mark.parametrize("sentence", SENTENCES)
def test_polarity_cue_shortcut_finds_the_same_cue(sentence: str) -> None:
    lows = [word.lower() for word in tokenize(sentence)]
    for start in range(len(lows)):
        assert polarity._reason(lows[start:]) == _reason_in_full(lows[start:])


def test_every_phrase_cue_opens_with_a_cue_word() -> None:
    phrases = polarity.REJECTION_PHRASES | polarity.UNSETTLED_PHRASES | polarity.PAST_PHRASES
    assert {first for first, _ in phrases} <= polarity._CUE_WORDS


def test_formulae_by_first_word_hold_every_formula() -> None:
    indexed = [formula for group in speech_acts._FORMULAE_BY_FIRST.values() for formula in group]
    assert sorted(indexed) == sorted(speech_acts._FORMULAE)
    assert all(formula[0] == first for first, group in speech_acts._FORMULAE_BY_FIRST.items() for formula in group)


@pytest.mark.parametrize("sentence", SENTENCES)
def test_formula_shortcut_agrees_with_comparing_every_formula(sentence: str) -> None:
    words = [word.lower() for word in tokenize(sentence)]
    for start in range(len(words)):
        rest = words[start:]
        in_full = any(tuple(rest[: len(formula)]) == formula for formula in speech_acts._FORMULAE)
        if rest[0] not in ("happy", "sounds", "looks", "seems"):
            assert speech_acts._formula(rest) == in_full


def test_every_known_name_starts_with_a_known_first_token() -> None:
    for name in ("google cloud platform", "postgres", "fly.io"):
        lows = name.split()
        assert lows[0] in gazetteer.KNOWN_FIRST_TOKENS
        assert len(lows) in gazetteer.known_lengths(lows, 0)
    assert gazetteer.known_lengths(["zzqx", "cloud"], 0) == ()
    assert gazetteer.known_lengths(["postgres"], 1) == ()


@pytest.mark.parametrize("word", ["macOS", "nRF52", "GPT-4", "fly.io", "Atlas", "atlas", "notes/app.py", "KeyError"])
def test_name_like_matches_its_definition(word: str) -> None:
    first = word[0]
    in_full = first.isalpha() and not shapes._not_a_name(word) and (first.isupper() or shapes.odd_shape(word))
    assert shapes.name_like(word) == in_full


@pytest.mark.parametrize("sentence", SENTENCES)
def test_personal_patterns_are_skipped_only_without_their_words(sentence: str) -> None:
    lowered = sentence.lower()
    searched = any(fact_patterns._search(pattern, lowered) for _, pattern in fact_patterns._PERSONAL)
    if searched:
        assert fact_patterns._ANY_PERSONAL_NEED.search(lowered) is not None
    needs = {need for _, pattern in fact_patterns._PERSONAL for need in fact_patterns._NEEDS[pattern]}
    assert (fact_patterns._ANY_PERSONAL_NEED.search(lowered) is not None) == any(n in lowered for n in needs)
