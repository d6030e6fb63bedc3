"""Benchmark context selection at scale: select + format latency, one caller and eight.

    .venv/bin/python scripts/bench_context.py [--quick] [--requests N] [--threads N] [--processes N] [--profile FILE]

1. Data. An embedded PostgreSQL of this process alone (``store.embedded_server.start_temporary``,
   in a temporary directory, deleted at exit; ``DATABASE_URL``'s server if set, on a
   fresh database dropped at the end). One big tenant ``bench-main``: 100,000 facts
   (session 25 %, project 35 %, user 20 %, org 20 %; ten categories; confidences 0.5
   to 1.0; some keys restated, so slots conflict and supersede), 10,000 entities
   (people, projects and services, tools, concepts, organisations; some with aliases
   or descriptions, observed again in other casings) and 50,000 relationships (works
   on, works with, knows, uses, depends on, part of, the users' own edges), popular
   items far more connected than the rest. Plus 100 other tenants of 400 facts, 40
   entities and 200 relationships each. ``--quick``: 5,000 / 500 / 2,500 and 10
   tenants of 100 / 10 / 50. Events are generated directly (``FactExtracted``,
   ``EntityObserved``, ``RelationshipObserved``; seed 7, deterministic), appended
   500 per stream ("extraction:<batch>", as the worker appends a batch's events) and
   20 appends per transaction with ``event_store.append``, then every projector of
   ``registry.all_projectors()`` is rebuilt (``rebuild.rebuild``), then ANALYZE.

2. Embeddings. The offline model (all-MiniLM-L6-v2 int8) makes a few hundred short
   texts per second on a quiet 2-core machine (and ~20/s on a busy one), so the
   ~150,000 item texts are NOT each embedded by the model. Every *distinct word* of
   the generated names and values, and every statement template with its slots
   blanked, is embedded by the real model (about a thousand short texts); each item's
   vector is the normalised sum of its template's and its words' vectors, plus a
   small seeded jitter (so no two items share a vector). These vectors are written
   into ``embedding_cache`` under the model's name and the sha256 of the exact text
   the embeddings projector computes for the item, so the projector's rebuild finds
   every text cached, embeds none (checked and printed) and builds the real HNSW
   index over every row. The vectors lie in the model's space, clustered by topic
   and name as real ones are; they are not the model's vectors of the full texts.
   Each request's query vector IS the real model's (``bootstrap.vector_search``).

3. Latency. ``--requests`` (500; 100 with ``--quick``) distinct requests, a third
   each coding, formatting and general, each naming one or two entities of the big
   tenant and carrying the scopes of one of its sessions. What the targets name,
   ``select`` (with the vector channel: the request embedded by the real model) and
   the formatter, is timed per request after 20 warm-up requests: p50/p95/p99, with
   the time spent inside SQL statements and their number ("single"). Then as many
   other requests, drawn alike, from 8 threads at once ("concurrent"). Then the
   same two passes of ``build_context``, which also records ``ContextServed`` (one
   transaction with the selection's reads: "served_single", "served_concurrent").
   Each pass has requests of its own (query vectors are cached per process). Then
   the embedder alone on the first requests (``embedding_p50_ms``), and ``select``
   with and without the vector channel on a fifth set, to show where the time goes.
   ``--processes N``: also the requests of a sixth set from N processes at once, each
   with its own engines and embedder (separate agent processes, an API server's
   workers), so no GIL is shared ("concurrent_processes").

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import itertools
import json
import multiprocessing
import os
import platform
import random
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine

from memledger import bootstrap
from memledger.adapters.embedding import MiniLmEmbedder
from memledger.config import Settings
from memledger.events.catalogue import EntityObserved, Event, FactExtracted, RelationshipObserved, Scopes
from memledger.events.envelope import Metadata, NewEvent, Recorded
from memledger.events.keys import entity_id, relationship_key
from memledger.formatting import render
from memledger.projectors import rebuild, registry, runner
from memledger.projectors.embeddings.projector import item_text, text_sha256
from memledger.selection.types import Selection
from memledger.service import context, selection_limit
from memledger.store import db, embedded_server, event_store, migrate

TARGETS = {"p50_ms": 20.0, "p99_ms": 60.0, "concurrent_p99_ms": 150.0}
SEED = 7
STREAM_EVENTS = 500
APPENDS_PER_TX = 20
START_AT = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
# Loading and rebuilding only: the append's reused-event-id check is planned as a
# hash join over the tenant's events (see bench_projections.py), and pgvector's
# HNSW build wants its graph in memory (PERFORMANCE-NOTES.md).
_LOAD_OPTIONS = "-c enable_hashjoin=off -c enable_mergejoin=off -c maintenance_work_mem=1GB"


@dataclass(frozen=True)
class Size:
    facts: int
    entities: int
    relationships: int
    users: int
    projects: int
    sessions: int
    orgs: int
    tenants: int
    tenant_facts: int
    tenant_entities: int
    tenant_relationships: int
    requests: int


FULL = Size(100_000, 10_000, 50_000, 300, 80, 3000, 5, 100, 400, 40, 200, 500)
QUICK = Size(5_000, 500, 2_500, 40, 12, 200, 2, 10, 100, 10, 50, 100)

# -- vocabulary ---------------------------------------------------------------------------


def _names(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


_FIRST = _names(
    "Alice Amara Ben Bilal Carmen Chloe Daniel Dmitri Elena Emeka Farah Felix Grace Gustavo Hana Hiro "
    "Ines Isaac Jonas Julia Keiko Kofi Lars Leila Liam Lucia Maya Mateo Nadia Nikhil Noor Olga Omar "
    "Oscar Priya Pablo Quentin Rania Rosa Ruben Sana Sven Tariq Tomas Uma Valentina Victor Wei Yara "
    "Yusuf Zoe Aiko Bruno Camille Diego Esther Fatima Goran Helga Ivan Jamal Kira Lena Marco Nina Otto "
    "Paula Rafael Sofia Theo Ugo Vera Wanda Xavier Yann Zainab Anya Boris Clara Dario Eva Hugo"
)
_LAST = _names(
    "Chen Okafor Silva Novak Haddad Larsen Mendes Ito Kowalski Roy Schmidt Garcia Nakamura Brown Petrov "
    "Rossi Dubois Kim Ahmed Jensen Moreau Costa Fischer Park Singh Oliveira Berg Walsh Tanaka Ward "
    "Lindqvist Moreno Ivanova Evans Suzuki Hoffmann Nguyen Patel Romano Young Baker Kaur Sato Weber "
    "Murphy Lopez Yilmaz Andersen Horvat Adeyemi Cohen Fernandes Kruger Laine Mbeki Nowak Ortiz Quinn "
    "Reyes Santos Takahashi Umar Varga Wagner Xu Yamamoto Zimmermann Abbott Becker Castillo Dahl Engel "
    "Falk Gomez Holm Iqbal Jovanovic Keller"
)
_TOOLS = _names(
    "PostgreSQL|Redis|Kafka|RabbitMQ|Docker|Kubernetes|Terraform|Ansible|GitHub Actions|GitLab CI|Jenkins|"
    "Buildkite|Sentry|Grafana|Prometheus|Datadog|New Relic|FastAPI|Django|Flask|React|Vue|Svelte|Angular|"
    "Next.js|pytest|Playwright|Cypress|Figma|Linear|Jira|Slack|Notion|pgvector|Airflow|dbt|Snowflake|"
    "BigQuery|ClickHouse|Elasticsearch|OpenSearch|MongoDB|DynamoDB|Cassandra|SQLite|MySQL|Nginx|Envoy|"
    "Istio|Vault|Consul|Helm|Argo CD|Flux|Pulumi|Spark|Flink|Pandas|Polars|NumPy|PyTorch|TensorFlow|"
    "scikit-learn|Jupyter|VS Code|Neovim|Emacs|IntelliJ IDEA|PyCharm|Zed|Git|Bazel|Gradle|Maven|npm|pnpm|"
    "Yarn|uv|Poetry|Ruff|mypy|Black|ESLint|Prettier|TypeScript|Webpack|Vite|esbuild|Storybook|Tailwind|"
    "GraphQL|gRPC|Protobuf|OpenTelemetry|Jaeger|Loki|Tempo|PagerDuty|Opsgenie|Stripe|Twilio|SendGrid|"
    "Auth0|Keycloak|Okta|Cloudflare|Fastly|Celery|Temporal|Sidekiq|Rails|Spring Boot|Kotlin|Go|Rust|"
    "Java|Python|Ruby|Elixir|Phoenix LiveView|Deno|Bun|Node.js|Express|NestJS|Prisma|SQLAlchemy|Alembic|"
    "Flyway|Liquibase|Metabase|Looker|Tableau|Superset|Kibana|Logstash|Fluentd|Vector|MinIO|S3|Lambda|"
    "CloudFront|ECS|EKS|GKE|Cloud Run|Heroku|Fly.io|Vercel|Netlify|Supabase|Firebase|Hasura|Postman",
    "|",
)
_ALIASES = {
    "PostgreSQL": "Postgres",
    "Kubernetes": "k8s",
    "VS Code": "vscode",
    "GitHub Actions": "GHA",
    "Elasticsearch": "ES",
    "TypeScript": "TS",
    "JavaScript": "JS",
}
_ADJ = _names(
    "Blue Silver Iron Golden Quiet Rapid Northern Crimson Hidden Bright Hollow Amber Copper Jade Velvet "
    "Stone Swift Lunar Solar Frozen Wild Gentle Bold Misty Scarlet Emerald Obsidian Coral Ivory Onyx "
    "Cobalt Violet Ashen Silent Stormy Sunny Shadow Crystal Rustic Polar"
)
_NOUN = _names(
    "Heron Falcon Lantern Harbor River Summit Meadow Forge Beacon Compass Orchard Atlas Phoenix Comet "
    "Glacier Canyon Willow Kestrel Anchor Horizon Quarry Prairie Lighthouse Badger Otter Sparrow Raven "
    "Cedar Maple Juniper Tundra Nimbus Quasar Sequoia Marigold Orion Hermes Pioneer Voyager Delta"
)
_AREAS = _names(
    "billing auth search payments notifications reporting ingestion checkout inventory ledger analytics "
    "scheduler export import sync profile recommendation pricing invoicing onboarding shipping catalog "
    "identity audit messaging"
)
_PARTS = ("service", "API", "worker", "gateway", "pipeline", "dashboard", "indexer", "frontend")
_CONCEPTS = _names(
    "feature flags|blue-green deploys|canary releases|event sourcing|retrieval augmented generation|"
    "error budgets|trunk-based development|code owners|load shedding|rate limiting|circuit breakers|"
    "schema migrations|data retention|GDPR erasure|zero-downtime deploys|chaos testing|pair programming|"
    "mob programming|design reviews|postmortems|on-call rotation|SLOs|tracing|structured logging|"
    "dependency pinning|semantic versioning|monorepo|microservices|CQRS|idempotency keys|backpressure|"
    "connection pooling|read replicas|sharding|vector search|prompt caching|A/B testing|dark launches|"
    "infrastructure as code|least privilege|secret rotation|threat modelling|accessibility audits|"
    "performance budgets|golden paths|platform engineering|DORA metrics|incident review|runbooks|"
    "property-based testing|contract testing|snapshot testing|mutation testing|code freeze|hotfix policy",
    "|",
)
_ORG_A = _names(
    "Acme Globex Initech Umbrella Hooli Stark Wayne Northwind Contoso Fabrikam Tyrell Cyberdyne Soylent "
    "Vandelay Wonka Gringotts Oscorp Aperture Massive Dynamic Monarch Pied Piper Sterling Bluth Dunder"
)
_ORG_B = (
    "Labs",
    "Logistics",
    "Health",
    "Capital",
    "Retail",
    "Systems",
    "Media",
    "Energy",
    "Foods",
    "Bank",
    "Insurance",
    "Telecom",
    "Robotics",
    "Analytics",
    "Travel",
    "Games",
)
_PROJECT_SHARE, _PEOPLE_SHARE = 17, 60  # per cent of the named entities; organisations the rest
_ROLES = (
    "staff engineer",
    "product manager",
    "designer",
    "SRE",
    "data scientist",
    "engineering manager",
    "frontend developer",
    "backend developer",
    "security lead",
    "QA engineer",
    "tech lead",
    "CTO",
)


def _fill(rng: random.Random, pool: Sequence[str]) -> str:
    return pool[int(len(pool) * rng.random() ** 2.0)]  # popular items far more often


# Each template: key, category, statement, the scopes it may go in. Slots: {who}
# (the session's user), {person}, {project} (the session's project), {service},
# {tool}, {tool2}, {concept}, {org}, {n}, {word}. Keys name two things mostly, so
# most facts stand; some slots still get restated (superseded or in conflict).
_TEMPLATES: tuple[tuple[str, str, str, str], ...] = (
    ("{service} database", "technical_fact", "the {service} of {project} stores its data in {tool} {n}", "project"),
    ("{service} owner", "technical_fact", "{person} owns the {service} of {project}", "project org"),
    ("{service} language", "technical_fact", "the {service} is written in {tool}", "project org"),
    ("{service} hosting", "decision", "the {service} runs on {tool} in the {word} region", "project org"),
    ("{service} cache", "decision", "we put {tool} in front of the {service} to cut latency", "project"),
    (
        "{service} timeout for {tool}",
        "constraint",
        "calls from the {service} to {tool} must finish within {n}0 ms",
        "project org",
    ),
    ("{project} release cadence", "decision", "{project} ships a release every {n} days", "project"),
    (
        "{concept} policy for {service}",
        "constraint",
        "{concept} is mandatory for the {service} because it touches {word} data",
        "org project",
    ),
    (
        "{service} migration",
        "task_update",
        "{who} is halfway through moving the {service} from {tool} to {tool2}",
        "session",
    ),
    ("{service} errors with {tool}", "task_update", "the {service} returns 5{n} errors when {tool} is slow", "session"),
    (
        "runbook {service} restart",
        "procedure",
        "to restart the {service}, drain it in {tool} first, then roll the pods one by one",
        "project org",
    ),
    ("{tool} version in {service}", "technical_fact", "the {service} pins {tool} to version {n}.{n}", "project org"),
    (
        "lesson {service} {concept}",
        "lesson_learned",
        "after the {word} outage we learned to apply {concept} to the {service}",
        "project org",
    ),
    (
        "term {word} {service}",
        "terminology",
        "'{word} run' means the {service} batch that runs at night",
        "org project",
    ),
    (
        "{project} goal {service}",
        "goal",
        "the {project} goal this quarter is to cut {service} costs by {n}0 %",
        "project",
    ),
    ("editor for {tool}", "preference", "{who} edits {tool} code in {tool2} with a {word} theme", "user"),
    (
        "answers about {service}",
        "preference",
        "{who} wants {word} answers with code first when asking about the {service}",
        "user",
    ),
    (
        "{tool} code style",
        "preference",
        "in {tool} code {who} prefers {word} names and small functions",
        "user project",
    ),
    (
        "{service} release notes format",
        "preference",
        "release notes for the {service} are written as {word} bullet lists",
        "user project org",
    ),
    ("timezone", "personal_fact", "{who} works from the {word} office", "user"),
    ("on call {service}", "task_update", "{person} is on call for the {service} this week", "session project"),
    (
        "{service} review rule",
        "constraint",
        "changes to the {service} need a review from {person} before merging",
        "project org",
    ),
    ("{service} protocol", "technical_fact", "the {service} exposes a {tool} API on port 8{n}", "project org"),
    ("{project} ci {tool}", "technical_fact", "{project} builds run on {tool} and take about {n} minutes", "project"),
    ("vendor {org} {concept}", "decision", "we signed with {org} for {concept} until 20{n}", "org"),
    ("{service} slo", "constraint", "the {service} keeps an availability SLO of 99.{n} %", "org project"),
    (
        "{concept} approach {service}",
        "decision",
        "for {concept} in the {service} we chose {tool} over {tool2}",
        "project org",
    ),
    ("{project} sync with {person}", "procedure", "the {project} sync is on {word} mornings with {person}", "project"),
    ("design doc {service}", "task_update", "{who} is writing the {service} design doc with {person}", "session"),
    ("{service} flaky test {word}", "task_update", "the {word} test of the {service} is flaky on {tool}", "session"),
    ("hobby", "personal_fact", "{who} spends weekends on {word} photography", "user"),
    ("term {concept} at {org}", "terminology", "in {org} documents '{concept}' refers to the {service}", "org"),
    ("lint rule {tool}", "preference", "{who} wants {tool} warnings treated as errors", "user project"),
    ("docs language {org}", "preference", "customer-facing docs for {org} are written in {word} English", "org user"),
    ("{person} contact", "personal_fact", "{person} is the contact for {org} questions", "user org session"),
    ("{project} budget {tool}", "decision", "{project} may spend {n}000 dollars a month on {tool}", "project"),
)
_WORDS = _names(
    "dark light short detailed plain nordic eastern western Tuesday Thursday Monday Friday Lisbon Berlin "
    "Tokyo Toronto customer payroll medical nightly reconciliation smoke landscape street concise formal "
    "descriptive numbered British American nightly weekly staging canary payment"
)
_SCOPE_MIX = (("session", 25), ("project", 35), ("user", 20), ("org", 20))

# requests: (category, template). Slots name entities of the big tenant: {person},
# {project} (a codename), {service}, {tool}, {concept}, {org}; {mine} is the session's project.
_REQUESTS = (
    ("coding", "Why does the deploy of the {service} keep failing, and how should I debug it?"),
    ("coding", "Write a migration script for the {service} database schema in {tool}"),
    ("coding", "How do I configure {tool} for the {service} in the test environment?"),
    ("coding", "Refactor the {service} endpoint so it handles the {tool} timeout error"),
    ("coding", "What version of {tool} does {mine} depend on, and can I upgrade the package?"),
    ("coding", "Implement a retry in the {service} client, following the {project} architecture"),
    ("coding", "Review this SQL query against the {service} schema for performance"),
    ("coding", "Set up the CI build for {project} with {tool}"),
    ("coding", "The {service} tests fail after the {tool} upgrade, what changed?"),
    ("formatting", "Rewrite the summary of {project} in a concise style for {person}"),
    ("formatting", "Format the {service} release notes as markdown bullets"),
    ("formatting", "Write an email to {person} about the {project} delay, keep the tone formal"),
    ("formatting", "Draft a short reply to {person} in the usual style"),
    ("formatting", "Summarise the {concept} discussion in bullet points for {person}"),
    ("general", "What do we know about {person}?"),
    ("general", "Who works with {person} on {project}?"),
    ("general", "Remind me what was decided about {concept} for {mine}"),
    ("general", "What is {person} responsible for these days?"),
    ("general", "How are {org} and {project} connected?"),
    ("general", "What did {person} say about the {project} plans?"),
    ("general", "Give me some background on {org} before my meeting"),
)


# -- the generated tenant -----------------------------------------------------------------


@dataclass
class Item:
    """One generated event and the words its vector is composed from."""

    event: Event
    template: str  # the statement template with its slots blanked ("" for names)
    words: list[str]


@dataclass
class Tenant:
    tenant_id: str
    rng: random.Random
    people: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    services: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    orgs: list[str] = field(default_factory=list)
    sessions: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # session, user, who, proj, org
    items: list[Item] = field(default_factory=list)
    turn: int = 0

    def turn_id(self) -> str:
        self.turn += 1
        return f"turn-{self.turn // 3}"  # a few items per turn, as extraction gives


@cache
def _pools() -> tuple[list[str], list[str], list[str], list[str]]:
    """Every person, codename, service and organisation name the generator may use."""
    people = [f"{f} {la}" for f in _FIRST for la in _LAST]
    codenames = [f"{a} {n}" for a in _ADJ for n in _NOUN]
    services = [f"{a} {p}" for a in _AREAS for p in _PARTS]
    orgs = [f"{a} {b}" for a in _ORG_A for b in _ORG_B] + [f"{n} {b}" for n in _NOUN for b in _ORG_B]
    orgs += [f"{x} & {y}" for x in _LAST for y in _LAST if x != y]
    return people, codenames, services, orgs


def _cast(tenant: Tenant, size: Size, entities: int) -> None:
    """Choose the tenant's entities (about ``entities`` of them) and sessions."""
    rng = tenant.rng
    pools = _pools()
    people, codenames, services, orgs = (rng.sample(pool, min(len(pool), entities)) for pool in pools)
    tenant.tools = rng.sample(_TOOLS, min(len(_TOOLS), max(2, entities // 25)))
    tenant.concepts = rng.sample(_CONCEPTS, min(len(_CONCEPTS), max(1, entities // 100)))
    tenant.services = services[: max(2, min(len(services), entities // 50))]
    rest = entities - len(tenant.tools) - len(tenant.concepts) - len(tenant.services)
    tenant.people = people[: max(2, rest * _PEOPLE_SHARE // 100)]
    tenant.projects = codenames[: max(1, rest * _PROJECT_SHARE // 100)]
    tenant.orgs = orgs[: max(1, rest - len(tenant.people) - len(tenant.projects))]
    users = tenant.people[: size.users]
    active = tenant.projects[: size.projects]
    org_keys = [name.lower() for name in rng.sample(_ORG_A, size.orgs)]
    for i in range(size.sessions):
        who = users[i % len(users)]
        tenant.sessions.append(
            (f"s-{i:05d}", "u-" + who.lower().replace(" ", "-"), who, _fill(rng, active), rng.choice(org_keys))
        )


def _confidence(rng: random.Random) -> float:
    return round(rng.choice((0.55, 0.65, 0.75, 0.8, 0.85, 0.9, 0.9, 0.95, 1.0)) - rng.random() * 0.04, 3)


def _facts(tenant: Tenant, count: int) -> None:
    rng = tenant.rng
    by_scope = {s: [t for t in _TEMPLATES if s in t[3].split()] for s, _ in _SCOPE_MIX}
    scopes = [s for s, w in _SCOPE_MIX for _ in range(w)]
    for i in range(count):
        session, user, who, project, org = rng.choice(tenant.sessions)
        scope = rng.choice(scopes)
        key_t, category, text_t, _ = rng.choice(by_scope[scope])
        slots = {
            "who": who,
            "person": _fill(rng, tenant.people),
            "project": project,
            "service": _fill(rng, tenant.services),
            "tool": _fill(rng, tenant.tools),
            "tool2": rng.choice(tenant.tools),
            "concept": _fill(rng, tenant.concepts),
            "org": _fill(rng, tenant.orgs),
            "n": str(rng.randint(1, 9)),
            "word": rng.choice(_WORDS),
        }
        scope_key = {"session": session, "project": project, "user": user, "org": org}[scope]
        statement = text_t.format(**slots)
        used = [v for k, v in slots.items() if "{" + k + "}" in text_t + key_t and k != "n"]
        event = FactExtracted(
            memory_id=f"fact-{tenant.tenant_id}-{i}",
            scope=scope,
            scope_key=scope_key,  # type: ignore[arg-type]
            key=key_t.format(**slots),
            statement=statement,
            category=category,  # type: ignore[arg-type]
            confidence=_confidence(rng),
            source_turns=(tenant.turn_id(),),
        )
        blank = text_t.format(**dict.fromkeys(slots, "")).replace("  ", " ")
        tenant.items.append(Item(event, blank, [w for v in used for w in v.split()]))


def _entities(tenant: Tenant) -> None:
    rng = tenant.rng
    typed = [
        ("person", tenant.people),
        ("project", tenant.projects),
        ("project", tenant.services),
        ("tool", tenant.tools),
        ("concept", tenant.concepts),
        ("organization", tenant.orgs),
    ]
    for entity_type, names in typed:
        for name in names:
            for seen in range(1 + int(rng.random() < 0.3)):  # some observed twice, in another casing
                shown = name if seen == 0 or rng.random() < 0.5 else name.lower()
                alias = _ALIASES.get(name)
                described = rng.random() < 0.3
                description = None
                if described:
                    description = (
                        f"{rng.choice(_ROLES)} at {rng.choice(tenant.orgs)}"
                        if entity_type == "person"
                        else f"{entity_type} used by {rng.choice(tenant.projects)}"
                    )
                event = EntityObserved(
                    name=shown,
                    entity_type=entity_type,  # type: ignore[arg-type]
                    confidence=_confidence(rng),
                    aliases=(alias,) if alias else (),
                    description=description,
                    source_turns=(tenant.turn_id(),),
                )
                words = name.split() + (description.split() if description else [])
                tenant.items.append(Item(event, "", words))


def _edge_ends(tenant: Tenant, rng: random.Random) -> tuple[str, str, str, str, str]:
    roll = rng.random()
    person, other = _fill(rng, tenant.people), rng.choice(tenant.people)
    project = _fill(rng, tenant.projects + tenant.services)
    if roll < 0.2:
        return ("person", person, "WORKS_ON", "project", project)
    if roll < 0.35:
        return ("person", person, rng.choice(("WORKS_WITH", "KNOWS")), "person", other)
    if roll < 0.55:
        return ("project", project, rng.choice(("USES", "DEPENDS_ON")), "tool", _fill(rng, tenant.tools))
    if roll < 0.65:
        return ("project", project, "DEPENDS_ON", "project", _fill(rng, tenant.services))
    if roll < 0.75:
        return ("person", person, "PART_OF", "organization", _fill(rng, tenant.orgs))
    if roll < 0.85:
        return ("project", project, "USES", "concept", _fill(rng, tenant.concepts))
    _, user, _, proj, _ = rng.choice(tenant.sessions)
    if roll < 0.95:
        return ("user", user, rng.choice(("USES", "PREFERS")), "tool", _fill(rng, tenant.tools))
    return ("user", user, "WORKS_ON", "project", proj)


def _relationships(tenant: Tenant, count: int) -> None:
    rng = tenant.rng
    seen: set[str] = set()
    while len(seen) < count:
        st, sn, rel, tt, tn = _edge_ends(tenant, rng)
        if entity_id(st, sn) == entity_id(tt, tn):
            continue
        key = relationship_key(st, sn, rel, tt, tn)
        seen.add(key)
        tenant.items.append(
            Item(
                RelationshipObserved(
                    relationship_id=key,
                    source_name=sn,
                    source_type=st,
                    relation=rel,  # type: ignore[arg-type]
                    target_name=tn,
                    target_type=tt,
                    confidence=_confidence(rng),  # type: ignore[arg-type]
                    context=f"said in {rng.choice(tenant.projects)}" if rng.random() < 0.2 else None,
                    source_turns=(tenant.turn_id(),),
                ),
                "",
                [],
            )
        )


def make_tenant(tenant_id: str, size: Size, index: int, *, facts: int, entities: int, edges: int) -> Tenant:
    tenant = Tenant(tenant_id, random.Random(SEED * 1_000_003 + index))
    small = (
        size
        if index == 0
        else Size(0, 0, 0, max(3, entities // 8), max(2, entities // 10), max(6, entities // 2), 1, 0, 0, 0, 0, 0)
    )
    _cast(tenant, small, entities)
    _entities(tenant)
    _facts(tenant, facts)
    _relationships(tenant, edges)
    tenant.rng.shuffle(tenant.items)  # facts, entities and edges arrive interleaved
    return tenant


# -- loading ------------------------------------------------------------------------------


def _new_events(tenant: Tenant) -> Iterator[tuple[str, list[NewEvent]]]:
    at = START_AT
    for start in range(0, len(tenant.items), STREAM_EVENTS):
        chunk = tenant.items[start : start + STREAM_EVENTS]
        stream = f"extraction:bench-{start // STREAM_EVENTS}"
        news = []
        for offset, item in enumerate(chunk):
            at += timedelta(seconds=30)
            news.append(
                NewEvent(
                    event=item.event,
                    event_id=f"{tenant.tenant_id}-e{start + offset}",
                    occurred_at=at,
                    metadata=Metadata(correlation_id=stream, extractor="bench", extractor_version="1"),
                )
            )
        yield stream, news


def append_tenants(engine: Engine, tenants: Sequence[Tenant]) -> int:
    """Append every tenant's items; return the number of events."""
    appends = [(t.tenant_id, stream, news) for t in tenants for stream, news in _new_events(t)]
    for start in range(0, len(appends), APPENDS_PER_TX):
        with engine.begin() as tx:
            for tenant_id, stream, news in appends[start : start + APPENDS_PER_TX]:
                event_store.append(tx, tenant_id, stream, news, None)
    return sum(len(news) for _, _, news in appends)


def _fake(tenant_id: str, event: Event) -> Recorded:
    return Recorded(
        tenant_id=tenant_id,
        position=0,
        tx_id=0,
        stream_id="s",
        stream_version=0,
        event_id="e",
        occurred_at=START_AT,
        recorded_at=START_AT,
        metadata=Metadata(),
        event=event,
    )


_VECTOR_TEXT = "[" + ",".join(["%.6f"] * 384) + "]"


def seed_embeddings(engine: Engine, tenants: Sequence[Tenant], embedder: MiniLmEmbedder) -> dict[str, int]:
    """Compose a vector for each item text (see the module docstring) and cache it."""
    texts: dict[str, tuple[str, list[str]]] = {}  # sha -> (template, words)
    for tenant in tenants:
        for item in tenant.items:
            found = item_text(_fake(tenant.tenant_id, item.event))
            if found is not None:
                texts.setdefault(text_sha256(found[1].text), (item.template, item.words))
    parts = sorted({p for template, words in texts.values() for p in (template, *words) if p})
    vectors: dict[str, Any] = {}
    for start in range(0, len(parts), 64):
        chunk = parts[start : start + 64]
        vectors.update(zip(chunk, np.asarray(embedder.embed(chunk), dtype=np.float32), strict=True))
    rows = []
    for sha, (template, words) in texts.items():
        jitter = np.random.default_rng(int(sha[:12], 16)).normal(0.0, 0.03, 384).astype(np.float32)
        total = (1.5 * vectors[template] if template else 0) + sum(vectors[w] for w in words) + jitter
        total /= np.linalg.norm(total)
        rows.append((embedder.model, sha, _VECTOR_TEXT % tuple(total.tolist())))
    raw = engine.raw_connection()
    try:
        with raw.cursor() as cur, cur.copy("COPY embedding_cache (model, text_sha256, embedding) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        raw.commit()
    finally:
        raw.close()
    return {"embedded_by_model": len(parts), "composed_vectors": len(rows)}


class CountingEmbedder:
    """The model, counting what the projector asks it to embed (should be nothing)."""

    def __init__(self, inner: MiniLmEmbedder) -> None:
        self.inner, self.model, self.dim, self.texts = inner, inner.model, inner.dim, 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += len(texts)
        return self.inner.embed(texts)


def project_all(engine: Engine, counting: CountingEmbedder) -> dict[str, float]:
    seconds = {}
    for projector in registry.all_projectors(counting):
        runner.install(engine, projector)
        started = time.perf_counter()
        rebuild.rebuild(engine, projector)
        seconds[projector.name] = round(time.perf_counter() - started, 1)
        log(f"rebuild {projector.name}: {seconds[projector.name]} s")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE"))  # text(): maintenance, what autovacuum would do soon after
    return seconds


# -- requests and measurement -------------------------------------------------------------


def make_requests(tenant: Tenant, count: int) -> list[context.SelectRequest]:
    """``count`` distinct requests, the categories in turn, naming entities of ``tenant``."""
    rng = random.Random(SEED + 1)
    seen: set[str] = set()
    out = []
    for attempt in itertools.count():
        if len(out) == count:
            break
        _, template = _REQUESTS[attempt % len(_REQUESTS)]  # the next template on a repeat: a small tenant runs out
        session, user, _, project, org = rng.choice(tenant.sessions)
        text = template.format(
            person=_fill(rng, tenant.people),
            project=_fill(rng, tenant.projects),
            mine=project,
            service=_fill(rng, tenant.services),
            tool=_fill(rng, tenant.tools),
            concept=_fill(rng, tenant.concepts),
            org=_fill(rng, tenant.orgs),
        )
        if text in seen:
            continue
        seen.add(text)
        scopes = Scopes(session=session, project=project, user=user, org=org)
        out.append(context.SelectRequest(tenant_id=tenant.tenant_id, scopes=scopes, request=text))
    return out


def quantiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def q(p: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1)

    return {"p50_ms": q(0.5), "p95_ms": q(0.95), "p99_ms": q(0.99), "max_ms": q(1.0)}


@dataclass
class Outcome:
    seconds: list[float] = field(default_factory=list)
    sql_seconds: list[float] = field(default_factory=list)
    statements: int = 0
    failed_open: int = 0
    empty: int = 0
    items: int = 0


class StatementClock:
    """Time spent in statements (send, server, fetch) per thread, via engine events."""

    def __init__(self, engine: Engine) -> None:
        self.local = threading.local()
        sa.event.listen(engine, "before_cursor_execute", self._before)
        sa.event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, *_: Any) -> None:
        self.local.started = time.perf_counter()

    def _after(self, *_: Any) -> None:
        self.local.seconds = getattr(self.local, "seconds", 0.0) + time.perf_counter() - self.local.started
        self.local.count = getattr(self.local, "count", 0) + 1

    def take(self) -> tuple[float, int]:
        """(seconds, statements) since the last call, in this thread."""
        out = (getattr(self.local, "seconds", 0.0), getattr(self.local, "count", 0))
        self.local.seconds, self.local.count = 0.0, 0
        return out


Served = tuple[Selection, str]  # the selection, and the block's text
# This process's limit on selections at once, as a server's (``bootstrap.App.selections``).
SELECTIONS = selection_limit.of_settings(Settings().context_concurrency)
Operation = Callable[[Engine, context.SelectRequest, Any], Served]


def select_and_format(engine: Engine, request: context.SelectRequest, search: Any) -> Served:
    """What the targets time: ``select`` (query embedding included) and the formatter."""
    selection = context.select(engine, request, vector_search=search, limit=SELECTIONS)
    return selection, render(selection, max_chars=request.budget_chars).text


def build_context(engine: Engine, request: context.SelectRequest, search: Any) -> Served:
    """Select, format and record ``ContextServed`` (what the library and API serve)."""
    served = context.build_context(engine, request, vector_search=search, limit=SELECTIONS)
    return served.selection, served.block.text


def _one(
    op: Operation,
    engine: Engine,
    request: context.SelectRequest,
    search: Any,
    outcome: Outcome,
    lock: Any,
    clock: StatementClock,
) -> None:
    clock.take()
    started = time.perf_counter()
    selection, _ = op(engine, request, search)
    elapsed = time.perf_counter() - started
    sql, statements = clock.take()
    with lock:
        outcome.seconds.append(elapsed)
        outcome.sql_seconds.append(sql)
        outcome.statements += statements
        reason = selection.empty_reason or ""
        outcome.failed_open += reason.startswith("memory unavailable")
        outcome.empty += bool(reason)
        outcome.items += len(selection.items)


def run_serial(
    op: Operation, engine: Engine, requests: Sequence[context.SelectRequest], search: Any, clock: StatementClock
) -> Outcome:
    outcome, lock = Outcome(), threading.Lock()
    for request in requests:
        _one(op, engine, request, search, outcome, lock, clock)
    return outcome


def server_cpu_seconds(engine: Engine) -> float | None:
    """CPU time used so far by this database's backends (a local server only: /proc)."""
    with engine.connect() as conn:
        # text(): the backends of this database, for the CPU accounting of the report.
        pids = conn.execute(sa.text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")).scalars()
        total = 0.0
        for pid in pids.all():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                return None
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def run_concurrent(
    op: Operation,
    engine: Engine,
    requests: Sequence[context.SelectRequest],
    search: Any,
    threads: int,
    clock: StatementClock,
) -> Outcome:
    outcome, lock = Outcome(), threading.Lock()
    queue = list(reversed(requests))

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                request = queue.pop()
            _one(op, engine, request, search, outcome, lock, clock)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    started = time.perf_counter()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    log(f"{threads} threads, {op.__name__}: {len(requests) / (time.perf_counter() - started):.1f} requests/s")
    return outcome


def time_select(engine: Engine, requests: Sequence[context.SelectRequest], search: Any) -> list[float]:
    samples = []
    for request in requests:
        started = time.perf_counter()
        context.select(engine, request, vector_search=search, limit=SELECTIONS)
        samples.append(time.perf_counter() - started)
    return samples


def time_embedder(embedder: MiniLmEmbedder, requests: Sequence[context.SelectRequest]) -> list[float]:
    samples = []
    for request in requests:
        started = time.perf_counter()
        embedder.embed([request.request])
        samples.append(time.perf_counter() - started)
    return samples


# -- the run ------------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"  ({message})", file=sys.stderr, flush=True)


@contextmanager
def bench_server(keep: str | None = None) -> Iterator[URL]:
    """A fresh database on a server of this process alone (or DATABASE_URL's); dropped
    after, unless ``keep`` names it (DATABASE_URL's server only): then it is created
    if missing and kept, so the next run with the same name measures the same data."""
    if os.environ.get("DATABASE_URL"):
        server, _ = bootstrap.server_url(Settings())
        stop: Callable[[], None] = lambda: None  # noqa: E731
    elif keep:
        raise SystemExit("--keep needs DATABASE_URL (a server that outlives this process)")
    else:
        server, stop = embedded_server.start_temporary(Path(tempfile.mkdtemp(prefix="memledger-bench-ctx-")) / "pgdata")
    name = keep or f"memledger_bench_ctx_{uuid.uuid4().hex[:10]}"
    url = db.ensure_database(server.set(database="postgres"), name)
    if keep:
        yield url
        return
    try:
        yield url
    finally:
        admin = sa.create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            quoted = admin.dialect.identifier_preparer.quote(name)
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))  # text(): DDL, quoted
        admin.dispose()
        stop()


def build(url: URL, size: Size, out: dict[str, Any], embedder: MiniLmEmbedder) -> Tenant:
    loader = sa.create_engine(url, connect_args={"options": _LOAD_OPTIONS}, pool_size=3)
    migrate.upgrade(loader)
    started = time.perf_counter()
    main = make_tenant("bench-main", size, 0, facts=size.facts, entities=size.entities, edges=size.relationships)
    others = [
        make_tenant(
            f"bench-t{i:03d}",
            size,
            i,
            facts=size.tenant_facts,
            entities=size.tenant_entities,
            edges=size.tenant_relationships,
        )
        for i in range(1, size.tenants + 1)
    ]
    log(f"generate: {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    out["events"] = append_tenants(loader, [main, *others])
    log(f"append {out['events']:,} events: {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    out["embeddings"] = seed_embeddings(loader, [main, *others], embedder)
    log(f"compose and cache vectors: {time.perf_counter() - started:.1f} s")
    counting = CountingEmbedder(embedder)
    out["rebuild_seconds"] = project_all(loader, counting)
    out["embeddings"]["embedded_by_projector"] = counting.texts
    with loader.connect() as conn:
        for table in (
            "proj_facts.facts",
            "proj_entities.entities",
            "proj_relationships.relationships",
            "proj_embeddings.embeddings",
        ):
            # text(): a row count for the report; the table names are constants above.
            counts = conn.execute(
                sa.text(f"SELECT count(*) FILTER (WHERE tenant_id = 'bench-main'), count(*) FROM {table}")
            ).one()
            out.setdefault("rows_main_all", {})[table.split(".")[1]] = list(counts)
    loader.dispose()
    mark_built(url, size, out)
    return main


def reuse(url: URL, size: Size, out: dict[str, Any]) -> Tenant | None:
    """The main tenant, regenerated (seeded, so the same), if ``url`` already holds a
    completed build of ``size``; None if it must be built."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            # text(): a probe of what an earlier run left, for --keep only.
            ready = conn.execute(sa.text("SELECT to_regclass('bench_build_done') IS NOT NULL")).scalar()
            row = conn.execute(sa.text("SELECT facts, events FROM bench_build_done")).one() if ready else None
    finally:
        engine.dispose()
    if row is None:
        return None
    if row[0] != size.facts:
        raise SystemExit(f"database was built with {row[0]} facts, not {size.facts}: use another --keep name")
    migrator = sa.create_engine(url)
    migrate.upgrade(migrator)  # migrations added since the build
    migrator.dispose()
    out.update(events=row[1], reused_database=True, embeddings={}, rows_main_all={})
    log("reusing the database built by an earlier run")
    return make_tenant("bench-main", size, 0, facts=size.facts, entities=size.entities, edges=size.relationships)


def mark_built(url: URL, size: Size, out: dict[str, Any]) -> None:
    """Note a completed build, for ``reuse``."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        # text(): the benchmark's own marker table, outside memledger's schema.
        conn.execute(sa.text("CREATE TABLE bench_build_done (facts int, events int)"))
        conn.execute(sa.text("INSERT INTO bench_build_done VALUES (:f, :e)"), {"f": size.facts, "e": out["events"]})
    engine.dispose()


def measure(
    url: URL, main: Tenant, size: Size, args: argparse.Namespace, out: dict[str, Any], embedder: MiniLmEmbedder
) -> None:
    database, engine = connect(url, main.tenant_id, max(5, args.threads))
    owner = database.engine
    # Query vectors are cached per process (bootstrap), so each pass gets requests of
    # its own, drawn alike: no pass is served embeddings another pass computed.
    count = args.requests or size.requests
    pool = make_requests(main, 6 * count + 20)  # seeded: a longer pool keeps the same first requests
    passes = [pool[i * count : (i + 1) * count] for i in range(5)]
    requests, others, served, served_others, selects = passes
    warm = pool[5 * count : 5 * count + 20]
    search = bootstrap.vector_search(database, embedder)
    clock = StatementClock(database.app_engine)
    run_serial(build_context, engine, warm, search, clock)
    # What this script built and holds (the generated tenant, ~10^5-10^6 objects) is
    # moved out of the garbage collector's reach, so its full collections (80 ms at
    # full size) are not charged to memledger's requests. An agent process that holds
    # that much of its own does the same (gc.freeze) or pays them in its own latency.
    gc.collect()
    gc.freeze()
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    out["single"] = timed_serial(select_and_format, engine, requests, search, clock, owner)
    if profiler:
        profiler.disable()
        profiler.dump_stats(args.profile)
    out["concurrent"] = timed_concurrent(select_and_format, engine, others, search, args.threads, clock)
    out["served_single"] = timed_serial(build_context, engine, served, search, clock, owner)
    out["served_concurrent"] = timed_concurrent(build_context, engine, served_others, search, args.threads, clock)
    out["embedder_alone"] = quantiles(time_embedder(embedder, requests))
    out["select_with_vectors"] = quantiles(time_select(engine, selects, search))
    out["select_without_vectors"] = quantiles(time_select(engine, selects, None))
    out["requests"] = len(requests)
    database.close()
    if args.processes:
        out["concurrent_processes"] = timed_processes(url, main.tenant_id, pool[5 * count + 20 :], warm, args.processes)


def connect(url: URL, tenant_id: str, pool_size: int) -> tuple[bootstrap.App, Engine]:
    """The database, and the engine context is served through for ``tenant_id``: the
    application role, fenced by row-level security to the tenant, as the library,
    HTTP and MCP serve it."""
    owner = db.create_engine(url, pool_size=pool_size)
    app = db.create_app_engine(db.app_url(url, None), pool_size=pool_size)
    # the generated facts hold their scope keys as given
    database = bootstrap.assemble(Settings(hash_scope_ids=False), owner, url, False, app)
    return database, database.for_tenant(tenant_id)


def timed_processes(
    url: URL,
    tenant_id: str,
    requests: Sequence[context.SelectRequest],
    warm: Sequence[context.SelectRequest],
    count: int,
) -> dict[str, Any]:
    """``select_and_format`` from ``count`` processes at once, each with its own engines
    and embedder (as separate agent processes, or an API server's workers, have), each
    serving its share of ``requests`` in turn: no GIL is shared."""
    spawn = multiprocessing.get_context("spawn")  # onnxruntime and open sockets do not survive fork
    ready, results = spawn.Barrier(count + 1), spawn.Queue()
    target = url.render_as_string(hide_password=False)
    # Each warms up on all of ``warm`` (its statements prepared, its caches filled).
    shares = [(requests[i::count], warm) for i in range(count)]
    callers = [
        spawn.Process(target=process_caller, args=(target, tenant_id, mine, warming, ready, results))
        for mine, warming in shares
    ]
    for caller in callers:
        caller.start()
    ready.wait(timeout=300)
    started = time.perf_counter()
    outcomes = [outcome for _ in callers for outcome in results.get(timeout=600)]
    elapsed = time.perf_counter() - started
    for caller in callers:
        caller.join()
    log(f"{count} processes, select_and_format: {len(outcomes) / elapsed:.1f} requests/s")
    figures: dict[str, Any] = quantiles([seconds for seconds, _ in outcomes])
    figures.update(
        failed_open=sum(failed for _, failed in outcomes),
        processes=count,
        requests_per_s=round(len(outcomes) / elapsed, 1),
    )
    return figures


def process_caller(
    url: str,
    tenant_id: str,
    requests: Sequence[context.SelectRequest],
    warm: Sequence[context.SelectRequest],
    ready: Any,
    results: Any,
) -> None:
    """One process of ``timed_processes``: warms up, waits for the others, then puts
    (seconds, failed open) of each of its requests on ``results``."""
    database, engine = connect(sa.make_url(url), tenant_id, 2)
    embedder = MiniLmEmbedder(threads=1)
    search = bootstrap.vector_search(database, embedder)
    for request in warm:
        select_and_format(engine, request, search)
    gc.collect()
    gc.freeze()
    ready.wait(timeout=300)
    outcomes = []
    for request in requests:
        started = time.perf_counter()
        selection, _ = select_and_format(engine, request, search)
        failed = (selection.empty_reason or "").startswith("memory unavailable")
        outcomes.append((time.perf_counter() - started, failed))
    results.put(outcomes)
    database.close()


def timed_serial(
    op: Operation,
    engine: Engine,
    requests: Sequence[context.SelectRequest],
    search: Any,
    clock: StatementClock,
    owner: Engine,
) -> dict[str, Any]:
    """``op`` for each request in turn: latency, statements, client and server CPU."""
    server_before, client_before = server_cpu_seconds(owner), time.process_time()
    serial = run_serial(op, engine, requests, search, clock)
    client_cpu, server_after = time.process_time() - client_before, server_cpu_seconds(owner)
    figures: dict[str, Any] = quantiles(serial.seconds)
    figures.update(
        failed_open=serial.failed_open,
        empty=serial.empty,
        mean_items=round(serial.items / len(requests), 1),
        statements_per_request=round(serial.statements / len(requests), 1),
        in_statements_p50_ms=quantiles(serial.sql_seconds)["p50_ms"],
        client_cpu_ms_mean=round(1000 * client_cpu / len(requests), 1),
    )
    if server_before is not None and server_after is not None:  # backends that ended are not counted
        figures["server_cpu_ms_mean"] = round(1000 * (server_after - server_before) / len(requests), 1)
    return figures


def timed_concurrent(
    op: Operation,
    engine: Engine,
    requests: Sequence[context.SelectRequest],
    search: Any,
    threads: int,
    clock: StatementClock,
) -> dict[str, Any]:
    """``op`` for the requests from ``threads`` threads at once."""
    concurrent = run_concurrent(op, engine, requests, search, threads, clock)
    figures: dict[str, Any] = quantiles(concurrent.seconds)
    figures.update(
        failed_open=concurrent.failed_open,
        threads=threads,
        in_statements_p50_ms=quantiles(concurrent.sql_seconds)["p50_ms"],
    )
    return figures


def report(out: dict[str, Any]) -> None:
    print(
        f"\nmode: {'quick' if out['quick'] else 'full'}; {out['events']:,} events; rows (main tenant, all): "
        f"{out['rows_main_all']}"
    )
    print(f"embeddings: {out['embeddings']}")
    for name in (
        "single",
        "concurrent",
        "served_single",
        "served_concurrent",
        "embedder_alone",
        "select_with_vectors",
        "select_without_vectors",
    ):
        print(f"{name:>24}: {out[name]}")
    figures = {
        "p50_ms": out["single"]["p50_ms"],
        "p95_ms": out["single"]["p95_ms"],
        "p99_ms": out["single"]["p99_ms"],
        "concurrent_p99_ms": out["concurrent"]["p99_ms"],
        "served_p50_ms": out["served_single"]["p50_ms"],
        "served_p99_ms": out["served_single"]["p99_ms"],
        "served_concurrent_p99_ms": out["served_concurrent"]["p99_ms"],
        "embedding_p50_ms": out["embedder_alone"]["p50_ms"],
    }
    if "concurrent_processes" in out:
        print(f"{'concurrent_processes':>24}: {out['concurrent_processes']}")
        figures["concurrent_processes_p99_ms"] = out["concurrent_processes"]["p99_ms"]
    for key, target in TARGETS.items():
        print(f"target {key} <= {target:g}: {figures[key]} {'met' if figures[key] <= target else 'MISSED'}")
    out.update(figures)
    out["date"] = datetime.now(UTC).strftime("%Y-%m-%d")
    out["cpus"] = os.cpu_count()
    out["machine"] = platform.machine()
    out["context_concurrency"] = SELECTIONS.limit  # selections of this process at once (0: no limit)
    print(json.dumps(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenant of 5,000 facts, 100 requests")
    parser.add_argument("--requests", type=int, default=None)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument(
        "--processes",
        type=int,
        default=0,
        help="also time select + format from this many processes at once (their own engines and embedders)",
    )
    parser.add_argument("--profile", default=None, help="write a cProfile of the single-caller pass here")
    parser.add_argument(
        "--keep",
        default=None,
        metavar="DATABASE",
        help="build into this database of DATABASE_URL's server once and keep it; later runs "
        "with the same name skip the build and measure the same data (A/B comparisons)",
    )
    args = parser.parse_args(argv)
    size = QUICK if args.quick else FULL
    out: dict[str, Any] = {"quick": args.quick}
    embedder = MiniLmEmbedder(threads=1)
    embedder.load()
    with bench_server(args.keep) as url:
        main_tenant = reuse(url, size, out) if args.keep else None
        if main_tenant is None:
            main_tenant = build(url, size, out, embedder)
        measure(url, main_tenant, size, args, out, embedder)
    report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
