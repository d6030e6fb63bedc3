"""Bodies of the AIRI-style API (api/routes_airi.py), named as AIRI's memory service
names them (moeru-ai/airi, services/memory-service), so its clients work unchanged."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from memledger.api.schemas import Strict
from memledger.service.context_limits import MAX_REQUEST_CHARS

MAX_TEXT = 200_000  # as /v1/turns
MAX_NAME = 200  # as a scope key


class MessageIn(Strict):
    content: str = Field(min_length=1, max_length=MAX_TEXT)
    platform: str | None = Field(default=None, max_length=MAX_NAME)
    modelName: str | None = Field(default=None, max_length=MAX_NAME)  # noqa: N815 (AIRI's name)


class MessageOut(BaseModel):
    id: str
    content: str
    platform: str
    created_at: int = Field(description="milliseconds since the epoch")
    modelName: str  # noqa: N815


class CompletionIn(Strict):
    prompt: str = Field(max_length=MAX_TEXT)
    response: str = Field(min_length=1, max_length=MAX_TEXT)
    platform: str | None = Field(default=None, max_length=MAX_NAME)
    task: str | None = Field(default=None, max_length=MAX_NAME)
    modelName: str | None = Field(default=None, max_length=MAX_NAME)  # noqa: N815


class CompletionOut(BaseModel):
    id: str
    prompt: str
    response: str
    platform: str
    created_at: int
    modelName: str  # noqa: N815


class ContextIn(Strict):
    message: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    modelName: str | None = Field(default=None, max_length=MAX_NAME)  # noqa: N815


class Fragment(BaseModel):
    """AIRI's memory fragment; a memledger fact."""

    id: str
    content: str
    memory_type: Literal["short_term", "long_term"]
    category: str
    importance: int = Field(description="the fact's confidence, 0 to 10")
    emotional_impact: int = 0
    created_at: int | None = None


class RecentMessage(BaseModel):
    content: str
    created_at: int


class RecentCompletion(BaseModel):
    response: str
    task: str = "chat"
    created_at: int


class WorkingMemory(BaseModel):
    recentMessages: list[RecentMessage]  # noqa: N815
    recentCompletions: list[RecentCompletion]  # noqa: N815


class Associated(BaseModel):
    content: str
    association_type: str
    strength: float
    created_at: int | None = None


class SemanticMemory(BaseModel):
    shortTerm: list[Fragment]  # noqa: N815
    longTerm: list[Fragment]  # noqa: N815
    consolidatedMemories: list[dict[str, Any]] = []  # noqa: N815 (memledger keeps no summaries here)
    associatedMemories: list[Associated] = []  # noqa: N815


class Entity(BaseModel):
    name: str
    entity_type: str
    description: str | None = None
    metadata: dict[str, Any] = {}


class StructuredKnowledge(BaseModel):
    entities: list[Entity]


class GoalContext(BaseModel):
    longTermGoals: list[dict[str, Any]] = []  # noqa: N815 (memledger has no goals)
    shortTermIdeas: list[dict[str, Any]] = []  # noqa: N815


class StructuredContextOut(BaseModel):
    workingMemory: WorkingMemory  # noqa: N815
    semanticMemory: SemanticMemory  # noqa: N815
    structuredKnowledge: StructuredKnowledge  # noqa: N815
    goalContext: GoalContext = GoalContext()  # noqa: N815


class ConversationMessage(BaseModel):
    id: str
    content: str
    created_at: int
    type: Literal["user", "assistant"]
    model_name: str
    platform: str | None = None
    task: str | None = None


class ConversationsOut(BaseModel):
    messages: list[ConversationMessage]
    hasMore: bool  # noqa: N815
    nextCursor: int | None = None  # noqa: N815
    modelName: str  # noqa: N815


class SettingsIn(Strict):
    """memledger's tenant switches, and AIRI's provider settings, which are the
    server's configuration here (MEMLEDGER_EXTRACTOR, ...): accepted and ignored, so
    AIRI's settings page can save; any other field is refused."""

    capture: bool | None = None
    recall: bool | None = None
    autoPromote: bool | None = None  # noqa: N815
    broadScopeWrites: bool | None = None  # noqa: N815
    extractionMode: Literal["heuristic", "llm", "hybrid"] | None = None  # noqa: N815
    llmProvider: str | None = None  # noqa: N815
    llmModel: str | None = None  # noqa: N815
    llmApiKey: str | None = None  # noqa: N815
    llmTemperature: float | None = None  # noqa: N815
    llmMaxTokens: float | None = None  # noqa: N815
    embeddingProvider: str | None = None  # noqa: N815
    embeddingModel: str | None = None  # noqa: N815
    embeddingApiKey: str | None = None  # noqa: N815
    embeddingDimensions: float | None = None  # noqa: N815


# SettingsIn's fields that are tenant switches, by their memledger name.
SWITCHES = {
    "capture": "capture",
    "recall": "recall",
    "autoPromote": "auto_promote",
    "broadScopeWrites": "broad_scope_writes",
    "extractionMode": "extraction_mode",
}


class SettingsOut(BaseModel):
    capture: bool
    recall: bool
    autoPromote: bool  # noqa: N815
    broadScopeWrites: bool  # noqa: N815
    extractionMode: Literal["heuristic", "llm", "hybrid"] | None = None  # noqa: N815


class SettingsSaved(BaseModel):
    status: Literal["success"] = "success"
    message: str
    settings: SettingsOut
    ignored: list[str] = Field(description="AIRI provider settings given, which the server's configuration decides")


class QueueStatusOut(BaseModel):
    status: Literal["ok"] = "ok"
    extractor: str
    pending: int = Field(description="turns recorded and not yet extracted")
    processed: int
    total: int


class HealthOut(BaseModel):
    status: Literal["ok", "unavailable"]
    timestamp: str


class TestConnOut(BaseModel):
    status: Literal["authenticated"] = "authenticated"
    timestamp: str
    message: str = "API key is valid"
