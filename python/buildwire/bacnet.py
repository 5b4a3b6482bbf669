"""BACnet tools: datagram dissection and name lookups.

The BACnet client and server APIs arrive with the BACnet core issue; what is here wraps the
Rust wire layers that exist today.

Example:
    >>> from buildwire import bacnet
    >>> frame = bacnet.dissect(bytes.fromhex("810b000801001008"))
    >>> frame["apdu"]["service"]
    'who-is'
    >>> bacnet.ObjectIdentifier.parse("ai,1")
    ObjectIdentifier(object_type='analog-input', type_number=0, instance=1)

"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from buildwire import _native

__all__ = ["ObjectIdentifier", "dissect", "property_identifier"]


class ObjectIdentifier(NamedTuple):
    """A BACnet object identifier: object type and instance number."""

    object_type: str
    type_number: int
    instance: int

    @classmethod
    def parse(cls, text: str) -> ObjectIdentifier:
        """Parse ``"ai,1"``, ``"analog-input,1"`` or ``"analog-input:1"``.

        Raises:
            ValueError: when the text names no object type or the instance is out of range.

        """
        return cls(*_native.bacnet_parse_object_identifier(text))

    def __str__(self) -> str:
        """Format as ``analog-input,1``."""
        return f"{self.object_type},{self.instance}"


def property_identifier(name: str) -> tuple[str, int]:
    """Resolve a property name or alias to its standard name and number.

    >>> property_identifier("pv")
    ('present-value', 85)

    Raises:
        ValueError: when the name is unknown.

    """
    return _native.bacnet_property(name)


def dissect(datagram: bytes) -> dict[str, Any]:
    """Decode a BACnet/IP datagram layer by layer.

    Returns a dict with a key per decoded layer (``bvll``, ``npdu``, ``apdu``, ``payload``)
    and, when decoding stopped early, ``error`` with the layer, the byte offset in the
    datagram and the message. Malformed input never raises.
    """
    result: dict[str, Any] = json.loads(_native.bacnet_dissect(datagram))
    return result
