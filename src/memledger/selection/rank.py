"""Ranking and choosing memory for a request. Pure: no I/O, no clock.

Relevance first: the request's category decides which fact categories count;
then hybrid relevance — reciprocal rank fusion of the channels that found an
item (full text, vectors, the graph) with boosts in the spirit of graph-aware
search: a direct entity match +0.3, a 1-hop neighbour +0.15, a 2-hop neighbour
+0.05, recent +0.1. Then scope priority session -> project -> user -> org: a
narrower scope's fact shadows a broader one on the same key, and broader scopes
are read only while the budget has room.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache

import msgspec

from memledger.events.keys import normalise_name
from memledger.selection.types import SelectedItem
from memledger.selection.words import asks_a_task, speaks_of_self

RRF_K = 60
BOOST_DIRECT = 0.3
BOOST_HOP1 = 0.15
BOOST_HOP2 = 0.05
BOOST_RECENT = 0.1
RECENT = timedelta(days=7)
SCOPE_ORDER = ("session", "project", "user", "org")

CODING = frozenset(
    {"decision", "constraint", "technical_fact", "procedure", "terminology", "lesson_learned", "task_update"}
)
FORMATTING = frozenset({"preference", "terminology"})
GENERAL_MIN_CONFIDENCE = 0.85

_CODING_WORDS = re.compile(
    r"\b(code|coding|bug|debug|function|class|method|implement|refactor|compile|build|deploy|test|"
    r"tests|api|endpoint|database|schema|query|sql|error|exception|stack|library|framework|repo|"
    r"commit|merge|branch|migration|config|script|python|typescript|javascript|rust|go|java|docker|"
    r"kubernetes|server|service|architecture|performance|latency|dependency|package|version)\b",
    re.IGNORECASE,
)
_FORMAT_WORDS = re.compile(
    r"\b(format|formatting|style|tone|write|writing|rewrite|word|words|markdown|indent|indentation|"
    r"tabs|spaces|font|layout|bullet|bullets|concise|verbose|length|language|emoji|reply|respond|"
    r"response|email|letter|summary|summarise|summarize)\b",
    re.IGNORECASE,
)


def request_category(request: str) -> str:
    """ "coding", "formatting", "mixed" (both: "fix this bug and indent it the way I
    like") or "general", from the words of the request."""
    coding = _CODING_WORDS.search(request) is not None
    formatting = _FORMAT_WORDS.search(request) is not None
    if coding and formatting:
        return "mixed"
    return "coding" if coding else "formatting" if formatting else "general"


def relevant_categories(category: str) -> frozenset[str] | None:
    """The fact categories a request category wants (a mixed request, what either kind
    wants); None means all of them."""
    return {"coding": CODING, "formatting": FORMATTING, "mixed": CODING | FORMATTING}.get(category)


@dataclass
class Candidate:
    """An item found by one or more channels, before fusion."""

    item: SelectedItem
    key: str | None = None  # the fact's key, for shadowing across scopes
    ranks: dict[str, int] = field(default_factory=dict)  # channel -> 1-based rank
    hops: int | None = None  # 0: named in the request; 1, 2: graph neighbours
    seen_at: datetime | None = None


def conflict_ranks(candidates: Iterable[Candidate]) -> dict[str, int]:
    """For each conflict a fact among ``candidates`` is flagged with, the best rank
    any of its found sides has in any channel: the rank its other sides are given
    (channel "conflict") when they are added only to be shown with it."""
    best: dict[str, int] = {}
    for cand in candidates:
        if cand.item.kind == "fact" and cand.item.conflicted and cand.item.conflict_id:
            rank = min(cand.ranks.values(), default=1)
            best[cand.item.conflict_id] = min(best.get(cand.item.conflict_id, rank), rank)
    return best


def relevant(candidates: Iterable[Candidate], request: str, category: str) -> list[Candidate]:
    """The candidates that may answer ``request``. A general request about something
    else than the person ("What is the capital of Mongolia?") takes only what its
    words, its meaning or the graph found: a fact found only for being recent (their
    diet, their birthday) would be noise in its prompt. A request about the person
    or their work ("write my status update"), or a task done for them ("Book a table
    for dinner"), keeps what is recent."""
    pool = list(candidates)
    if category != "general" or speaks_of_self(request) or asks_a_task(request):
        return pool
    found = {id(c) for c in pool if set(c.ranks) - {"recent", "conflict"} or c.item.kind != "fact"}
    conflicts = {c.item.conflict_id for c in pool if id(c) in found and c.item.conflicted}
    return [c for c in pool if id(c) in found or (c.item.conflicted and c.item.conflict_id in conflicts)]


def fuse(candidates: Iterable[Candidate], now: datetime, *, rrf_k: int = RRF_K) -> list[Candidate]:
    """Score every candidate (RRF + boosts), best first; ties by id for stability.
    The smaller ``rrf_k``, the more a channel's first places count against an item
    found lower down by several channels; the sum is scaled so that first place in
    one channel scores 0.42-0.49 for ``rrf_k`` 5-60 (0.45 at 10), as the boosts expect."""
    scored = []
    for cand in candidates:
        score = sum(1.0 / (rrf_k + rank) for rank in cand.ranks.values()) * rrf_k / 2
        reasons = [f"{channel} #{rank}" for channel, rank in sorted(cand.ranks.items())]
        if cand.hops == 0:
            score += BOOST_DIRECT
            reasons.append("named in the request")
        elif cand.hops == 1:
            score += BOOST_HOP1
            reasons.append("1 hop from an entity in the request")
        elif cand.hops == 2:
            score += BOOST_HOP2
            reasons.append("2 hops from an entity in the request")
        if cand.seen_at is not None and now - cand.seen_at <= RECENT:
            score += BOOST_RECENT
            reasons.append("recent")
        score += 0.05 * cand.item.confidence
        cand.item = _with(cand.item, score=round(score, 6), reasons=tuple(reasons))
        scored.append(cand)
    return sorted(scored, key=lambda c: (-c.item.score, c.item.item_id))


@lru_cache(maxsize=8192)  # pure; keys repeat across candidates and requests
def _slot_key(key: str) -> str:
    return normalise_name(key)


def _with(item: SelectedItem, **changes: object) -> SelectedItem:
    return msgspec.structs.replace(item, **changes)


def estimate_chars(item: SelectedItem) -> int:
    """Roughly what an item costs in the block (text plus its id and markers)."""
    return len(item.text) + len(item.item_id) + 40


LATER_GROUP = "other"  # entities, relationships and facts without a scope, after every scope's facts
# What the shortest entity or relationship costs (a one-character id and text): when
# less room is left, nothing the graph walk could add would fit.
SMALLEST_LATER_ITEM = estimate_chars(SelectedItem(item_id="x", kind="entity", text="x", confidence=1.0, score=0.0))


def choose(
    ranked: Sequence[Candidate],
    *,
    categories: frozenset[str] | None,
    min_confidence: float,
    budget_chars: int,
    max_items: int = 50,
) -> list[SelectedItem]:
    """Pick items scope by scope (session first), most relevant first within a scope,
    skipping facts shadowed by a narrower scope's fact on the same key and facts
    quoting the same text as one already chosen, and items that do not fit the room
    left (a smaller one ranked lower still may). Entities, relationships and turns
    come after the facts."""
    return choose_until_full(
        ranked, categories=categories, min_confidence=min_confidence, budget_chars=budget_chars, max_items=max_items
    )[0]


def choose_until_full(
    ranked: Sequence[Candidate],
    *,
    categories: frozenset[str] | None,
    min_confidence: float,
    budget_chars: int,
    max_items: int = 50,
) -> tuple[list[SelectedItem], bool]:
    """``choose``, and whether it ended full: no item ranked in a later group could
    still be chosen, so adding such candidates to ``ranked`` would not change the
    choice. Entities and relationships come after every fact (in the last group);
    full means that when that group began, ``max_items`` were chosen or the room left
    was below ``SMALLEST_LATER_ITEM``, what the shortest entity or relationship costs.

    An item (or a conflict's sides, which go together or not at all) that does not
    fit the budget or the item cap is skipped, and choosing goes on with the next:
    one long memory never hides the shorter ones ranked after it."""
    chosen: list[SelectedItem] = []
    used = 0
    full = False
    taken: dict[str, str] = {}  # fact key -> the scope that answered it
    by_scope, sides = _groups(ranked, categories, min_confidence)
    done: set[str] = set()
    quoted: set[str] = set()  # the texts of the facts chosen
    for scope in (*SCOPE_ORDER, LATER_GROUP):
        if scope == LATER_GROUP:
            # Measured where the later group begins: an item added to it could come first.
            full = len(chosen) >= max_items or budget_chars - used < SMALLEST_LATER_ITEM
        for cand in by_scope.get(scope, []):
            if len(chosen) >= max_items:
                break
            if cand.item.item_id in done:
                continue  # a side of a conflict chosen with its best side
            key = _slot_key(cand.key) if cand.key else None
            if key is not None and taken.get(key, scope) != scope:
                continue  # a narrower scope already answered this key
            if _said_already(cand.item, quoted):
                if key is not None:  # its key is answered: the quotation shown says it
                    taken.setdefault(key, scope)
                continue
            # The sides of one conflict (one slot: same scope and key) are chosen together or not at all.
            unit = sides.get(cand.item.conflict_id or "", [cand]) if cand.item.conflicted else [cand]
            cost = sum(estimate_chars(side.item) for side in unit)
            if used + cost > budget_chars or len(chosen) + len(unit) > max_items:
                continue  # too big for what is left: a smaller item ranked lower may still fit
            chosen += [side.item for side in unit]
            done.update(side.item.item_id for side in unit)
            quoted.update(side.item.text for side in unit if side.item.kind == "fact")
            used += cost
            if key is not None:
                taken.setdefault(key, scope)
    return chosen, full


def _groups(
    ranked: Sequence[Candidate], categories: frozenset[str] | None, min_confidence: float
) -> tuple[dict[str, list[Candidate]], dict[str, list[Candidate]]]:
    """The candidates that may be chosen, by group (a fact's scope, else ``LATER_GROUP``),
    and the sides of each conflict among them (conflict id -> its sides), best first."""
    by_scope: dict[str, list[Candidate]] = {}
    sides: dict[str, list[Candidate]] = {}
    for cand in ranked:
        item = cand.item
        if item.confidence < min_confidence:
            continue
        if item.kind == "fact" and categories is not None and item.category not in categories:
            continue
        by_scope.setdefault(item.scope if item.kind == "fact" and item.scope else LATER_GROUP, []).append(cand)
        if item.kind == "fact" and item.conflicted and item.conflict_id:
            sides.setdefault(item.conflict_id, []).append(cand)
    return by_scope, sides


def _said_already(item: SelectedItem, quoted: set[str]) -> bool:
    """Whether ``item`` is a fact quoting the very text of a fact already chosen. An
    extractor may draw several facts (keys) from one sentence: "I use Vim and
    PostgreSQL" is both the editor and the database, and showing the sentence twice
    would say nothing more. A side of a conflict is always shown with its others."""
    return item.kind == "fact" and not item.conflicted and item.text in quoted


TURN_SHARE = 0.5  # the share of a block's budget held for quoted turns while facts are chosen
MAX_TURNS = 12  # the most turns a block quotes


def turn_reserve(turns: Sequence[SelectedItem], budget_chars: int) -> int:
    """What the facts leave for ``turns`` (ranked): up to ``TURN_SHARE`` of the budget,
    as much as the best of them take, so a fact never crowds out the turn that answers."""
    room, used = int(budget_chars * TURN_SHARE), 0
    for item in turns[:MAX_TURNS]:
        cost = estimate_chars(item)
        if used + cost > room:
            break
        used += cost
    return used


def add_turns(
    chosen: Sequence[SelectedItem], turns: Sequence[SelectedItem], budget_chars: int, max_items: int = 50
) -> list[SelectedItem]:
    """``chosen`` and then the best of ``turns`` that the budget still holds, up to
    ``MAX_TURNS``; a turn a chosen item already cites is not quoted again."""
    out = list(chosen)
    used = sum(estimate_chars(item) for item in out)
    cited = {turn for item in out for turn in item.source_turns}
    quoted = 0
    for item in turns:
        if quoted == MAX_TURNS or len(out) == max_items:
            break
        cost = estimate_chars(item)
        if item.item_id in cited or used + cost > budget_chars:
            continue
        out.append(item)
        used += cost
        quoted += 1
    return out


BLEND_TEXT_WEIGHT = 0.5
BLEND_SPEAKER_BONUS = 0.25


def blend(
    text_scores: Mapping[str, float],
    distances: Mapping[str, float],
    max_distance: float,
    favoured: Collection[str] = (),
) -> list[str]:
    """Turn ids, best first, by a convex combination of their two channels' scores:
    BM25 divided by the best BM25 score, and cosine similarity scaled from the
    channel's cutoff (``max_distance``: 0) to the nearest turn's (1); 0 where a
    channel did not find a turn. A ``favoured`` turn (said by a person the request
    names) gains ``BLEND_SPEAKER_BONUS``: who said it is half of what a channel says.

    Unlike reciprocal ranks, scores keep how far ahead a turn is: a turn holding the
    request's rare words stays ahead of many short turns that only name its speaker,
    which a sentence model puts near any question about that person. Ties: the text
    channel's order, then id."""
    top = max(text_scores.values(), default=0.0)
    sims = {t: 1.0 - d for t, d in distances.items()}
    low = 1.0 - max_distance
    spread = max(sims.values(), default=low) - low

    def score(turn_id: str) -> float:
        text = text_scores.get(turn_id, 0.0) / top if top > 0 else 0.0
        near = (max(sims[turn_id] - low, 0.0) / spread if spread > 0 else 1.0) if turn_id in sims else 0.0
        bonus = BLEND_SPEAKER_BONUS if turn_id in favoured else 0.0
        return BLEND_TEXT_WEIGHT * text + (1 - BLEND_TEXT_WEIGHT) * near + bonus

    order = {t: i for i, t in enumerate(text_scores)}
    ids = set(text_scores) | set(sims)
    return sorted(ids, key=lambda t: (-round(score(t), 9), order.get(t, len(order)), t))
