"""The secret guard: nothing that looks like a credential becomes a memory. Pure.

It errs on the side of refusing: a memory lost to a false positive costs less
than a key copied into every future prompt.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

from memledger.events.keys import stream_safe
from memledger.extraction.secret_rules import GENERIC_KEY_WORDS, GENERIC_MIN_ENTROPY, RULES

# A credential keyword (possibly inside a name like DB_PASSWORD) followed by a value:
# "= value" / ": value" unless the value is a reference (os.environ, ${VAR}, <placeholder>),
# or "is value" when the value looks like a secret (has a digit, or a symbol not at its end:
# "Your password is incorrect!" is no value).
_WORD_FOR_PASSWORDS = r"(?:password|passwd|passphrase|pwd|passwort|kennwort|mot de passe|contrase(?:ñ|n)a)"
_KEYWORD = (
    r"(?:" + _WORD_FOR_PASSWORDS + r"|secret|api[_ -]?key|access[_ -]?key|secret[_ -]?key|account[_ -]?key"
    r"|access[_ -]?token|auth[_ -]?token|client[_ -]?secret)"
)
# After a colon, a short lower-case word that prose goes on from is no value: "For the
# webhook secret: roll it in the Stripe dashboard". Anything else is ("API key:
# AbCdEf... please keep it safe"), and a password word takes any value after its colon
# (``_PASSWORD_COLON``: "The password: correct horse battery staple"). Case-sensitive
# inside the case-insensitive pattern.
_PROSE = r"(?!(?-i:[a-z]{1,15})[^\S\n]+(?-i:[a-z]+)[^\S\n]+(?-i:[a-z]))"
_REFERENCE = r"(?!os\.|getenv|getpass|process\.env|ENV\[|\$\{?\w|<[\w-]+>|\*+['\"]?$|none\b|null\b)"
# Only whether a pattern matches counts, so the keyword's own start is enough (a name
# such as DB_PASSWORD matches at PASSWORD), and suffixes and schemes are bounded: an
# unbounded run before the keyword, or after a word start, is scanned again from each
# position in it (quadratic, for a hostile turn).
_PASSWORD = (
    r"(?<![A-Za-z0-9])"
    + _KEYWORD
    + r"\w{0,64}['\"]?\s*(?:=\s*['\"]?"
    + _REFERENCE
    + r"\S{4,}|:\s*['\"]?"
    + _REFERENCE
    + _PROSE
    + r"\S{4,}|is\s+['\"]?(?=\S*(?:[0-9]|[!@#$%^&*_+=-]\S))\S{6,})"
)

_PASSWORD_COLON = r"(?<![A-Za-z0-9])" + _WORD_FOR_PASSWORDS + r"\w{0,64}['\"]?\s*:\s*['\"]?" + _REFERENCE + r"\S{4,}"

# The same keyword a few words before "is" or a colon: "the password for prod is
# Summer2024!", "Password of the staging DB: hunter22x", "the password will be ...",
# "the password rotates monthly, currently ...", "Das Passwort für die Produktion ist ...".
# The value must look like a secret (a digit, or a symbol not at its end), so "the secret to good tests
# is keeping them small" passes.
_PASSWORD_OF = (
    r"(?<![A-Za-z0-9])"
    + _KEYWORD
    + r"\w{0,64}(?:[\s,;]+[^\W\d_]{1,20}){0,4}?[\s,;]*"
    + r"(?:\b(?:is|was|be|currently|now|ist|war|est)\b|:|=)\s*['\"]?"
    + _REFERENCE
    + r"(?=\S*(?:[0-9]|[!@#$%^&*_+=-]\S))\S{6,}"
)

# A password word right before its value: "user admin and password Hunter#2024". With
# no "is" or colon between them, the value must look more like a secret: a letter, and
# a digit, or a symbol (not a hyphen, and not only at its end), so "password reset-flow"
# and "the password manager!" pass. The lookaheads are bounded, to stay linear.
_PASSWORD_BARE = (
    r"(?<![A-Za-z0-9])"
    + _WORD_FOR_PASSWORDS
    + r"\s+['\"]?(?=\S{0,64}?[A-Za-z])(?=\S{0,64}?(?:[0-9]|[!@#$%^&*_+=~]\S))\S{6,}"
)

# A password said in plain words: "Our wifi password is sunshine." One word of letters
# ends the clause, and it is no word a rule about passwords ends with ("The password is
# required.", "... is strong", "... is confidential", "... was changed and ...").
_RULE_WORDS = (
    r"strong|weak|long|short|secure|insecure|wrong|correct|incorrect|right|invalid|empty|blank|same|different|"
    r"simple|complex|random|unique|private|secret|hidden|visible|fine|good|bad|new|old|temporary|"
    r"mandatory|optional|unknown|known|lost|safe|unsafe|there|here|gone|missing|personal|shared|"
    r"easy|hard|obvious|trivial|public|useless|critical|important|case|everything|nothing|fixed"
)
_PASSWORD_PLAIN = (
    r"(?<![A-Za-z0-9])"
    + _WORD_FOR_PASSWORDS
    + r"\w{0,64}(?:[\s,;]+[^\W\d_]{1,20}){0,4}?\s+(?:is|was|will be|ist)\s+['\"]?"
    + r"(?!(?:"
    + _RULE_WORDS
    + r")\b)(?![a-z]{0,40}?(?:ed|ing|ly|ble|ful|ous|ive|ent|ant|ary|ory|ion|ness|less|ate|ish|al)\b)"
    + r"[A-Za-z]{6,40}['\"]?[^\S\n]*(?:$|[.!,;)]|\s+(?:and|but|so|or)\b)"
)

# A password key inside a longer name, assigned: "PGPASSWORD=...", "DB_PASS=...",
# "MYSQL_PWD=..." (the rules above want no letter before the keyword). A bare "pass"
# only after no letter ("bypass=true" passes), and only with "=": "Hall pass: ..." is prose.
_PASSWORD_ASSIGNED = (
    r"(?:passw(?:or)?d|passwort|passphrase|pwd|(?<![a-z])pass)s?(?![a-z])[\w.-]{0,20}['\"]?[^\S\n]{0,3}"
    r"(?:=|:=|=>)[^\S\n]{0,3}['\"]?" + _REFERENCE + r"[^\s'\"]{4,}"
)

# A passphrase of several plain words: "My password is correct horse battery staple."
# Three to six words, none of them a word prose about a password is made of ("The
# password is stored with bcrypt.", "... is not long enough."), ending the sentence.
_FUNCTION_WORDS = (
    r"the|a|an|to|of|in|on|at|by|for|with|from|into|about|as|is|are|was|were|be|been|being|and|or|but|nor|so|"
    r"not|no|now|still|just|only|very|too|also|always|never|often|usually|already|then|than|that|this|these|"
    r"those|it|its|their|our|your|my|his|her|we|they|you|he|she|i|me|us|them|who|what|which|when|where|how|"
    r"why|all|any|some|every|each|both|more|most|less|least|much|many|few|such|own|if|unless|until|while|"
    r"because|since|after|before|during|without|within|across|over|under|again|ever|even|enough|quite|"
    r"rather|really|set|stored|kept|saved|sent|changed|reset|required|needed|used|managed|enforced|checked|"
    r"hashed|expired|expires|rotated|characters?|letters?|digits?|numbers?|symbols?|long|short|case|"
    r"sensitive|insensitive|valid|invalid|wrong|incorrect|strong|weak|same|different|here|there|"
    r"(?:" + _RULE_WORDS + r")(?<!correct)(?<!right)"
)
_PASSPHRASE_WORD = r"(?!(?:" + _FUNCTION_WORDS + r")\b)[^\W\d_]{2,20}"
_PASSPHRASE = (
    r"(?<![A-Za-z0-9])(?:password|passphrase|pass phrase|passwort|kennwort)\s+(?:is|was|will be|ist)\s*:?\s+"
    r"['\"]?(?![a-z]{0,40}?(?:ed|ing|ly)\b)" + _PASSPHRASE_WORD + r"(?:[ -]" + _PASSPHRASE_WORD + r"){2,5}"
    r"['\"]?[^\S\n]*(?:$|[.!;)])"
)

# Each kind, its pattern, and words one of which every match holds (case-folded): a text
# holding none of them is not searched. Most text holds no credential, and a substring
# test costs a fraction of a search (which runs on every turn, and again on each of its
# entities and facts).
_PASSWORD_WORDS = ("pass", "pwd", "kennwort", "contrase")
_PATTERNS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    (
        "private key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----|-----BEGIN OPENSSH PRIVATE KEY"),
        ("-----begin",),
    ),
    ("pem block", re.compile(r"-----BEGIN (?:CERTIFICATE|ENCRYPTED|RSA|EC|DSA|PGP)[A-Z ]*-----"), ("-----begin",)),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,1024}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ("eyj",)),
    ("openai-style key", re.compile(r"\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{16,}"), ("sk-",)),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), ("akia", "asia")),
    (
        "github token",
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    ("slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",)),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), ("aiza",)),
    ("stripe key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), ("_live_", "_test_")),
    ("gitlab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}"), ("glpat-",)),
    (
        "connection string with password",
        re.compile(r"\b[a-z][a-z0-9+.-]{0,40}://[^\s:/@]*:[^\s@/]+@[^\s/]+", re.IGNORECASE),
        ("://",),
    ),
    (
        "azure storage key",
        re.compile(r"\b(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{20,}", re.IGNORECASE),
        ("key=",),
    ),
    ("azure sas signature", re.compile(r"[?&]sig=[A-Za-z0-9%+/]{20,}"), ("sig=",)),
    ("vault token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}"), ("hvs.", "hvb.", "hvr.")),
    (
        "password",
        re.compile(_PASSWORD, re.IGNORECASE),
        (*_PASSWORD_WORDS, "secret", "api", "access", "account", "auth"),
    ),
    ("password", re.compile(_PASSWORD_COLON, re.IGNORECASE), _PASSWORD_WORDS),
    (
        "password",
        re.compile(_PASSWORD_OF, re.IGNORECASE),
        (*_PASSWORD_WORDS, "secret", "api", "access", "account", "auth"),
    ),
    ("password", re.compile(_PASSWORD_BARE, re.IGNORECASE), _PASSWORD_WORDS),
    ("password", re.compile(_PASSWORD_PLAIN, re.IGNORECASE | re.MULTILINE), _PASSWORD_WORDS),
    ("password", re.compile(_PASSWORD_ASSIGNED, re.IGNORECASE), _PASSWORD_WORDS),
    ("password", re.compile(_PASSPHRASE, re.IGNORECASE | re.MULTILINE), _PASSWORD_WORDS),
    (
        "credentials",
        re.compile(r"\bcred(?:ential)?s?\b\W{0,3}[^\s:]{1,64}:(?!//)\S{4,}", re.IGNORECASE),
        ("cred",),
    ),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ("npm_",)),
    ("linear api key", re.compile(r"\blin_api_[A-Za-z0-9]{40}\b"), ("lin_api_",)),
    ("hugging face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), ("hf_",)),
    ("bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*"), ("bearer",)),
    (
        "long hex secret",
        re.compile(r"\b(?:key|token|secret)\w{0,40}(?:\W{1,3}|\s+(?:is|was)\s+['\"]?)[0-9a-f]{32,}\b", re.IGNORECASE),
        ("key", "token", "secret"),
    ),
)

_ANY_NEED = re.compile(
    "|".join(
        sorted(
            {re.escape(need) for _, _, needs in _PATTERNS for need in needs}
            | {re.escape(need) for rule in RULES for need in rule.needs}
            | {re.escape(word) for word in GENERIC_KEY_WORDS}
        )
    )
)

# An assignment of a long random value to a secret-like key (gitleaks' generic-api-key
# rule; secret_rules.py): "TOKEN=3f9a8c1d2e4b5a69", "client_secret: 'k8Jd...'". The
# value must look random: a digit and a letter, and GENERIC_MIN_ENTROPY bits a character.
_ASSIGNED = re.compile(
    r"(?:access|auth|api|credential|creds|key|passw(?:or)?d|passphrase|pwd|secret|token)[\w.-]{0,20}['\"]?"
    r"[^\S\n]{0,3}(?:=|:=|=>|:|\|\|)[^\S\n]{0,3}['\"`]?" + _REFERENCE + r"([\w.=+/~-]{12,150})(?=['\"`\s;,)]|$)",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")


def shannon_entropy(value: str) -> float:
    """Bits a character of ``value`` carries, from its characters' frequencies."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values()) if size else 0.0


def _random_value_assigned(text: str) -> bool:
    return any(
        _DIGIT.search(value) and _LETTER.search(value) and shannon_entropy(value) >= GENERIC_MIN_ENTROPY
        for value in (match.group(1) for match in _ASSIGNED.finditer(text))
    )


# Format characters (zero-width spaces and joiners, soft hyphens, bidi controls) are
# invisible: "pass\u00adword is ..." reads as "password is ..." to a person and a model,
# so they are looked through.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]")

# After NFKC (which makes no-break, figure and thin spaces plain spaces, and full-width
# digits and letters ASCII), the dashes and minus signs are hyphens, the other spaces
# spaces, fraction and division slashes slashes, and Cyrillic and Greek letters that look
# like Latin ones those letters: "4111\u20131111\u2013..." is a card number, "p\u0430ssword" a password.
# Cyrillic and Greek letters drawn as Latin ones, and those Latin letters.
_LOOKALIKE_LETTERS = (
    "\u0430\u0432\u0435\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445\u0456\u0458\u0455\u0501"
    "\u051b\u051d\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405"
    "\u03b1\u03b5\u03b9\u03ba\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7\u0391\u0392\u0395\u0396\u0397\u0399"
    "\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
)
_LATIN_LETTERS = "abekmhopctyxijsdqwABEKMHOPCTXIJSaeikvoptuxABEZHIKMNOPTYX"
_SEPARATORS = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u205f\u3000", " "),
        **dict.fromkeys("\u2044\u2215\u29f8", "/"),
        **dict(zip(_LOOKALIKE_LETTERS, _LATIN_LETTERS, strict=True)),
    }
)


def normalise(text: str) -> str:
    """``text`` as the guard reads it: without invisible characters, in NFKC, with
    Unicode dashes, spaces, slashes and look-alike letters made ASCII. ASCII text is
    already so (most text: one check, in C)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", stream_safe(_INVISIBLE.sub("", text))).translate(_SEPARATORS)


# A payment card's number: 13-19 digits, in groups of digits split by single spaces,
# hyphens or slashes (no-break spaces and en dashes too, after :func:`normalise`), or in
# four groups of four split by dots ("4111.1111.1111.1111"; other dotted digits are
# versions and amounts), starting as the networks' numbers do (Visa 4,
# Mastercard 51-55 and 22-27, American Express 34 and 37, Diners 30, 36 and 38, JCB 35,
# Discover and UnionPay 60, 62, 64 and 65; not 20, so no timestamp "2024..."), standing
# alone (not inside a hex string or an id), that pass the Luhn check. An order number or
# a phone number passes the check one time in ten, and is then refused: the guard errs on
# that side.
_CARD = re.compile(
    r"(?<![\w.,-])(?=4|5[1-5]|2[2-7]|3[0-8]|6[0245])(?:\d(?:[ /-]?\d){12,18}|\d{4}(?:\.\d{4}){3})(?![\w-]|[.,]\d)"
)
# A US social security number in its written form, or nine digits a few words after the
# words for it ("my SSN is 123456789").
_SSN = re.compile(
    r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])|"
    r"\b(?:ssn|social security(?: number| no\.?)?)\b\W{0,3}(?:\w+\W{1,3}){0,3}?\d{3}[ -]?\d{2}[ -]?\d{4}\b",
    re.IGNORECASE,
)


def find_secret(text: str) -> str | None:
    """The kind of credential ``text`` seems to hold, or None if it looks clean."""
    visible = normalise(text)
    # Case-folded as the patterns' IGNORECASE matches: the long s (U+017F) is "s", the Kelvin
    # sign "k"; the dotless i (U+0131) matches "i" there, and folds to itself here.
    folded = visible.casefold().replace("\u0131", "i")
    if _ANY_NEED.search(folded):  # one scan; then each pattern's own words
        for kind, pattern, needs in _PATTERNS:
            if any(need in folded for need in needs) and pattern.search(visible):
                return kind
        for rule in RULES:
            if any(need in folded for need in rule.needs) and rule.pattern.search(visible):
                return rule.kind
        if any(word in folded for word in GENERIC_KEY_WORDS) and _random_value_assigned(visible):
            return "generic secret"
    if any(_luhn(match.group()) for match in _CARD.finditer(visible)):
        return "payment card number"
    if _SSN.search(visible):
        return "social security number"
    return None


def _luhn(number: str) -> bool:
    """Whether a card number's digits pass the Luhn check (its last digit checks the rest)."""
    digits = [int(c) for c in number if c.isdigit()]
    total = sum(digits[-1::-2]) + sum(sum(divmod(2 * d, 10)) for d in digits[-2::-2])
    return total % 10 == 0
