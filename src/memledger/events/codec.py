"""Encode events to JSON and decode them back, upcasting old versions.

Pure functions. ``encode`` validates (msgspec validates only when decoding, so an
event built in code is checked by decoding what was encoded); ``decode`` turns a
stored payload into its Struct, through the upcaster chain when it is old.

Erasable content (``split``, ``decode_stored``): an event's ``private_fields`` are
stored apart from its payload, with a random salt, and the payload keeps only a
digest of them, so the hash chain (which covers the payload) still detects any
change to them while they exist, and erasing them leaves the chain intact.
"""

from __future__ import annotations

import hashlib
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import msgspec

from memledger.errors import EventDecodeError, InvalidEvent, UnknownEventType
from memledger.events.catalogue import ALL_EVENT_TYPES, Event
from memledger.events.upcasters import upcast

_BY_TAG: dict[str, type[Event]] = {str(cls.__struct_config__.tag): cls for cls in ALL_EVENT_TYPES}
_ENCODER = msgspec.json.Encoder()
_DECODERS = {tag: msgspec.json.Decoder(cls) for tag, cls in _BY_TAG.items()}
_MISSING = re.compile(r"^Object missing required field `([^`]*)`")
_PATH = re.compile(r" - at `([^`]*)`$")


def event_class(tag: str) -> type[Event]:
    """The Struct for a tag; ``UnknownEventType`` if there is none."""
    try:
        return _BY_TAG[tag]
    except KeyError:
        raise UnknownEventType(tag) from None


def tag_of(event: Event | type[Event]) -> str:
    """The stable tag of an event or event class."""
    cls = event if isinstance(event, type) else type(event)
    config = getattr(cls, "__struct_config__", None)
    tag = None if config is None else config.tag
    if not isinstance(tag, str) or _BY_TAG.get(tag) is not cls:
        raise UnknownEventType(cls.__name__)
    return tag


def known_tags() -> tuple[str, ...]:
    """Every tag of the catalogue, sorted."""
    return tuple(sorted(_BY_TAG))


def _split(error: msgspec.ValidationError) -> tuple[str, str]:
    text = str(error)
    match = _PATH.search(text)
    path, message = ("$", text) if match is None else (match.group(1), text[: match.start()])
    missing = _MISSING.match(message)
    if missing is not None:
        path = f"{path}.{missing.group(1)}"
    return path, message


def encode(event: Event) -> bytes:
    """JSON bytes of an event, after checking it against its type's rules.

    Raises ``UnknownEventType`` for a type outside the catalogue and
    ``InvalidEvent`` (naming the field) for a value that breaks the rules.
    """
    tag = tag_of(event)
    try:
        data = _ENCODER.encode(event)
        decoded = _DECODERS[tag].decode(data)
    except msgspec.ValidationError as e:
        field, message = _split(e)
        raise InvalidEvent(tag, field, message) from e
    except UnicodeEncodeError as e:
        path = _find(msgspec.to_builtins(event), "$", _unencodable) or "$"
        raise InvalidEvent(tag, path, "holds a character UTF-8 cannot encode (a lone surrogate)") from e
    except (TypeError, msgspec.EncodeError, RecursionError) as e:
        raise InvalidEvent(tag, "$", str(e)) from e
    if decoded != event:  # e.g. bytes given for a str field, which msgspec encodes as base64
        raise InvalidEvent(tag, _first_difference(event, decoded), "has a value of the wrong type")
    if b"\\u0000" in data:  # cheap test first; the walk finds the field, if any
        nul_path = _find(msgspec.to_builtins(event), "$", lambda text: "\x00" in text)
        if nul_path is not None:
            raise InvalidEvent(tag, nul_path, "holds a NUL character, which PostgreSQL cannot store")
    return data


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _first_difference(event: Event, decoded: Event) -> str:
    for name in event.__struct_fields__:
        if getattr(event, name) != getattr(decoded, name):
            return f"$.{name}"
    return "$"


def _find(value: Any, path: str, bad: Callable[[str], bool]) -> str | None:
    """The first path whose string is ``bad``, or None."""
    if isinstance(value, str):
        return path if bad(value) else None
    if isinstance(value, dict):
        if any(bad(key) for key in value):
            return path  # a bad key: its map is named (the key itself might not print)
        pairs: Any = value.items()
    elif isinstance(value, list | tuple):
        pairs = ((f"[{i}]", item) for i, item in enumerate(value))
    else:
        return None
    for key, item in pairs:
        step = f"{path}{key}" if key.startswith("[") else f"{path}.{key}"
        found = _find(item, step, bad)
        if found is not None:
            return found
    return None


def decode(tag: str, version: int, payload: bytes | str) -> Event:
    """The event a stored payload holds, upcast to the current version.

    Raises ``UnknownEventType`` for an unknown tag and ``EventDecodeError``
    (naming the event and the field) for a payload that does not fit.
    """
    cls = event_class(tag)
    current = cls.schema_version
    if not isinstance(version, int) or isinstance(version, bool):
        raise EventDecodeError(tag, "schema_version", f"must be an int, not {version!r}")
    try:
        if version == current:
            return _DECODERS[tag].decode(payload)
        if version > current or version < 1:
            raise EventDecodeError(tag, "schema_version", f"unsupported version {version}")
        data: Any = msgspec.json.decode(payload)
        if not isinstance(data, dict):
            raise EventDecodeError(tag, "$", "payload is not a JSON object")
        try:
            data = upcast(tag, version, current, data)
        except KeyError as e:
            raise EventDecodeError(tag, "schema_version", f"no upcaster for {e}") from e
        return msgspec.convert(data, cls)
    except msgspec.ValidationError as e:
        field, message = _split(e)
        raise EventDecodeError(tag, field, message) from e
    except (msgspec.DecodeError, RecursionError, UnicodeError) as e:  # UnicodeError: not UTF-8, or a lone surrogate
        raise EventDecodeError(tag, "$", str(e) or type(e).__name__) from e


# --- erasable content -----------------------------------------------------------

DIGEST_KEY = "_private"  # in the payload: sha256 of the salt and the private fields
SALT_KEY = "_salt"  # in the private part: the random salt of that digest
ERASED = "[erased]"  # what an erased text field reads as
_DIGEST_MARK = f'"{DIGEST_KEY}"'
_SORTED = msgspec.json.Encoder(order="sorted")


class Split(NamedTuple):
    """An event as the ledger stores it: the chained payload, and the private part
    (None for an event without private fields); ``size`` is the length of the
    event's whole JSON (``encode``), which payload limits are about."""

    payload: bytes
    private: bytes | None
    size: int


def private_digest(salt: str, fields: Mapping[str, Any]) -> str:
    """sha256 over the salt and the private fields' canonical JSON (keys sorted).

    The fields are strings, lists of strings or None, so the JSON is the same
    whether made from the event or from what PostgreSQL returns.
    """
    digest = hashlib.sha256(salt.encode())
    digest.update(b"\x1f")
    digest.update(_SORTED.encode(dict(fields)))
    return digest.hexdigest()


def split(event: Event, salt: str) -> Split:
    """The payload (private fields replaced by their digest) and the private part
    (the fields and ``salt``). Validates as ``encode`` does; ``salt`` must be random
    (the caller's: this module is pure), so a digest of a short text cannot be
    found by trying candidates."""
    data = encode(event)
    names = type(event).private_fields
    if not names:
        return Split(data, None, len(data))
    if not salt:
        raise ValueError("a salt is needed to split an event with private fields")
    public = msgspec.json.decode(data)
    private = {name: public.pop(name) for name in names if name in public}
    public[DIGEST_KEY] = private_digest(salt, private)
    private[SALT_KEY] = salt
    return Split(_ENCODER.encode(public), _ENCODER.encode(private), len(data))


def decode_stored(tag: str, version: int, payload: str, private: str | None) -> tuple[Event, bool]:
    """The event a stored row holds, and whether it was erased.

    With its private part, the two JSON objects are joined as text (their keys
    never overlap) and decoded in one pass. Without it, the event is either one
    stored before private parts existed (its fields are in the payload) or an
    erased one, whose private fields read as ``ERASED`` (or their default, or empty).
    """
    if private is not None:
        return decode(tag, version, payload[:-1] + ", " + private[1:]), False
    cls = event_class(tag)
    if not cls.private_fields or _DIGEST_MARK not in payload:
        return decode(tag, version, payload), False
    return _decode_erased(cls, tag, version, payload), True


def decode_joined(tag: str, version: int, joined: bytes | str, digest_only: bool) -> tuple[Event, bool]:
    """``decode_stored`` of a row whose payload and private part were joined into one
    object before decoding (PostgreSQL's ``payload || private``). ``digest_only``: the
    row has no private part and its payload holds the key ``DIGEST_KEY``, so it is
    erased if its type has private fields."""
    if digest_only:
        cls = event_class(tag)
        if cls.private_fields:
            text = joined if isinstance(joined, str) else joined.decode()
            return _decode_erased(cls, tag, version, text), True
    return decode(tag, version, joined), False


def _decode_erased(cls: type[Event], tag: str, version: int, payload: str) -> Event:
    try:
        data: Any = msgspec.json.decode(payload)
        if not isinstance(data, dict):
            raise EventDecodeError(tag, "$", "payload is not a JSON object")
        if version < cls.schema_version:
            data = upcast(tag, version, cls.schema_version, data)
        for name, value in _placeholders(cls).items():
            data.setdefault(name, value)
        return msgspec.convert(data, cls)
    except msgspec.ValidationError as e:
        field, message = _split(e)
        raise EventDecodeError(tag, field, message) from e
    except KeyError as e:
        raise EventDecodeError(tag, "schema_version", f"no upcaster for {e}") from e
    except (msgspec.DecodeError, RecursionError) as e:
        raise EventDecodeError(tag, "$", str(e) or type(e).__name__) from e


_PLACEHOLDERS: dict[type[Event], dict[str, Any]] = {}


def _placeholders(cls: type[Event]) -> dict[str, Any]:
    """What each private field of ``cls`` reads as once erased: its default if it
    has one, () for a required tuple, else ``ERASED``."""
    found = _PLACEHOLDERS.get(cls)
    if found is None:
        found = {}
        for info in msgspec.structs.fields(cls):
            if info.name not in cls.private_fields:
                continue
            if info.default is not msgspec.NODEFAULT:
                found[info.name] = msgspec.to_builtins(info.default)
            elif info.default_factory is not msgspec.NODEFAULT:
                found[info.name] = msgspec.to_builtins(info.default_factory())
            else:
                found[info.name] = [] if _is_tuple(info.type) else ERASED
        _PLACEHOLDERS[cls] = found
    return found


def _is_tuple(annotation: Any) -> bool:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return typing.get_origin(annotation) is tuple or annotation is tuple


def is_erased(payload: str, private: str | None) -> bool:
    """Whether a stored row is an event whose private part was erased."""
    return private is None and _DIGEST_MARK in payload


def private_intact(payload: str, private: str | None) -> bool:
    """Whether a stored row's private part still matches the digest in its payload.

    True for a row without one (erased, or an event with no private fields, or
    one stored before they existed); False if the private part was changed, or
    appears where the payload names no digest.
    """
    if private is None:
        return True
    try:
        public = msgspec.json.decode(payload)
        fields = msgspec.json.decode(private)
    except msgspec.DecodeError:
        return False
    if not isinstance(public, dict) or not isinstance(fields, dict):
        return False
    digest, salt = public.get(DIGEST_KEY), fields.pop(SALT_KEY, None)
    if not isinstance(digest, str) or not isinstance(salt, str):
        return False
    return private_digest(salt, fields) == digest
