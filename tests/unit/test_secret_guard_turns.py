"""The secret guard on whole turns and on the phrasings people use. Pure; no database.

Before, a turn "We decided the root password is Tr0ub4dor&3x." lost its fact to the
guard but kept the entity "Tr0ub4dor&3x" and the edge "user DECIDED Tr0ub4dor&3x":
the guard read each candidate alone, and the value, apart from "password is", looks
like any name. And common phrasings ("... and password Hunter#2024", "the password
will be ...", Azure's AccountKey=, Vault's hvs. tokens, "Passwort") were not found.
The credentials below are made up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memledger.events import codec
from memledger.events.catalogue import Scopes
from memledger.extraction.heuristic import extract_text
from memledger.extraction.policy import Counts, Policy, to_events
from memledger.extraction.protocol import (
    DirectiveCandidate,
    EntityCandidate,
    FactCandidate,
    RelationshipCandidate,
    RetractionCandidate,
    TurnExtraction,
    TurnText,
)
from memledger.extraction.secrets import find_secret

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def turn(text: str) -> TurnText:
    return TurnText(
        tenant_id="tenant-a",
        turn_id="t1",
        event_id="turn:t1",
        role="user",
        text=text,
        scopes=Scopes(session="s1", project="vault", user="sam"),
        occurred_at=NOW,
    )


def run(text: str, found: TurnExtraction) -> tuple[list[str], Counts]:
    """The encoded events the policy makes of ``found`` for a turn saying ``text``."""
    counts = Counts()
    pairs = to_events(turn(text), found, counts, Policy(auto_promote=True), extractor="toy", version="1")
    return [codec.encode(new.event).decode() for _, new in pairs], counts


# -- a turn that holds a secret gives nothing ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("We decided the root password is Tr0ub4dor&3x.", "Tr0ub4dor&3x"),
        ("Project Vault uses PostgreSQL with user admin and password Hunter#2024.", "Hunter#2024"),
        ("We decided the database password rotates monthly, currently Hunter#2024.", "Hunter#2024"),
    ],
)
def test_nothing_the_heuristic_extracts_from_a_turn_holding_a_password_is_stored(text: str, value: str) -> None:
    found = extract_text(text)
    assert any(value in e.name for e in found.entities)  # the extractor does take the value for a name
    events, counts = run(text, found)
    assert events == []
    candidates = len(found.entities) + len(found.relationships) + len(found.facts)
    assert counts.refused_secrets == candidates == len(counts.refused_kinds)
    assert set(counts.refused_kinds) == {"password"}


def test_every_kind_of_candidate_of_a_turn_holding_a_secret_is_refused_and_counted() -> None:
    """What a model may answer: the value alone, a piece of it, or none of it at all."""
    found = TurnExtraction(
        entities=(EntityCandidate(name="Tr0ub4dor&3x", entity_type="tool", confidence=0.9),),
        relationships=(
            RelationshipCandidate(
                source_name="sam",
                source_type="user",
                relation="DECIDED",
                target_name="Tr0ub4dor",
                target_type="concept",
                confidence=0.9,
            ),
        ),
        retractions=(
            RetractionCandidate(
                source_name="sam", source_type="user", relation="USES", target_name="&3x", target_type="tool"
            ),
        ),
        facts=(
            FactCandidate(
                key="root password", statement="The root password was decided.", category="decision", confidence=0.9
            ),
        ),
        directives=(DirectiveCandidate(kind="decision", statement="Use the agreed root password.", key="root pw"),),
    )
    events, counts = run("We decided the root password is Tr0ub4dor&3x.", found)
    assert events == []
    assert counts.refused_secrets == 5
    assert counts.refused_kinds == ["password"] * 5
    assert (counts.entities, counts.relationships, counts.facts) == (0, 0, 0)


def test_a_clean_turn_keeps_its_candidates() -> None:
    text = "We decided to go with PostgreSQL."
    found = extract_text(text)
    events, counts = run(text, found)
    assert counts.refused_secrets == 0
    assert any("PostgreSQL" in event for event in events)


# -- phrasings the guard finds ---------------------------------------------------------------------

FOUND = {
    "user and password": "Project Vault uses PostgreSQL with user admin and password Hunter#2024.",
    "password will be": "We decided the prod database password will be Hunter#2024 for everyone.",
    "staging password will be": "Remember that the staging password will be Zebra#99 from now on.",
    "rotates, currently": "We decided the database password rotates monthly, currently Hunter#2024.",
    "secret, currently": "The webhook secret rotates weekly; currently whsec9Xk2LmQ.",
    "azure account key": "Project Vault uses AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg== for storage.",
    "azure connection string": "DefaultEndpointsProtocol=https;AccountName=vaultsa;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2"
    "Nzg5MGFiY2RlZg==;EndpointSuffix=core.windows.net",
    "vault token": "We decided the vault token is hvs.CAESIJ1xYz2abcdEFGHijklMNOPqrstUVWX.",
    "azure sas url": "Upload to https://vaultsa.blob.core.windows.net/c?sv=2022-11-02&sig=AbCdEfGhIjKlMnOpQrStUv%3D",
    "german passwort": "Das Passwort für die Produktion ist Sommer2024!",
    "french mot de passe": "Le mot de passe est Soleil2024!",
    "soft hyphen in password": "pass\u00adword is Hunter#2024",
    "zero-width space in password": "We decided the pass\u200bword is Hunter#2024 for the admin account.",
    "zero-width space before colon": "password\u200b: Hunter#2024",
}


@pytest.mark.parametrize("text", FOUND.values(), ids=FOUND.keys())
def test_common_phrasings_of_a_credential_are_found(text: str) -> None:
    assert find_secret(text) is not None


def test_the_new_kinds_are_named() -> None:
    assert find_secret(FOUND["azure account key"]) == "azure storage key"
    assert find_secret(FOUND["vault token"]) == "vault token"
    assert find_secret(FOUND["german passwort"]) == "password"
    assert find_secret("The password: correct horse battery staple") == "password"  # a password word takes any


CLEAN = {
    "reset via the portal": "Reset your password via the portal.",
    "rotation policy": "We rotate passwords monthly.",
    "token bucket": "The token bucket algorithm limits requests.",
    "password manager": "Keep the password manager open!",
    "hyphenated word after password": "The password reset-flow is broken again.",
    "password policy now": "The password policy is now 12+ characters.",
    "currently with a plain word": "We rotate the API key monthly, currently via Vault.",
    "secret is now out": "The secret is now out: v2.0 ships Friday.",
    "german sentence": "Das Passwort muss lang sein.",
    "hvs as a word": "The hvs. files are archived.",
    "url with a short sig": "See https://example.com/doc?page=2&sig=abc for the signed copy.",
    "password hashing": "Passwords are currently stored with bcrypt hashing.",
    # prose after "secret:" (retrieval_holdout.jsonl's marcus-s03-t10, hidden from search before)
    "how to roll a secret": "For the webhook secret: roll it in the Stripe dashboard, then deploy the new one.",
}


@pytest.mark.parametrize("text", CLEAN.values(), ids=CLEAN.keys())
def test_sentences_about_credentials_without_one_still_pass(text: str) -> None:
    assert find_secret(text) is None


# -- linear time on hostile runs -------------------------------------------------------------------


def _run(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


HOSTILE = {
    "password and spaces": _run("password" + " " * 1000, 200_000),
    "password and separators": _run("password ;, ", 200_000),
    "password and a word": _run("password abcd, ", 200_000),
    "soft-hyphened password": _run("pass\u00adword ", 200_000),
    "mot de passe": _run("mot de passe ", 200_000),
    "account keys": _run("AccountKey=", 200_000),
    "vault prefixes": _run("hvs.", 200_000),
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_new_patterns_take_time_in_proportion(text: str) -> None:
    assert _cpu(find_secret, text) < 2.0


def _cpu(function: Callable[[str], object], text: str) -> float:
    started = time.process_time()
    function(text)
    return time.process_time() - started


@pytest.mark.parametrize(
    "text",
    [
        "access_token: abcdefghijklmnopqrstuvwxyzABCDEF and then restart",
        "API key: AbCdEfGhIjKlMnOpQrStUv please keep it safe",
    ],
)
def test_a_value_prose_goes_on_from_is_still_a_secret_unless_a_short_lowercase_word(text: str) -> None:
    assert find_secret(text) is not None
