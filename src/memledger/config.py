"""Settings, read once from the environment by an entrypoint and then frozen."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# The embedding models memledger runs itself (adapters/embedding.py); any other name is litellm's.
OFFLINE_EMBEDDING_MODELS = ("minilm", "minilm-float32")


def _model_list(setting: str, value: str | list[object] | tuple[object, ...]) -> tuple[str, ...]:
    """A chain of models from a comma-separated string (or a list), refusing an empty
    entry or a model named twice, naming ``setting``."""
    if isinstance(value, str):
        models = tuple(each.strip() for each in value.split(",")) if value.strip() else ()
    else:
        models = tuple(str(each).strip() for each in value)
    if any(not each for each in models):
        raise ValueError(f"{setting} has an empty entry: {value!r}")
    if len(set(models)) != len(models):
        raise ValueError(f"{setting} names a model twice: {value!r}")
    return models


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("memledger", appauthor=False))


class Settings(BaseSettings):
    """Every setting memledger reads; each maps to a ``MEMLEDGER_*`` variable.

    ``DATABASE_URL`` is the one exception: it keeps its conventional name.
    """

    model_config = SettingsConfigDict(env_prefix="MEMLEDGER_", frozen=True, extra="ignore")

    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    # The application role's connection (row-level security fences it to one tenant per
    # transaction). Unset: DATABASE_URL's (or the embedded server's) with the user
    # memledger_app and app_password (the embedded server trusts local users).
    app_database_url: str | None = None
    app_password: SecretStr | None = None
    # Streaming replicas (hot standbys) that context, select, search and graph read from,
    # comma-separated; each is connected as the application role, as the primary is
    # (service/replica_reads.py). Unset: every read goes to the primary.
    read_database_urls: Annotated[tuple[str, ...], NoDecode] = ()
    # A read asked to follow a write (``after``) that no replica has replayed within half
    # its deadline: served by the primary, or failed open saying so.
    read_fallback: Literal["primary", "fail_open"] = "primary"
    home: Path = Field(default_factory=_default_home)
    database_name: str = "memledger"
    max_payload_bytes: int = Field(default=1024 * 1024, gt=0)
    max_request_bytes: int = Field(default=2 * 1024 * 1024, gt=0)
    # The key that reads /health's details (every tenant's lag, the worker's backlog,
    # database errors): GET /health?detail=1 with Authorization: Bearer <it>. Unset:
    # nobody reads them over HTTP; `memledger projections status` still shows them.
    operator_key: SecretStr | None = None
    # Set: an HTTP request (API or MCP) naming a user must carry a signed scope assertion
    # (X-Memledger-Scope) the app minted with its tenant's secret derived from this one
    # (service/scope_assertions.py), so an API key alone names nobody. Unset: not asked.
    scope_secret: SecretStr | None = None
    idle_in_transaction_timeout_ms: int = Field(default=60_000, ge=0)
    poll_interval_s: float = Field(default=0.1, gt=0)
    notify_on_append: bool = False
    # Store scope keys and subjects as keyed hashes (service/scope_ids.py). Decides for
    # tenants first seen from now on; a tenant keeps what it had when first seen.
    hash_scope_ids: bool = True
    # How long a context selection may take before it fails open with an empty block
    # (service.context.SelectRequest.deadline_ms); every surface's default.
    context_deadline_ms: int = Field(default=750, ge=1, le=60_000)
    # How many context selections of the application run at once; the others wait for a
    # slot, first come first served, within their deadline (service/selection_limit.py).
    # Unset: two per core; 0: no limit.
    context_concurrency: int | None = Field(default=None, ge=0)
    pool_size: int = Field(default=5, ge=1)
    # The default extraction mode; a tenant may choose its own (``memledger settings``).
    # llm and hybrid need llm_model (docs/llm-extraction.md).
    extractor: Literal["heuristic", "llm", "hybrid"] = "heuristic"
    # Hybrid mode also sends every n-th user turn to the model, as a sample (0: none).
    hybrid_sample_every: int = Field(default=0, ge=0)
    llm_model: str | None = None
    # The extraction chain, first choice first ("openai/gpt-4o-mini,anthropic/claude-3-5-haiku"):
    # each model is tried when the ones before it fail, then the heuristic. Unset: llm_model
    # alone. llm_options, llm_timeout_s and llm_retries apply to each model.
    llm_models: Annotated[tuple[str, ...], NoDecode] = ()
    llm_options: dict[str, Any] = Field(default_factory=dict)
    llm_timeout_s: float = Field(default=30.0, gt=0)
    llm_retries: int = Field(default=3, ge=1)
    # How long a model of the chain whose every attempt at a call failed is skipped (0: never).
    llm_cooldown_s: float = Field(default=60.0, ge=0)
    worker_interval_s: float = Field(default=30.0, gt=0)
    worker_batch_turns: int = Field(default=10, ge=1)
    max_entities_per_conversation: int = Field(default=20, ge=0)
    max_relationships_per_conversation: int = Field(default=50, ge=0)
    max_facts_per_conversation: int = Field(default=1000, ge=0)
    # "minilm": the offline default (all-MiniLM-L6-v2, int8 ONNX, shipped with the
    # package, its products in int8); "minilm-float32": the same file with float32
    # products (the vectors made before 2026-11-25); anything else is a litellm model
    # name ("openai/text-embedding-3-small").
    embedding_model: str = "minilm"
    embedding_options: dict[str, Any] = Field(default_factory=dict)
    embedding_timeout_s: float = Field(default=30.0, gt=0)
    embedding_threads: int = Field(default=1, ge=1, le=64)
    # The embedding chain, first choice first ("openai/text-embedding-3-small,minilm"): the
    # first is the tenants' model (search embeds with it); a later one embeds what the ones
    # before it could not, under its own model, until the backfill re-embeds it with the
    # first (docs/adr/0013). The offline model may only be last. Unset:
    # embedding_model alone. embedding_options, _timeout_s and _retries apply to each
    # provider; a provider whose every attempt at a call failed is skipped for
    # embedding_cooldown_s (0: never); the backfill runs every embedding_backfill_interval_s
    # (0: never in the background).
    embedding_models: Annotated[tuple[str, ...], NoDecode] = ()
    embedding_retries: int = Field(default=2, ge=1)
    embedding_cooldown_s: float = Field(default=60.0, ge=0)
    embedding_backfill_interval_s: float = Field(default=30.0, ge=0)
    # Graph maintenance (docs/graph-maintenance.md), all applied when reading: an edge's
    # weight halves every edge_half_life_days it goes unreinforced; an entity mentioned
    # fewer than prune_min_mentions times, unseen and with no edge reinforced within
    # prune_recent_days of the tenant's latest sighting, is hidden from selection and
    # search (0: none is); serve runs the merge rules every maintenance_interval_s (0: never).
    edge_half_life_days: float = Field(default=90.0, gt=0)
    prune_min_mentions: int = Field(default=2, ge=0)
    prune_recent_days: float = Field(default=90.0, gt=0)
    maintenance_interval_s: float = Field(default=3600.0, ge=0)

    @field_validator("llm_models", mode="before")
    @classmethod
    def _split_models(cls, value: object) -> object:
        """A comma-separated list; no empty entry, no model twice."""
        return _model_list("MEMLEDGER_LLM_MODELS", value) if isinstance(value, str) else value

    @field_validator("embedding_models", mode="before")
    @classmethod
    def _split_embedding_models(cls, value: object) -> object:
        """A comma-separated list; no empty entry, no model twice, the offline model last."""
        if not isinstance(value, (str, list, tuple)):
            return value
        models = _model_list("MEMLEDGER_EMBEDDING_MODELS", value)
        offline = [i for i, each in enumerate(models) if each in OFFLINE_EMBEDDING_MODELS]
        if offline and offline != [len(models) - 1]:
            raise ValueError(
                f"MEMLEDGER_EMBEDDING_MODELS={value!r}: the offline model ({' or '.join(OFFLINE_EMBEDDING_MODELS)})"
                " can only be the last of the chain, and only once"
            )
        return models

    @field_validator("read_database_urls", mode="before")
    @classmethod
    def _split_urls(cls, value: object) -> object:
        """A comma-separated list of URLs, empty entries skipped: never refused, since a
        refused setting is shown with its value, and these hold passwords."""
        if not isinstance(value, str):
            return value
        return tuple(each.strip() for each in value.split(",") if each.strip())

    @model_validator(mode="after")
    def _one_first_model(self) -> Settings:
        if self.llm_model and self.llm_models and self.llm_models[0] != self.llm_model:
            raise ValueError(
                f"MEMLEDGER_LLM_MODEL={self.llm_model} is not the first of "
                f"MEMLEDGER_LLM_MODELS={','.join(self.llm_models)}: set one of them"
            )
        return self

    @model_validator(mode="after")
    def _one_first_embedding_model(self) -> Settings:
        chain = self.embedding_models
        if chain and "embedding_model" in self.model_fields_set and chain[0] != self.embedding_model:
            raise ValueError(
                f"MEMLEDGER_EMBEDDING_MODEL={self.embedding_model} is not the first of "
                f"MEMLEDGER_EMBEDDING_MODELS={','.join(chain)}: set one of them"
            )
        return self

    @property
    def embedding_chain(self) -> tuple[str, ...]:
        """The embedding models, first choice (the tenants' model) first."""
        return self.embedding_models or (self.embedding_model,)

    @property
    def llm_chain(self) -> tuple[str, ...]:
        """The extraction models, first choice first (empty: no model configured)."""
        if self.llm_models:
            return self.llm_models
        return (self.llm_model,) if self.llm_model else ()

    @property
    def pgdata(self) -> Path:
        """Where the embedded PostgreSQL keeps its data."""
        return self.home / "pgdata"
