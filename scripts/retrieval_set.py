"""Generate the retrieval evaluation set: multi-session conversations and questions
with the turns that answer them.

    .venv/bin/python scripts/retrieval_set.py            # writes tests/data/retrieval_set.jsonl
    .venv/bin/python scripts/retrieval_set.py --check    # fails if the committed file differs

Deterministic (seed 20250612); the committed output is what ``eval_retrieval.py``
reads. Two tenants: ``northwind``, a software company (six users, five projects,
colleagues, tools, vendors) and ``bluebird``, a personal assistant (two users:
family, food, travel, habits). Each user talks over several sessions; a session has
user turns and assistant replies, facts stated in varied phrasings, small talk and
off-topic requests between them, and changes of mind ("scratch that, we're moving to
...") in later sessions. Assistant replies never restate a fact.

Each line is one JSON object:

- ``{"type": "turn", "tenant", "turn_id", "role", "text", "scopes", "occurred_at"}``
  in the order the turns were said;
- ``{"type": "question", "id", "tenant", "question", "scopes", "answer_turns",
  "kind"}``: ``answer_turns`` are the turns that state the answer (every restatement
  of it); ``kind`` is "direct" or "paraphrase" (the question's wording differs from
  every phrasing of the statement), "current" (after a change of mind: the turn
  that changed it), "before" (the value before the change) or "who" (a person).

Questions are asked from a fresh session of the user, with the user's scopes and
the project the question is about.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

SEED = 20250612
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "retrieval_set.jsonl"
START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


@dataclass
class Fact:
    """Something a user says once (or again), and the questions it answers."""

    user: str
    project: str | None
    say: list[str]
    ask: list[str]
    scope_session: bool = False  # only visible in the session it was said in
    change: list[str] = field(default_factory=list)  # a later change of mind
    ask_now: list[str] = field(default_factory=list)
    ask_before: list[str] = field(default_factory=list)
    restate: bool = False  # said again in a later session


def _words(text: str) -> list[str]:
    return text.split()


# -- northwind: a software company --------------------------------------------------------

USERS = {
    "maya": ("Maya Okafor", ["Phoenix", "Harbor"]),
    "tom": ("Tom Becker", ["Phoenix", "Lumen"]),
    "priya": ("Priya Raman", ["Atlas", "Beacon"]),
    "leo": ("Leo Marchetti", ["Lumen"]),
    "sara": ("Sara Lindqvist", ["Harbor", "Phoenix"]),
    "jun": ("Jun Watanabe", ["Beacon", "Atlas"]),
}
PROJECTS = {
    "Phoenix": {
        "what": "the billing platform rewrite",
        "db": "PostgreSQL",
        "old_db": "MySQL",
        "lang": "Go",
        "framework": "chi",
        "ci": "GitHub Actions",
        "minutes": "14",
        "day": "Tuesday",
        "owner": "Aisha Bello",
        "component": "invoice generator",
        "deadline": "June 30",
        "region": "the EU (Frankfurt)",
        "vendor": "Stripe",
        "service": "card payments",
        "amount": "4,200 dollars",
        "channel": "#phoenix-alerts",
        "dash": "Grafana",
        "standup": "9:45",
        "cause": "an expired TLS certificate on the payment webhook",
        "lesson": "certificate expiry now pages the on-call engineer two weeks ahead",
        "choice": "Temporal",
        "alt": "Celery",
        "purpose": "retrying failed invoice runs",
        "reason": "its workflows survive restarts",
    },
    "Atlas": {
        "what": "the analytics pipeline",
        "db": "Snowflake",
        "old_db": "BigQuery",
        "lang": "Python",
        "framework": "dbt",
        "ci": "Buildkite",
        "minutes": "25",
        "day": "Wednesday",
        "owner": "Ibrahim Haddad",
        "component": "ingestion DAGs",
        "deadline": "May 16",
        "region": "us-east-1",
        "vendor": "Fivetran",
        "service": "syncing the CRM into the warehouse",
        "amount": "1,800 dollars",
        "channel": "#atlas-data",
        "dash": "Metabase",
        "standup": "10:15",
        "cause": "a schema change upstream that renamed the customer_id column",
        "lesson": "every source table now has a contract test in CI",
        "choice": "Airflow",
        "alt": "Dagster",
        "purpose": "orchestrating the nightly loads",
        "reason": "the team already knows it and it is on the approved list",
    },
    "Lumen": {
        "what": "the customer mobile app",
        "db": "Firebase Firestore",
        "old_db": "Realm",
        "lang": "Dart",
        "framework": "Flutter",
        "ci": "Codemagic",
        "minutes": "32",
        "day": "Thursday",
        "owner": "Chen Wei",
        "component": "onboarding flow",
        "deadline": "September 1",
        "region": "any region, it holds no PII",
        "vendor": "RevenueCat",
        "service": "in-app subscriptions",
        "amount": "600 dollars",
        "channel": "#lumen-releases",
        "dash": "Firebase Crashlytics",
        "standup": "11:00",
        "cause": "a release that shipped with the debug API key",
        "lesson": "release builds are now checked for debug keys before upload",
        "choice": "Riverpod",
        "alt": "Bloc",
        "purpose": "state management",
        "reason": "it needs less boilerplate for the small team",
    },
    "Harbor": {
        "what": "the move of our infrastructure to Kubernetes",
        "db": "etcd backups in S3",
        "old_db": "a single NFS share",
        "lang": "HCL",
        "framework": "Terraform",
        "ci": "Jenkins",
        "minutes": "40",
        "day": "Monday",
        "owner": "Sara Lindqvist",
        "component": "ingress controllers",
        "deadline": "the end of Q3",
        "region": "our own account in eu-west-1",
        "vendor": "AWS",
        "service": "the EKS clusters",
        "amount": "23,000 dollars",
        "channel": "#harbor-ops",
        "dash": "Datadog",
        "standup": "9:30",
        "cause": "a node pool that ran out of IP addresses",
        "lesson": "subnets are now sized for twice the expected pod count",
        "choice": "Argo CD",
        "alt": "Flux",
        "purpose": "GitOps deployments",
        "reason": "its UI makes drift visible to people outside the platform team",
    },
    "Beacon": {
        "what": "the internal search engine",
        "db": "OpenSearch",
        "old_db": "Elasticsearch 6",
        "lang": "Kotlin",
        "framework": "Ktor",
        "ci": "GitLab CI",
        "minutes": "18",
        "day": "Friday morning",
        "owner": "Jun Watanabe",
        "component": "relevance tuning",
        "deadline": "August 12",
        "region": "the on-prem datacenter in Oslo",
        "vendor": "Cohere",
        "service": "reranking the top results",
        "amount": "900 dollars",
        "channel": "#beacon-search",
        "dash": "Kibana",
        "standup": "14:00",
        "cause": "a query of death that exhausted the heap",
        "lesson": "queries are now capped at 1,000 terms",
        "choice": "hybrid BM25 plus embeddings",
        "alt": "pure vector search",
        "purpose": "ranking",
        "reason": "exact product codes must still match",
    },
}
PEOPLE = {
    "Aisha Bello": "our database administrator",
    "Dave Kim": "Maya's engineering manager",
    "Chen Wei": "the product designer on Lumen",
    "Rafael Souza": "the QA lead",
    "Nora Fischer": "the VP of engineering",
    "Ibrahim Haddad": "the data engineer who built most of Atlas",
    "Greta Holm": "our compliance officer",
    "Kenji Mori": "a contractor helping with the Harbor migration",
}

OPEN = (
    "",
    "",
    "",
    "By the way, ",
    "Quick note: ",
    "FYI, ",
    "Just so you know, ",
    "For context, ",
    "One more thing: ",
    "Okay so ",
)
CLOSE = (
    "",
    "",
    "",
    " Keep that in mind.",
    " Just wanted that written down somewhere.",
    " Worth remembering.",
    " Anyway.",
    " Makes life easier.",
)


def project_facts(user: str, name: str, p: dict[str, str]) -> list[Fact]:
    """Facts about a project, stated by ``user``."""
    n = name
    return [
        Fact(
            user,
            n,
            [
                f"For {n} we're storing everything in {p['old_db']}, at least for now.",
                f"{n} runs on {p['old_db']} at the moment, the data layer is pretty simple.",
                f"The {n} backend keeps its data in {p['old_db']} today.",
            ],
            [f"Which database does {n} use?", f"What's the data store behind {n}?", f"Where does {n} keep its data?"],
            change=[
                f"Change of plan: {n} is moving off {p['old_db']} and onto {p['db']}, starting next sprint.",
                f"Scratch what I said earlier, we're migrating {n} from {p['old_db']} to {p['db']}.",
                f"Heads up, the {n} data is going to live in {p['db']} from now on, not {p['old_db']}.",
            ],
            ask_now=[
                f"What is {n} migrating its data to?",
                f"Which datastore is {n} switching to?",
                f"Where will the {n} data live after the migration?",
            ],
            ask_before=[
                f"What did {n} use for storage before the migration?",
                f"Which database was {n} on originally?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"The {n} service is written in {p['lang']}, on top of {p['framework']}.",
                f"{n} is written in {p['lang']} and we use {p['framework']} for it.",
                f"Everything in {n} is {p['lang']} with {p['framework']}, no exceptions.",
            ],
            [
                f"What language is {n} written in?",
                f"Which framework does the {n} code use?",
                f"What's the tech stack of {n}?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"We deploy {n} every {p['day']}, never later in the week.",
                f"{n} releases go out on {p['day']}s.",
                f"Our release day for {n} is {p['day']}.",
            ],
            [f"When do {n} deploys happen?", f"Which day do we ship {n}?", f"What's the release schedule for {n}?"],
            restate=True,
        ),
        Fact(
            user,
            n,
            [
                f"{n} builds run on {p['ci']} and the full pipeline takes about {p['minutes']} minutes.",
                f"CI for {n} is {p['ci']}; a green build takes roughly {p['minutes']} minutes.",
                f"We moved the {n} pipeline to {p['ci']}, it finishes in around {p['minutes']} minutes.",
            ],
            [f"Which CI system builds {n}?", f"How long does the {n} pipeline take?", f"Where do the {n} builds run?"],
        ),
        Fact(
            user,
            n,
            [
                f"{p['owner']} owns the {p['component']} in {n}, send questions about it their way.",
                f"If something breaks in the {p['component']}, {p['owner']} is the person to talk to.",
                f"The {p['component']} is {p['owner']}'s area.",
            ],
            [
                f"Who owns the {p['component']}?",
                f"Who should I ask about the {p['component']}?",
                f"Who is responsible for the {p['component']} in {n}?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"The {n} beta has to be out by {p['deadline']}, that date is firm.",
                f"Hard deadline for the {n} beta: {p['deadline']}.",
                f"Leadership wants the {n} beta live by {p['deadline']}.",
            ],
            [
                f"When is the {n} beta due?",
                f"What's the deadline for the {n} beta?",
                f"By when do we need to launch the {n} beta?",
            ],
            change=[
                f"The {n} beta slipped, we now have two extra weeks past {p['deadline']}.",
                f"Update on {n}: the beta date moved, we get two more weeks after {p['deadline']}.",
            ],
            ask_now=[f"Did the {n} beta date change?", f"Is the {n} beta still on schedule?"],
            ask_before=[f"What was the original {n} beta date?"],
        ),
        Fact(
            user,
            n,
            [
                f"Customer data from {n} must stay in {p['region']}, legal was very clear about it.",
                f"Data residency for {n}: everything stays in {p['region']}.",
                f"Compliance rule for {n} is that records live in {p['region']} only.",
            ],
            [
                f"Where does {n} customer data have to be stored?",
                f"Are there data residency rules for {n}?",
                f"In which region can we keep {n} data?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"We pay {p['vendor']} about {p['amount']} a month for {p['service']} in {n}.",
                f"{p['vendor']} handles {p['service']} for {n}; it costs roughly {p['amount']} monthly.",
                f"The {p['vendor']} bill for {n} is around {p['amount']} a month.",
            ],
            [
                f"How much do we spend on {p['vendor']}?",
                f"Which vendor does {n} use for {p['service']}?",
                f"What does {n} pay per month to {p['vendor']}?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"{n} alerts go to {p['channel']} and the dashboards live in {p['dash']}.",
                f"For {n} we watch {p['dash']} and alerts land in {p['channel']}.",
                f"If {n} misbehaves you'll see it in {p['channel']}; graphs are in {p['dash']}.",
            ],
            [
                f"Where do {n} alerts go?",
                f"Which dashboard tool do we use for {n}?",
                f"How do I know when {n} is having problems?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"The {n} standup is at {p['standup']} every weekday.",
                f"{n} team syncs daily at {p['standup']}.",
                f"Daily {n} check-in happens at {p['standup']}, it's short.",
            ],
            [f"What time is the {n} standup?", f"When does the {n} team meet each day?"],
        ),
        Fact(
            user,
            n,
            [
                f"The {n} outage last week was caused by {p['cause']}. Lesson learned: {p['lesson']}.",
                f"Postmortem for {n} is done: root cause was {p['cause']}, and {p['lesson']}.",
                f"We finally know why {n} went down: {p['cause']}. Since then {p['lesson']}.",
            ],
            [
                f"What caused the {n} outage?",
                f"What did we learn from the last {n} incident?",
                f"Why did {n} go down last week?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"We picked {p['choice']} over {p['alt']} for {p['purpose']} in {n}, mainly because {p['reason']}.",
                f"For {p['purpose']} in {n} we went with {p['choice']}, not {p['alt']}: {p['reason']}.",
                f"Decision made for {n}: {p['choice']} for {p['purpose']}. {p['alt']} lost because {p['reason']}.",
            ],
            [
                f"Why did {n} choose {p['choice']} over {p['alt']}?",
                f"What does {n} use for {p['purpose']}?",
                f"Which tool did we settle on for {p['purpose']} in {n}?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"Every {n} pull request needs two approvals, one of them from {p['owner']}'s team.",
                f"Code review rule in {n}: two approvals, and {p['owner']}'s team has to be one of them.",
                f"Nothing merges into {n} without two reviews, including someone from {p['owner']}'s team.",
            ],
            [
                f"How many approvals does a {n} pull request need?",
                f"What's the review policy for {n}?",
                f"Can I merge a {n} change with one review?",
            ],
        ),
        Fact(
            user,
            n,
            [
                f"On-call for {n} rotates weekly and the handover is on {p['day']} at noon.",
                f"The {n} on-call rotation changes hands every {p['day']} at 12:00.",
                f"{n} pager duty is a one-week shift, swapped on {p['day']} around lunchtime.",
            ],
            [f"When does the {n} on-call handover happen?", f"How does the {n} on-call rotation work?"],
        ),
    ]


def person_facts(user: str, project: str) -> list[Fact]:
    """Who the colleagues are (one user introduces each)."""
    return [
        Fact(
            user,
            project,
            [f"{name} is {role}.", f"You should know {name}, {role}.", f"If {name} comes up, that's {role}."],
            [f"Who is {name}?", f"What does {name} do here?", f"What's {name.split()[0]}'s role?"],
        )
        for name, role in PEOPLE.items()
    ]


WORK_PREFERENCES = {
    "maya": ("Neovim", "short answers with the code first", "Lagos", "tabs", "Go"),
    "tom": ("VS Code", "bullet points, no jargon", "Berlin", "spaces", "SQL"),
    "priya": ("JupyterLab", "detailed explanations with the math", "Bangalore", "spaces", "Python"),
    "leo": ("Android Studio", "examples before theory", "Milan", "two spaces", "Dart"),
    "sara": ("Emacs", "terse answers, commands I can paste", "Stockholm", "spaces", "Bash"),
    "jun": ("IntelliJ IDEA", "answers that cite the docs", "Osaka", "four spaces", "Kotlin"),
}


def user_facts(user: str, project: str) -> list[Fact]:
    """A northwind user's own preferences and situation (user scope)."""
    editor, style, city, indent, lang = WORK_PREFERENCES[user]
    return [
        Fact(
            user,
            project,
            [
                f"I do all my coding in {editor}.",
                f"My editor is {editor}, I've used it for years.",
                f"I live in {editor} all day.",
            ],
            ["Which editor do I use?", "What's my coding setup?", "What IDE do I work in?"],
            change=[
                f"I've switched editors, I'm trying Zed instead of {editor} this month.",
                f"Goodbye {editor}: I'm on Zed now.",
            ],
            ask_now=["What editor am I using these days?", "Did I change editors?"],
            ask_before=["What editor did I use before I switched?"],
        ),
        Fact(
            user,
            project,
            [
                f"When you answer me, I prefer {style}.",
                f"Please give me {style}.",
                f"My preference for replies: {style}.",
            ],
            [
                "How do I like answers formatted?",
                "What style of answers do I prefer?",
                "How should you write replies to me?",
            ],
            restate=True,
        ),
        Fact(
            user,
            project,
            [
                f"I'm based in {city}, so keep meetings within my working hours.",
                f"I work from {city}.",
                f"Remember I'm in {city} when you suggest meeting times.",
            ],
            ["Where am I based?", "Which city do I work from?", "What timezone should meetings consider for me?"],
        ),
        Fact(
            user,
            project,
            [
                f"In my code I indent with {indent}.",
                f"I always use {indent} for indentation.",
                f"Indentation for me is {indent}, please stick to it.",
            ],
            ["How do I indent code?", "Tabs or spaces for me?", "What indentation do I prefer?"],
        ),
        Fact(
            user,
            project,
            [
                f"Most of what I write day to day is {lang}.",
                f"My main language is {lang}.",
                f"I mostly work in {lang}.",
            ],
            ["What language do I mostly write?", "Which programming language do I use most?"],
        ),
    ]


TASKS = {
    "maya": ("the invoice PDF renderer", "fonts render differently in the container"),
    "tom": ("the Q3 roadmap deck", "getting sign-off from finance"),
    "priya": ("the churn model retraining", "the labels from March are missing"),
    "leo": ("dark mode for the settings screen", "the third-party date picker ignores the theme"),
    "sara": ("the node pool upgrade", "draining pods without dropping websocket connections"),
    "jun": ("the synonym list for product search", "abbreviations that mean different things per team"),
}


def task_fact(user: str, project: str) -> Fact:
    task, snag = TASKS[user]
    return Fact(
        user,
        project,
        [
            f"Today I'm working on {task}; the annoying part is {snag}.",
            f"Status: halfway through {task}, stuck on {snag}.",
            f"I'm busy with {task}. Biggest problem so far: {snag}.",
        ],
        [f"How is {task} going?", f"What's blocking {task}?", f"What is the hard part of {task}?"],
        scope_session=True,
    )


# -- bluebird: a personal assistant --------------------------------------------------------

HOME_USERS = {
    "dana": {
        "name": "Dana Whitfield",
        "diet": "vegetarian",
        "allergy": "peanuts",
        "kid": "Ellie",
        "school": "September",
        "pet": "a beagle called Biscuit",
        "hobby": "climbing at the bouldering gym",
        "city": "Lisbon",
        "date": "the 14th of May",
        "event": "a friend's wedding",
        "partner": "Sam",
        "bday": "October 3",
        "car": "an old Volvo estate",
        "lang": "Portuguese",
        "doctor": "Dr. Alvarez",
        "sport": "Tuesday evenings",
        "coffee": "oat flat white",
        "book": "Middlemarch",
    },
    "omar": {
        "name": "Omar Siddiqui",
        "diet": "pescatarian",
        "allergy": "shellfish",
        "kid": "Zain",
        "school": "January",
        "pet": "two cats, Pepper and Salt",
        "hobby": "restoring vintage bikes",
        "city": "Montreal",
        "date": "June 2",
        "event": "a data conference",
        "partner": "Lina",
        "bday": "February 19",
        "car": "a blue Honda Civic",
        "lang": "French",
        "doctor": "Dr. Tremblay",
        "sport": "Saturday mornings",
        "coffee": "double espresso",
        "book": "The Left Hand of Darkness",
    },
}


def home_facts(user: str) -> list[Fact]:
    h = HOME_USERS[user]
    return [
        Fact(
            user,
            None,
            [
                f"I'm {h['diet']}, so skip the steak places when you suggest restaurants.",
                f"Reminder that I eat {h['diet']}.",
                f"I went {h['diet']} a couple of years ago.",
            ],
            [
                "Do I have any dietary restrictions?",
                "What kind of food can I eat?",
                "Should restaurant suggestions avoid anything?",
            ],
        ),
        Fact(
            user,
            None,
            [
                f"I'm allergic to {h['allergy']}, it's a serious one.",
                f"Careful with recipes: {h['allergy']} are a no-go, I'm allergic.",
                f"Never suggest anything with {h['allergy']}, allergy.",
            ],
            ["What am I allergic to?", "Is there an ingredient I must avoid?"],
        ),
        Fact(
            user,
            None,
            [
                f"My kid {h['kid']} starts school in {h['school']}.",
                f"{h['kid']} begins school this {h['school']}, big step.",
                f"School starts for {h['kid']} in {h['school']}.",
            ],
            [f"When does {h['kid']} start school?", "When does my child begin school?"],
        ),
        Fact(
            user,
            None,
            [f"We have {h['pet']}.", f"At home there's {h['pet']} to look after.", f"Our pets: {h['pet']}."],
            ["What pets do I have?", "Do I have a pet?"],
        ),
        Fact(
            user,
            None,
            [
                f"On weekends I'm usually {h['hobby']}.",
                f"My favourite way to unwind is {h['hobby']}.",
                f"Free time mostly goes into {h['hobby']}.",
            ],
            ["What do I do on weekends?", "What's my hobby?", "How do I like to relax?"],
        ),
        Fact(
            user,
            None,
            [
                f"I'm flying to {h['city']} on {h['date']} for {h['event']}.",
                f"Trip coming up: {h['city']}, {h['date']}, for {h['event']}.",
                f"I'll be in {h['city']} from {h['date']} because of {h['event']}.",
            ],
            [f"When is my trip to {h['city']}?", f"Why am I going to {h['city']}?", "Where am I travelling next?"],
            change=[
                f"The {h['city']} trip is off, {h['event']} got postponed to the autumn.",
                f"Cancel the {h['city']} plans, {h['event']} was moved to later in the year.",
            ],
            ask_now=[f"Am I still going to {h['city']}?", f"Is the {h['city']} trip still happening?"],
            ask_before=[f"When was I originally supposed to fly to {h['city']}?"],
        ),
        Fact(
            user,
            None,
            [
                f"My partner {h['partner']}'s birthday is {h['bday']}, remind me to book something.",
                f"{h['partner']} turns a year older on {h['bday']}.",
                f"Don't let me forget: {h['partner']}'s birthday, {h['bday']}.",
            ],
            [f"When is {h['partner']}'s birthday?", "When is my partner's birthday?"],
        ),
        Fact(
            user,
            None,
            [f"I drive {h['car']}.", f"The car is {h['car']}, nothing fancy.", f"We get around in {h['car']}."],
            ["What car do I drive?", "What kind of car do we have?"],
        ),
        Fact(
            user,
            None,
            [
                f"Write emails to my landlord in {h['lang']}, but talk to me in English.",
                f"Letters to the landlord should be in {h['lang']}.",
                f"For anything official with the landlord use {h['lang']}.",
            ],
            ["Which language should landlord emails be in?", "What language do I use with my landlord?"],
        ),
        Fact(
            user,
            None,
            [f"My doctor is {h['doctor']}.", f"I see {h['doctor']} for check-ups.", f"{h['doctor']} is my GP."],
            ["Who is my doctor?", "Which doctor do I see for check-ups?"],
        ),
        Fact(
            user,
            None,
            [
                f"Swimming is on {h['sport']}, I don't want meetings then.",
                f"I keep {h['sport']} free for swimming.",
                f"Block {h['sport']}, that's my swim slot.",
            ],
            ["When do I go swimming?", "Which time slot should stay free for exercise?"],
            restate=True,
        ),
        Fact(
            user,
            None,
            [
                f"My usual coffee order is an {h['coffee']}."
                if h["coffee"][0] in "aeiou"
                else f"My usual coffee order is a {h['coffee']}.",
                f"Coffee-wise I always order the same: {h['coffee']}.",
                f"If you order coffee for me: {h['coffee']}.",
            ],
            ["What's my coffee order?", "How do I take my coffee?"],
        ),
        Fact(
            user,
            None,
            [
                f"I'm reading {h['book']} at the moment and loving it.",
                f"Current book: {h['book']}.",
                f"Bedtime reading lately is {h['book']}.",
            ],
            ["What book am I reading?", "What am I reading these days?"],
        ),
    ]


# -- filler ----------------------------------------------------------------------------------

WORK_FILLER = (
    "Can you help me write a regex that matches ISO dates like 2025-03-14?",
    "Thanks, that worked.",
    "Ugh, the coffee machine on the third floor is broken again.",
    "What's the difference between a left join and an inner join, in one sentence?",
    "I have back-to-back meetings until lunch, so let's keep this quick.",
    "Can you explain what a bloom filter is, briefly?",
    "Remind me how to squash the last three commits.",
    "That makes sense, let me try it after the meeting.",
    "How do I write a unit test for a function that calls the current time?",
    "Summarise the pros and cons of monorepos in three bullets.",
    "Never mind, I found the answer in the docs.",
    "What's a good name for a function that retries with backoff?",
    "Give me a shell one-liner to count lines in all Python files.",
    "Sorry, got pulled into a call. Where were we?",
    "Can you turn these notes into a short status update for the team?",
    "How do I profile memory usage in a long-running process?",
    "Is it bad practice to catch every exception at the top level?",
    "Translate 'the build is green again' into a cheerful Slack message.",
    "What does idempotent mean for an HTTP endpoint?",
    "Okay, next question.",
    "Draft a polite reply declining a meeting on Friday afternoon.",
    "Explain the CAP theorem like I'm a product manager.",
    "The wifi in the office is terrible today.",
    "What's the quickest way to find which process is using port 8080?",
)
HOME_FILLER = (
    "What's a quick dinner I can make in twenty minutes?",
    "Thanks, that's perfect.",
    "Can you suggest a podcast for a long drive?",
    "It's raining again, so no park today.",
    "How long should I boil an egg for a runny yolk?",
    "Remind me to call the plumber tomorrow morning.",
    "Write a short thank-you note for a neighbour who watered our plants.",
    "What's a good stretch for a stiff lower back?",
    "Never mind, I figured it out.",
    "Give me three ideas for a rainy Sunday with a kid.",
    "How do I get red wine out of a cotton shirt?",
    "Okay, what else was on my list?",
    "Make a shopping list for pancakes.",
    "What's the capital of Australia? Settling a bet.",
)
ASSISTANT = (
    "Noted.",
    "Got it, thanks for the context.",
    "Understood. Anything else you want me to keep track of?",
    "Thanks, that helps me tailor suggestions.",
    "Sure. Here's a sketch you can adapt: start with the smallest case, add a test for it, then generalise.",
    "Happy to help. The short version: do the simplest thing that works, and measure before optimising.",
    "Good question. It depends on the trade-off you care about most; usually readability wins.",
    "Here's a draft you can edit: 'Thanks for the invite, unfortunately I can't make it this time.'",
    "That sounds frustrating. If it keeps happening, it may be worth raising it with facilities.",
    "Done. Let me know if you want it shorter or more formal.",
    "One option is to break it into smaller steps and check each one before moving on.",
    "Okay. I'll keep that in mind for later conversations.",
)


# -- assembling ------------------------------------------------------------------------------


@dataclass
class Session:
    tenant: str
    user: str
    name: str
    project: str | None
    org: str
    items: list[tuple[str, object]] = field(default_factory=list)  # ("fact"|"change"|"restate"|"filler", ...)


def northwind_facts() -> list[Fact]:
    facts: list[Fact] = []
    owners: dict[str, list[str]] = {}
    for user, (_, projects) in USERS.items():
        for project in projects:
            owners.setdefault(project, []).append(user)
    for project, users in owners.items():
        for i, fact in enumerate(project_facts(users[0], project, PROJECTS[project])):
            fact.user = users[i % len(users)]  # the project's people share what they know
            facts.append(fact)
    for i, fact in enumerate(person_facts("maya", "Phoenix")):
        user = list(USERS)[i % len(USERS)]
        fact.user, fact.project = user, USERS[user][1][0]
        facts.append(fact)
    for user, (_, projects) in USERS.items():
        facts.extend(user_facts(user, projects[0]))
        facts.append(task_fact(user, projects[0]))
    return facts


def plan_sessions(
    rng: random.Random, tenant: str, org: str, facts: list[Fact], per_user: int, projects: dict[str, list[str]]
) -> list[Session]:
    """Spread each user's facts over their sessions (a project's facts over sessions
    about that project); changes and restatements go to a later session."""
    by_user: dict[str, list[Fact]] = {}
    for fact in facts:
        by_user.setdefault(fact.user, []).append(fact)
    sessions: list[Session] = []
    for user, mine in by_user.items():
        rng.shuffle(mine)
        theirs = projects.get(user) or [None]
        own = [Session(tenant, user, f"{user}-s{i + 1}", theirs[i % len(theirs)], org) for i in range(per_user)]
        for fact in mine:
            fitting = [s for s in own if fact.project is None or s.project == fact.project] or own
            early = fitting[:-1] if (fact.change or fact.restate) and len(fitting) > 1 else fitting
            target = min(early, key=lambda s: (len(s.items), own.index(s)))
            target.items.append(("fact", fact))
            if fact.change or fact.restate:
                later = [s for s in fitting if own.index(s) > own.index(target)] or own[own.index(target) + 1 :]
                rng.choice(later).items.append(("change" if fact.change else "restate", fact))
        sessions.extend(own)
    return sessions


def render(rng: random.Random, sessions: list[Session], filler: tuple[str, ...]) -> tuple[list[dict], dict]:
    """The turns in order, and for each fact the turn ids that state it (and changes)."""
    turns: list[dict] = []
    said: dict[int, dict[str, list[str]]] = {}
    clock = START
    for session in sorted(sessions, key=lambda s: (int(s.name.rsplit("s", 1)[1]), s.user)):
        rng.shuffle(session.items)
        session.items.sort(key=lambda item: item[0] == "change")  # changes end a session
        clock += timedelta(days=1, hours=rng.randint(0, 6))
        writer = _Writer(session, clock, turns, rng)
        add = writer.add
        add("user", rng.choice(("Morning!", "Hi again.", "Hey, got a minute?", "Hello.", "Back at it.")))
        add("assistant", rng.choice(("Hi! What can I do for you?", "Hello, how can I help?", "Sure, go ahead.")))
        for kind, fact in session.items:
            if rng.random() < 0.45:
                add("user", rng.choice(filler))
                add("assistant", rng.choice(ASSISTANT))
            f: Fact = fact  # type: ignore[assignment]
            record = said.setdefault(id(f), {"fact": [], "change": []})
            if kind == "change":
                text = rng.choice(f.change)
                record["change"].append(add("user", text))
            else:
                text = _opened(rng, rng.choice(f.say)) + rng.choice(CLOSE)
                record["fact"].append(add("user", text))
            add("assistant", rng.choice(ASSISTANT))
        add("user", rng.choice(("Thanks, that's all for now.", "Cheers.", "Great, talk later.", "Bye!")))
        clock = writer.clock
    return turns, said


class _Writer:
    """Appends a session's turns with ids and times."""

    def __init__(self, session: Session, clock: datetime, turns: list[dict], rng: random.Random) -> None:
        self.session, self.clock, self.turns, self.rng, self.index = session, clock, turns, rng, 0

    def add(self, role: str, text: str) -> str:
        session = self.session
        self.index += 1
        self.clock += timedelta(minutes=self.rng.randint(1, 9))
        turn_id = f"{session.name}-t{self.index:02d}"
        scopes = {"session": session.name, "user": session.user, "org": session.org}
        if session.project:
            scopes["project"] = session.project
        self.turns.append(
            {
                "type": "turn",
                "tenant": session.tenant,
                "turn_id": turn_id,
                "role": role,
                "text": text,
                "scopes": scopes,
                "occurred_at": self.clock.isoformat(),
            }
        )
        return turn_id


_LOWERABLE = frozenset(
    _words(
        "the we our my everything if for status today hard leadership postmortem decision "
        "nothing on-call daily customer compliance data careful never school trip coffee-wise "
        "current bedtime block letters swimming free at my most please when you reminder "
        "remember goodbye don't cancel update change scratch heads on in"
    )
)


def _opened(rng: random.Random, phrasing: str) -> str:
    """Sometimes an opener before the statement ("By the way, we deploy ...")."""
    opener = rng.choice(OPEN)
    if not opener:
        return phrasing
    first = phrasing.split(" ", 1)[0]
    return opener + (phrasing[0].lower() + phrasing[1:] if first.lower() in _LOWERABLE else phrasing)


def questions(rng: random.Random, facts: list[Fact], said: dict, tenant: str, org: str, start: int) -> list[dict]:
    out: list[dict] = []

    def ask(text: str, fact: Fact, answers: list[str], kind: str) -> None:
        scopes = {"session": f"{fact.user}-questions", "user": fact.user, "org": org}
        if fact.project:
            scopes["project"] = fact.project
        if fact.scope_session:
            scopes["session"] = answers[0].rsplit("-t", 1)[0]
        out.append(
            {
                "type": "question",
                "id": f"q{start + len(out) + 1:04d}",
                "tenant": tenant,
                "question": text,
                "scopes": scopes,
                "answer_turns": sorted(answers),
                "kind": kind,
            }
        )

    for fact in facts:
        record = said[id(fact)]
        if fact.change:  # after a change of mind, "which X" is asked about the new value
            for text in rng.sample(fact.ask_now, min(2, len(fact.ask_now))):
                ask(text, fact, record["change"], "current")
            ask(rng.choice(fact.ask_before), fact, record["fact"], "before")
            continue
        statements = " ".join(fact.say).lower()
        for text in rng.sample(fact.ask, min(len(fact.ask), 2 + (rng.random() < 0.5))):
            if text.startswith("Who is ") and any(name in text for name in PEOPLE):
                kind = "who"
            else:
                kind = "direct" if _content(text) <= _content(statements) else "paraphrase"
            ask(text, fact, record["fact"], kind)
    return out


_STOP = frozenset(
    _words(
        "a an the is are was were do does did i my me we our you your what which who whom when where why how "
        "to of in on for with at by from it its this that be been should can could would will about "
        "there any have has had"
    )
)


def _content(text: str) -> set[str]:
    return {w.strip("?.,!:;'\"()").lower() for w in text.split()} - _STOP - {""}


def build() -> list[dict]:
    rng = random.Random(SEED)
    work = northwind_facts()
    sessions = plan_sessions(rng, "northwind", "northwind", work, 5, {u: p for u, (_, p) in USERS.items()})
    turns, said = render(rng, sessions, WORK_FILLER)
    home = [f for user in HOME_USERS for f in home_facts(user)]
    home_sessions = plan_sessions(rng, "bluebird", "bluebird", home, 4, {})
    home_turns, home_said = render(rng, home_sessions, HOME_FILLER)
    asked = questions(rng, work, said, "northwind", "northwind", 0)
    asked += questions(rng, home, home_said, "bluebird", "bluebird", len(asked))
    return turns + home_turns + asked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file is not what this makes")
    args = parser.parse_args(argv)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in build())
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT} differs from the generator's output")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    print(f"wrote {OUT}: {kinds.count('turn')} turns, {kinds.count('question')} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
