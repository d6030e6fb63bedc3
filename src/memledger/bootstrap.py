"""The composition root: Settings in, the application out (``App``: a connected and
migrated database, and the parts the use cases are given). Nothing below it reads the
settings, the environment or a module's global state; it passes what each part needs."""

from __future__ import annotations

import functools
import gc
import json
from dataclasses import dataclass
from functools import cached_property, lru_cache

from sqlalchemy.engine import URL, Engine

from memledger.adapters.embedding import Embedder, LitellmEmbedder, MiniLmEmbedder, offline
from memledger.adapters.embedding_chain import EmbeddingChain
from memledger.adapters.llm_extractor import LlmExtractor
from memledger.adapters.model_ping import PING_TIMEOUT_S, ping
from memledger.adapters.tokenizers import Tokenizers
from memledger.config import OFFLINE_EMBEDDING_MODELS, Settings
from memledger.errors import DatabaseUnavailable, InvalidCommand
from memledger.events.catalogue import ExtractionMode
from memledger.extraction.hybrid import HybridExtractor
from memledger.extraction.modes import ModeSwitch
from memledger.extraction.protocol import Extractor
from memledger.formatting.tokens import estimate
from memledger.projectors.relationships import graph_aging
from memledger.selection.candidates import PER_CHANNEL
from memledger.service import check, projections, replica_reads, scope_ids, selection_limit, vector_channel
from memledger.service.background import Background
from memledger.service.extraction import ExtractionWorker, WorkerConfig
from memledger.service.extraction_loop import WorkerLoop
from memledger.service.vector_channel import VectorChannel
from memledger.store import db, embedded_server, migrate, restored, row_security


@dataclass(frozen=True)
class App:
    """The application: two engines on a migrated memledger database, where it came
    from, and the parts its use cases are given. Surfaces hold one (``connect``).

    ``engine`` is the owner's: migrations, projectors, the extraction worker, the
    sealer, rebuild, verify, erase and API-key lookup, the paths that work across
    tenants. ``app_engine`` is the application role's, fenced by row-level security
    (``store.row_security``): every request path takes ``for_tenant(tenant_id)`` and
    can then see and write that tenant's rows only. It connects on first use.
    ``read_engines`` are the application role's on the read replicas, if any.
    ``embedder`` embeds for the embeddings projection and the vector channel (one model,
    or a chain); ``aging`` is how reads age the graph; ``selections`` limits the context
    selections running at once (``service.selection_limit``); ``tokenizers`` count a
    block's tokens by a model's own tokenizer once litellm is loaded.
    """

    engine: Engine
    url: URL
    embedded: bool
    settings: Settings
    app_engine: Engine
    embedder: Embedder
    aging: graph_aging.Aging
    selections: selection_limit.SelectionLimit
    tokenizers: Tokenizers
    read_engines: tuple[Engine, ...] = ()

    @cached_property
    def reads(self) -> replica_reads.ReadReplicas:
        """Where context, select, search and graph read: the replicas, else the primary."""
        names = [db.to_psycopg_url(u).render_as_string(hide_password=True) for u in self.settings.read_database_urls]
        return replica_reads.ReadReplicas(
            self.app_engine,
            self.read_engines,
            names=names if len(names) == len(self.read_engines) else None,
            fallback=self.settings.read_fallback,
        )

    def describe(self) -> str:
        """Which server is in use, for people (no password)."""
        where = f"embedded PostgreSQL in {self.settings.pgdata}" if self.embedded else "external PostgreSQL"
        return f"{where}: {self.url.render_as_string(hide_password=True)}"

    def for_tenant(self, tenant_id: str) -> Engine:
        """The application role's engine, fenced to ``tenant_id`` (``InvalidIdentifier``
        for a blank or malformed tenant id)."""
        return db.for_tenant(self.app_engine, tenant_id)

    def check_app_role(self) -> None:
        """Connect as the application role now, and refuse one that row-level security
        would not fence (a superuser, BYPASSRLS, the owner): servers call this at start."""
        db.check_app_role(self.app_engine)

    def close(self) -> None:
        """Release the pools' connections."""
        for each in self.read_engines:
            each.dispose()
        self.app_engine.dispose()
        self.engine.dispose()


def server_url(settings: Settings) -> tuple[URL, bool]:
    """The server to use: ``DATABASE_URL``'s, or the embedded one (started if needed)."""
    if settings.database_url:
        return db.to_psycopg_url(settings.database_url), False
    return embedded_server.start_embedded(settings.pgdata), True


def connect(settings: Settings, *, run_migrations: bool = True) -> App:
    """Start or reach PostgreSQL, create the database if missing, migrate it, create
    any missing projection; the application on it."""
    base, embedded = server_url(settings)
    url = base if (settings.database_url and base.database) else db.ensure_database(base, settings.database_name)
    engine = db.create_engine(
        url,
        idle_in_transaction_timeout_ms=settings.idle_in_transaction_timeout_ms,
        pool_size=settings.pool_size,
    )
    app_engine = db.create_app_engine(
        app_url(settings, url),
        idle_in_transaction_timeout_ms=settings.idle_in_transaction_timeout_ms,
        pool_size=settings.pool_size,
    )
    read_engines = tuple(
        db.create_app_engine(
            replica_url(given, app_url(settings, url)),
            idle_in_transaction_timeout_ms=settings.idle_in_transaction_timeout_ms,
            pool_size=settings.pool_size,
        )
        for given in settings.read_database_urls
    )
    app = assemble(settings, engine, url, embedded, app_engine, read_engines)
    if run_migrations:
        migrate.upgrade(engine)
        projections.install_all(engine)
        with db.begin(engine) as tx:
            row_security.mark_leakproof(tx)  # again: a restore drops what migration 0008 marked
            if settings.app_password and not settings.app_database_url:
                row_security.set_app_password(tx, settings.app_password.get_secret_value())
        _refuse_a_ledger_ahead(engine, app_engine)
    return app


def assemble(
    settings: Settings,
    engine: Engine,
    url: URL,
    embedded: bool,
    app_engine: Engine,
    read_engines: tuple[Engine, ...] = (),
) -> App:
    """The application on engines already made: its parts built from ``settings``, and
    each engine told whether tenants it sees first hash their scope ids."""
    for each in (engine, app_engine, *read_engines):
        scope_ids.set_default(each, settings.hash_scope_ids)
    return App(
        engine=engine,
        url=url,
        embedded=embedded,
        settings=settings,
        app_engine=app_engine,
        embedder=build_embedder(settings),
        aging=aging_of(settings),
        selections=selection_limit.of_settings(settings.context_concurrency),
        tokenizers=Tokenizers(estimate),
        read_engines=read_engines,
    )


def _refuse_a_ledger_ahead(engine: Engine, app_engine: Engine) -> None:
    """``DatabaseUnavailable`` if the ledger was restored from a logical dump onto a
    server that has not reached its transaction ids: every reader would wait forever."""
    with engine.connect() as conn:
        behind = restored.ids_behind(conn)
    if behind:
        engine.dispose()
        app_engine.dispose()
        raise DatabaseUnavailable(
            f"the ledger holds transaction ids {behind} ahead of this server's (restored from a logical"
            " dump?): nothing can be read in order until the server passes them; run"
            " `memledger db advance-ids` once (docs/operations.md, Backups)"
        )


def app_url(settings: Settings, owner_url: URL) -> URL:
    """The application role's URL: ``MEMLEDGER_APP_DATABASE_URL`` (on the owner's
    database if it names none), else the owner's with user ``memledger_app`` and
    ``MEMLEDGER_APP_PASSWORD``."""
    if settings.app_database_url:
        given = db.to_psycopg_url(settings.app_database_url)
        return given if given.database else given.set(database=owner_url.database)
    password = settings.app_password.get_secret_value() if settings.app_password else None
    return db.app_url(owner_url, password)


# A replica that does not answer is left out after this long (libpq waits minutes by default).
REPLICA_CONNECT_TIMEOUT_S = 2


def replica_url(given: str, app: URL) -> URL:
    """A read replica's URL: its server (and database, if it names one; else ``app``'s),
    always as ``app``'s role, so a replica's reads are fenced as the primary's are; a
    connect timeout unless it sets one."""
    url = db.to_psycopg_url(given)
    url = url.set(database=url.database or app.database, username=app.username, password=app.password)
    if "connect_timeout" not in url.query:
        url = url.update_query_dict({"connect_timeout": str(REPLICA_CONNECT_TIMEOUT_S)})
    return url


def build_extractor(settings: Settings) -> Extractor:
    """The configured extractor, switching per tenant (``extraction.modes``): heuristic
    always; llm and hybrid when a model is configured (the llm one falls back to the
    heuristic one). The default mode, ``settings.extractor``, names the worker."""
    from memledger.extraction.heuristic import HeuristicExtractor  # noqa: PLC0415 - large; load on use

    heuristic = HeuristicExtractor()
    by_mode: dict[ExtractionMode, Extractor] = {"heuristic": heuristic}
    if settings.llm_chain:
        llm = LlmExtractor(
            settings.llm_chain,
            heuristic,
            options=settings.llm_options,
            retries=settings.llm_retries,
            timeout_s=settings.llm_timeout_s,
            cooldown_s=settings.llm_cooldown_s,
        )
        by_mode["llm"] = llm
        by_mode["hybrid"] = HybridExtractor(heuristic, llm, sample_every=settings.hybrid_sample_every)
    elif settings.extractor != "heuristic":
        raise InvalidCommand(f"MEMLEDGER_EXTRACTOR={settings.extractor} needs MEMLEDGER_LLM_MODEL(S)")
    return ModeSwitch(by_mode[settings.extractor], by_mode)


def build_worker(app: App, extractor: Extractor | None = None) -> ExtractionWorker:
    """The extraction worker of ``app`` with the configured extractor and limits."""
    settings = app.settings
    config = WorkerConfig(
        batch_turns=settings.worker_batch_turns,
        max_entities=settings.max_entities_per_conversation,
        max_relationships=settings.max_relationships_per_conversation,
        max_facts=settings.max_facts_per_conversation,
    )
    return ExtractionWorker(app.engine, extractor or build_extractor(settings), config)


def aging_of(settings: Settings) -> graph_aging.Aging:
    """How reads age the graph, from the settings (edge decay and pruning)."""
    return graph_aging.Aging(
        half_life_days=settings.edge_half_life_days,
        min_mentions=settings.prune_min_mentions,
        recent_days=settings.prune_recent_days,
    )


def build_embedder(settings: Settings) -> Embedder:
    """The embedder the settings name, one per process and configuration: "minilm"
    is the offline default ("minilm-float32" the same file with float32 products,
    the vectors installations made before), anything else a litellm model. A chain of
    models (``embedding_chain``) is an ``EmbeddingChain``: its ``embed`` asks the first
    model alone, and the projector asks the chain (``embed_any``). Nothing loads until
    the first text is embedded."""
    options = json.dumps(settings.embedding_options, sort_keys=True, default=str)
    chain = settings.embedding_chain
    if len(chain) > 1:
        terms = (settings.embedding_timeout_s, settings.embedding_retries, settings.embedding_cooldown_s)
        return _embedding_chain(chain, options, settings.embedding_threads, *terms)
    return _embedder(chain[0], options, settings.embedding_timeout_s, settings.embedding_threads)


@lru_cache(maxsize=8)
def _embedding_chain(
    chain: tuple[str, ...], options: str, threads: int, timeout_s: float, retries: int, cooldown_s: float
) -> EmbeddingChain:
    """One chain per process and configuration: its Router's cool-downs must outlive a call."""
    offline_model = chain[-1] if chain[-1] in OFFLINE_EMBEDDING_MODELS else None
    providers = chain[:-1] if offline_model else chain
    return EmbeddingChain(
        providers,
        _embedder(offline_model, options, timeout_s, threads) if offline_model else None,
        options=json.loads(options),
        retries=retries,
        timeout_s=timeout_s,
        cooldown_s=cooldown_s,
    )


@lru_cache(maxsize=8)
def _embedder(model: str, options: str, timeout_s: float, threads: int) -> Embedder:
    if model == "minilm":
        return offline() if threads == 1 else MiniLmEmbedder(threads=threads)
    if model == "minilm-float32":
        return MiniLmEmbedder(threads=threads, int8_products=False)
    return LitellmEmbedder(model, options=json.loads(options), timeout_s=timeout_s)


def vector_search(app: App, embedder: Embedder | None = None) -> VectorChannel:
    """The vector channel of retrieval (``service.vector_channel``): the ids of the
    tenant's facts nearest in meaning to the request, best first.

    Only the request is embedded here; items were embedded by the embeddings projector.
    The offline model starts loading in the background at the first call (~0.6 s):
    a request waits for it within its own deadline, never before its clock starts
    (``preload_embedder`` loads it at a server's start instead).
    Vectors of another model than the configured one raise ``EmbeddingMismatch``.
    Cheap to call per request: the request vectors are cached per process. ``embedder``:
    another than the application's.
    """
    chosen = embedder or app.embedder
    if isinstance(chosen, MiniLmEmbedder) and not chosen.loaded:
        vector_channel.load_soon(chosen.load)
    return VectorChannel(chosen, PER_CHANNEL)


def preload_embedder(app: App) -> None:
    """Load the application's offline model now, so no request of a server waits for it
    (nor the first batch a chain's offline model embeds when its providers fail)."""
    chosen = app.embedder
    offline_model = chosen.offline if isinstance(chosen, EmbeddingChain) else chosen
    if isinstance(offline_model, MiniLmEmbedder):
        offline_model.load()


def freeze_startup_heap() -> None:
    """Put what startup built (imports, the model, the lexicons) out of the garbage
    collector's reach: a long-running server keeps it all its life, and a full collection
    that walked it would stall whichever request triggered it."""
    gc.collect()
    gc.freeze()


def names_a_model(settings: Settings) -> bool:
    """Whether the settings name a litellm model (the LLM extractor's, which a tenant can
    switch to, or an embedding model other than the offline one): litellm will load anyway."""
    litellm_embedding = any(model not in OFFLINE_EMBEDDING_MODELS for model in settings.embedding_chain)
    return bool(settings.llm_chain) or litellm_embedding


def warm_tokenizers(app: App) -> bool:
    """Start importing litellm in the background when the settings name a model, so the
    first context request naming one counts by its tokenizer; whether it started. Until
    then requests count by the estimate (``context_limits.request_counter``)."""
    if not names_a_model(app.settings):
        return False
    app.tokenizers.warm()
    return True


def load_tokenizers(app: App) -> None:
    """Import litellm now, in the caller's thread: a one-shot command naming a model has
    no deadline to keep and should count by that model's tokenizer."""
    app.tokenizers.load()


# How long ``memledger check`` waits for a server that does not answer, when the
# database URL sets no connect_timeout of its own (libpq waits for the kernel's, minutes).
CHECK_CONNECT_TIMEOUT_S = 5


def check_settings(settings: Settings) -> Settings:
    """``settings`` with a connect timeout on ``DATABASE_URL``, unless it names one."""
    if not settings.database_url:
        return settings
    url = db.to_psycopg_url(settings.database_url)
    if "connect_timeout" in url.query:
        return settings
    timed = url.update_query_dict({"connect_timeout": str(CHECK_CONNECT_TIMEOUT_S)})
    return settings.model_copy(update={"database_url": timed.render_as_string(hide_password=False)})


def check_probes(app: App) -> check.Probes:
    """What ``service.check`` uses of ``app``: its engines, worker, embedder, aging, and
    a one-token request to the configured model (none without ``MEMLEDGER_LLM_MODEL``)."""
    settings = app.settings
    ping_model = None
    first = settings.llm_chain[0] if settings.llm_chain else None  # the chain's first choice
    if first:
        timeout_s = min(settings.llm_timeout_s, PING_TIMEOUT_S)
        ping_model = functools.partial(ping, first, settings.llm_options, timeout_s=timeout_s)
    return check.Probes(
        engine=app.engine,
        for_tenant=app.for_tenant,
        build_worker=lambda: build_worker(app),
        embedder=app.embedder,
        vector_search=vector_search(app),
        ping_model=ping_model,
        model=first,
        aging=app.aging,
    )


def start_background(app: App, worker: ExtractionWorker | None = None) -> Background:
    """Run the projectors, the sealer and the extraction worker (``worker``, or the
    configured one) beside a server (``service.background``)."""
    settings = app.settings
    loop = WorkerLoop(
        worker or build_worker(app), interval_s=settings.worker_interval_s, poll_interval_s=settings.poll_interval_s
    )
    return Background(
        app.engine,
        loop,
        app.embedder,
        poll_interval_s=settings.poll_interval_s,
        backfill_interval_s=settings.embedding_backfill_interval_s,
    )
