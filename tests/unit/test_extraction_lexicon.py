"""The trigger phrases and cue words: sectioned data files that ship with the package."""

from __future__ import annotations

import re
from collections import Counter
from importlib import resources
from types import ModuleType

import pytest

from memledger.extraction import (
    finite_verbs,
    frames,
    lexicon,
    name_guess,
    passives,
    patterns,
    polarity,
    triggers,
)
from memledger.extraction import gazetteer as gz

# Listed here, not taken from the modules, so a file dropped from both still fails.
SECTIONED_FILES = {
    "trigger_phrases.txt": triggers,
    "clause_words.txt": triggers,
    "cue_words.txt": patterns,
    "frame_words.txt": frames,
}
HEADER = re.compile(r"\[[A-Z_]+\]")
# LEAVE is not in RELATIONS or STRENGTH: clauses.py reads it as leaving an organization.
HANDLED_KINDS = set(triggers.RELATIONS) | set(triggers.STRENGTH) | {"LEAVE"}


def test_every_lexicon_file_ships_as_package_data() -> None:
    files = resources.files("memledger.extraction") / "lexicon"
    shipped = {p.name for p in files.iterdir() if p.name.endswith(".txt")}
    assert shipped == set(SECTIONED_FILES) | set(gz.LEXICON_FILES) | set(name_guess.LEXICON_FILES)


@pytest.mark.parametrize("name", sorted(SECTIONED_FILES))
def test_sectioned_file_has_clean_lines(name: str) -> None:
    text = (lexicon.LEXICON / name).read_text(encoding="utf-8")
    assert text.endswith("\n")
    entries = lexicon.entries(name)
    assert HEADER.fullmatch(entries[0]), f"{name}: the first entry is not a [NAME] header"
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}: {line!r}"
        assert line == line.strip(), where
        assert "\t" not in line, where
        assert "  " not in line, where
        if line.startswith("["):
            assert HEADER.fullmatch(line), where
        elif line and not line.startswith("#"):
            assert line == line.lower(), where


@pytest.mark.parametrize("name", sorted(SECTIONED_FILES))
def test_sections_are_unique_non_empty_and_free_of_duplicates(name: str) -> None:
    headers = [entry for entry in lexicon.entries(name) if HEADER.fullmatch(entry)]
    assert [header for header, count in Counter(headers).items() if count > 1] == []
    for section, entries in lexicon.sections(name).items():
        assert entries, f"{name}: [{section}] is empty"
        assert [entry for entry, count in Counter(entries).items() if count > 1] == [], f"{name}: [{section}]"


def _loaded(module: ModuleType, section: str) -> object:
    return getattr(module, section, None) or getattr(module, f"_{section}")


@pytest.mark.parametrize("name", ["clause_words.txt", "cue_words.txt"])
def test_each_word_list_section_feeds_the_list_of_its_name(name: str) -> None:
    module = SECTIONED_FILES[name]
    for section, entries in lexicon.sections(name).items():
        loaded = _loaded(module, section)
        if isinstance(loaded, tuple):
            assert loaded == tuple(entries), section
        elif section == "LOWER_PERSON_NEXT":  # words added to PERSON_NEXT
            assert loaded == patterns.PERSON_NEXT | frozenset(entries)
        elif section == "PROJECT_NOUNS":  # undertakings are project nouns too
            assert loaded == patterns.UNDERTAKINGS | frozenset(entries)
        elif section == "INFORMAL":  # "<as written> <read as>" pairs
            assert loaded == dict(entry.split(" ", 1) for entry in entries)
        else:
            assert loaded == frozenset(entries), section


def test_frame_words_feed_the_frames_slots_and_polarity() -> None:
    words = lexicon.sections("frame_words.txt")
    assert frozenset(words["USED_BY"]) == finite_verbs.USED_BY and frozenset(words["LED"]) == finite_verbs.LED
    assert frozenset(words["MADE_BY"]) == passives.MADE_BY
    assert frozenset(words["WANTING"]) == frames._WANTING
    assert frozenset(words["UNSETTLED"]) == polarity.UNSETTLED
    assert ("ruled", "out") in polarity.REJECTION_PHRASES
    assert all(len(entry.split()) == 2 for entry in words["PAST_PHRASES"])


def test_trigger_kinds_are_the_handled_ones() -> None:
    kinds = lexicon.sections("trigger_phrases.txt")
    assert set(kinds) == HANDLED_KINDS
    assert set(kinds) >= triggers.MODIFIER_KINDS
    assert {kind: tuple(phrases) for kind, phrases in kinds.items()} == triggers._PHRASES


def test_no_phrase_belongs_to_two_kinds() -> None:
    phrases = [phrase for entries in lexicon.sections("trigger_phrases.txt").values() for phrase in entries]
    assert [phrase for phrase, count in Counter(phrases).items() if count > 1] == []


def test_longer_trigger_phrase_wins_over_its_prefix() -> None:
    assert [(t.kind, t.start, t.end) for t in triggers.find_triggers(["built", "on", "top", "of", "x"])] == [
        ("DEPEND", 0, 4)
    ]
    assert [t.kind for t in triggers.find_triggers(["i", "work", "at", "x"])] == ["AT"]
