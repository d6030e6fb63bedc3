"""Comments and docstrings of src/memledger say what the code is for and why.

Measured figures (milliseconds, events per second, megabytes, a benchmark's
percentages, percentiles, tuning rounds) and narratives of what the code used to do
belong in CHANGELOG.md and docs/, not in the source: they go stale the day the code
or the machine changes. This scans every comment (tokenize) and docstring (ast).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src" / "memledger"

# Each pattern with what it catches; tuned so ordinary prose ("a round trip", "round
# brackets", "a fact that no longer holds", an example such as "4GB") passes.
PATTERNS: dict[str, re.Pattern[str]] = {
    "a duration": re.compile(r"\d(?:[\d,.]*\d)?\s*(?:ms|µs|us)\b"),
    "a rate": re.compile(r"\d(?:[\d,.]*\d)?\s*(?:events?|rows|requests|turns)?/s\b"),
    "a size": re.compile(r"\d(?:[\d.]*\d)?\s+(?:[KMG]B)\b"),
    "a percentage": re.compile(r"\d\s?%(?![0-9A-Fa-f]{2})"),
    "a ratio": re.compile(r"\b\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?x (?:faster|slower|cheaper|more|less)\b"),
    "a percentile": re.compile(r"\bp(?:50|90|95|99)\b", re.IGNORECASE),
    "a tuning round": re.compile(
        r"\bround \d+\b|\b(?:\d+(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth"
        r"|eleventh|twelfth) round\b",
        re.IGNORECASE,
    ),
    "a measurement": re.compile(r"\bmeasured (?:on|at|~?\d)|\b(?:was|were) ~?\d|\binstead of ~?\d", re.IGNORECASE),
    "history": re.compile(
        r"\bused to\b|\bpreviously\b|\bformerly\b|\bbefore this change\b"
        r"|\(before[,:]|:\s*before,|\bthe only way before\b",
        re.IGNORECASE,
    ),
    # "no longer" of what the code does; of what a speaker or the ledger says it is prose.
    "no longer": re.compile(
        r"\bno longer\b(?! (?:holds?|stands?|fits?|shows?|names?|said|lines? up|allergic|true|wanted))", re.IGNORECASE
    ),
}


def comments_and_docstrings(text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every line of every docstring."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = node.body[0] if node.body else None
            if (
                isinstance(docstring, ast.Expr)
                and isinstance(docstring.value, ast.Constant)
                and isinstance(docstring.value.value, str)
            ):
                for offset, line in enumerate(docstring.value.value.splitlines()):
                    yield docstring.lineno + offset, line


def findings(text: str) -> list[tuple[int, str, str]]:
    """(line, pattern name, text) of each comment or docstring line a pattern matches."""
    found = []
    for line, words in comments_and_docstrings(text):
        for name, pattern in PATTERNS.items():
            if pattern.search(words):
                found.append((line, name, words.strip()))
    return found


def test_source_comments_and_docstrings_quote_no_figures_and_no_history() -> None:
    problems = [
        f"{path.relative_to(SOURCE.parents[1])}:{line}: {name}: {words}"
        for path in sorted(SOURCE.rglob("*.py"))
        for line, name, words in findings(path.read_text(encoding="utf-8"))
    ]
    assert not problems, "move figures and history to CHANGELOG.md or docs/:\n" + "\n".join(problems)


# Lines that were in the source before they moved to CHANGELOG.md: each must be caught.
REMOVED = [
    "# file gives vectors 0.5-2 % away: another model's, never compared with these.",
    "# server's resident memory climbed from 0.3 to 1.2 GB and stayed (scripts/soak.py).",
    "product is a float32 one over 42 MB of weights: ~8 ms for a short request on this",
    "# test costs a fraction of a search (the searches were ~0.3 ms of every turn's extraction,",
    "# records measured ~25 % cheaper for the server than building jsonb first.",
    "once per request: 0.1 ms for 384 numbers, against 0.36 ms in the shortest form.",
    "sorted them all instead of reading the HNSW index (2 -> 270 ms for 5,500 vectors).",
    "for the longer of the two, not their sum (one caller: p50 -3 ms).",
    "that made the p99 271 ms instead of 204 (docs/benchmarks-context.md, twelfth round).",
    "p99 fell by 15-20 % in the same run, at the same throughput; docs/benchmarks-context.md).",
    "# generic plans, the same selections took 7.4 ms of PostgreSQL's CPU instead of 10.7",
    "# live v4 copy is ~20 % slower until rebuilt.)",
    "# (p99 70 ms) for 237 edges, and takes 11 ms (p99 25 ms) for 76.",
    "# requests of a tenant never queue on one stream's append lock. (Before, all went",
    "# a request with both coding and formatting words wants both kinds of facts (before: the more);",
    "# Measured on two conversation sets, the built one and a held-out one written apart",
    "and was converted anew each time: ~1 ms of CPU per request. The bound is a module",
    "~15 % faster. The statement still runs through SQLAlchemy, so errors are",
    "# expands, which measured 3-4x faster than executemany or unnest(arrays)",
    "# search would read every row of the tenant (7.7 ms instead of 0.1 ms at 6,000 facts).",
    'real words do: "What is the capital of Mongolia?" was 0.80 to 0.89 (cosine) from',
    "the conflict flag no longer says that the user said both sides. 5: item ids and",
    "source turns cited exactly at any length (``cite``: before, cleaned and cut at 64",
    'not to become memory (before: "Forget that I use Vim." stored that Ada uses Vim).',
    "# float32 products instead (``int8_products=False``, the only way before), the same",
    "# The projector used to read each event twice; it appends 12,000 events/s.",
    "# Previously the runner took one lock per batch (round 3 of the tuning).",
    "is logged and waited out the same way, up to ``MAX_ERROR_WAIT_S``: before, the",
]

# Prose the patterns must let through.
KEPT = [
    "# select and record in one transaction of one connection: fewer round trips",
    "round brackets.",
    '# are two facts, and "I\'m no longer allergic to peanuts" supersedes the first alone.',
    'An edge the speaker says no longer holds ("I don\'t use X anymore").',
    '# quantities and versions ("4GB", "3.11"), and "I"',
    "percent-encoded as in a URL (its UTF-8 bytes: ``%2C``, ``%20``, ``%E2%80%9D``),",
    "can commit after one that took 102, and a reader that already moved past 102",
    "# Before version 5, brackets inside the id become round ones, so an id cannot",
    "# characters alone: measured, not composed",
    "at exit (a traceback); the output is no longer wanted, so the command ends quietly.",
]


@pytest.mark.parametrize("line", REMOVED)
def test_each_removed_figure_or_history_line_is_caught(line: str) -> None:
    assert findings(line if line.startswith("#") else f'"""{line}"""'), line


@pytest.mark.parametrize("line", KEPT)
def test_prose_about_the_code_as_it_is_passes(line: str) -> None:
    assert not findings(line if line.startswith("#") else f'"""{line}"""'), line
