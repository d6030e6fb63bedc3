"""The secret guard: nothing that looks like a credential becomes a memory. Pure.

It errs on the side of refusing: a memory lost to a false positive costs less
than a key copied into every future prompt.
"""

from __future__ import annotations

import re

# A credential keyword (possibly inside a name like DB_PASSWORD) followed by a value:
# "= value" / ": value" unless the value is a reference (os.environ, ${VAR}, <placeholder>),
# or "is value" when the value looks like a secret (has a digit or a symbol).
_KEYWORD = (
    r"(?:password|passwd|passphrase|pwd|secret|api[_ -]?key|access[_ -]?key|secret[_ -]?key"
    r"|access[_ -]?token|auth[_ -]?token|client[_ -]?secret)"
)
_REFERENCE = r"(?!os\.|getenv|getpass|process\.env|ENV\[|\$\{?\w|<[\w-]+>|\*+['\"]?$|none\b|null\b)"
# Only whether a pattern matches counts, so the keyword's own start is enough (a name
# such as DB_PASSWORD matches at PASSWORD), and suffixes and schemes are bounded: an
# unbounded run before the keyword, or after a word start, is scanned again from each
# position in it (quadratic, for a hostile turn).
_PASSWORD = (
    r"(?<![A-Za-z0-9])"
    + _KEYWORD
    + r"\w{0,64}['\"]?\s*(?:(?:=|:)\s*['\"]?"
    + _REFERENCE
    + r"\S{4,}|is\s+['\"]?(?=\S*[0-9!@#$%^&*_+=-])\S{6,})"
)

# The same keyword a few words before "is" or a colon: "the password for prod is
# Summer2024!", "Password of the staging DB: hunter22x". The value must look like a
# secret (a digit or a symbol), so "the secret to good tests is keeping them small" passes.
_PASSWORD_OF = (
    r"(?<![A-Za-z0-9])"
    + _KEYWORD
    + r"\w{0,64}(?:\s+[A-Za-z]{1,20}){1,4}?\s*(?:\bis\b|\bwas\b|:|=)\s*['\"]?"
    + _REFERENCE
    + r"(?=\S*[0-9!@#$%^&*_+=-])\S{6,}"
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----|-----BEGIN OPENSSH PRIVATE KEY")),
    ("pem block", re.compile(r"-----BEGIN (?:CERTIFICATE|ENCRYPTED|RSA|EC|DSA|PGP)[A-Z ]*-----")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,1024}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("openai-style key", re.compile(r"\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{16,}")),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}")),
    ("slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("stripe key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("gitlab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}")),
    (
        "connection string with password",
        re.compile(r"\b[a-z][a-z0-9+.-]{0,40}://[^\s:/@]*:[^\s@/]+@[^\s/]+", re.IGNORECASE),
    ),
    ("password", re.compile(_PASSWORD, re.IGNORECASE)),
    ("password", re.compile(_PASSWORD_OF, re.IGNORECASE)),
    ("credentials", re.compile(r"\bcred(?:ential)?s?\b\W{0,3}[^\s:]{1,64}:(?!//)\S{4,}", re.IGNORECASE)),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("linear api key", re.compile(r"\blin_api_[A-Za-z0-9]{40}\b")),
    ("hugging face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*")),
    (
        "long hex secret",
        re.compile(r"\b(?:key|token|secret)\w{0,40}(?:\W{1,3}|\s+(?:is|was)\s+['\"]?)[0-9a-f]{32,}\b", re.IGNORECASE),
    ),
)


def find_secret(text: str) -> str | None:
    """The kind of credential ``text`` seems to hold, or None if it looks clean."""
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    return None
