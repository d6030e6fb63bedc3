"""Formatting (pure): a selection rendered as a read-only memory block, and token budgets."""

from memledger.formatting.block import Block, Style, render
from memledger.formatting.entries import CONFLICT_FLAG, FORMATTER_VERSION
from memledger.formatting.layout import TEXT_BEGIN, TEXT_END
from memledger.formatting.neutralise import QUOTED_MARK, clean, neutralise
from memledger.formatting.tokens import TokenCounter, estimate
from memledger.formatting.zones import DEFAULT_ZONES, ZoneSpec, allocate, memory_budget

__all__ = [
    "CONFLICT_FLAG",
    "DEFAULT_ZONES",
    "FORMATTER_VERSION",
    "QUOTED_MARK",
    "TEXT_BEGIN",
    "TEXT_END",
    "Block",
    "Style",
    "TokenCounter",
    "ZoneSpec",
    "allocate",
    "clean",
    "estimate",
    "memory_budget",
    "neutralise",
    "render",
]
