"""The gazetteer's word lists: data files that ship with the package, and the phrase matcher."""

from __future__ import annotations

import tomllib
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from memledger.extraction import gazetteer as gz

ROOT = Path(__file__).resolve().parents[2]
# Listed here, not taken from the module, so a file dropped from both still fails.
EXPECTED_FILES = (
    "concepts.txt",
    "given_names.txt",
    "not_names.txt",
    "org_suffixes.txt",
    "organizations.txt",
    "personal_roles.txt",
    "service_roles.txt",
    "places.txt",
    "primarily_organizations.txt",
    "tools.txt",
    "trade_nouns.txt",
    "work_roles.txt",
)
MARKED_FILES = {"tools.txt", "organizations.txt", "concepts.txt"}  # where "~" means "needs a capital"


def test_every_lexicon_file_ships_as_package_data() -> None:
    lexicon = resources.files("memledger.extraction") / "lexicon"
    assert all((lexicon / name).is_file() for name in EXPECTED_FILES)
    # The directory also holds the trigger and cue word files (test_extraction_lexicon.py).
    assert set(EXPECTED_FILES) <= {p.name for p in lexicon.iterdir() if p.name.endswith(".txt")}
    assert sorted(gz.LEXICON_FILES) == sorted(EXPECTED_FILES)
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "lexicon/*.txt" in package_data["memledger.extraction"]


@pytest.mark.parametrize("name", EXPECTED_FILES)
def test_lexicon_file_has_clean_lines(name: str) -> None:
    text = (gz.LEXICON / name).read_text(encoding="utf-8")
    assert text.endswith("\n")
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}: {line!r}"
        assert line == line.strip(), where
        assert "\t" not in line, where
        assert "  " not in line, where
        if line and not line.startswith("#"):
            assert line == line.lower(), where
            assert name in MARKED_FILES or "~" not in line, where
            assert name == "tools.txt" or not line.startswith("["), where


@pytest.mark.parametrize("name", sorted(set(EXPECTED_FILES) - {"tools.txt"}))
def test_lexicon_list_has_no_duplicates(name: str) -> None:
    entries = [entry.lstrip("~") for entry in gz.read_entries(name)]
    assert entries
    assert [entry for entry, count in Counter(entries).items() if count > 1] == []


def test_each_tool_belongs_to_one_kind() -> None:
    kinds = gz.read_tool_kinds()
    assert all(kinds.values())
    names = [entry.lstrip("~") for entries in kinds.values() for entry in entries]
    assert [name for name, count in Counter(names).items() if count > 1] == []
    assert len(names) == len(gz.TOOL_KIND)


def test_loaded_tables_are_not_empty() -> None:
    tables = (
        gz.TOOL_KIND, gz.ORGANIZATIONS, gz.CONCEPTS, gz.NEEDS_CAPITAL, gz.PRIMARILY_ORGANIZATIONS,
        gz.GIVEN_NAMES, gz.ORG_SUFFIXES, gz.NOT_NAMES, gz.PLACES, gz.WORK_ROLES, gz.PERSONAL_ROLES,
        gz.ROLES, gz.FIRST_WORDS, gz.KNOWN_NAMES,
    )  # fmt: skip
    assert all(len(table) > 0 for table in tables)


def test_tilde_marks_a_name_that_needs_a_capital() -> None:
    assert gz.tool_kind("go") == "programming language"
    assert "go" in gz.NEEDS_CAPITAL
    assert "kotlin" not in gz.NEEDS_CAPITAL
    assert "~go" not in gz.TOOL_KIND


def test_each_word_of_a_multi_word_place_is_a_place() -> None:
    assert {"new york", "new", "york"} <= gz.PLACES


def test_longest_known_finds_the_longest_phrase() -> None:
    lows = ["we", "moved", "to", "google", "cloud", "platform", "last", "year"]
    assert gz.longest_known(lows, 3) == 3
    assert gz.known_lengths(lows, 3) == (3, 2, 1)  # "google cloud platform", "google cloud", "google"
    assert gz.longest_known(["ruby", "on", "rails"], 0) == 3


def test_longest_known_respects_token_boundaries() -> None:
    assert gz.longest_known(["googles"], 0) == 0
    assert gz.longest_known(["google", "cloudy"], 0) == 1
    assert gz.longest_known(["ruby", "on", "railsy"], 0) == 1
    assert gz.longest_known(["my", "cloud", "run"], 0) == 0
    assert gz.longest_known(["my", "cloud", "run"], 1) == 2
    assert gz.longest_known(["redis"], 1) == 0


def test_known_lengths_match_the_first_words_loop() -> None:
    """The trie answers as the join loop over FIRST_WORDS it replaces, for every known name."""
    for name in gz.KNOWN_NAMES:
        lows = ["my", *name.split(), "and", *name.split()[:1]]
        for i in range(len(lows)):
            longest = gz.FIRST_WORDS.get(lows[i], 0)
            joined = tuple(
                length
                for length in range(min(longest, len(lows) - i), 0, -1)
                if " ".join(lows[i : i + length]) in gz.KNOWN_NAMES
            )
            assert gz.known_lengths(lows, i) == joined, (name, i)
