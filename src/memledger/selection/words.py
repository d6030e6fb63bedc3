"""The words of a request, ready for a full-text query. Pure."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "tell",
        "know",
        "please",
        "use",
        "using",
        "used",
        "want",
        "need",
        "think",
        "like",
        "get",
        "got",
        "make",
        "made",
        "also",
        "still",
        "really",
    ]
)
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "our", "us"})


def query_words(text: str, *, limit: int = 16) -> list[str]:
    """Distinct content words of ``text``, lower-cased, in order (safe for to_tsquery)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS and len(word) > 1:
            seen.setdefault(word, None)
    return list(seen)[:limit]


def speaks_of_self(text: str) -> bool:
    """Whether the request is about the speaker ("what tools do I use")."""
    return any(word in FIRST_PERSON for word in _WORD.findall(text.lower()))


# A request that gives the assistant an errand does it for the person, whose preferences,
# needs and plans bear on it ("Book a table for dinner" and their diet). Writing, finding
# or making something ("Write a haiku about autumn") is not one: it says whose it is
# with "my" or "me" when it is theirs.
_TASK = re.compile(
    r"^\W*(?:(?:hey|hi|ok|okay|so),?\s+)?(?:(?:please|pls)\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?:book|reserve|order|buy|plan|schedule|arrange|organi[sz]e|send|email|remind|recommend|suggest)\b",
    re.IGNORECASE,
)


def asks_a_task(text: str) -> bool:
    """Whether the request asks the assistant to do something for the person
    ("Book a table for dinner", "Could you draft the invite?")."""
    return _TASK.match(text) is not None
