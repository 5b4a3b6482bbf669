r"""The BACnet client services beyond read, write and COV, and their typed results.

:class:`buildwire.bacnet.Client` has these methods (they are defined here, in
:class:`ClientServices`): Who-Has, ReadRange, WritePropertyMultiple, Add/RemoveListElement,
DeviceCommunicationControl, ReinitializeDevice and (UTC)TimeSynchronization. Import the
result classes from :mod:`buildwire.bacnet`.

    >>> import asyncio, datetime
    >>> from buildwire import bacnet
    >>> async def main():
    ...     async with bacnet.Server.start("127.0.0.1:0") as server, \
    ...                bacnet.Client.bind("127.0.0.1:0") as client:
    ...         await client.write_multiple(server.address, [("av,1", "pv", 20.5, 8),
    ...                                                      ("av,2", "pv", 21.5, 8)])
    ...         found = await client.who_has("av,1", device=server.address)
    ...         return await client.read(server.address, "av,2", "pv"), found[0].name
    >>> asyncio.run(main())
    (21.5, 'AV-1')
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union

__all__ = [
    "ClientServices",
    "IHave",
    "LogRecord",
    "ReadRangeResult",
    "Write",
]

_log = logging.getLogger("buildwire.bacnet")

Write = Union[tuple[Any, ...], dict[str, Any]]
"""One write of :meth:`ClientServices.write_multiple`: ``(object, property, value)``,
``(object, property, value, priority)``, ``(object, property, value, priority, index)`` or
a dict with those keys (``object``, ``property``, ``value``, ``priority``, ``index``) and
optionally ``value_type``."""


@dataclass(frozen=True)
class IHave:
    """One I-Have answer to :meth:`ClientServices.who_has`."""

    address: str
    """The address it came from, e.g. ``"127.0.0.1:47808"``."""
    device: str
    """The device that has the object, e.g. ``"device,400"``."""
    object: str
    """The object, e.g. ``"analog-value,1"``."""
    name: str
    """The object's name."""


@dataclass(frozen=True)
class LogRecord:
    """One record of a trend log's log-buffer (see :meth:`ClientServices.read_range`)."""

    timestamp: _dt.datetime | None
    """When it was logged: the device's local time, in the ``tz`` given to ``read_range``
    (always timezone-aware); ``None`` when the device left a field unspecified."""
    value: Any
    """The logged value (a float, int, bool or None; ``{"failure": "class: code"}``,
    ``{"log-status": bits}`` or ``{"time-change": seconds}`` for the special records)."""
    status_flags: str | None
    """The logged object's status-flags as bits (``"0000"``: in-alarm, fault, overridden,
    out-of-service), when the record has them."""


@dataclass(frozen=True)
class ReadRangeResult:
    """The answer to :meth:`ClientServices.read_range`."""

    object: str
    """The object read, e.g. ``"trend-log,1"``."""
    property: str
    """The property read, e.g. ``"log-buffer"``."""
    index: int | None
    """The array index read, if any."""
    items: list[Any]
    """The items: :class:`LogRecord` for a log-buffer, plain values otherwise."""
    item_count: int
    """How many items the device returned."""
    first_item: bool
    """The first item returned is the list's first."""
    last_item: bool
    """The last item returned is the list's last."""
    more_items: bool
    """More items matched than fit in the answer: read on from the last one."""
    first_sequence_number: int | None
    """The sequence number of the first item (log buffers read by sequence or time)."""


def _local_zone() -> _dt.tzinfo:
    zone = _dt.datetime.now().astimezone().tzinfo
    return zone if zone is not None else _dt.timezone.utc


def _aware(when: _dt.datetime, what: str) -> _dt.datetime:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(
            f"{what} must be timezone-aware, e.g. datetime.now(timezone.utc) or "
            "datetime(2026, 1, 1, 8, 0, tzinfo=ZoneInfo('Europe/Paris'))"
        )
    return when


def _fields(when: _dt.datetime) -> tuple[int, int, int, int, int, int, int]:
    return (
        when.year,
        when.month,
        when.day,
        when.hour,
        when.minute,
        when.second,
        when.microsecond // 10_000,
    )


def _write_tuple(write: Write) -> tuple[Any, ...]:
    if isinstance(write, dict):
        unknown = set(write) - {"object", "property", "value", "priority", "index", "value_type"}
        if unknown or not {"object", "property", "value"} <= set(write):
            raise ValueError(
                "a write dict has object, property and value, and may have priority, index "
                f"and value_type; got {sorted(write)}"
            )
        return (
            write["object"],
            write["property"],
            write["value"],
            write.get("priority"),
            write.get("index"),
            write.get("value_type"),
        )
    if not 3 <= len(write) <= 5:
        raise ValueError(
            f"a write is (object, property, value[, priority[, index]]), got {len(write)} fields"
        )
    padded = (*write, None, None)
    return (*padded[:5], None)


class ClientServices:
    """Who-Has, ReadRange, WritePropertyMultiple, list, device-management and time services.

    A part of :class:`buildwire.bacnet.Client`; every confirmed service takes ``timeout``
    (seconds each attempt waits) and ``retries`` for this call only, and raises the
    :class:`buildwire.bacnet.BacnetError` family.
    """

    _handle: Any

    async def who_has(
        self,
        object_id: str | None = None,
        *,
        name: str | None = None,
        device: str | None = None,
        timeout: float = 2.0,
        low: int | None = None,
        high: int | None = None,
    ) -> list[IHave]:
        r"""Who-Has an object, by identifier (``"av,1"``) or by ``name``.

        Sent to ``device`` (``HOST:PORT``) or broadcast (see ``Client.broadcast_address``);
        ``low``/``high`` limit the device instances asked. Returns the I-Have answers that
        arrive within ``timeout`` seconds.

            >>> import asyncio
            >>> from buildwire import bacnet
            >>> async def main():
            ...     async with bacnet.Server.start("127.0.0.1:0") as server, \
            ...                bacnet.Client.bind("127.0.0.1:0") as client:
            ...         return await client.who_has(name="AI-1", device=server.address)
            >>> [(found.object, found.name) for found in asyncio.run(main())]
            [('analog-input,1', 'AI-1')]
        """
        if device is None:
            _log.info("Who-Has sent to %s", self._handle.broadcast_address)
        rows = await self._handle.who_has(object_id, name, timeout, low, high, device)
        return [IHave(*row) for row in rows]

    async def read_range(
        self,
        device: str,
        object_id: str,
        property_id: str = "log-buffer",
        *,
        index: int | None = None,
        position: int | None = None,
        sequence: int | None = None,
        since: _dt.datetime | None = None,
        count: int | None = None,
        tz: _dt.tzinfo | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> ReadRangeResult:
        r"""ReadRange: items of a list or array, such as a trend log's log-buffer.

        Without a range, every item. Otherwise one of ``position`` (1-based index),
        ``sequence`` (a record's sequence number) or ``since`` (an aware datetime: records
        after it) with ``count`` items (negative: that many before the reference). Log
        records come as :class:`LogRecord`; their device-local times are read in ``tz``
        (default: this computer's time zone; pass the device's when it differs).

            >>> import asyncio, json
            >>> from buildwire import bacnet
            >>> profile = {"device": {"instance": 5, "name": "D"}, "objects": [
            ...     {"type": "av", "instance": 1, "name": "T", "present_value": 20.0},
            ...     {"type": "trend-log", "instance": 1, "name": "Log", "log": "av,1:pv",
            ...      "log_interval": 1, "buffer_size": 10}]}
            >>> async def main():
            ...     async with bacnet.Server.start("127.0.0.1:0", json.dumps(profile)) as s, \
            ...                bacnet.Client.bind("127.0.0.1:0") as client:
            ...         await asyncio.sleep(1.5)
            ...         return await client.read_range(s.address, "trend-log,1", position=1,
            ...                                        count=1)
            >>> result = asyncio.run(main())
            >>> result.items[0].value, result.items[0].timestamp.tzinfo is not None
            (20.0, True)
        """
        given = [(k, v) for k, v in (("position", position), ("sequence", sequence),
                                     ("time", since)) if v is not None]  # fmt: skip
        if len(given) > 1:
            raise ValueError("give one of position, sequence and since")
        zone = tz if tz is not None else _local_zone()
        kind: str | None = None
        reference: Any = None
        if given:
            kind, reference = given[0]
            if count is None:
                raise ValueError("a range needs count (negative: backwards)")
            if isinstance(reference, _dt.datetime):
                reference = _fields(_aware(reference, "since").astimezone(zone))
        elif count is not None:
            raise ValueError("count needs position, sequence or since")
        raw = await self._handle.read_range(
            device, object_id, property_id, index, kind, reference, count, timeout, retries
        )
        items: list[Any] = raw["items"]
        if raw["records"]:
            items = [
                LogRecord(
                    timestamp=None
                    if stamp is None
                    else _dt.datetime(*stamp[:6], stamp[6] * 10_000, tzinfo=zone),
                    value=value,
                    status_flags=flags,
                )
                for stamp, value, flags in items
            ]
        return ReadRangeResult(
            object=raw["object"],
            property=raw["property"],
            index=raw["index"],
            items=items,
            item_count=raw["item_count"],
            first_item=raw["first_item"],
            last_item=raw["last_item"],
            more_items=raw["more_items"],
            first_sequence_number=raw["first_sequence_number"],
        )

    async def write_multiple(
        self,
        device: str,
        writes: Sequence[Write],
        *,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        r"""WritePropertyMultiple: several properties of several objects in one request.

        ``writes`` are ``(object, property, value[, priority[, index]])`` tuples or dicts
        (see :data:`Write`); values are typed as :meth:`buildwire.bacnet.Client.write`
        types them. If one fails, :class:`buildwire.bacnet.BacnetWriteMultipleError` names
        it (``first_failed``); the writes before it were done.

            >>> import asyncio
            >>> from buildwire import bacnet
            >>> async def main():
            ...     async with bacnet.Server.start("127.0.0.1:0") as server, \
            ...                bacnet.Client.bind("127.0.0.1:0") as client:
            ...         await client.write_multiple(server.address, [
            ...             ("av,1", "pv", 18.0, 8), ("av,1", "description", "lobby")])
            ...         return await client.read(server.address, "av,1", "description")
            >>> asyncio.run(main())
            'lobby'
        """
        rows = [_write_tuple(write) for write in writes]
        await self._handle.write_multiple(device, rows, timeout, retries)

    async def add_list_element(
        self,
        device: str,
        object_id: str,
        property_id: str,
        items: Sequence[Any],
        *,
        index: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        r"""AddListElement: add ``items`` to a list property (all of them, or none).

        Items are written as in a JSON device file: date-list entries ``{"date":
        "2026-12-25"}``, ``{"range": ["2026-07-01", "2026-07-31"]}``; recipient-list
        destinations ``{"device": 9, "process": 1}``; references ``"av,1:present-value"``;
        primitive values otherwise.

            >>> import asyncio, json
            >>> from buildwire import bacnet
            >>> profile = {"device": {"instance": 5, "name": "D"}, "objects": [
            ...     {"type": "calendar", "instance": 1, "name": "Holidays"}]}
            >>> async def main():
            ...     async with bacnet.Server.start("127.0.0.1:0", json.dumps(profile)) as s, \
            ...                bacnet.Client.bind("127.0.0.1:0") as client:
            ...         await client.add_list_element(s.address, "calendar,1", "date-list",
            ...                                       [{"date": "2026-12-25"}])
            ...         return await client.read(s.address, "calendar,1", "date-list")
            >>> asyncio.run(main())
            {'date': '2026-12-25'}
        """
        await self._handle.change_list(
            device, object_id, property_id, list(items), True, index, timeout, retries
        )

    async def remove_list_element(
        self,
        device: str,
        object_id: str,
        property_id: str,
        items: Sequence[Any],
        *,
        index: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        """RemoveListElement: remove ``items`` (as :meth:`add_list_element` writes them)."""
        await self._handle.change_list(
            device, object_id, property_id, list(items), False, index, timeout, retries
        )

    async def device_communication_control(
        self,
        device: str,
        state: str = "disable",
        *,
        minutes: int | None = None,
        password: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        r"""DeviceCommunicationControl: ``"disable"``, ``"disable-initiation"`` or ``"enable"``.

        ``minutes`` limits a disable (None: until enabled again). A disabled device answers
        only this service and ReinitializeDevice.

            >>> import asyncio
            >>> from buildwire import bacnet
            >>> async def main():
            ...     async with bacnet.Server.start("127.0.0.1:0") as server, \
            ...                bacnet.Client.bind("127.0.0.1:0", timeout=0.2, retries=0) as client:
            ...         await client.device_communication_control(server.address, "disable")
            ...         try:
            ...             await client.read(server.address, "ai,1", "pv")
            ...         except asyncio.TimeoutError:
            ...             silent = True
            ...         await client.device_communication_control(server.address, "enable")
            ...         return silent, await client.read(server.address, "ai,1", "pv")
            >>> asyncio.run(main())
            (True, 61.5)
        """
        await self._handle.device_communication_control(
            device, state, minutes, password, timeout, retries
        )

    async def reinitialize_device(
        self,
        device: str,
        state: str = "warmstart",
        *,
        password: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        r"""ReinitializeDevice: ``"coldstart"``, ``"warmstart"``, ``"start-backup"`` ...

        >>> import asyncio
        >>> from buildwire import bacnet
        >>> async def main():
        ...     async with bacnet.Server.start("127.0.0.1:0") as server, \
        ...                bacnet.Client.bind("127.0.0.1:0") as client:
        ...         await client.reinitialize_device(server.address, "warmstart")
        >>> asyncio.run(main())
        """
        await self._handle.reinitialize_device(device, state, password, timeout, retries)

    async def time_synchronization(
        self,
        when: _dt.datetime | None = None,
        *,
        device: str | None = None,
        utc: bool = False,
    ) -> None:
        r"""TimeSynchronization (or UTCTimeSynchronization with ``utc=True``).

        ``when`` is a timezone-aware datetime (default: now). TimeSynchronization sends its
        wall-clock time in its own zone (convert it with ``astimezone`` to the device's
        zone first); UTCTimeSynchronization sends it in UTC. Sent to ``device``, or
        broadcast. Unconfirmed: it returns once sent, the device answers nothing.

            >>> import asyncio, datetime
            >>> from buildwire import bacnet
            >>> async def main():
            ...     async with bacnet.Server.start("127.0.0.1:0") as server, \
            ...                bacnet.Client.bind("127.0.0.1:0") as client:
            ...         now = datetime.datetime.now(datetime.timezone.utc)
            ...         await client.time_synchronization(now, device=server.address, utc=True)
            >>> asyncio.run(main())
        """
        if when is None:
            when = _dt.datetime.now(_dt.timezone.utc) if utc else _dt.datetime.now().astimezone()
        when = _aware(when, "when")
        if utc:
            when = when.astimezone(_dt.timezone.utc)
        if device is None:
            _log.info("time synchronization sent to %s", self._handle.broadcast_address)
        await self._handle.time_synchronization(_fields(when), utc, device)
