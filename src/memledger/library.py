"""The Python library API: the one object an agent builder imports.

    from memledger import MemoryLedger, Scopes

    memory = MemoryLedger.open()                 # embedded PostgreSQL unless DATABASE_URL is set
    scopes = Scopes(session="s1", project="phoenix", user="alice")
    memory.record_turn("acme", "user", "Project Phoenix uses PostgreSQL.", scopes=scopes)
    memory.process()                              # extract and project now (a worker does it otherwise)
    print(memory.context("acme", "Which database does Phoenix use?", scopes=scopes).text)

Every method calls the service layer; none holds logic of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from sqlalchemy.engine import Engine

from memledger import bootstrap
from memledger.config import Settings
from memledger.service import (
    context,
    context_replay,
    driver_errors,
    importing,
    keys,
    memory,
    provenance,
    readiness,
    search,
    tenant_settings,
)
from memledger.service.context import ServedBlock
from memledger.service.context_replay import Replay
from memledger.service.import_formats import Format
from memledger.service.importing import ImportSummary, Progress
from memledger.service.memory import Change
from memledger.service.provenance import Provenance, Step
from memledger.service.record import TurnInput, record_turns
from memledger.service.search import GraphAnswer
from memledger.service.tenant_settings import TenantSettings
from memledger.service.types import ItemKind, PromotionKind, ScopeKind, Scopes, SelectedItem, Selection

Style = Literal["text", "xml"]

__all__ = ["Change", "ImportSummary", "MemoryLedger", "TurnInput"]


class MemoryLedger:
    """Memory for LLM agents on an append-only ledger. Thread-safe; open once per process."""

    def __init__(self, database: bootstrap.App) -> None:
        self.database = database
        self.engine = database.engine  # the owner's: extraction, projection, keys

    @classmethod
    def open(cls, settings: Settings | None = None) -> MemoryLedger:
        """Connect (starting the embedded PostgreSQL if no ``DATABASE_URL``), migrate, return.
        Every call naming a tenant runs as the application role, fenced to that tenant
        by row-level security: it can neither see nor write another tenant's rows. The
        offline embedding model starts loading in the background (~1 s): a ``context``
        asked before it is in memory goes without the vector channel."""
        database = bootstrap.connect(settings or Settings())
        try:
            database.check_app_role()
        except BaseException:
            database.close()
            raise
        bootstrap.vector_search(database)  # the offline model starts loading now, in the background
        return cls(database)

    def _as(self, tenant_id: str) -> Engine:
        return self.database.for_tenant(tenant_id)

    def _deadline(self, deadline_ms: int | None) -> int:
        return self.database.settings.context_deadline_ms if deadline_ms is None else deadline_ms

    def close(self) -> None:
        """Release the database connections."""
        self.database.close()

    def __enter__(self) -> MemoryLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record_turn(
        self,
        tenant_id: str,
        role: Literal["user", "assistant", "system", "tool"],
        text: str,
        *,
        scopes: Scopes = Scopes(),
        turn_id: str | None = None,
        occurred_at: datetime | None = None,
        subject: str | None = None,
        speaker: str | None = None,
    ) -> int:
        """Append one turn; returns its ledger position at once (extraction happens later).
        The same ``turn_id`` recorded twice is written once. ``subject`` is whose words or
        data the turn holds (default: ``scopes.user``): what erasure by subject finds.
        ``speaker`` is the name blocks show for who said it (default: ``scopes.user`` when
        it reads as a person's name, e.g. "Caroline"; never an id of another shape)."""
        turn = TurnInput(
            role=role,
            text=text,
            scopes=scopes,
            turn_id=turn_id,
            occurred_at=occurred_at,
            subject=subject,
            speaker=speaker,
        )
        return record_turns(self._as(tenant_id), tenant_id, [turn])[0].positions[0]

    def record_turns(self, tenant_id: str, turns: Sequence[TurnInput]) -> list[int]:
        """Append a batch of turns, all or nothing; their positions."""
        return [p for r in record_turns(self._as(tenant_id), tenant_id, turns) for p in r.positions]

    def import_turns(
        self,
        tenant_id: str,
        lines_or_path: Path | str | Iterable[str],
        *,
        scopes: Scopes = Scopes(),
        fmt: Format = "auto",
        source: str | None = None,
        progress: Progress | None = None,
        wait: bool = False,
        wait_timeout_s: float = importing.WAIT_TIMEOUT_S,
    ) -> ImportSummary:
        """Import a chat history: a file (a ``Path`` or a path as ``str``) or its lines,
        in memledger's turn shape or as ``{"role", "content"}`` message lists (see
        docs/operations.md). Each conversation is appended all or nothing; a bad line is
        refused (``ImportSummary.refused``) and the rest imported. Importing again
        appends nothing twice: turn ids are derived from ``source`` (default: the
        file's name, "lines" for lines) when the history has none. ``scopes`` fills
        the scope keys a turn lacks. With ``wait``, returns once extraction and every
        read model reflect the import (done here, or by a running worker), at most
        ``wait_timeout_s`` later: ``ready_seconds`` says how long that took, and is None
        on a timeout (``readiness.behind`` names what was behind; the import stays)."""
        if isinstance(lines_or_path, str | Path):
            path = Path(lines_or_path)
            text, named = path.read_text(encoding="utf-8"), path.name
        else:
            text, named = "\n".join(line.rstrip("\n") for line in lines_or_path), "lines"
        summary = importing.import_text(
            self._as(tenant_id),
            tenant_id,
            text,
            source=source or named,
            defaults=scopes,
            fmt=fmt,
            progress=progress,
        )
        if not wait:
            return summary
        worker = bootstrap.build_worker(self.database)
        return importing.wait_until_ready(
            self.engine, worker, summary, timeout_s=wait_timeout_s, embedder=self.database.embedder
        )

    def process(self, *, timeout_s: float = 30.0) -> int:
        """Extract every turn recorded so far and bring the read models up to date, now
        (inline mode); returns the number of turns extracted. A transaction left open
        elsewhere on the server holds the newest events back: it is waited for up to
        ``timeout_s``. A deployment runs ``memledger worker`` instead."""
        worker = bootstrap.build_worker(self.database)
        return readiness.process_now(self.engine, worker, timeout_s=timeout_s, embedder=self.database.embedder)

    def context(
        self,
        tenant_id: str,
        request: str,
        *,
        scopes: Scopes = Scopes(),
        budget_chars: int = 5000,
        max_tokens: int | None = None,
        model: str | None = None,
        style: Style = "text",
        as_of: datetime | int | None = None,
        deadline_ms: int | None = None,
    ) -> ServedBlock:
        """The read-only memory block for ``request``; never raises into your chat loop (an
        empty block says why: past ``deadline_ms``, default the setting
        ``context_deadline_ms``, it is empty; so it is for a request over 10,000
        characters or holding a NUL or a lone surrogate, which HTTP and MCP refuse, the
        reason naming ``request``). Arguments that are wrong (a budget below the
        block's frame, an unknown style, a malformed scope key or ``as_of``) raise
        ``InvalidCommand``. Each served block is recorded: ``replay(tenant_id,
        block.event_id)`` renders it again from the ledger and checks its hash."""
        select = context.SelectRequest(
            tenant_id=tenant_id,
            scopes=scopes,
            request=request,
            budget_chars=budget_chars,
            as_of=as_of,
            deadline_ms=self._deadline(deadline_ms),
        )
        served = context.build_context(
            self._as(tenant_id),
            select,
            style=style,
            max_tokens=max_tokens,
            token_model=model,
            vector_search=bootstrap.vector_search(self.database),
            aging=self.database.aging,
            limit=self.database.selections,
            tokenizers=self.database.tokenizers,
        )
        return context.served_block(served)

    def select(
        self,
        tenant_id: str,
        request: str,
        *,
        scopes: Scopes = Scopes(),
        as_of: datetime | int | None = None,
        deadline_ms: int | None = None,
    ) -> Selection:
        """The items chosen for ``request`` and why, unformatted."""
        select = context.SelectRequest(
            tenant_id=tenant_id, scopes=scopes, request=request, as_of=as_of, deadline_ms=self._deadline(deadline_ms)
        )
        app = self.database
        return context.select(
            self._as(tenant_id),
            select,
            vector_search=bootstrap.vector_search(app),
            aging=app.aging,
            limit=app.selections,
        )

    def search(
        self,
        tenant_id: str,
        query: str,
        *,
        scopes: Scopes = Scopes(),
        k: int = 10,
        kinds: Sequence[ItemKind] | None = None,
    ) -> list[SelectedItem]:
        """Hybrid search over facts, entities, relationships and turns (``kinds``: only
        those), evidence first; each item cites its best few turns, each with its speaker
        and time (``cited``). A query holding a NUL or a lone surrogate raises
        ``InvalidField`` naming ``query``; while the database is unavailable it raises
        ``DatabaseUnavailable``."""
        vectors = bootstrap.vector_search(self.database)
        with driver_errors.translated():
            return search.search(
                self._as(tenant_id),
                tenant_id,
                scopes,
                query,
                k=k,
                kinds=kinds,
                vector_search=vectors,
                aging=self.database.aging,
            )

    def graph(
        self, tenant_id: str, entity: str, *, depth: int = 1, user: str | None = None, scopes: Scopes | None = None
    ) -> GraphAnswer:
        """Relationships around an entity (or "me"), with the turns behind each. With
        ``scopes`` (an agent asking for a conversation), only those said where one of them
        is shared, as ``context`` shows; without, the whole tenant's (an inspection). Of the
        users' own entities, only that of ``user`` (or ``scopes``' user) is shown."""
        with driver_errors.translated():
            return search.query_graph(
                self._as(tenant_id), tenant_id, entity, depth=depth, user=user, scopes=scopes, aging=self.database.aging
            )

    def promote(
        self,
        tenant_id: str,
        *,
        kind: PromotionKind,
        scope: ScopeKind,
        scopes: Scopes,
        statement: str | None = None,
        memory_id: str | None = None,
        key: str | None = None,
    ) -> str:
        """Remember something in a longer-lived scope; returns the new memory id. ``key``
        (default: the promoted fact's, or the kind and the statement's first words) is the
        slot it competes in: a later promotion on the same key supersedes it. The
        next ``context`` shows it (its vector, for search by meaning, comes with ``process``
        or the worker; past ``memory.READ_YOUR_WRITE_S`` of catching up, it returns anyway)."""
        promoted = memory.promote(
            self._as(tenant_id),
            tenant_id,
            kind=kind,
            scope=scope,
            scopes=scopes,
            statement=statement,
            memory_id=memory_id,
            key=key,
            actor="library",
        )
        memory.promotion_shown(self.engine, tenant_id, promoted)
        return promoted

    def retract(self, tenant_id: str, item_id: str, reason: str = "") -> Change:
        """Soft-delete an item; says its kind and what was done (``status`` "already
        retracted", and nothing recorded, for an item retracted before: retrying is safe).
        Once this returns, ``context`` and ``search`` no longer show it (``shown``; False
        only if the read model could not catch up within ``memory.READ_YOUR_WRITE_S``)."""
        as_tenant = self._as(tenant_id)
        return memory.retract(as_tenant, tenant_id, item_id, reason=reason, actor="library", owner=self.engine)

    def restore(self, tenant_id: str, item_id: str, reason: str = "") -> Change:
        """Undo a retraction; says the item's kind and what was done ("not retracted",
        and nothing recorded, for an item that was not retracted). Once this returns,
        the item shows again."""
        as_tenant = self._as(tenant_id)
        return memory.restore(as_tenant, tenant_id, item_id, reason=reason, actor="library", owner=self.engine)

    def resolve_conflict(self, tenant_id: str, conflict_id: str, chosen_memory_id: str, reason: str = "") -> None:
        """Record which fact of a conflict stands; the next ``context`` shows that choice."""
        memory.resolve_conflict(
            self._as(tenant_id), tenant_id, conflict_id, chosen_memory_id, reason=reason, actor="library"
        )
        memory.resolution_shown(self.engine, tenant_id, conflict_id)

    def provenance(self, tenant_id: str, item_id: str, *, scopes: Scopes | None = None) -> Provenance:
        """The events behind an item, back to its turns. With ``scopes`` (an agent asking for a
        conversation), only an item it could be shown, with the turns it may see; without, the
        whole tenant's (an audit)."""
        with driver_errors.translated():
            return provenance.provenance(self._as(tenant_id), tenant_id, item_id, scopes)

    def history(self, tenant_id: str, key: str) -> list[Step]:
        """Every fact ever stated on ``key``, and what happened to each."""
        with driver_errors.translated():
            return provenance.key_history(self._as(tenant_id), tenant_id, key)

    def replay(self, tenant_id: str, context_event_id: str) -> Replay:
        """Re-render a served block from the ledger and check its hash."""
        return context_replay.replay(self._as(tenant_id), tenant_id, context_event_id, self.database.tokenizers)

    def settings(self, tenant_id: str, **switches: bool) -> TenantSettings:
        """The tenant's switches (capture, recall, auto_promote, broad_scope_writes) after
        changing those named, if any; with none, only read (nothing recorded). An unknown
        switch raises ``InvalidCommand``."""
        if not switches:
            return tenant_settings.current(self._as(tenant_id), tenant_id)
        change = tenant_settings.switches_change(switches)
        return tenant_settings.change(self._as(tenant_id), tenant_id, change, actor="library")

    def create_key(self, tenant_id: str, label: str = "") -> tuple[str, str]:
        """Issue an API key for the HTTP API and MCP; (key id, key). An operator's act:
        it runs as the owner, which also brings the key lookup up to date at once."""
        return keys.create(self.engine, tenant_id, label=label, issued_by="library")
