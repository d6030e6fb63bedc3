"""The words of the workload generator (``workload.py``): names, projects, tools,
the fact keys it restates, and the sentences it says them in. Data only."""

from __future__ import annotations

FIRST = (
    "Alice",
    "Bob",
    "Carmen",
    "Dmitri",
    "Emeka",
    "Fatima",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Keiko",
    "Liam",
    "Maya",
    "Nadia",
    "Omar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
)
LAST = ("Chen", "Okafor", "Silva", "Novak", "Haddad", "Larsen", "Mendes", "Ito", "Kowalski", "Roy")
PROJECTS = (
    "Phoenix",
    "Atlas",
    "Orion",
    "Hermes",
    "Nimbus",
    "Juniper",
    "Kestrel",
    "Lighthouse",
    "Marigold",
    "Quasar",
    "Sequoia",
    "Tundra",
)
TOOLS = (
    "VS Code",
    "Neovim",
    "PostgreSQL",
    "Redis",
    "Kafka",
    "Docker",
    "Kubernetes",
    "Terraform",
    "GitHub Actions",
    "Sentry",
    "Grafana",
    "FastAPI",
    "React",
    "Vue",
    "pytest",
    "Playwright",
    "Figma",
    "Linear",
    "Jira",
    "Slack",
    "Datadog",
    "pgvector",
    "Airflow",
    "dbt",
)
ALIASES = {"PostgreSQL": "Postgres", "Kubernetes": "k8s", "VS Code": "vscode", "GitHub Actions": "GHA"}
ORGS = ("Acme", "Globex", "Initech", "Umbrella Labs", "Hooli", "Stark Digital", "Wayne Data")
VENDORS = ("Hetzner", "AWS", "Stripe", "Twilio", "Cloudflare")
CONCEPTS = (
    "feature flags",
    "blue-green deploys",
    "event sourcing",
    "retrieval augmented generation",
    "error budgets",
    "trunk-based development",
    "code owners",
    "load shedding",
)

# key, category, scope, values (the first ones are the likelier), statement template
FACT_KEYS: tuple[tuple[str, str, str, tuple[str, ...], str], ...] = (
    (
        "editor",
        "preference",
        "user",
        ("VS Code", "Neovim", "Emacs", "Zed", "IntelliJ IDEA", "Helix"),
        "{who} uses {v} as editor",
    ),
    (
        "frontend framework",
        "decision",
        "project",
        ("React", "Vue", "Svelte", "Angular", "SolidJS"),
        "{proj} frontend is built with {v}",
    ),
    (
        "deploy day",
        "decision",
        "project",
        ("Tuesday", "Thursday", "Wednesday", "Monday"),
        "{proj} deploys go out on {v}",
    ),
    (
        "database",
        "technical_fact",
        "project",
        ("PostgreSQL", "MySQL", "SQLite", "DynamoDB"),
        "{proj} stores its data in {v}",
    ),
    ("ci system", "technical_fact", "org", ("GitHub Actions", "GitLab CI", "Buildkite", "Jenkins"), "CI runs on {v}"),
    (
        "primary language",
        "technical_fact",
        "project",
        ("Python", "TypeScript", "Go", "Rust", "Kotlin"),
        "{proj} is written mainly in {v}",
    ),
    (
        "answer style",
        "preference",
        "user",
        ("short answers, code first", "detailed explanations", "bullet points", "examples before theory"),
        "{who} prefers {v}",
    ),
    (
        "code review rule",
        "constraint",
        "org",
        ("two approvals before merging", "one approval from the owning team", "no self-merges"),
        "code review requires {v}",
    ),
    ("standup time", "procedure", "project", ("9:30", "10:00", "9:15", "11:00"), "the {proj} standup is at {v}"),
    (
        "timezone",
        "personal_fact",
        "user",
        ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "Europe/Lisbon"),
        "{who} works in {v}",
    ),
    ("release cadence", "decision", "project", ("every two weeks", "weekly", "monthly"), "{proj} releases {v}"),
    (
        "current task",
        "task_update",
        "session",
        (
            "migrating the billing tables",
            "fixing the flaky login test",
            "writing the onboarding doc",
            "profiling the search endpoint",
            "reviewing the schema change",
        ),
        "{who} is {v}",
    ),
    (
        "quarter goal",
        "goal",
        "project",
        ("cut p99 latency below 200 ms", "ship the mobile beta", "halve the cloud bill"),
        "the {proj} goal this quarter is to {v}",
    ),
    (
        "staging migrations",
        "lesson_learned",
        "project",
        ("run them on a copy of production first", "never run them on Fridays"),
        "for staging migrations: {v}",
    ),
    ("cloud provider", "technical_fact", "org", ("AWS", "GCP", "Hetzner", "Azure"), "we host on {v}"),
    ("package manager", "preference", "project", ("uv", "poetry", "pnpm", "npm"), "{proj} uses {v} for packages"),
    ("ledger", "terminology", "org", ("the append-only event table", "the audit log"), "'ledger' means {v}"),
    ("coffee", "personal_fact", "user", ("flat white", "espresso", "green tea"), "{who} drinks {v}"),
)
KEY_WEIGHTS = (9, 8, 7, 6, 3, 4, 5, 2, 3, 3, 3, 6, 3, 2, 2, 3, 1, 2)
CONFIDENCES = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.8, 0.85, 0.85, 0.9, 0.9, 0.9, 0.95, 1.0)
PROMOTION = {
    "preference": "preference",
    "decision": "decision",
    "procedure": "procedure",
    "lesson_learned": "lesson_learned",
    "task_update": "task_update",
    "terminology": "terminology",
}
BROADER = {"session": ("project", "user"), "project": ("org",), "user": ("org",)}

OPENERS = (
    "Quick update: {s}.",
    "Just so you know, {s}.",
    "For the record, {s}.",
    "Remember that {s}.",
    "Heads up - {s}.",
    "We talked about it this morning and {s}.",
    "To be clear, {s}.",
)
ASSISTANT = (
    "Noted: {s}.",
    "Got it, I'll remember that {s}.",
    "Understood - {s}. Anything else?",
    "Thanks, so {s}. I'll keep that in mind for {proj}.",
)
FILLER = (
    "I paired with {person} on it yesterday and it went better than expected.",
    "{person} thinks we should revisit this after the {proj} release.",
    "The {tool} dashboards looked fine this morning, no alerts overnight.",
    "Can you remind me what we decided about logging in {proj}?",
    "Honestly the setup took longer than I hoped, mostly waiting on reviews.",
    "I still need to write the migration notes before Friday.",
    "{person} asked whether {tool} is worth the extra cost.",
    "Let's keep the answer short, I only need the gist.",
    "The last incident was caused by a missing index, not by {tool}.",
    "We'll demo it to the {org} folks next week.",
    "I'm not sure {person} has seen the latest draft yet.",
    "Please don't suggest rewriting everything in a new framework again.",
    "The flaky test in {proj} failed twice on main today.",
    "I moved the retro to Thursday because half the team is out.",
    "{tool} upgrades always break something small, so let's pin the version.",
    "Budget approval for {proj} came through from {person}.",
)
