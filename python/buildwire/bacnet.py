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
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from buildwire import _bacnet_values, _native
from buildwire._bacnet_values import State
from buildwire._lifecycle import AsyncClient, AsyncService, Opening, Subscribing
from buildwire.bacnet_errors import (
    BacnetAbort,
    BacnetError,
    BacnetErrorResponse,
    BacnetListError,
    BacnetReject,
    BacnetTimeoutError,
    BacnetWriteMultipleError,
)
from buildwire.bacnet_services import ClientServices, IHave, LogRecord, ReadRangeResult, Write

__all__ = [
    "BacnetAbort",
    "BacnetError",
    "BacnetErrorResponse",
    "BacnetListError",
    "BacnetReject",
    "BacnetTimeoutError",
    "BacnetWriteMultipleError",
    "Client",
    "CovNotification",
    "CovSubscription",
    "IHave",
    "LogRecord",
    "ObjectIdentifier",
    "PropertyWrite",
    "ReadRangeResult",
    "Server",
    "State",
    "Write",
    "dissect",
    "property_identifier",
]

_log = logging.getLogger("buildwire.bacnet")


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


_element_value = _bacnet_values.element_value
_value = _bacnet_values.property_value


def _result_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Name the values of a multiple read's rows (each has ``value`` or ``error``)."""
    for row in rows:
        if "value" in row:
            row["value"] = _value(row["value"])
    return rows


class Client(ClientServices, AsyncClient):
    r"""An asyncio BACnet/IP client. Create it with :meth:`Client.bind`.

    Addresses are ``"HOST:PORT"`` (the port defaults to 47808); objects are ``"ai,1"`` or
    ``"analog-input,1"``; properties are names or aliases (``"pv"``, ``"present-value"``).

    Every request waits ``timeout`` seconds for its answer and is sent again up to
    ``retries`` times (the client's, from :meth:`bind`, or the call's own ``timeout=`` and
    ``retries=``). Failures raise the :class:`BacnetError` family:
    :class:`BacnetErrorResponse` (error class and code), :class:`BacnetReject`,
    :class:`BacnetAbort`, and :class:`BacnetTimeoutError`, an :class:`asyncio.TimeoutError`,
    when no answer came. Arguments the client cannot use raise :class:`ValueError`.

        >>> import asyncio
        >>> async def main():
        ...     async with Server.start("127.0.0.1:0") as server, \
        ...                Client.bind("127.0.0.1:0") as client:
        ...         try:
        ...             await client.read(server.address, "ai,99", "pv")
        ...         except BacnetErrorResponse as error:
        ...             return error.error_class, error.error_code, error.error_code_number
        >>> asyncio.run(main())
        ('object', 'unknown-object', 31)

    The other services (Who-Has, ReadRange, WritePropertyMultiple, list elements, device
    communication control, reinitialization, time synchronization) are described in
    :mod:`buildwire.bacnet_services`.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def bind(
        cls,
        address: str = "0.0.0.0:0",
        broadcast: str | None = None,
        *,
        port: int | None = None,
        timeout: float = 3.0,
        retries: int = 3,
    ) -> Opening[Client]:
        """Bind a client (port 0 picks one).

        Broadcasts (Who-Is, Who-Has, time synchronization) go to ``broadcast`` (default:
        the broadcast address of ``address``'s subnet, 127.255.255.255 on loopback) on
        ``port``: by default 47808, the standard port, when ``address`` has port 0, else
        the client's own port. :attr:`broadcast_address` says where they go.

        ``timeout`` is how long each attempt of a request waits for the answer (seconds)
        and ``retries`` how often it is sent again: a silent device raises
        :class:`BacnetTimeoutError` after ``timeout * (retries + 1)`` seconds (12 s by
        default). Each call may set its own.

        Await it (``client = await Client.bind(...)``) or use it in ``async with``.

            >>> import asyncio
            >>> async def main():
            ...     async with Client.bind("127.0.0.1:0", timeout=0.5, retries=1) as client:
            ...         return client.broadcast_address, client.timeout, client.retries
            >>> asyncio.run(main())
            ('127.255.255.255:47808', 0.5, 1)
        """
        return Opening(cls._bind(address, broadcast, port, timeout, retries))

    @classmethod
    async def _bind(
        cls, address: str, broadcast: str | None, port: int | None, timeout: float, retries: int
    ) -> Client:
        return cls(await _native.bacnet_client(address, broadcast, port, timeout, retries))

    @property
    def address(self) -> str:
        """The local address."""
        return self._handle.local_address

    @property
    def broadcast_address(self) -> str | None:
        """Where broadcasts go (``"127.255.255.255:47808"``; a foreign device's BBMD), or None."""
        return self._handle.broadcast_address

    @property
    def timeout(self) -> float:
        """How long each attempt of a request waits for its answer, in seconds."""
        return self._handle.timeout

    @property
    def retries(self) -> int:
        """How often a request is sent again before :class:`BacnetTimeoutError`."""
        return self._handle.retries

    async def read(
        self,
        device: str,
        object_id: str,
        property_id: str,
        index: int | None = None,
        *,
        timeout: float | None = None,
        retries: int | None = None,
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

        ``timeout`` and ``retries`` apply to this call only (see :meth:`bind`).
        """
        return _value(
            await self._handle.read(device, object_id, property_id, index, timeout, retries)
        )

    async def write(
        self,
        device: str,
        object_id: str,
        property_id: str,
        value: float | int | str | bool | None,
        priority: int | None = None,
        index: int | None = None,
        value_type: str | None = None,
        *,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        r"""Write a property (WriteProperty).

        ``None`` relinquishes a priority; binary present-values take ``"active"``/``"inactive"``
        or 1/0. ``value_type`` forces the datatype (``"real"``, ``"double"``,
        ``"unsigned"``, ``"enumerated"``, ``"boolean"``, ``"string"``, ...). A float
        beyond the REAL range (``3.4e39``, ``1e400``, which Python makes infinite) raises
        :class:`ValueError` rather than writing infinity.

            >>> import asyncio
            >>> async def main():
            ...     async with Server.start("127.0.0.1:0") as server, \
            ...                Client.bind("127.0.0.1:0") as client:
            ...         await client.write(server.address, "av,1", "pv", 3.4e39, priority=8)
            >>> asyncio.run(main())  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ValueError: `3.4e39` is out of range for a real ...
        """
        await self._handle.write(
            device, object_id, property_id, value, priority, index, value_type, timeout, retries
        )

    async def read_multiple(
        self,
        device: str,
        specs: list[tuple[str, list[str]]],
        *,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> list[dict[str, Any]]:
        """ReadPropertyMultiple of ``[(object, [property, ...]), ...]``.

        Returns one dict per property: ``object``, ``property``, ``index`` and either
        ``value`` or ``error`` (``"object: unknown-object"``).
        """
        return _result_rows(await self._handle.read_multiple(device, specs, timeout, retries))

    async def read_many(
        self,
        device: str,
        references: list[tuple[str, str] | tuple[str, str, int | None]],
        *,
        timeout: float | None = None,
        retries: int | None = None,
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
        return _result_rows(await self._handle.read_many(device, triples, timeout, retries))

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
        self,
        timeout: float = 2.0,
        low: int | None = None,
        high: int | None = None,
        *,
        device: str | None = None,
    ) -> list[dict[str, Any]]:
        r"""Who-Is: the devices that answered within ``timeout`` seconds.

        Broadcast to :attr:`broadcast_address` (logged on the ``buildwire.bacnet`` logger),
        or sent to ``device`` (``HOST:PORT``) only. Each answer is a dict: ``address``,
        ``device``, ``instance``, ``max_apdu``, ``segmentation`` and ``vendor_id``.
        ``low`` and ``high`` limit the device instances asked.

            >>> import asyncio
            >>> async def main():
            ...     async with Server.start("127.0.0.1:0") as server, \
            ...                Client.bind("127.0.0.1:0") as client:
            ...         found = await client.who_is(1.0, device=server.address)
            ...         return [answer["device"] for answer in found]
            >>> asyncio.run(main())
            ['device,400']
        """
        if device is None:
            _log.info("Who-Is sent to %s", self.broadcast_address)
        result: list[dict[str, Any]] = await self._handle.who_is(timeout, low, high, device)
        if not result:
            _log.info(
                "no device answered the Who-Is sent to %s within %s s (devices on another "
                "port: Client.bind(port=...); one device: who_is(device=...))",
                device or self.broadcast_address,
                timeout,
            )
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
        return _value(self._handle.get(object_id, property_id, index))

    def set(
        self, object_id: str, property_id: str, value: Any, value_type: str | None = None
    ) -> None:
        """Set a property locally, without the network's access rules.

        For a simulated sensor's new reading (``set("ai,1", "pv", 22.5)``), a status change,
        a renamed object. Network clients see the new value on their next read. Only single
        primitive values; ``value_type`` forces the datatype (``"real"``, ``"unsigned"``,
        ``"enumerated"`` ...).
        """
        self._handle.set(object_id, property_id, value, value_type)

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
            obj, prop, value = event
            yield PropertyWrite(obj, prop, _value(value))

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
        data = await self._handle.next()
        if data is None:
            raise StopAsyncIteration
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
