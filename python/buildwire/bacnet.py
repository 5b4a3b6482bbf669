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
    ...     await client.close()
    ...     await server.stop()
    ...     return value, written
    >>> asyncio.run(main())
    (61.5, 42.5)

Every client and server is also an async context manager that closes or stops it:

    >>> async def main():
    ...     async with bacnet.Server.start("127.0.0.1:0") as server:
    ...         async with bacnet.Client.bind("127.0.0.1:0") as client:
    ...             return await client.read(server.address, "ai,1", "pv")
    >>> asyncio.run(main())
    61.5

Wire tools:

    >>> from buildwire import bacnet
    >>> frame = bacnet.dissect(bytes.fromhex("810b000801001008"))
    >>> frame["apdu"]["service"]
    'who-is'
    >>> bacnet.ObjectIdentifier.parse("ai,1")
    ObjectIdentifier(object_type='analog-input', type_number=0, instance=1)

"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from buildwire import _bacnet_values, _native
from buildwire._bacnet_values import State
from buildwire._lifecycle import AsyncClient, AsyncService, Opening, Subscribing

__all__ = [
    "Client",
    "CovNotification",
    "CovSubscription",
    "ObjectIdentifier",
    "PropertyWrite",
    "Server",
    "State",
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
    """Turn one described element into a Python value.

    Enumerations become :mod:`buildwire.bacnet_enums` members (``units == 62``,
    ``str(units) == "degrees-celsius"``), multi-state values :class:`State`, status flags
    and other constructed values dicts, date-times :class:`datetime.datetime`.
    """
    return _bacnet_values.element_value(element)


def _value(elements: list[dict[str, Any]]) -> Any:
    """Turn a property's elements into one value, or a list when there are several."""
    values = [_element_value(e) for e in elements]
    return values[0] if len(values) == 1 else values


def _result_rows(text: str) -> list[dict[str, Any]]:
    """Turn the rows of a multiple read into dicts with either ``value`` or ``error``."""
    rows = json.loads(text)
    for row in rows:
        result = row.pop("result")
        if "value" in result:
            row["value"] = _value(result["value"])
        else:
            row["error"] = result["error"]
    return rows


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


class Client(AsyncClient):
    """An asyncio BACnet/IP client. Create it with :meth:`Client.bind`.

    Addresses are ``"HOST:PORT"`` (the port defaults to 47808); objects are ``"ai,1"`` or
    ``"analog-input,1"``; properties are names or aliases (``"pv"``, ``"present-value"``).
    Failed requests raise :class:`RuntimeError` with the BACnet error class and code, reject or
    abort reason; requests that get no answer raise :class:`TimeoutError`.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def bind(cls, address: str = "0.0.0.0:0", broadcast: str | None = None) -> Opening[Client]:
        """Bind a client (port 0 picks one); give ``broadcast`` to send Who-Is broadcasts.

        Await it (``client = await Client.bind(...)``) or use it in ``async with``.
        """
        return Opening(cls._bind(address, broadcast))

    @classmethod
    async def _bind(cls, address: str, broadcast: str | None) -> Client:
        return cls(await _native.bacnet_client(address, broadcast))

    @property
    def address(self) -> str:
        """The local address."""
        return self._handle.local_address

    async def read(
        self, device: str, object_id: str, property_id: str, index: int | None = None
    ) -> Any:
        """ReadProperty: one value, or a list for arrays and lists.

        Values come by name: enumerations as :mod:`buildwire.bacnet_enums` members that
        equal their numbers, a multi-state present-value as :class:`State` (its state-text
        read too), status flags as a dict (see docs/bacnet-values.md).

            >>> import asyncio
            >>> async def main():
            ...     async with Server.start("127.0.0.1:0") as device:
            ...         async with Client.bind("127.0.0.1:0") as client:
            ...             units = await client.read(device.address, "ai,1", "units")
            ...             state = await client.read(device.address, "msv,1", "pv")
            ...             return units == 64, str(units), state.name
            >>> asyncio.run(main())
            (True, 'degrees-fahrenheit', 'State 1')
        """
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
        return _result_rows(await self._handle.read_multiple(device, specs))

    async def read_many(
        self, device: str, references: list[tuple[str, str] | tuple[str, str, int | None]]
    ) -> list[dict[str, Any]]:
        """Read many properties of one device, batched for speed.

        ``references`` are ``(object, property)`` or ``(object, property, index)``. They go
        out in ReadPropertyMultiple requests that fit the device (split further when an
        answer would be too long for it), or as single ReadProperty requests to a device
        that does not offer ReadPropertyMultiple (remembered for the next calls); at most
        16 requests are outstanding to one device, each with the client's time limit.
        Returns one dict per reference, in order: ``object``, ``property``, ``index`` and
        either ``value`` or ``error`` (text such as ``"object: unknown-object"``).

            >>> import asyncio
            >>> async def main():
            ...     server = await Server.start("127.0.0.1:0")
            ...     client = await Client.bind("127.0.0.1:0")
            ...     rows = await client.read_many(
            ...         server.address, [("ai,1", "pv"), ("av,1", "priority-array", 16)]
            ...     )
            ...     await client.close()
            ...     await server.stop()
            ...     return [row["value"] for row in rows]
            >>> asyncio.run(main())
            [61.5, None]
        """
        triples = [(r[0], r[1], r[2] if len(r) > 2 else None) for r in references]
        return _result_rows(await self._handle.read_many(device, triples))

    def subscribe(
        self,
        device: str,
        object_id: str,
        property_id: str | None = None,
        *,
        index: int | None = None,
        confirmed: bool = False,
        lifetime: int = 300,
        increment: float | None = None,
    ) -> CovSubscription:
        """Subscribe to change-of-value notifications of an object.

        Without ``property_id`` this is SubscribeCOV (the device reports the object's
        present-value and status-flags); with it, SubscribeCOVProperty of that property
        (``index`` for one array element, ``increment`` for the change of a REAL that counts).
        ``confirmed`` asks for confirmed notifications (each acknowledged by this client);
        ``lifetime`` is in seconds, 0 for no end. The subscription is renewed before its
        lifetime ends and made again when the device announces a restart (I-Am).

        Iterate the returned :class:`CovSubscription` with ``async for``; the first
        notification is the device's initial one. ``async with`` subscribes on entry (so
        errors such as ``object: unknown-object`` raise there) and cancels on exit.

            >>> import asyncio
            >>> async def main():
            ...     server = await Server.start("127.0.0.1:0")
            ...     client = await Client.bind("127.0.0.1:0")
            ...     seen = []
            ...     async with client.subscribe(server.address, "ai,1") as changes:
            ...         async for notification in changes:
            ...             seen.append(notification.values["present-value"])
            ...             if len(seen) == 2:
            ...                 break
            ...             server.set("ai,1", "pv", 63.0)  # a new sensor reading
            ...     await client.close()
            ...     await server.stop()
            ...     return seen
            >>> asyncio.run(main())
            [61.5, 63.0]
        """
        return CovSubscription(
            self._handle, device, object_id, property_id, index, confirmed, lifetime, increment
        )

    async def who_is(
        self, timeout: float = 2.0, low: int | None = None, high: int | None = None
    ) -> list[dict[str, Any]]:
        """Broadcast Who-Is and return the devices that answered within ``timeout`` seconds."""
        result: list[dict[str, Any]] = json.loads(await self._handle.who_is(timeout, low, high))
        return result

    async def close(self) -> None:
        """Stop the client."""
        self._handle.close()


class Server(AsyncService):
    """A simulated BACnet/IP device. Create it with :meth:`Server.start`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def start(
        cls, address: str = "0.0.0.0:47808", objects: str = "stress",
        broadcast: str | None = None,
    ) -> Opening[Server]:  # fmt: skip
        """Start a device on ``address`` (port 0 picks one).

        ``objects`` is ``"stress"`` (the 40-object profile of the bac-py benchmarks),
        ``"large:N"`` (N analog values) or the text of a JSON device file. Await it or use
        it in ``async with``.
        """
        return Opening(cls._start(address, objects, broadcast))

    @classmethod
    async def _start(cls, address: str, objects: str, broadcast: str | None) -> Server:
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
            ...     await client.close()
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
    def cov_subscriptions(self) -> int:
        """How many COV subscriptions clients hold on this device (renewals count once)."""
        return self._handle.cov_subscriptions

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


@dataclass(frozen=True)
class CovNotification:
    """One change-of-value notification (see :meth:`Client.subscribe`)."""

    device: str
    """The device that sent it, e.g. ``"device,400"``."""
    object: str
    """The monitored object, e.g. ``"analog-input,1"``."""
    values: dict[str, Any]
    """Each reported property (``"present-value"``, ``"status-flags"`` ...) and its value."""
    confirmed: bool
    """True when it came as a ConfirmedCOVNotification (already acknowledged)."""
    time_remaining: int
    """Seconds left of the subscription, as the device counts."""
    process: int
    """The subscriber process identifier the subscription uses."""
    address: str
    """The address it came from."""
    timestamp: _dt.datetime
    """When it reached this program (UTC); BACnet notifications carry no time of their own."""


class CovSubscription(Subscribing):
    """A COV subscription: an async iterator of :class:`CovNotification`.

    Made by :meth:`Client.subscribe`. It subscribes when first iterated or entered with
    ``async with``, keeps the subscription alive (renewal, resubscription after a device
    restart) while it is in use, and cancels it on the device at :meth:`cancel`, at the end
    of an ``async with`` block, or when it is garbage collected.
    """

    def __init__(self, client: Any, device: str, *request: Any) -> None:
        self._client = client
        self._device = device
        self._request = request
        self._handle: Any = None

    async def start(self) -> CovSubscription:
        """Subscribe now (once); raises the device's error if it refuses."""
        if self._handle is None:
            self._handle = await self._client.subscribe_cov(self._device, *self._request)
        return self

    @property
    def process_identifier(self) -> int | None:
        """The subscriber process identifier, once subscribed."""
        return None if self._handle is None else self._handle.process_identifier

    async def cancel(self) -> None:
        """Cancel the subscription on the device; iteration then ends."""
        if self._handle is not None:
            await self._handle.cancel()

    def __aiter__(self) -> CovSubscription:
        """Iterate the notifications."""
        return self

    async def __anext__(self) -> CovNotification:
        """Wait for the next notification (subscribing first if needed)."""
        await self.start()
        text = await self._handle.next()
        if text is None:
            raise StopAsyncIteration
        data = json.loads(text)
        return CovNotification(
            device=data["device"],
            object=data["object"],
            values={name: _value(elements) for name, elements in data["values"].items()},
            confirmed=data["confirmed"],
            time_remaining=data["time_remaining"],
            process=data["process"],
            address=data["address"],
            timestamp=_dt.datetime.now(_dt.timezone.utc),
        )

    async def _end(self) -> None:
        await self.cancel()
