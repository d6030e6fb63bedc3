"""How a block names stored scope ids (formatter version 3 on). Pure.

With hashing on (``service.scope_ids``) scope keys are stored as
``hid.<kind>.<32 hex digits>``, and the entity made of the speaker ("I use
FastAPI") is named by the user's stored id. Shown as they are, they make a block
read "hid.user.30c0… USES FastAPI" under "## Project memory: hid.project.1684…":
noise to the model, and a hash where the sentence needs a person.

From version 3 a block names the request's own ids by their role ("the user",
"this project") and any other stored id by its kind and first 8 digits
("another user (30c03654)"), so two other users stay apart. A group's heading no
longer shows a stored key: a selection only holds the request's own scopes. Keys
stored as given (a tenant that does not hash) are shown as before. Item ids are
citations and stay exactly as stored.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from memledger.events.catalogue import Scopes

_STORED: Final = re.compile(r"\bhid\.(session|project|user|org)\.([0-9a-f]{32})\b")
_OWN: Final = {"session": "this session", "project": "this project", "user": "the user", "org": "this organisation"}
_OTHER: Final = {
    "session": "another session",
    "project": "another project",
    "user": "another user",
    "org": "another organisation",
}


class Names(msgspec.Struct, frozen=True):
    """The request's own stored ids (``own``): what "the user" and "this project" mean."""

    own: frozenset[str] = frozenset()
    user: str | None = None  # the request's user, as stored

    def text(self, text: str) -> str:
        """``text`` with each stored id put in words."""
        if "hid." not in text:  # nearly every text: no regex pass
            return text
        return _STORED.sub(self._word, text)

    def scope_key(self, key: str | None) -> str | None:
        """A group's key as shown: none for a stored id."""
        return None if key is None or _STORED.fullmatch(key) else key

    def _word(self, match: re.Match[str]) -> str:
        kind = match.group(1)
        if match.group(0) in self.own:
            return _OWN[kind]
        return f"{_OTHER[kind]} ({match.group(2)[:8]})"


def names_for(scopes: Scopes | None) -> Names:
    """The names of a block served for ``scopes`` (stored ids; None: nobody's own)."""
    if scopes is None:
        return Names()
    own = (scopes.session, scopes.project, scopes.user, scopes.org)
    return Names(frozenset(key for key in own if key), user=scopes.user)
