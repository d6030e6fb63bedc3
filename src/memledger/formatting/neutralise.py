"""Stored text is data, never instructions: make it safe to quote inside the block.

Every string that came from storage (an item's text, scope keys, categories, the
selector's empty reason; the cited ids before formatter version 5) goes through
:func:`clean` before it is rendered. Cleaning guarantees, whatever the input:

- one line: every run of whitespace (newlines, tabs, Unicode line and paragraph
  separators, exotic spaces) becomes one plain space, so stored text can never
  start a line of the block and forge a heading, an item, a marker or a role;
- no invisible characters: control, format and surrogate characters (Unicode
  Cc, Cf, Cs: NUL, zero-width spaces and joiners, bidi overrides, the BOM, tag
  characters used for "ASCII smuggling") and the non-characters U+FFFE/U+FFFF
  are removed, which also keeps the XML style well-formed;
- no markup: ``<`` and ``>`` (and their full-width and bracket look-alikes) become
  single angle quotation marks (U+2039, U+203A), so ``</memory>``, ``<item``, ``]]>``, ``<|im_end|>`` and the
  block's own ``<<<`` markers cannot be written by stored text; curly double
  quotes become straight ones, so text cannot close the quotation it is wrapped
  in; fences (three or more backticks or tildes) become ``'''``; runs of three or
  more ``-``, ``=`` or ``#`` shrink to one character; ``[INST]``-style tags get
  round brackets.

:func:`neutralise` also flags text that looks like an order to the model or an
attempt to forge structure ("ignore previous instructions", "you are now",
"new instructions:", role markers at line starts, chat-template tokens…), so the
formatter can prefix it with a visible :data:`QUOTED_MARK`. Detection runs on a
folded copy (compatibility-decomposed, without combining marks or invisible
characters, case-folded, common Cyrillic and Greek look-alikes mapped to Latin),
so full-width, accented or homoglyph letters and zero-width joiners do not hide
a phrase, and terminal escape sequences ("\\x1b[2J") do not hide a role marker;
the text itself keeps its letters as typed.

Ids are not cleaned: a cleaned id is another id, and a shortened one none at all.
:func:`cite` renders an id the block cites (an item's id, its source turns) exactly,
percent-encoding what could break the block; :func:`uncite` gives the stored id back.
"""

from __future__ import annotations

import re
import string
import unicodedata
import urllib.parse
from functools import lru_cache
from typing import Final

import msgspec

from memledger.events.keys import stream_safe

QUOTED_MARK: Final = "[quoted user text]"
"""Prefix of stored text that reads like an order or like the block's structure."""

ELLIPSIS: Final = "…"

CITABLE: Final = frozenset(string.ascii_letters + string.digits + "-_.:/@|")
"""What :func:`cite` shows as it is: none of it opens or closes a bracket, a
quotation, a tag or an attribute, separates a list (comma, space) or hides."""

_WHITESPACE: Final = re.compile(r"\s+")
_LINE_BREAKS: Final = re.compile(r"[\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_DROPPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs"})
_NON_CHARACTERS: Final = frozenset({"\ufffe", "\uffff"})
_OPENERS: Final = "<\uff1c\ufe64\u3008\u27e8\u2329"
_CLOSERS: Final = ">\uff1e\ufe65\u3009\u27e9\u232a"
_DOUBLE_QUOTES: Final = "\u201c\u201d\u201e\u201f\u2033\u301d\u301e\uff02"
_LOOKALIKES: Final = str.maketrans(
    {**dict.fromkeys(_OPENERS, "\u2039"), **dict.fromkeys(_CLOSERS, "\u203a"), **dict.fromkeys(_DOUBLE_QUOTES, '"')}
)
# The main blocks of combining marks (what "zalgo" text stacks); enough for detection.
_COMBINING: Final = re.compile(
    "[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f]"
)
_HOMOGLYPHS: Final = str.maketrans(
    "\u0430\u0435\u0456\u043e\u0440\u0441\u0443\u0445\u0455\u0458\u04cf\u0501\u03bf\u03b9\u03b1\u03bd\u03c4\u03ba",
    "aeiopcyxsjldoiavtk",
)
_LOOKALIKE_CHARS: Final = re.compile(f"[{re.escape(_OPENERS + _CLOSERS + _DOUBLE_QUOTES)}]")
_FENCES: Final = re.compile(r"[`\uff40]{3,}|~{3,}")
_FENCE_CHARS: Final = re.compile(r"[`\uff40~]")
_RUNS: Final = re.compile(r"([-=#])\1{2,}")
_HYPHEN_RUNS: Final = re.compile(r"-{3,}")
_BRACKET_TAGS: Final = re.compile(
    r"\[(\s*/?\s*(?:inst|sys|system|user|assistant|memory|item|context)\s*)\]", re.IGNORECASE
)

_ANSI_ESCAPES: Final = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-_])")
# The marker's lead-in stays on its line: "[\W_]*" would also take the line breaks
# after it, so each of a long run of empty lines would scan the whole run (quadratic).
_ROLE_AT_LINE_START: Final = re.compile(
    r"^(?:[^\w\n]|_)*(?:system|assistant|user|human|developer|tool|ai|model)\s*:", re.IGNORECASE | re.MULTILINE
)
_SUSPICIOUS_PATTERNS: Final = tuple(
    pattern
    for pattern in (
        # orders aimed at the model
        r"\b(?:ignore|disregard|forget|override|bypass|skip)\b.{0,40}?"
        r"\b(?:instructions?|prompts?|rules?|messages?|context|guidelines|directions|memory|memories|constraints)\b",
        r"\bforget (?:everything|all|what|that|about|your)\b",
        r"\bdisregard (?:the|all|any|everything|previous|prior|above|this|that)\b",
        r"\byou are (?:now|no longer)\b",
        r"\bnew (?:instructions?|rules|system prompt|task)\b",
        r"\b(?:act|behave|respond) as\b",
        r"\b(?:pretend|roleplay)\b",
        r"\bfrom now on\b",
        r"\bsystem prompt\b",
        r"\bdeveloper mode\b",
        r"\bjailbr[eo]ak",
        r"\bdo anything now\b",
        r"\b(?:reveal|print|show|output|repeat|leak)\b.{0,20}?\b(?:system|prompt|instructions)\b",
        r"\b(?:do not|don't|never) (?:tell|inform|mention|reveal)\b",
        r"\b(?:begin|end|start|close) (?:of )?(?:persistent |the )?(?:memory|context|block|instructions)\b",
        r"\binstructions?\s*:",
        r"\b(?:it|this|they|these|memory|items?) (?:is|are) (?:instructions|orders|commands)\b(?![-\w])",
        r"\btells? you (?:what|how) to\b",
        # attempts to forge the block's or a chat template's structure
        r"<\s*/?\s*(?:memory|item|notice|system|user|assistant|instructions?|s)\b",
        r"<\||\|>|<<\s*/?\s*sys\s*>>|\]\]>|<!\[cdata\[|<!--|-->",
        r"\bim_(?:start|end)\b|\bendoftext\b",
        r"\[\s*/?\s*(?:inst|sys|system|user|assistant|memory|item|context)\s*\]",
        r"```|~~~|-{3,}|={3,}|#{2,}",
        r"\"role\"\s*:\s*\"(?:system|assistant|user|developer|tool)\"",
        # a quotation closed (or a new one opened) to put a role marker after it
        r"[\"'\u2018\u2019\u201c\u201d\u00ab\u00bb\u301d\u301e\u301f]\W{0,3}"
        r"(?:system|assistant|user|human|developer)\s*:",
        # this formatter's own marks: the suspicion mark, an item's citation
        r"\[quoted user text\]|\]\s*\((?:fact|entity|relationship|turn),\s*confidence\b",
    )
)
# The first characters a match of a pattern that does not start with "\b" can
# start with (a unit test derives them from the patterns).
_MARKUP_LEADS: Final = "<|[]`~-=#\"'\u2018\u2019\u201c\u201d\u00ab\u00bb\u301d\u301e\u301f"


def _one_scan(patterns: tuple[str, ...]) -> re.Pattern[str]:
    r"""One regex that finds a match in a text iff one of ``patterns`` does.

    The text is scanned once instead of once per pattern, in a shape Python's
    engine (which tries every branch of an alternation at every position) runs
    fast: the patterns that start with ``\b`` share that one check, which fails at
    once inside a word, and the others wait behind a lookahead for their first
    character. Alternation is associative, so the patterns need no grouping; a
    pattern that starts with ``\b`` must start every one of its branches with it
    (a unit test checks).
    """
    words = "|".join(pattern.removeprefix(r"\b") for pattern in patterns if pattern.startswith(r"\b"))
    marks = "|".join(pattern for pattern in patterns if not pattern.startswith(r"\b"))
    return re.compile(rf"\b(?:{words})|(?=[{re.escape(_MARKUP_LEADS)}])(?:{marks})")


_SUSPICIOUS: Final = _one_scan(_SUSPICIOUS_PATTERNS)


class Neutralised(msgspec.Struct, frozen=True):
    """Stored text made safe to quote, and whether it read like an order or markup."""

    text: str
    suspicious: bool


def clean(text: str) -> str:
    """``text`` on one line, without invisible characters or markup (see the module doc)."""
    text = _flat(_visible(_flat(text))).strip()
    # Each step runs only when a quick scan (in C) finds what it would change:
    # str.translate looks every character up in a dict, and a replacement with a
    # template (r"\1") calls into Python even when nothing matches.
    if _LOOKALIKE_CHARS.search(text):
        text = text.translate(_LOOKALIKES)
    if _FENCE_CHARS.search(text):
        text = _FENCES.sub("'''", text)
    if _RUNS.search(text):
        text = _RUNS.sub(r"\1", text)
    if _BRACKET_TAGS.search(text):
        text = _BRACKET_TAGS.sub(r"(\1)", text)
    return text


@lru_cache(maxsize=8192)  # pure; a tenant's memories are rendered again and again
def neutralise(text: str) -> Neutralised:
    """:func:`clean` ``text``, and flag it when it reads like an order or like markup."""
    return Neutralised(clean(text), is_suspicious(text))


def is_suspicious(text: str) -> bool:
    """Whether ``text`` gives orders to the model or imitates a block, tag or role marker.

    Best effort: it catches the common phrasings and their Unicode disguises, not
    every paraphrase. The block's safety rests on :func:`clean` and on quoting;
    the flag only makes an attempt visible.
    """
    if _looks_hostile(_fold(text, "")):
        return True
    # Printable text has no invisible character (nor line break) to replace, so the
    # second folding would give the same text again.
    return not text.isprintable() and _looks_hostile(_fold(text, " "))


@lru_cache(maxsize=8192)  # pure; ids repeat across items and blocks
def cite(value: str) -> str:
    """``value``, an id the block cites, exactly and at any length, in a form that
    cannot break the block (formatter version 5 on).

    The characters of :data:`CITABLE` are shown as they are; every other one is
    percent-encoded as in a URL (its UTF-8 bytes: ``%2C``, ``%20``, ``%E2%80%9D``),
    ``%`` itself included, and so is each hyphen of a run of three or more (a
    markdown rule, a forged ``---END``). So an id cannot close its brackets, open a
    tag or read as two ids of a list, and :func:`uncite` gives the stored id back.
    ASCII letters only: a letter of another script may look like a space or a
    quotation mark (U+3164, U+02EE).
    """
    if CITABLE.issuperset(value) and "---" not in value:  # nearly every id: shown as stored
        return value
    encoded = "".join([ch if ch in CITABLE else _percent(ch) for ch in value])
    return _HYPHEN_RUNS.sub(lambda run: "%2D" * len(run.group()), encoded)


def uncite(cited: str) -> str:
    """The stored id :func:`cite` rendered as ``cited`` (``urllib.parse.unquote``).
    Raises ``UnicodeDecodeError`` when its percent-encoded bytes are not UTF-8."""
    return urllib.parse.unquote(cited, errors="strict")


def _percent(ch: str) -> str:
    # surrogatepass: a lone surrogate (never stored: PostgreSQL refuses it) still renders.
    return "".join([f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass")])


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def _visible(text: str, replacement: str = "", keep: str = "") -> str:
    """``text`` with every control, format, surrogate and non-character replaced
    (by nothing by default), except the characters in ``keep``."""
    if text.isprintable():  # the common case, checked in C; dropped characters are never printable
        return text
    return "".join([ch if ch in keep or ch.isprintable() or _kept(ch) else replacement for ch in text])


def _kept(ch: str) -> bool:
    return unicodedata.category(ch) not in _DROPPED_CATEGORIES and ch not in _NON_CHARACTERS


def _fold(text: str, invisible: str) -> str:
    # Newlines survive folding (role markers are looked for at line starts). An
    # invisible character may split a word ("ig\u200bnore") or stand for a space
    # ("ignore\u200bprevious"), so callers try both replacements. Compatibility
    # decomposition then dropping combining marks turns full-width, accented and
    # "zalgo" letters into plain ones; a few Cyrillic and Greek look-alikes are
    # mapped too. Best effort, for detection only.
    if text.isascii() and text.isprintable():
        # The common case, checked in C: no escape, line break, invisible, accented
        # or look-alike character to handle, and casefold() is lower().
        return text.lower()
    text = _ANSI_ESCAPES.sub("", text)
    lines = _visible(_LINE_BREAKS.sub("\n", text), invisible, keep="\n")
    plain = _COMBINING.sub("", unicodedata.normalize("NFKD", stream_safe(lines)))
    return plain.casefold().translate(_HOMOGLYPHS)


def _looks_hostile(folded: str) -> bool:
    if _ROLE_AT_LINE_START.search(folded):
        return True
    return _SUSPICIOUS.search(_flat(folded)) is not None


def _flat(text: str) -> str:
    """``text`` with every run of whitespace turned into one space."""
    if text.isprintable() and "  " not in text:  # the only printable whitespace is the space
        return text
    return _WHITESPACE.sub(" ", text)
