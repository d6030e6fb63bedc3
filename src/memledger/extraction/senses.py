"""Which sense a fact's cue word has, told by grammar. Pure.

"must" states a rule ("data must be encrypted") or an inference ("that must have been
hard"); "means" defines a term ("DLQ means dead-letter queue") or values something
("your help means a lot to me"); "I'd love to ..." is a wish, not a taste. Only the
first of each pair is a fact.
"""

from __future__ import annotations

import re
from typing import Final

from memledger.extraction.patterns import word_set

_PRONOUN_SUBJECTS: Final = word_set("that this it you")
_DEGREE: Final = word_set("so such really truly very pretty quite totally absolutely incredibly super")
_COPULAS: Final = word_set("be feel look seem sound")
_IRREGULAR_PARTICIPLES: Final = word_set(
    "been done gone seen known taken given made had got gotten come become run said told found "
    "thought felt left lost kept met paid put read sent spent won hurt let set cut brought bought "
    "caught taught built heard held meant sold stood understood written eaten fallen forgotten "
    "chosen driven ridden broken spoken woken worn torn grown drawn flown shown thrown begun sung"
)


def participle(word: str) -> bool:
    """Whether ``word`` has a past participle's form ("tried", "taken", "been", "hurt")."""
    return word in _IRREGULAR_PARTICIPLES or (len(word) > 3 and word.endswith("ed"))


def epistemic(subject: str, tail: list[str]) -> bool:
    """Whether a modal ("must", "has to", "can't") after ``subject`` infers rather than
    rules, given the words after it: a modal perfect ("must have been", "must have hurt"),
    or a copula judging a pronoun ("that must be nice", "you must feel so ..."), unless
    passive ("this must be done by Friday")."""
    if not tail:
        return False
    head, rest = tail[0], [w for w in tail[1:] if w not in _DEGREE]
    degree = len(rest) < len(tail) - 1  # "so nice", "really hurt": said with feeling
    if head in ("have", "'ve") and rest and participle(rest[0]):
        return True
    if head not in _COPULAS or subject not in _PRONOUN_SUBJECTS:
        return False
    if rest and participle(rest[0]) and not degree:
        return False
    return subject != "it" or head != "be" or degree


def inferred(rule: re.Match[str]) -> bool:
    """Whether a matched rule ("<subject> must <tail>", the tail its first group) is an
    inference ("that must have been hard"); a relative "that" ("a value that cannot be
    ...") is its noun's, so the rule stands."""
    subject, tail = rule.group(0).split()[0], (rule.group(1) or "").split()
    before = rule.string[: rule.start()].split()[-1:]
    if subject == "that" and before and before[0][-1:].isalnum() and before[0] not in _LEADS:
        return False
    return bool(tail) and epistemic(subject, tail)


_LEADS: Final = word_set("and but so oh well yes no because")
_CLOSED: Final = word_set(
    "it this that which what who everything nothing something anything all he she they we i you there here one"
)
_POSSESSIVES: Final = word_set("my your his her their our its 's")
# The valuation sense: an amount ("means a lot", "means so much") or an experiencer ("to me").
_VALUATION: Final = re.compile(
    r"^(?:a lot|a great deal|so much|too much|much|more|less|little|everything|nothing|"
    r"anything|something|the world)\b|\bto (?:me|us|him|her|them|you|my|our)\b",
    re.IGNORECASE,
)
_DEFINITION: Final = re.compile(
    r"(?:^|(?<=\s))(?P<term>[\"'`\u201c][^\"'`\u201d]{1,40}[\"'`\u201d]|[\w.+#-]{1,40}) "
    r"(?:means|stands for|is short for|refers to) (?P<meaning>.+)"
    r"|\bby (?P<by>[\w \"'-]{1,80}?) we mean (?P<by_meaning>.+)"
    r"|\bwe call (?:it|this|that|them) (?P<called>[\"'`\u201c]?[\w.+#-]+)",
    re.IGNORECASE,
)


def defined_term(statement: str) -> str | None:
    """The term a sentence defines, as typed ("PR means pull request", "by 'done' we mean
    ...", "we call it Hydra", "DLQ stands for ..."), or None: the term must look like one
    (quoted, capitalised, an acronym or code-ish), not "your help" or "it"."""
    match = _DEFINITION.search(statement)
    if match is None:
        return None
    if match.group("by"):
        return match.group("by").strip(" \"'")
    if match.group("called"):
        called = match.group("called")
        called = called.strip("\"'`\u201c").rstrip(".")
        return called if _term_like(called) else None
    term, meaning = match.group("term"), match.group("meaning")
    before = statement[: match.start("term")].split()
    if (before and before[-1].lower() in _POSSESSIVES) or _VALUATION.search(meaning) is not None:
        return None
    return term.strip("\"'`\u201c\u201d") if _term_like(term) else None


def _term_like(word: str) -> bool:
    """Quoted, an acronym, code-ish, or capitalised (not only because it opens the sentence)."""
    if word[:1] in "\"'`\u201c":
        return True
    if word.lower() in _CLOSED:
        return False
    if any(c.isupper() for c in word[1:]) or any(c.isdigit() or c in "_.+#-" for c in word[1:-1]):
        return True
    return word[:1].isupper()


def not_a_taste(verb_phrase: str, rest: str) -> bool:
    """Whether a liking is no taste of the speaker's: a wish ("I'd love to visit ...",
    a conditional "would" before love or hate and an action after), a reaction to a bare
    demonstrative ("I love that!"), or a feeling about the listener ("I love how you ...",
    "I hate that you had to ..."); a request to the listener ("I want you to answer in
    French") is one."""
    conditional = re.search(r"(?:'d|\bwould)\b[\w ]*\b(?:love|hate)$", verb_phrase) is not None
    if conditional and rest.lstrip().startswith("to "):
        return True
    words = re.findall(r"[\w']+", rest.lower())[:4]
    if words[:2] == ["you", "to"] and words[2:3] not in (["know"], ["feel"], ["understand"]):
        return False
    listener = any(w in ("you", "your", "yours", "you're", "yourself") for w in words)
    bare = bool(words) and all(w in ("that", "it", "this", "so", "much", "for", "you") for w in words)
    return listener or bare
