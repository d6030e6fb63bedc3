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

Up to version 5 every stored id anywhere in an item's text was put in words, so one
user could write another's stored id into a statement ("We decided hid.user.b3c4…
approved it") and make that user's block read "the user approved it". From
version 6 (``endpoints``) only the ids the graph itself puts in a text are: an
entity's name and a relationship's source and target; a statement is data, and
shown as said. Ids and keys shown outside the quotation (who said it, a
heading's key, a conflict's id) go through ``label``: a caller chooses them when
ids are not hashed, so all but their stored ids is percent-encoded (``cite``).
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from memledger.events.catalogue import Scopes
from memledger.formatting.neutralise import ELLIPSIS, cite

_ID: Final = r"hid\.(session|project|user|org)\.([0-9a-f]{32})"
_STORED: Final = re.compile(rf"\b{_ID}\b")
_ONE: Final = re.compile(_ID)
# entity_item's text: "NAME (type)" then maybe ": description".
_ENTITY_NAME: Final = re.compile(rf"^{_ID}(?= \()")
# edge_text: "SOURCE RELATION TARGET" then maybe " (context)"; a relation is
# RelationshipObserved's ^[A-Z][A-Z0-9_]*$. The first such word between names
# without "(" splits them, so a context (stored text) never holds an endpoint.
_EDGE: Final = re.compile(r"([^(]*?) ([A-Z][A-Z0-9_]*) ([^(]*?)( \(.*)?", re.DOTALL)
_LABEL_LIMIT: Final = 64
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

    def endpoints(self, kind: str, text: str) -> str:
        """``text``, an item's of ``kind``, with the stored ids naming its entity or its
        relationship's ends in words (version 6 on). Any other stored id, in a fact's or
        a turn's text above all, is what someone wrote: it is put in words by its kind
        alone ("a user (9907b0a3)"), never as the reader's own ("the user")."""
        if "hid." not in text:
            return text
        if kind == "entity":
            return _STORED.sub(_neutral, _ENTITY_NAME.sub(self._word, text, count=1))
        edge = _EDGE.fullmatch(text) if kind == "relationship" else None
        if edge is None:
            return _STORED.sub(_neutral, text)
        source, relation, target, context = edge.groups()
        return f"{self._name(source)} {relation} {self._name(target)}{_STORED.sub(_neutral, context or '')}"

    def label(self, value: str) -> str:
        """``value``, a stored id or key shown outside a quotation (version 6 on): its
        stored ids in words, the rest percent-encoded (``cite``), so that it cannot
        close an item's metadata, start a heading or forge a citation; the rest cut
        after 64 characters as stored, ending in an ellipsis when cut."""
        pieces: list[str] = []
        at, room = 0, _LABEL_LIMIT
        for match in _STORED.finditer(value):
            before = value[at : match.start()]
            if len(before) > room:
                break
            pieces += [cite(before), self._word(match)]
            at, room = match.end(), room - len(before)
        rest = value[at:]
        return "".join(pieces) + cite(rest[:room]) + (ELLIPSIS if len(rest) > room else "")

    def scope_key(self, key: str | None) -> str | None:
        """A group's key as shown: none for a stored id."""
        return None if key is None or _STORED.fullmatch(key) else key

    def _name(self, name: str) -> str:
        """An end of an edge: its role when it is a stored id, else as stored with any id
        in it by its kind (an all-caps name, "AWS S3 DEPENDS_ON …", splits the text early)."""
        match = _ONE.fullmatch(name)
        return self._word(match) if match else _STORED.sub(_neutral, name)

    def _word(self, match: re.Match[str]) -> str:
        kind = match.group(1)
        if match.group(0) in self.own:
            return _OWN[kind]
        return f"{_OTHER[kind]} ({match.group(2)[:8]})"


_SOME: Final = {"session": "a session", "project": "a project", "user": "a user", "org": "an organisation"}


def _neutral(match: re.Match[str]) -> str:
    """A stored id someone wrote into a text, in words by its kind and first digits."""
    return f"{_SOME[match.group(1)]} ({match.group(2)[:8]})"


def names_for(scopes: Scopes | None) -> Names:
    """The names of a block served for ``scopes`` (stored ids; None: nobody's own)."""
    if scopes is None:
        return Names()
    own = (scopes.session, scopes.project, scopes.user, scopes.org)
    return Names(frozenset(key for key in own if key), user=scopes.user)
