"""The heuristic extractor's shortcuts change no answer.

- ``fact_patterns._search`` skips a pattern's search when the text lacks every word
  the pattern needs: on strings made from each pattern's own parse tree (every branch
  of it, so nearly all match) and on the labelled corpus, it finds exactly what the
  search does.
- ``shapes.odd_shape`` answers a plain lower-case word at once: the same answer as
  the full test, on every kind of word.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from memledger.extraction import fact_patterns as hf
from memledger.extraction import shapes
from memledger.extraction.patterns import split_sentences

try:  # the regex parser: re._parser from Python 3.11, sre_parse before
    from re import _parser as re_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse as re_parser

CORPUS = Path(__file__).resolve().parents[1] / "data" / "extraction_corpus.jsonl"
FILLER = [
    "i",
    "we",
    "my",
    "our",
    "you",
    "it",
    "the",
    "a",
    "to",
    "is",
    "are",
    "was",
    "of",
    "for",
    "and",
    "but",
    "so",
    "not",
    "just",
    "really",
    "still",
    "data",
    "team",
    "this",
    "that",
]


def _generate(tree: Any, rng: random.Random) -> str:
    """A random string of the regex parse ``tree``: a random branch of each alternation,
    a few repetitions of each repeat, a random character of each class. Most match."""
    out = []
    for op, arg in tree:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name in ("NOT_LITERAL", "ANY"):
            out.append(rng.choice("abcxyz"))
        elif name == "IN":
            out.append(_from_class(arg, rng))
        elif name == "BRANCH":
            out.append(_generate(rng.choice(arg[1]), rng))
        elif name == "SUBPATTERN":
            out.append(_generate(arg[-1], rng))
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, sub = arg
            out.extend(_generate(sub, rng) for _ in range(rng.randint(low, min(high, low + 3))))
        # anchors and look-arounds produce nothing
    return "".join(out)


def _from_class(items: Any, rng: random.Random) -> str:
    if str(items[0][0]) == "NEGATE":
        return rng.choice("abcxyz ")
    op, arg = rng.choice(items)
    if str(op) == "LITERAL":
        return chr(arg)
    if str(op) == "RANGE":
        return chr(rng.randint(*arg))
    return {"CATEGORY_DIGIT": "7", "CATEGORY_SPACE": " "}.get(str(arg), rng.choice("abz"))


def _sentences(pattern: re.Pattern[str], count: int, seed: int = 7) -> list[str]:
    """Strings the pattern's own parse tree makes, between a few words of filler."""
    rng = random.Random(seed)
    tree = re_parser.parse(pattern.pattern)
    out = []
    for _ in range(count):
        anchored = pattern.pattern.startswith("^")  # filler before would never match
        before = "" if anchored else " ".join(rng.choice(FILLER) for _ in range(rng.randint(0, 2)))
        after = " ".join(rng.choice(FILLER) for _ in range(rng.randint(0, 2)))
        out.append(f"{before} {_generate(tree, rng)} {after}".strip())
    return out


def _corpus_sentences() -> list[str]:
    lines = [json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [s.lower() for text in lines for s in split_sentences(text)]


def _span(match: re.Match[str] | None) -> tuple[object, ...] | None:
    return None if match is None else (match.span(), match.groups())


@pytest.mark.parametrize("pattern", list(hf._NEEDS), ids=lambda p: p.pattern[:30])
def test_a_skipped_search_is_one_that_finds_nothing(pattern: re.Pattern[str]) -> None:
    found = 0
    for text in _sentences(pattern, 3000) + _corpus_sentences():
        expected = _span(pattern.search(text))
        assert _span(hf._search(pattern, text)) == expected, text
        found += expected is not None
    assert found > 1000  # the strings exercise the pattern, every branch of it


def test_every_pattern_the_facts_search_is_guarded() -> None:
    searched = {hf._PREFERS, hf._CONSTRAINT, hf._BUDGET, hf._DEADLINE, hf._GOAL, hf._PROCEDURE}
    searched |= {hf._TERM, hf._TASK, hf._DECISION, hf._PROJECT_RULE} | {pattern for _, pattern in hf._PERSONAL}
    assert searched == set(hf._NEEDS)


def _odd_shape_in_full(word: str) -> bool:
    if word[-1] == "s" and word[:-1].isupper():
        return False
    inner_upper = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
    has_digit = any(c.isdigit() for c in word) and word[0].isupper()
    dotted = "." in word.strip(".") and word.rsplit(".", 1)[-1].isalpha()
    return inner_upper or has_digit or dotted


WORDS = [
    "go",
    "vim",
    "nRF52",
    "macOS",
    "GPT-4",
    "fly.io",
    "SLAs",
    "APIs",
    "gpt-4",
    "k8s",
    "ß",
    "straße",
    "ǅemal",
    "ǆ",
    "éa",
    "a.b",
    "node.js",
    "v2.0",
    "x86",
    "iPhone",
    "eBay",
    "ok.",
    ".net",
    "S",
    "s",
    "İstanbul",
    "ﬁle",
]


@pytest.mark.parametrize("word", WORDS)
def test_the_shortcut_for_plain_words_gives_the_full_answer(word: str) -> None:
    assert shapes.odd_shape(word) == _odd_shape_in_full(word)
