"""Reading chat histories for ``memledger import``: pure parsing of a file's text into
conversations of turns, and of its bad lines into refusals (no I/O, no clock).

Three shapes, detected per line (``auto``) or forced (``turns``, ``messages``):

- memledger's own turn: ``{"role", "text", "scopes"?, "session"?, "turn_id"?,
  "occurred_at"?, "speaker"?, "subject"?, "actor"?}``, one per line;
- a conversation: ``{"messages": [{"role", "content", "name"?, "timestamp"?}],
  "session"? | "id"? | "conversation_id"?, "title"?}``, one per line;
- a bare list of messages, one conversation per line.

A whole file that is one JSON document (a pretty-printed list of messages, one
conversation object, or a list of conversation objects) is read as such.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal, cast, get_args

import msgspec

from memledger.events.catalogue import Role, Scopes

Format = Literal["auto", "turns", "messages"]
FORMATS: tuple[Format, ...] = get_args(Format)
ROLES: tuple[str, ...] = get_args(Role)
# Above this an epoch number is read as milliseconds: as seconds it would be past the year 5000.
EPOCH_MS_FROM = 100_000_000_000
MAX_SOURCE_CHARS = 150  # a derived session is "<source>:<line>" and a scope key holds 200


@dataclass(frozen=True)
class ImportedTurn:
    """One turn as ``record.TurnInput`` takes it; ``turn_id`` is always set."""

    role: Role
    text: str
    scopes: Scopes
    turn_id: str
    occurred_at: datetime | None = None
    speaker: str | None = None
    subject: str | None = None
    actor: str | None = None


@dataclass(frozen=True)
class Conversation:
    """Turns appended together, all or nothing: a conversation, or consecutive turn
    lines of one session (``from_turn_lines``). ``line`` is where it starts, ``lines``
    all of its lines."""

    line: int
    turns: tuple[ImportedTurn, ...]
    lines: tuple[int, ...]
    from_turn_lines: bool = False


@dataclass(frozen=True)
class Refusal:
    """A line (or conversation) that was not imported, and why."""

    line: int
    reason: str


@dataclass(frozen=True)
class Parsed:
    """What a source holds: its conversations, in order, and its refused lines."""

    conversations: tuple[Conversation, ...]
    refused: tuple[Refusal, ...]

    @property
    def turns(self) -> int:
        """How many turns the conversations hold."""
        return sum(len(c.turns) for c in self.conversations)


class BadLine(ValueError):
    """A line that cannot be imported; ``str`` says which field and why."""


class _TurnLine(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    role: Role
    text: str
    scopes: Scopes = Scopes()
    session: str | None = None
    turn_id: str | None = None
    occurred_at: str | int | float | None = None
    speaker: str | None = None
    subject: str | None = None
    actor: str | None = None


def parse(text: str, *, source: str, defaults: Scopes = Scopes(), fmt: Format = "auto", first_line: int = 1) -> Parsed:
    """The conversations and refusals of ``text`` (a file's whole content). ``source``
    names the file (its base name, or "stdin"): turn ids and sessions that the source
    lacks are derived from it, so importing the same file again derives the same ones.
    ``defaults`` fills the scope keys a turn does not give. ``first_line`` numbers the
    first line (a later part of a file sent on its own keeps the file's numbers)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    source = source[:MAX_SOURCE_CHARS]
    conversations: list[Conversation] = []
    refused: list[Refusal] = []
    for line, value in _documents(text, first_line):
        try:
            conversations.append(_parse_value(value, line, source, defaults, fmt))
        except BadLine as e:
            refused.append(Refusal(line, str(e)))
    return Parsed(tuple(_grouped(conversations)), tuple(refused))


def _documents(text: str, first_line: int) -> Iterator[tuple[int, object]]:
    """(line, decoded value) of each non-blank line; a whole-file JSON document (one or
    more conversations) as its items, numbered from ``first_line``. A line that is not
    JSON is a ``BadLine`` value, refused by ``_parse_value``."""
    whole = _whole_document(text)
    if whole is not None:
        yield from enumerate(whole, start=first_line)
        return
    for number, line in enumerate(text.splitlines(), start=first_line):
        if line.strip():
            try:
                yield number, msgspec.json.decode(line)
            except msgspec.DecodeError as e:
                yield number, BadLine(f"not JSON ({e})")


def _whole_document(text: str) -> list[object] | None:
    """The conversations of a file that is one JSON document; None for JSON lines."""
    if "\n" not in text.strip():
        return None  # one line: read as a line, which numbers it 1 all the same
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return None
    if isinstance(value, list) and value and all(isinstance(v, dict) and "messages" in v for v in value):
        return list(value)
    return [value]


def _parse_value(value: object, line: int, source: str, defaults: Scopes, fmt: Format) -> Conversation:
    if isinstance(value, BadLine):
        raise value
    if isinstance(value, list) or (isinstance(value, dict) and "messages" in value):
        if fmt == "turns":
            raise BadLine("a conversation, but --format turns takes one memledger turn per line")
        return _conversation(value, line, source, defaults)
    if isinstance(value, dict) and "role" in value:
        if fmt == "messages":
            raise BadLine("a turn, but --format messages takes one conversation per line")
        if "content" in value and "text" not in value:
            raise BadLine(
                'a single {"role", "content"} message: put a conversation\'s messages in one list'
                ' (or {"messages": [...]}) per line, or give memledger\'s turn shape with "text"'
            )
        turn = _turn_line(value, line, source, defaults)
        return Conversation(line, (turn,), (line,), from_turn_lines=True)
    raise BadLine('neither a turn ({"role", "text"}) nor a conversation (a list of messages or {"messages": [...]})')


def _turn_line(value: dict[str, Any], line: int, source: str, defaults: Scopes) -> ImportedTurn:
    try:
        given = msgspec.convert(value, _TurnLine)
    except msgspec.ValidationError as e:
        raise BadLine(str(e)) from None
    scopes = given.scopes if given.session is None else msgspec.structs.replace(given.scopes, session=given.session)
    scopes = _with_defaults(scopes, defaults)
    return ImportedTurn(
        role=given.role,
        text=given.text,
        scopes=scopes,
        turn_id=given.turn_id if given.turn_id is not None else turn_id(f"{source}:{line}", 0, given.role, given.text),
        occurred_at=timestamp(given.occurred_at, "occurred_at"),
        speaker=given.speaker,
        subject=given.subject,
        actor=given.actor,
    )


def _conversation(value: list[Any] | dict[str, Any], line: int, source: str, defaults: Scopes) -> Conversation:
    messages = value if isinstance(value, list) else value["messages"]
    if not isinstance(messages, list) or not messages:
        raise BadLine("messages must be a non-empty list")
    key = _conversation_key(value, f"{source}:{line}")
    scopes = _with_defaults(Scopes(session=key), defaults)
    turns = []
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        role, text, speaker, when = _message(message, where)
        turns.append(ImportedTurn(role, text, scopes, turn_id(key, index, role, text), when, speaker))
    return Conversation(line, tuple(turns), (line,))


def _conversation_key(value: list[Any] | dict[str, Any], derived: str) -> str:
    """The conversation's session: its own ``session``, ``id`` or ``conversation_id``,
    else ``derived`` (the source and line)."""
    if isinstance(value, dict):
        for name in ("session", "id", "conversation_id"):
            given = value.get(name)
            if isinstance(given, str | int) and not isinstance(given, bool) and str(given).strip():
                return str(given)
            if given is not None:
                raise BadLine(f"{name} must be a non-blank string or a number, not {given!r}")
    return derived


def _message(message: object, where: str) -> tuple[Role, str, str | None, datetime | None]:
    if not isinstance(message, dict):
        raise BadLine(f"{where} must be an object with role and content, not {type(message).__name__}")
    role = message.get("role")
    if role not in ROLES:
        raise BadLine(f"{where}.role must be one of {', '.join(ROLES)}, not {role!r}")
    text = _content(message.get("content"), f"{where}.content")
    name = message.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise BadLine(f"{where}.name must be a non-blank string, not {name!r}")
    stamp_field = "timestamp" if "timestamp" in message else "created_at"
    when = timestamp(message.get(stamp_field), f"{where}.{stamp_field}")
    return cast(Role, role), text, name, when


def _content(content: object, where: str) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if parts:
            return "\n".join(parts)
    raise BadLine(f"{where} must be a string or a list of text parts, not {type(content).__name__}")


def timestamp(value: object, where: str) -> datetime | None:
    """An ISO 8601 time with its timezone, or epoch seconds or milliseconds (UTC); a
    time without a timezone is refused, as the API refuses it."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if abs(value) >= EPOCH_MS_FROM else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise BadLine(f"{where} {value!r} is out of range") from None
    if not isinstance(value, str):
        raise BadLine(f"{where} must be an ISO 8601 time or epoch seconds, not {type(value).__name__}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise BadLine(f"{where} {value!r} is not an ISO 8601 time") from None
    if parsed.utcoffset() is None:
        raise BadLine(f"{where} {value!r} needs a timezone (e.g. 2026-11-21T10:42:00+00:00)")
    return parsed


def turn_id(identity: str, index: int, role: str, text: str) -> str:
    """A turn id for a source that has none: the same for the same source identity
    (a conversation's id, or source and line), position, role and text, in any tenant."""
    digest = hashlib.sha256(msgspec.json.encode([identity, index, role, text])).hexdigest()
    return f"imp-{digest[:32]}"


def _with_defaults(scopes: Scopes, defaults: Scopes) -> Scopes:
    return Scopes(
        session=scopes.session or defaults.session,
        project=scopes.project or defaults.project,
        user=scopes.user or defaults.user,
        org=scopes.org or defaults.org,
    )


def _grouped(conversations: Sequence[Conversation]) -> Iterator[Conversation]:
    """Consecutive turn lines of one session as one conversation (one append); each
    conversation of messages as itself."""
    pending: Conversation | None = None
    for conversation in conversations:
        if conversation.from_turn_lines and pending is not None and _same_session(pending, conversation):
            lines = pending.lines + conversation.lines
            pending = replace(pending, turns=pending.turns + conversation.turns, lines=lines)
            continue
        if pending is not None:
            yield pending
            pending = None
        if conversation.from_turn_lines:
            pending = conversation
        else:
            yield conversation
    if pending is not None:
        yield pending


def _same_session(a: Conversation, b: Conversation) -> bool:
    return a.turns[-1].scopes.session == b.turns[0].scopes.session
