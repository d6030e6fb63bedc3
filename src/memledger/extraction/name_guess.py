"""A type for a name that no list knows and no slot explains, from its spelling. Pure.

Given names and product names are spelled differently ("Tewodros", "Nyokabi" against
"Cronometer", "Citymapper"). A word that a world-wide list of given names holds is a
person's; otherwise a naive Bayes model over character n-grams, trained once at import
on those given names and the gazetteer's single-word tool names, says which one an
unknown word looks like, and says nothing when the evidence is thin. Ordinary
English words ("Primary", "Fair"), places ("Zakopane"), short all-capital words ("EP",
"SFTP") and plurals are never guessed: capitalised, they are more often a sentence's
words or somewhere the speaker went than names.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from typing import Final, NamedTuple

from memledger.events.catalogue import EntityType
from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon
from memledger.extraction.patterns import word_set

# Every data file the module reads; a test checks each ships with the package.
LEXICON_FILES: Final = (
    "common_english.txt",
    "rare_english.txt",
    "world_given_names.txt",
    "word_given_names.txt",
    "world_places.txt",
)
GUESS_CONFIDENCE = 0.6
# A longer lower-case run is no name (and checking it for misspellings would cost its square).
_LONGEST_NAME_WORD = 24
# Per-n-gram log-odds, scaled by the square root of their number, needed to call a word
# a person's or a tool's name; between the two a word stays unnamed.
_MARGIN: Final = 1.0
# Words after which a rare English word names a place, a firm or a composer as often as a
# product ("from Gatwick", "our supplier is Acme", "play Chopin"): only its sentence can type it.
_SHIELDING: Final = frozenset(
    ("from", "to", "in", "at", "is", "for", "the", "of", "near", "play", "plays", "played", "playing")
)
_GRAMS: Final = (2, 3, 4)


def _grams(word: str) -> list[str]:
    marked = f"^{word}$"
    return [marked[i : i + n] for n in _GRAMS for i in range(len(marked) - n + 1)]


class _Model:
    """Log-odds of "person" over "tool" for a lower-cased word (add-half smoothing,
    even odds before the spelling is read: the lists' sizes say nothing of a turn)."""

    def __init__(self, people: Iterable[str], tools: Iterable[str]) -> None:
        person, tool = Counter[str](), Counter[str]()
        for word in people:
            person.update(_grams(word))
        for word in tools:
            tool.update(_grams(word))
        vocabulary = len(person.keys() | tool.keys())
        person_total = sum(person.values()) + 0.5 * vocabulary
        tool_total = sum(tool.values()) + 0.5 * vocabulary
        self._odds = {
            gram: math.log((person[gram] + 0.5) / person_total) - math.log((tool[gram] + 0.5) / tool_total)
            for gram in person.keys() | tool.keys()
        }
        self._unseen = math.log(0.5 / person_total) - math.log(0.5 / tool_total)

    def score(self, low: str) -> float:
        grams = _grams(low)
        total = sum(self._odds.get(gram, self._unseen) for gram in grams)
        return total / math.sqrt(len(grams))


class _Lists(NamedTuple):
    common_english: frozenset[str]
    rare_english: frozenset[str]
    world_names: frozenset[str]  # folded: "ragnheidur"; with the rare English words people are named ("nadia")
    words_named: frozenset[str]  # those words: "nadia", "jasper"
    world_places: frozenset[str]
    model: _Model


@cache
def _lists() -> _Lists:
    """The lists and the model, read and trained on first use: a command that
    extracts nothing does not wait for them."""
    common, rare, names, word_names, places = (lexicon.entries(name) for name in LEXICON_FILES)
    # A relative's word is read as one ("Nan"), though people are named so.
    words_named = frozenset(name for name in word_names if name not in gz.ROLES)
    world_names = frozenset(gz.fold(name) for name in [*names, *words_named])
    return _Lists(
        common_english=frozenset(common),
        rare_english=frozenset(rare),
        world_names=world_names,
        words_named=words_named,
        world_places=frozenset(places),
        model=_Model(
            gz.GIVEN_NAMES | world_names,
            (
                name
                for name in gz.TOOL_KIND
                if name.isalpha() and name not in gz.GIVEN_NAMES and name not in gz.NEEDS_CAPITAL
            ),  # an English word naming a product ("Steam") says nothing of how products are spelt
        ),
    )


def warm() -> None:
    """Read the lists and train the model now rather than at the first guess."""
    _lists()


def is_world_name(low: str) -> bool:
    """Whether a lower-cased word is a given name somewhere in the world and no ordinary
    English word ("amaru", not "will")."""
    lists = _lists()
    return gz.fold(low) in lists.world_names and low not in lists.common_english


_LOCATIVE: Final = frozenset(
    ["in", "near", "to", "from", "at", "around", "outside", "inside", "across", "via", "into", "through", "visiting"]
)


_OWNED: Final = frozenset(["my", "our", "his", "her", "their"])
_THING_OPENERS: Final = word_set("a an the his her their your its")


def is_place(low: str, before: str) -> bool:
    """Whether a lower-cased name read after ``before`` is a place: a town's name after a
    preposition of place ("lives in Lyon"), whoever else bears it."""
    return before in _LOCATIVE and low in _lists().world_places


def common(low: str) -> bool:
    """Whether a lower-cased word is a common English word ("phd", "router")."""
    return low in _lists().common_english


def english(low: str) -> bool:
    """Whether a lower-cased word is an English word, however rare ("flaky", "infra")."""
    lists = _lists()
    return low in lists.common_english or low in lists.rare_english


def english_form(low: str) -> bool:
    """Whether a lower-cased word is an English word or its plural or third person in -s
    ("scrapers", "belays", "replies"): the lists hold the plain forms."""
    if english(low):
        return True
    if low.endswith("ies") and len(low) > 4:
        return english(low[:-3] + "y")
    if verb_form(low):
        return True
    return low.endswith("s") and len(low) > 3 and (english(low[:-1]) or (low.endswith("es") and english(low[:-2])))


def verb_form(low: str) -> bool:
    """Whether a lower-cased word in -ing or -ed is a form of an English word ("snoozing",
    "invoicing", "vendored"), however the lists spell the plain form."""
    return low.endswith(("ing", "ed")) and len(low) > 5 and any(english(stem) for stem in _stems(low))


def _stems(low: str) -> tuple[str, ...]:
    """The plain forms a word in -ing or -ed may come from: "snoozing" (snooze),
    "syncing" (sync), "jogging" (jog), "scraped" (scrape), "digitised" (digitize)."""
    stem = low[:-3] if low.endswith("ing") else low[:-2]
    doubled = (stem[:-1],) if len(stem) > 2 and stem[-1] == stem[-2] else ()
    ending = low[len(stem) :]
    british = (stem[:-2] + "ize", stem[:-2] + "iz" + ending) if stem.endswith("is") else ()  # "digitised"
    return (stem, stem + "e", *doubled, *british)


def truecased(words: list[str]) -> list[str]:
    """The words of a writer who capitalises nothing, with the ones no English list knows
    (and that are no misspelling of an English word) capitalised as the names they likely are:
    "uses life360" reads as "uses Life360", "pickd" stays a word."""
    cased: list[str] = []
    for i, word in enumerate(words):
        named = _unknown_lower(word)
        if not named and cased and cased[-1][:1].isupper():
            # "skyvale airways", "hollowmoor garden centre": the name's kind of institution
            # goes with it, and a noun between them
            ended = words[i - 1] in gz.ORG_SUFFIXES  # "fenmarsh college doing plumbing": one name ended
            named = word in gz.ORG_SUFFIXES or (not ended and _institution_ahead(words, i))
        cased.append(_capitalised(word) if named else word)
    return cased


def _institution_ahead(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` and at most one word after it lead on to a kind of institution
    ("kestrel vale tennis club"), as plain words inside the name."""
    for word in words[i : i + 3]:
        if word in gz.ORG_SUFFIXES:
            return True
        if not word.isalpha() or len(word) < 3 or word in _NO_NAME_WORDS:
            return False
    return False


# Words that join or end a phrase, never inside an institution's name.
_NO_NAME_WORDS: Final = word_set(
    "a an the and or but of at in on for to from with by is are was were my our your his her their "
    "this that these those i we you he she they it"
)


def _capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


@lru_cache(maxsize=8192)
def _unknown_lower(word: str) -> bool:
    if not 3 <= len(word) <= _LONGEST_NAME_WORD or not word[:1].isalpha() or not word.isalnum() or not word.islower():
        return False
    low = gz.fold(word)
    if low in _lists().world_names:
        return True
    english_word = english(word) or verb_form(word)
    people = low in gz.ROLES or low.removesuffix("s") in gz.ROLES  # "my flatmates": a role's noun
    return not (english_word or people) and low not in _lists().world_places and not _misspelt(word)


def _misspelt(word: str) -> bool:
    """Whether one letter deleted, added, changed or two swapped make an English word."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = (
        [a + b[1:] for a, b in splits if b]
        + [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
        + [a + c + b[1:] for a, b in splits if b for c in letters]
        + [a + c + b for a, b in splits for c in letters]
    )
    common = _lists().common_english
    return any(edit in common for edit in edits)


def ordinary(word: str, before: str = "") -> bool:
    """A word that is more likely a sentence's own word or a place than a name; a name
    that is also a town's is a place after a preposition of place ("near Sora")."""
    low, lists = word.lower(), _lists()
    if word.isupper() and len(word) <= 5 and low in lists.common_english:
        return True  # "ISA", "NAN": a word's letters as an abbreviation, whatever name it spells
    if gz.fold(low) in lists.world_names:
        return low in lists.world_places and before in _LOCATIVE  # "Carys" is a name, though "cary" is a word
    common = lists.common_english
    if low in lists.world_places or low in common or (low.endswith("s") and low[:-1] in common):
        return True
    return (word.isupper() and len(word) <= 5) or not word.isalpha() or len(word) < 3


def word_type(word: str, before: str = "") -> EntityType | None:
    """ "person" or "tool" for one unknown word by its spelling, None when unsure;
    ``before`` is the word before it."""
    if ordinary(word, before):
        return None
    low, lists = gz.fold(word.lower()), _lists()
    if low in lists.world_names:
        return None if low in lists.words_named and before in _THING_OPENERS else "person"  # "a Kia", "her Alexa"
    if (low in lists.rare_english and not before) or _inflected(low):
        return None  # "Sourdough attempt ...", "Reinstalling did ...": English, capitalised as it opens
    if _compound(low, lists.common_english):
        return "tool"  # "Trainline", "Smilecraft": English words run together name products
    if lists.model.score(low) < -_MARGIN and (low not in lists.rare_english or before not in _SHIELDING):
        return "tool"  # spelt like no English word, or a rare one a product took ("Plex", "Hornby")
    return None  # spelt like a given name, it may as well be a product's ("Makita", "Runna")


def plural_noun(low: str) -> bool:
    """Whether a word is the plural of an English noun ("paddlers", "sons", "foxes")."""
    if len(low) < 4 or not low.endswith("s") or low.endswith("ss"):
        return False
    return english(low[:-1]) or (low.endswith("es") and english(low[:-2]))


def _inflected(low: str) -> bool:
    """Whether a word is an English verb's "-ing" or "-ed" form, or one with "re-" before
    it ("interleaved", "reinstalling")."""
    for ending in ("ing", "ed"):
        if low.endswith(ending) and len(low) > len(ending) + 3:
            stem = low[: -len(ending)]
            stem = stem[2:] if stem.startswith("re") and not english(stem) else stem
            if english(stem) or english(stem + "e") or (len(stem) > 3 and stem[-1] == stem[-2] and english(stem[:-1])):
                return True
    return False


def _compound(low: str, common: frozenset[str]) -> bool:
    """Whether a word is two English words of four letters or more run together."""
    return any(low[:i] in common and low[i:] in common for i in range(4, len(low) - 3))


def guess(words: Sequence[str], before: str = "") -> EntityType | None:
    """The type an unknown name of one or more words most likely has, or None; ``before``
    is the lower-cased word before it.

    A first word that reads as a given name followed by words that are not common English
    is a person's full name ("Ashot Petrosyan"); a name whose first word is no
    ordinary word and not a given name is a product's ("Leica Disto"). Names made only of
    ordinary words ("Night Ferry") are left alone: their spelling says nothing.
    """
    if not words or is_place(" ".join(words).lower(), before):
        return None
    first = "person" if gz.is_given_name(words[0].lower()) else word_type(words[0], before)
    if first is None and before in _OWNED and not ordinary(words[0]):
        first = "tool"  # "my Quorvane Elemnt": what one owns that is no given name is a thing
    if len(words) == 1 or first is None:
        return first
    if first == "person":  # a surname may be a town's name ("Henrique Saldanha"), not an English word
        return None if any(_plain_english(word) for word in words[1:]) else "person"
    return "tool"


def _plain_english(word: str) -> bool:
    """Whether a word is a common English word, in the singular or plural, or no word at all."""
    low, common = word.lower(), _lists().common_english
    short_caps = word.isupper() and len(word) <= 5  # "UAT", "PTO": an abbreviation, no surname
    return (
        low in common or (low.endswith("s") and low[:-1] in common) or not word.isalpha() or len(word) < 3 or short_caps
    )
