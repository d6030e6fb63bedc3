"""Encode events to JSON and decode them back, upcasting old versions.

Pure functions. ``encode`` validates (msgspec validates only when decoding, so an
event built in code is checked by decoding what was encoded); ``decode`` turns a
stored payload into its Struct, through the upcaster chain when it is old.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from memledger.errors import EventDecodeError, InvalidEvent, UnknownEventType
from memledger.events.catalogue import ALL_EVENT_TYPES, Event
from memledger.events.upcasters import upcast

_BY_TAG: dict[str, type[Event]] = {
    str(cls.__struct_config__.tag): cls for cls in ALL_EVENT_TYPES
}
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
    except (msgspec.DecodeError, RecursionError) as e:
        raise EventDecodeError(tag, "$", str(e) or type(e).__name__) from e
