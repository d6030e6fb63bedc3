"""The secret guard's rule set, entropy check and normalisation (issue 26, item 2). Pure.

Each text of MISSED became a fact and reached context before; the guard now reads
text in NFKC with Unicode separators and look-alike letters made ASCII, runs the
rules ported from gitleaks (secret_rules.py) and checks values assigned to a
secret-like key for randomness. The credentials below are made up.
"""

from __future__ import annotations

import time

import pytest

from memledger.extraction import secret_rules
from memledger.extraction.secrets import find_secret, normalise, shannon_entropy

MISSED = {
    "keyword preceded by letters": "PGPASSWORD=hunter22x psql -h db",
    "exported, quoted": "export PGPASSWORD='s3cret!'",
    "short password key": "DB_PASS=hunter22x",
    "mysql pwd": "MYSQL_PWD=Tr0ub4dor",  # found before too: a neighbour of the two above
    "token of 16 hex": "TOKEN=3f9a8c1d2e4b5a69",
    "token of 24 hex in yaml": "token: a1b2c3d4e5f60718293a4b5c",
    "a passphrase of several words": "My password is correct horse battery staple.",
    "a passphrase, capitalised": "The wifi passphrase is Purple Monkey Dishwasher Lamp.",
    "card split by no-break spaces": "4111\u00a01111\u00a01111\u00a01111",
    "card split by narrow no-break spaces": "card 4111\u202f1111\u202f1111\u202f1111 exp 12/27",
    "card split by en dashes": "4111\u20131111\u20131111\u20131111",
    "card split by em dashes": "5500\u20140055\u20145555\u20145559",
    "card split by figure dashes": "4111\u20121111\u20121111\u20121111",
    "card split by slashes": "4111/1111/1111/1111",
    "card in full-width digits": "\uff14\uff11\uff11\uff11 1111 1111 1111",
    "password in Cyrillic look-alikes": "p\u0430ssw\u043erd: Hunter#2024",
    "a random value assigned to a key": "client_id=app, signing_key=Zx81Qp0LmW3vTy7K",
    "a gitleaks-shaped token": "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",
}


@pytest.mark.parametrize("text", MISSED.values(), ids=MISSED.keys())
def test_what_the_guard_missed_is_found(text: str) -> None:
    assert find_secret(text) is not None
    assert find_secret(f"Some words before. {text} And after.") is not None


def test_the_kinds_are_named() -> None:
    assert find_secret(MISSED["keyword preceded by letters"]) == "password"
    assert find_secret(MISSED["short password key"]) == "password"
    assert find_secret(MISSED["a passphrase of several words"]) == "password"
    assert find_secret(MISSED["token of 16 hex"]) == "generic secret"
    assert find_secret(MISSED["card split by no-break spaces"]) == "payment card number"
    assert find_secret(MISSED["a gitleaks-shaped token"]) == "sendgrid-api-token"


CLEAN = {
    "a version": "We upgraded to 4.1.1.1 last week.",
    "a long version": "Pin the driver to 12.4.1.1011 please.",
    "a date": "The release is on 2024-11-26, or 26/11/2024 in Europe.",
    "a date with an en dash": "The sprint runs 2024\u201311\u201326 to 2024\u201312\u201310.",
    "a password reset": "Click password reset to get a link by email.",
    "a password reset link": "The password reset link expires in 24 hours.",
    "a password stored": "The password is stored with bcrypt.",
    "a password too short": "My password is too short for the new policy.",
    "a password rule of several words": "The password is case sensitive everywhere.",
    "a password not long enough": "The password is not long enough.",
    "a request id": "request 3f9a8c1d-2e4b-5a69-78c0-d1e2f3a4b5c6 failed with a timeout",
    "a request id assigned": "request_id=3f9a8c1d-2e4b-5a69-78c0-d1e2f3a4b5c6",
    "bypass": "bypass=true skips the cache",
    "a hall pass": "Hall pass: required after 3pm.",
    "a key in prose": "The key insight: caching made it 10x faster.",
    "a tokenizer call": "token = tokenizer.encode(text)",
    "a keyboard shortcut": "keyboard shortcut: ctrl+shift+p",
    "a token limit": "max_tokens=4096 and temperature=0.2",
    "no-break spaces in prose": "Meet at 10\u00a0am in room\u00a04.",
    "a phone number with en dashes": "Call 555\u2013123\u20134567.",
}


@pytest.mark.parametrize("text", CLEAN.values(), ids=CLEAN.keys())
def test_ordinary_text_still_passes(text: str) -> None:
    assert find_secret(text) is None


@pytest.mark.parametrize("rule", secret_rules.RULES, ids=[rule.kind for rule in secret_rules.RULES])
def test_each_ported_rule_finds_its_example(rule: secret_rules.Rule) -> None:
    assert rule.pattern.search(rule.example)
    assert any(need in rule.example.casefold() for need in rule.needs)  # its words let it run
    assert find_secret(rule.example) is not None


def test_normalise_makes_separators_and_look_alikes_ascii() -> None:
    assert normalise("4111\u00a01111\u20131111\u20121111") == "4111 1111-1111-1111"
    assert normalise("p\u0430ss\u00adword") == "password"
    assert normalise("plain ascii") == "plain ascii"


def test_entropy() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == 2.0
    assert shannon_entropy("3f9a8c1d2e4b5a69") >= secret_rules.GENERIC_MIN_ENTROPY


def _run(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


HOSTILE = {
    "pass keys": _run("DB_PASS=", 200_000),
    "key and a long value": _run("key=" + "a1" * 100 + " ", 200_000),
    "passphrase words": _run("password is word word word word word word word ", 200_000),
    "no-break digit groups": _run("4111\u00a0", 200_000),
    "token colons": _run("token: ", 200_000),
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_rules_take_time_in_proportion(text: str) -> None:
    started = time.process_time()
    find_secret(text)
    assert time.process_time() - started < 2.0
