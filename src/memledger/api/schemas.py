"""Request and response bodies of the HTTP API (pydantic, as FastAPI requires)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["session", "project", "user", "org"]
Kind = Literal["decision", "lesson_learned", "preference", "procedure", "task_update", "terminology"]


class Strict(BaseModel):
    """Unknown fields are refused, so a typo is an error rather than silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ScopesIn(Strict):
    session: str | None = Field(default=None, max_length=200)
    project: str | None = Field(default=None, max_length=200)
    user: str | None = Field(default=None, max_length=200)
    org: str | None = Field(default=None, max_length=200)


class TurnIn(Strict):
    role: Literal["user", "assistant", "system", "tool"]
    text: str = Field(max_length=200_000)
    scopes: ScopesIn = ScopesIn()
    turn_id: str | None = Field(default=None, min_length=1, max_length=200)
    occurred_at: datetime | None = None
    subject: str | None = Field(default=None, max_length=200)


class TurnsIn(Strict):
    turns: list[TurnIn] = Field(min_length=1, max_length=1000)


class TurnsAccepted(BaseModel):
    positions: list[int]
    turn_ids: list[str]
    replayed: int = Field(description="turns that were already recorded (idempotent retries)")


class SelectIn(Strict):
    request: str = Field(min_length=1, max_length=10_000)
    scopes: ScopesIn = ScopesIn()
    budget: int = Field(default=5000, ge=600, le=200_000)
    min_confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    as_of: datetime | int | None = None


class Item(BaseModel):
    item_id: str
    kind: str
    text: str
    confidence: float
    score: float
    scope: str | None = None
    scope_key: str | None = None
    category: str | None = None
    conflicted: bool = False
    conflict_id: str | None = None
    source_turns: list[str] = []
    reasons: list[str] = []


class SelectionOut(BaseModel):
    request: str
    items: list[Item]
    empty_reason: str | None = None
    as_of: str | None = None


class ContextOut(BaseModel):
    block: str
    event_id: str
    item_ids: list[str]
    omitted: int
    chars: int
    tokens: int
    sha256: str
    empty_reason: str | None = None


class PromoteIn(Strict):
    kind: Kind
    scope: Scope
    scopes: ScopesIn
    memory_id: str | None = Field(default=None, max_length=200)
    statement: str | None = Field(default=None, max_length=5000)
    key: str | None = Field(default=None, max_length=1000)


class PromoteOut(BaseModel):
    memory_id: str


class ReasonIn(Strict):
    reason: str = Field(default="", max_length=2000)


class ChangedOut(BaseModel):
    item_id: str
    kind: str
    status: str


class ResolveIn(Strict):
    chosen_memory_id: str = Field(min_length=1, max_length=200)
    reason: str = Field(default="", max_length=2000)


class SettingsIn(Strict):
    capture: bool | None = None
    recall: bool | None = None
    auto_promote: bool | None = None
    broad_scope_writes: bool | None = None


class SettingsOut(BaseModel):
    capture: bool
    recall: bool
    auto_promote: bool
    broad_scope_writes: bool


class EventsPage(BaseModel):
    events: list[dict[str, Any]]
    next_after: str | None = Field(description="pass as `after` to read the next page")


class ErrorBody(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorOut(BaseModel):
    error: ErrorBody
