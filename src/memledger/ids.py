"""Typed identifiers. They are plain strings and ints at run time."""

from typing import NewType

TenantId = NewType("TenantId", str)
StreamId = NewType("StreamId", str)
EventId = NewType("EventId", str)
Position = NewType("Position", int)
MemoryId = NewType("MemoryId", str)
