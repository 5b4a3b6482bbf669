"""BACnet/IP for Python: an asyncio client and device server, datagram dissection and names.

Example (a simulated 40-object device and a client reading from it):

    >>> import asyncio
    >>> from buildwire import bacnet
    >>> async def main():
    ...     server = await bacnet.Server.start("127.0.0.1:0")
    ...     client = await bacnet.Client.bind("127.0.0.1:0")
    ...     value = await client.read(server.address, "ai,1", "pv")
    ...     await client.write(server.address, "av,1", "pv", 42.5, priority=8)
    ...     written = await client.read(server.address, "av,1", "pv")
    ...     client.close()
    ...     await server.stop()
    ...     return value, written
    >>> asyncio.run(main())
    (61.5, 42.5)

Wire tools:

    >>> from buildwire import bacnet
    >>> frame = bacnet.dissect(bytes.fromhex("810b000801001008"))
    >>> frame["apdu"]["service"]
    'who-is'
    >>> bacnet.ObjectIdentifier.parse("ai,1")
    ObjectIdentifier(object_type='analog-input', type_number=0, instance=1)

"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from buildwire import _native

__all__ = [
    "Client",
    "ObjectIdentifier",
    "PropertyWrite",
    "Server",
    "dissect",
    "property_identifier",
]


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


def _element_value(element: dict[str, Any]) -> Any:
    """Turn one tagged element into a Python value (constructed data becomes a list)."""
    if "children" in element:
        return [_element_value(c) for c in element["children"]]
    if "context" in element:
        return {"context": element["context"], "hex": element["hex"]}
    return element["value"]


def _value(elements: list[dict[str, Any]]) -> Any:
    """Turn a property's elements into one value, or a list when there are several."""
    values = [_element_value(e) for e in elements]
    return values[0] if len(values) == 1 else values


def _text(value: Any) -> tuple[str, str | None]:
    """Give the text and datatype the Rust side parses for a Python value."""
    if value is None:
        return "null", "null"
    if isinstance(value, bool):
        return ("true" if value else "false"), "boolean"
    if isinstance(value, float):
        return repr(value), None
    if isinstance(value, int):
        return str(value), None
    return str(value), None


class Client:
    """An asyncio BACnet/IP client. Create it with :meth:`Client.bind`.

    Addresses are ``"HOST:PORT"`` (the port defaults to 47808); objects are ``"ai,1"`` or
    ``"analog-input,1"``; properties are names or aliases (``"pv"``, ``"present-value"``).
    Failed requests raise :class:`RuntimeError` with the BACnet error class and code, reject or
    abort reason; requests that get no answer raise :class:`TimeoutError`.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    async def bind(cls, address: str = "0.0.0.0:0", broadcast: str | None = None) -> Client:
        """Bind a client (port 0 picks one); give ``broadcast`` to send Who-Is broadcasts."""
        return cls(await _native.bacnet_client(address, broadcast))

    @property
    def address(self) -> str:
        """The local address."""
        return self._handle.local_address

    async def read(
        self, device: str, object_id: str, property_id: str, index: int | None = None
    ) -> Any:
        """ReadProperty: one value, or a list for arrays and lists."""
        return _value(json.loads(await self._handle.read(device, object_id, property_id, index)))

    async def write(
        self,
        device: str,
        object_id: str,
        property_id: str,
        value: float | int | str | bool | None,
        priority: int | None = None,
        index: int | None = None,
        value_type: str | None = None,
    ) -> None:
        """Write a property (WriteProperty).

        ``None`` relinquishes a priority; binary present-values take ``"active"``/``"inactive"``
        or 1/0. ``value_type`` forces the datatype (``"real"``, ``"unsigned"``,
        ``"enumerated"``, ``"boolean"``, ``"string"``, ...).
        """
        text, guessed = _text(value)
        await self._handle.write(
            device, object_id, property_id, text, priority, index, value_type or guessed
        )

    async def read_multiple(
        self, device: str, specs: list[tuple[str, list[str]]]
    ) -> list[dict[str, Any]]:
        """ReadPropertyMultiple of ``[(object, [property, ...]), ...]``.

        Returns one dict per property: ``object``, ``property``, ``index`` and either
        ``value`` or ``error``.
        """
        rows = json.loads(await self._handle.read_multiple(device, specs))
        out = []
        for row in rows:
            result = row.pop("result")
            if "value" in result:
                row["value"] = _value(result["value"])
            else:
                row["error"] = result["error"]
            out.append(row)
        return out

    async def who_is(
        self, timeout: float = 2.0, low: int | None = None, high: int | None = None
    ) -> list[dict[str, Any]]:
        """Broadcast Who-Is and return the devices that answered within ``timeout`` seconds."""
        result: list[dict[str, Any]] = json.loads(await self._handle.who_is(timeout, low, high))
        return result

    def close(self) -> None:
        """Stop the client."""
        self._handle.close()


class Server:
    """A simulated BACnet/IP device. Create it with :meth:`Server.start`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    async def start(
        cls, address: str = "0.0.0.0:47808", objects: str = "stress",
        broadcast: str | None = None,
    ) -> Server:  # fmt: skip
        """Start a device on ``address`` (port 0 picks one).

        ``objects`` is ``"stress"`` (the 40-object profile of the bac-py benchmarks),
        ``"large:N"`` (N analog values) or the text of a JSON device file.
        """
        return cls(await _native.bacnet_serve(address, objects, broadcast))

    @property
    def address(self) -> str:
        """The address the device listens on."""
        return self._handle.local_address

    @property
    def object_count(self) -> int:
        """How many objects it serves, the Device included."""
        return self._handle.object_count

    def add_object(self, spec: dict[str, Any]) -> str:
        """Add an object described as in a JSON device file; returns its identifier.

        Required keys: ``type`` (a name or alias such as ``"av"``), ``instance`` and ``name``;
        optional: ``present_value``, ``units``, ``commandable``, ``out_of_service``,
        ``description``, ``min_pres_value``, ``max_pres_value``, ``state_text``,
        ``number_of_states``, ``priority``, ``ack_required``. Raises :class:`ValueError`
        with the field at fault, or with the BACnet error (``object:
        object-identifier-already-exists``, ``object: duplicate-name``).

            >>> import asyncio
            >>> async def main():
            ...     server = await Server.start("127.0.0.1:0")
            ...     added = server.add_object({"type": "av", "instance": 50, "name": "Setpoint",
            ...                                "present_value": 21.0, "commandable": True,
            ...                                "units": "degrees-celsius"})
            ...     count = server.object_count
            ...     await server.stop()
            ...     return added, count
            >>> asyncio.run(main())
            ('analog-value,50', 41)
        """
        return self._handle.add_object(json.dumps(spec))

    def remove_object(self, object_id: str) -> None:
        """Remove an object (not the Device); raises :class:`ValueError` if unknown."""
        self._handle.remove_object(object_id)

    def get(self, object_id: str, property_id: str, index: int | None = None) -> Any:
        """Read a property of this device locally (as a client's ``read`` would)."""
        return _value(json.loads(self._handle.get(object_id, property_id, index)))

    def set(
        self, object_id: str, property_id: str, value: Any, value_type: str | None = None
    ) -> None:
        """Set a property locally, without the network's access rules.

        For a simulated sensor's new reading (``set("ai,1", "pv", 22.5)``), a status change,
        a renamed object. Network clients see the new value on their next read. Only single
        primitive values; ``value_type`` forces the datatype (``"real"``, ``"unsigned"``,
        ``"enumerated"`` ...).
        """
        text, guessed = _text(value)
        self._handle.set(object_id, property_id, text, value_type or guessed)

    async def writes(self) -> AsyncIterator[PropertyWrite]:
        """Every property a network client changes, as it happens, until the device stops.

        Writes are queued from the start (up to 4,096; beyond that the newest are dropped and
        counted in :attr:`dropped_writes`). ``value`` is the property's whole value after
        the write: for a commandable present-value, the winner of the priority array.

            >>> import asyncio
            >>> async def main():
            ...     server = await Server.start("127.0.0.1:0")
            ...     client = await Client.bind("127.0.0.1:0")
            ...     await client.write(server.address, "av,1", "pv", 19.5, priority=8)
            ...     async for write in server.writes():
            ...         break
            ...     client.close()
            ...     await server.stop()
            ...     return write.object, write.property, write.value
            >>> asyncio.run(main())
            ('analog-value,1', 'present-value', 19.5)
        """
        while True:
            event = await self._handle.next_write()
            if event is None:
                return
            data = json.loads(event)
            yield PropertyWrite(data["object"], data["property"], _value(data["value"]))

    @property
    def dropped_writes(self) -> int:
        """Network writes lost because :meth:`writes` was not read fast enough."""
        return self._handle.dropped_writes

    async def stop(self) -> None:
        """Stop the device."""
        await self._handle.stop()


@dataclass(frozen=True)
class PropertyWrite:
    """One property a network client changed (see :meth:`Server.writes`)."""

    object: str
    """The object, e.g. ``"analog-value,1"``."""
    property: str
    """The property, e.g. ``"present-value"``."""
    value: Any
    """The property's value after the write."""
