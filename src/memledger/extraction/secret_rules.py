"""Secret-detection rules as data, for the secret guard (secrets.py). Pure.

Origin: ported from gitleaks' default rule set, ``config/gitleaks.toml`` of
https://github.com/gitleaks/gitleaks (v8; MIT licence, Copyright (c) 2019 Zachary
Rice), and, for the entropy threshold and key words of assignments, from Yelp's
detect-secrets plugins ``KeywordDetector`` and ``HighEntropyString``
(https://github.com/Yelp/detect-secrets, Apache-2.0). Ported, not copied: Go's
RE2 syntax is written for Python's ``re`` (bounded repeats, no capture groups),
and gitleaks' ``keywords`` (a rule is only run on text holding one of them) are
each rule's ``needs``, lower-cased. Rules for kinds the guard already names
(private keys, JWTs, OpenAI, AWS, GitHub, Slack, Google, Stripe, GitLab, npm,
Hugging Face, Vault) are not repeated here.

Each rule: its gitleaks id (kept, to look it up upstream), a pattern, the words
one of which every match holds (case-folded), and a made-up example it must find
(tests/unit/test_secret_guard_rules.py runs them).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple


class Rule(NamedTuple):
    kind: str
    pattern: re.Pattern[str]
    needs: tuple[str, ...]
    example: str


def _rule(kind: str, pattern: str, needs: tuple[str, ...], example: str, flags: int = 0) -> Rule:
    return Rule(kind, re.compile(pattern, flags), needs, example)


RULES: Final[tuple[Rule, ...]] = (
    _rule(
        "age-secret-key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        ("age-secret-key-1",),
        "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58],
    ),
    _rule(
        "adobe-client-secret", r"\b(?:p8e-)[a-zA-Z0-9]{32}\b", ("p8e-",), "p8e-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    ),
    _rule("alibaba-access-key-id", r"\bLTAI[a-zA-Z0-9]{20}\b", ("ltai",), "LTAI" + "Ab3dEf6hIj9kLm2nOp5q"),
    _rule(
        "anthropic-api-key",
        r"\bsk-ant-(?:api03|admin01)-[a-zA-Z0-9_-]{93}AA",
        ("sk-ant-",),
        "sk-ant-api03-" + ("Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 3)[:93] + "AA",
    ),
    _rule("atlassian-api-token", r"\bATATT3[A-Za-z0-9_=-]{186}", ("atatt3",), "ATATT3" + ("xF9kQ2mZ7pL4" * 16)[:186]),
    _rule(
        "digitalocean-token",
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        "dop_v1_" + "3f9a8c1d2e4b5a69" * 4,
    ),
    _rule(
        "databricks-api-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ("dapi",), "dapi" + "3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6"
    ),
    _rule(
        "discord-bot-token",
        r"\b[MN][A-Za-z\d]{23}\.[\w-]{6}\.[\w-]{27}\b",
        ("discord",),
        "discord bot: " + "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    ),
    _rule(
        "doppler-api-token",
        r"\bdp\.pt\.[a-zA-Z0-9]{43}\b",
        ("dp.pt.",),
        "dp.pt." + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9",
    ),
    _rule(
        "dynatrace-api-token",
        r"\bdt0c01\.[a-zA-Z0-9]{24}\.[a-zA-Z0-9]{64}\b",
        ("dt0c01",),
        "dt0c01." + "AB3DEF6HIJ9KLM2NOP5QRS8T" + "." + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2,
    ),
    _rule(
        "flyio-access-token", r"\bfo1_[\w-]{43}\b", ("fo1_",), "fo1_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9"
    ),
    _rule(
        "grafana-service-account-token",
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",
        ("glsa_",),
        "glsa_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" + "_3f9a8c1d",
    ),
    _rule(
        "heroku-api-key-v2",
        r"\bHRKU-AA[0-9a-zA-Z_-]{58}\b",
        ("hrku-aa",),
        "HRKU-AA" + ("Ab3dEf6hIj9kLm2nOp5q" * 3)[:58],
    ),
    _rule(
        "mailgun-private-api-token",
        r"\bkey-[a-f0-9]{32}\b",
        ("key-",),
        "mailgun key-" + "3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6",
    ),
    _rule("new-relic-user-api-key", r"\bNRAK-[a-zA-Z0-9]{27}\b", ("nrak-",), "NRAK-" + "AB3DEF6HIJ9KLM2NOP5QRS8TUV1"),
    _rule(
        "openai-api-key",
        r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
        ("sk-",),
        "sk-svcacct-" + "Ab3dEf6hIj9kLm2nOp5qRs8t",
    ),
    _rule(
        "postman-api-token",
        r"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b",
        ("pmak-",),
        "PMAK-" + "3f9a8c1d2e4b5a6978c0d1e2" + "-" + "3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6d7",
    ),
    _rule("pulumi-api-token", r"\bpul-[a-f0-9]{40}\b", ("pul-",), "pul-" + "3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f9a0"),
    _rule(
        "pypi-upload-token",
        r"\bpypi-AgEIcHlwaS5vcmc[\w-]{50,}",
        ("pypi-ageichlwas5vcmc",),
        "pypi-AgEIcHlwaS5vcmc" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2,
    ),
    _rule("rubygems-api-token", r"\brubygems_[a-f0-9]{48}\b", ("rubygems_",), "rubygems_" + "3f9a8c1d2e4b5a69" * 3),
    _rule(
        "sendgrid-api-token",
        r"\bSG\.[a-zA-Z0-9=_-]{22}\.[a-zA-Z0-9=_-]{43}\b",
        ("sg.",),
        "SG." + "Ab3dEf6hIj9kLm2nOp5qRs" + "." + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9",
    ),
    _rule(
        "sendinblue-api-token",
        r"\bxkeysib-[a-f0-9]{64}-[a-zA-Z0-9]{16}\b",
        ("xkeysib-",),
        "xkeysib-" + "3f9a8c1d2e4b5a69" * 4 + "-" + "Ab3dEf6hIj9kLm2n",
    ),
    _rule(
        "shopify-access-token",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        "shpat_" + "3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6",
    ),
    _rule(
        "square-access-token",
        r"\b(?:EAAA|sq0atp-)[\w-]{22,60}\b",
        ("eaaa", "sq0atp-"),
        "sq0atp-" + "Ab3dEf6hIj9kLm2nOp5qRs",
    ),
    _rule(
        "telegram-bot-api-token",
        r"\b\d{5,16}:A[\w-]{34}\b",
        (":a",),
        "bot 123456789:A" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb",
    ),
    _rule("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b", ("sk",), "twilio SK" + "3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6"),
    _rule(
        "gcp-service-account",
        r"\"type\"\s*:\s*\"service_account\"",
        ("service_account",),
        '{"type": "service_account", "project_id": "x"}',
    ),
    _rule(
        "aws-secret-access-key",
        r"(?i:aws)[\w.-]{0,20}?(?i:secret)[\w.-]{0,20}['\"]?\s*[:=]+\s*['\"]?[A-Za-z0-9/+]{40}\b",
        ("aws",),
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
)
"""Rules for tokens with a known shape; the generic assignment rule lives in secrets.py
(it needs the entropy check, :func:`secrets.shannon_entropy`)."""

# The words of a secret-like key in an assignment: gitleaks' generic-api-key
# (access, auth, api, credential, creds, key, passwd, password, secret, token) and
# detect-secrets' KeywordDetector (pass, pwd, private_key, passphrase).
GENERIC_KEY_WORDS: Final = (
    "access",
    "auth",
    "api",
    "credential",
    "creds",
    "key",
    "passw",
    "passphrase",
    "pwd",
    "pass",
    "secret",
    "token",
)
# The entropy a generic "secret key = value" value must reach, in bits per character, in
# the range gitleaks' and detect-secrets' generic checks use (their thresholds: docs/security.md);
# it must also hold a digit and a letter (secrets.py).
GENERIC_MIN_ENTROPY: Final = 3.0
