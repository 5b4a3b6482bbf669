"""OPC UA for Python: an asyncio client and server, stream dissection, StatusCode names.

Example (our server with the Throughput methods, and a client calling them):

    >>> import asyncio
    >>> from buildwire import opcua
    >>> async def main():
    ...     async with opcua.Server.start("127.0.0.1:0") as server:
    ...         async with opcua.Client.connect(server.endpoint) as client:
    ...             await client.call("ns=1;i=5000", "ns=1;i=6000", ["uint32:4"])
    ...             (data,) = await client.call("ns=1;i=5000", "ns=1;i=6001", [])
    ...             names = [r["browse_name"] for r in await client.browse("i=85")]
    ...     return len(data), names
    >>> asyncio.run(main())
    (4096, ['Server', '1:Throughput'])

Subscriptions (the client reconnects by itself and brings them back after a lost
connection or a server restart):

    >>> async def watch():
    ...     server = await opcua.Server.start("127.0.0.1:0")
    ...     client = await opcua.Client.connect(server.endpoint)
    ...     seen = []
    ...     async with client.subscribe("i=2258", interval=0.05) as changes:
    ...         async for change in changes:
    ...             seen.append(change.node)
    ...             if len(seen) == 2:
    ...                 break
    ...     await client.close()
    ...     await server.stop()
    ...     return seen
    >>> asyncio.run(watch())
    ['i=2258', 'i=2258']

Wire tools:

    >>> from buildwire import opcua
    >>> opcua.status_name(0x80070000)
    'BadDecodingError'

"""

from __future__ import annotations

import asyncio
import datetime as _dt
import inspect
import logging
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from buildwire import _native
from buildwire._lifecycle import AsyncClient, AsyncService, Opening, Subscribing

__all__ = [
    "BadCommunicationError",
    "BadNodeIdError",
    "BadSecurityError",
    "BadTimeoutError",
    "BadUserAccessError",
    "Client",
    "DataChange",
    "MethodCallback",
    "Server",
    "StatusError",
    "Subscription",
    "ValueWrite",
    "dissect",
    "status_name",
]


class StatusError(RuntimeError):
    """An OPC UA operation failed with a StatusCode.

    ``code`` is the 32-bit value and ``name`` its name (``"BadNodeIdUnknown"``, or
    ``"0x80AB0000"`` for a code without a name).

    Every :class:`Client` method raises it (or the subclass of its family) instead of a
    bare :class:`RuntimeError`; it is still a :class:`RuntimeError`, so existing
    ``except RuntimeError`` code keeps working.

    Example::

        try:
            await client.read("ns=1;s=Missing")
        except opcua.BadNodeIdError as error:
            print(error.name, hex(error.code))
    """

    def __init__(self, code: int, message: str | None = None) -> None:
        self.code = code
        self.name = status_name(code) or f"0x{code:08X}"
        super().__init__(message or self.name)


class BadNodeIdError(StatusError):
    """The node does not exist or its NodeId is malformed (BadNodeIdUnknown, BadNodeIdInvalid)."""


class BadSecurityError(StatusError):
    """Security refused the operation.

    Certificates, security policy and mode, signatures, nonces: BadCertificate*,
    BadSecurity*, BadSecurityModeInsufficient, ...
    """


class BadUserAccessError(BadSecurityError):
    """The user was refused.

    A wrong password or an unknown user, a rejected identity token, or no right to the
    node: BadUserAccessDenied, BadIdentityToken*, BadNotReadable, ...
    """


class BadCommunicationError(StatusError):
    """The connection, channel or session is gone or could not be made.

    BadCommunicationError, BadConnectionClosed, BadNotConnected, BadSecureChannelClosed,
    BadSessionClosed, ...
    """


class BadTimeoutError(StatusError, asyncio.TimeoutError):
    """No answer in time (BadTimeout, BadRequestTimeout).

    Also an :class:`asyncio.TimeoutError`, so ``except asyncio.TimeoutError`` catches it.
    """


_FAMILIES: dict[str, type[StatusError]] = {
    "BadNodeIdUnknown": BadNodeIdError,
    "BadNodeIdInvalid": BadNodeIdError,
    "BadNodeIdRejected": BadNodeIdError,
    "BadNodeIdExists": BadNodeIdError,
    "BadUserAccessDenied": BadUserAccessError,
    "BadIdentityTokenInvalid": BadUserAccessError,
    "BadIdentityTokenRejected": BadUserAccessError,
    "BadUserSignatureInvalid": BadUserAccessError,
    "BadNotReadable": BadUserAccessError,
    "BadNotWritable": BadUserAccessError,
    "BadSecurityChecksFailed": BadSecurityError,
    "BadSecurityModeInsufficient": BadSecurityError,
    "BadSecurityModeRejected": BadSecurityError,
    "BadSecurityPolicyRejected": BadSecurityError,
    "BadApplicationSignatureInvalid": BadSecurityError,
    "BadNonceInvalid": BadSecurityError,
    "BadCommunicationError": BadCommunicationError,
    "BadConnectionClosed": BadCommunicationError,
    "BadConnectionRejected": BadCommunicationError,
    "BadDisconnect": BadCommunicationError,
    "BadNotConnected": BadCommunicationError,
    "BadServerNotConnected": BadCommunicationError,
    "BadServerHalted": BadCommunicationError,
    "BadShutdown": BadCommunicationError,
    "BadMaxConnectionsReached": BadCommunicationError,
    "BadSecureChannelClosed": BadCommunicationError,
    "BadSecureChannelIdInvalid": BadCommunicationError,
    "BadSessionClosed": BadCommunicationError,
    "BadSessionIdInvalid": BadCommunicationError,
    "BadSessionNotActivated": BadCommunicationError,
    "BadTooManySessions": BadCommunicationError,
    "BadTimeout": BadTimeoutError,
    "BadRequestTimeout": BadTimeoutError,
}


def _family(name: str) -> type[StatusError]:
    family = _FAMILIES.get(name)
    if family is not None:
        return family
    if name.startswith("BadCertificate"):
        return BadSecurityError
    if name.startswith("BadTcp"):
        return BadCommunicationError
    return StatusError


def _status_error(code: int, message: str | None = None) -> StatusError:
    """Make the exception for ``code``, of its family's class (called by the native module)."""
    name = status_name(code) or ""
    return _family(name)(code, message)


def _bad_rows(node_ids: tuple[str, ...] | list[str], rows: list[tuple[Any, str, int]]) -> None:
    """Raise the error of the first bad status among per-node results, naming them all."""
    bad = [(n, r) for n, r in zip(node_ids, rows) if r[1].startswith("Bad")]
    if bad:
        message = "; ".join(f"{n}: {r[1]}" for n, r in bad)
        raise _status_error(bad[0][1][2], message)


def dissect(stream: bytes) -> dict[str, Any]:
    """Split captured UA TCP bytes into chunks and describe each.

    Returns ``{"chunks": [...], "error": None | {"offset", "status", "message"}}``.
    Malformed input never raises: the first problem is reported in ``error``.
    """
    return _native.opcua_dissect(stream)


def status_name(code: int) -> str | None:
    """Return the standard name of a StatusCode, or None when the table has no such code."""
    return _native.opcua_status_name(code)


@dataclass(frozen=True)
class DataChange:
    """One data change of a monitored item (see :meth:`Client.subscribe`)."""

    node: str
    """The monitored node, e.g. ``"ns=1;s=Setpoint"``."""
    value: Any
    """The new value (None for an empty Variant)."""
    type: str | None
    """The value's built-in DataType name (``"Double"``, ``"DateTime"`` ...)."""
    status: str
    """The StatusCode's name (``"Good"``, ``"BadCommunicationError"`` ...)."""
    source_timestamp: _dt.datetime | None
    """When the source sampled the value (timezone-aware, UTC), if the server says."""
    server_timestamp: _dt.datetime | None
    """When the server received the value (timezone-aware, UTC), if it says."""

    @classmethod
    def _from_row(cls, row: dict[str, Any]) -> DataChange:
        return cls(
            node=row["node"],
            value=row["value"],
            type=row.get("type"),
            status=row["status"],
            source_timestamp=row["source_timestamp"],
            server_timestamp=row["server_timestamp"],
        )


class Client(AsyncClient):
    """An asyncio OPC UA client session. Create it with :meth:`connect`.

    NodeIds are text: ``"i=2258"``, ``"ns=1;i=5000"``, ``"ns=2;s=Name"``. Bad status codes
    raise :class:`StatusError` (a :class:`RuntimeError`) or the subclass of their family:
    :class:`BadNodeIdError`, :class:`BadUserAccessError`, :class:`BadSecurityError`,
    :class:`BadCommunicationError`, :class:`BadTimeoutError` (also an
    :class:`asyncio.TimeoutError`).
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def connect(
        cls,
        endpoint: str,
        user: str | None = None,
        password: str | None = None,
        *,
        security: str | None = None,
        mode: str = "encrypt",
        pki: str | None = None,
        trust_server: bool = False,
        user_cert: str | None = None,
        user_key: str | None = None,
        reconnect_timeout: float = 30.0,
        allow_cleartext_password: bool = False,
    ) -> Opening[Client]:
        """Connect to ``opc.tcp://host:port`` and activate a session (anonymous by default).

        Await it (``client = await Client.connect(...)``) or use it in ``async with``.

        With ``security`` (``"Basic256Sha256"``, ``"Aes128_Sha256_RsaOaep"`` or
        ``"Aes256_Sha256_RsaPss"``) the channel is signed (``mode="sign"``) or signed and
        encrypted (``mode="encrypt"``) with our certificate in ``pki`` (created on first use).
        The server's certificate must be in ``pki/trusted`` (an unknown one is stored in
        ``pki/rejected`` and refused) unless ``trust_server=True``. The password is encrypted
        with the server's certificate. ``user_cert``/``user_key`` (DER files) log in with an
        X.509 user certificate instead.

        The password follows the server's UserName token policy: when it names a security
        policy the password is encrypted with the server's certificate, even over a
        SecurityPolicy None channel. A password that would cross the network in clear
        (neither the token policy nor the channel encrypts it) is not sent: the connection
        fails with :class:`BadSecurityError` (BadSecurityModeInsufficient) unless
        ``allow_cleartext_password=True``.

        The client reconnects by itself when the connection is lost: the session is
        re-activated on a new channel (or, after a server restart, created again) and
        subscriptions come back. A call waits at most ``reconnect_timeout`` seconds for the
        connection; reads are sent again, writes and calls that were in flight are not
        (they raise, since they may or may not have been applied).

        Example::

            async with Client.connect(
                "opc.tcp://127.0.0.1:4840",
                "alice",
                "secret",
                security="Aes256_Sha256_RsaPss",
                pki="/var/lib/myapp/pki",
            ) as client:
                print(await client.read("i=2258"))
        """
        return Opening(
            cls._connect(
                endpoint,
                user,
                password,
                security,
                mode if security else None,
                pki,
                trust_server,
                user_cert,
                user_key,
                reconnect_timeout,
                allow_cleartext_password,
            )
        )

    @classmethod
    async def _connect(cls, *args: Any) -> Client:
        return cls(await _native.opcua_connect(*args))

    async def browse(self, node_id: str = "i=85") -> list[dict[str, Any]]:
        """Forward hierarchical references of a node (default: the Objects folder)."""
        result: list[dict[str, Any]] = await self._handle.browse(node_id)
        return result

    async def read(self, *node_ids: str, attribute: str | None = None) -> list[Any]:
        """Read one attribute of each node (default: Value); raises if a status is bad.

        ``attribute`` is a name as in the CLI's ``--attribute``: ``"browse-name"``,
        ``"display-name"``, ``"data-type"``, ``"node-class"``, ``"access-level"`` ...
        (``BrowseName`` and ``browse_name`` work too).
        """
        rows = await self._handle.read(list(node_ids), attribute)
        _bad_rows(node_ids, rows)
        return [r[0] for r in rows]

    async def write(self, node_id: str, value: Any, type_name: str | None = None) -> None:
        """Write the Value attribute.

        Without ``type_name`` the value is converted to the node's DataType (read first; a
        number that does not fit raises :class:`ValueError`); with it (``"double"``,
        ``"int32"``, ``"string"``, ``"boolean"`` ...) it is sent as that type.
        """
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        await self._handle.write(node_id, text, type_name)

    async def call(self, object_id: str, method_id: str, args: list[str]) -> list[Any]:
        """Call a method with text arguments.

        A bare argument (``"1.5"``, ``"7"``, ``"abc"``) is read as the type the method
        declares in its InputArguments; ``"uint32:4"`` or ``"string:abc"`` forces a type.
        """
        outputs: list[Any] = await self._handle.call(object_id, method_id, args)
        return outputs

    def subscribe(
        self,
        *node_ids: str,
        interval: float = 1.0,
        sampling: float | None = None,
        queue: int = 1,
        deadband: tuple[str, float] | None = None,
    ) -> Subscription:
        """Monitor the Value of each node: ``async with`` the result, ``async for`` changes.

        ``interval`` is the publishing interval and ``sampling`` the sampling interval, in
        seconds (the server may revise both; ``sampling`` defaults to ``interval``).
        ``queue`` values are kept per item between two publishes. ``deadband`` is
        ``("abs", X)`` (in the value's units) or ``("pct", X)`` (percent of the node's
        EURange). The subscription is made on entering the ``async with`` block (or when
        awaited); nodes the server refuses raise :class:`StatusError` naming them there.

        Example::

            async with client.subscribe("ns=1;s=Setpoint", interval=0.5) as changes:
                async for change in changes:
                    print(change.node, change.value, change.source_timestamp)
        """
        if not node_ids:
            raise ValueError("subscribe to at least one node id")
        sampling_ms = (sampling if sampling is not None else interval) * 1000.0
        return Subscription(
            self._handle, list(node_ids), interval * 1000.0, sampling_ms, queue, deadband
        )

    @property
    def reconnects(self) -> int:
        """How many times the client reconnected so far."""
        return int(self._handle.reconnects)

    async def close(self) -> None:
        """Close the session and the connection."""
        await self._handle.close()


class Subscription(Subscribing):
    """Data changes of monitored items, from :meth:`Client.subscribe`.

    ``async with`` it (or await it) to create it on the server; iterate it (``async for
    change in subscription``) for :class:`DataChange` values; leave the ``async with`` block
    or call :meth:`delete` to remove it from the server.
    """

    def __init__(
        self,
        handle: Any,
        node_ids: list[str],
        interval_ms: float,
        sampling_ms: float,
        queue: int,
        deadband: tuple[str, float] | None,
    ) -> None:
        self._handle = handle
        self._request = (node_ids, interval_ms, sampling_ms, queue, deadband)
        self._id: int | None = None

    async def start(self) -> Subscription:
        """Create the subscription and its monitored items on the server (once)."""
        if self._id is not None:
            return self
        node_ids, interval_ms, sampling_ms, queue, deadband = self._request
        subscription = await self._handle.create_subscription(interval_ms)
        rows = await self._handle.monitor(subscription, node_ids, sampling_ms, queue, deadband)
        refused = [r for r in rows if not r[2].startswith("Good")]
        if refused:
            await self._handle.delete_subscriptions([subscription])
            message = "; ".join(f"{node}: {status}" for node, _, status, _ in refused)
            raise _status_error(refused[0][3], "not monitored: " + message)
        self._id = subscription
        return self

    async def next(self, timeout: float = 60.0) -> DataChange | None:
        """Wait for the next change of any subscription of the client (None after ``timeout``)."""
        await self.start()
        row = await self._handle.next_change(timeout)
        if row is None:
            return None
        return DataChange._from_row(row)

    def __aiter__(self) -> AsyncIterator[DataChange]:
        return self._changes()

    async def _changes(self) -> AsyncIterator[DataChange]:
        while True:
            change = await self.next()
            if change is not None:
                yield change

    async def delete(self) -> None:
        """Delete the subscription on the server.

        By its id now: the id changes when the client had to create the subscription again
        after a server restart.
        """
        subscriptions, _reconnects = await self._handle.state()
        await self._handle.delete_subscriptions(subscriptions)

    async def _end(self) -> None:
        await self.delete()


MethodCallback = Callable[..., Awaitable[Any]]
"""An ``async def`` implementing an OPC UA method: called with the input arguments (and
``user=`` when it takes a ``user`` keyword), it returns the outputs: None for none, a single
value for one, a tuple or list for several."""

_SIMULATIONS = ("sine", "ramp", "random", "counter")


@dataclass(frozen=True)
class ValueWrite:
    """One value a client wrote to the server (see :meth:`Server.writes`)."""

    node: str
    """The Variable written, e.g. ``"ns=2;s=Setpoint"``."""
    value: Any
    """The value written."""
    timestamp: _dt.datetime
    """The write's source timestamp (the client's, else the server's time of the write)."""
    user: str | None
    """The session's user name; None for an anonymous session."""


class Server(AsyncService):
    """An OPC UA server that you model: folders, objects, variables, async methods.

    It starts with namespace 0 and the Throughput benchmark object (ns=1;i=5000).

    Example (a folder with a temperature and a writable setpoint, a method, and our own
    client using them)::

        >>> import asyncio
        >>> from buildwire import opcua
        >>> async def main():
        ...     async with opcua.Server.start("127.0.0.1:0") as server:
        ...         ns = server.add_namespace("urn:example:plant")
        ...         plant = server.add_folder("i=85", f"ns={ns};s=Plant", "Plant")
        ...         temp = server.add_variable(plant, f"ns={ns};s=Temp", "Temp", 21.5,
        ...                                    eu_range=(-20, 60), units=("°C", "CEL"))
        ...         sp = server.add_variable(plant, f"ns={ns};s=Setpoint", "Setpoint", 20.0,
        ...                                  writable=True)
        ...         async def add(a: float, b: float) -> float:
        ...             return a + b
        ...         server.add_method(plant, f"ns={ns};s=Add", "Add", add,
        ...                           inputs=[("a", "Double"), ("b", "Double")],
        ...                           outputs=[("sum", "Double")])
        ...         server.set_value(temp, 22.0)
        ...         async with opcua.Client.connect(server.endpoint) as client:
        ...             await client.write(sp, 19.5)
        ...             (total,) = await client.call(plant, f"ns={ns};s=Add", ["1.5", "2"])
        ...             values = await client.read(temp, sp)
        ...         return values, total
        >>> asyncio.run(main())
        ([22.0, 19.5], 3.5)
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self._methods: dict[str, MethodCallback] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._pump: asyncio.Task[None] | None = None
        self._stopped = False

    @classmethod
    def start(
        cls,
        address: str = "127.0.0.1:4840",
        *,
        security: list[str] | None = None,
        mode: str = "both",
        pki: str | None = None,
        auto_trust: bool = False,
        users: dict[str, str] | None = None,
        allow_cleartext_passwords: bool = False,
    ) -> Opening[Server]:
        """Start serving on ``address`` (port 0 picks one); await it or ``async with`` it.

        ``users`` maps user names to passwords accepted at login (besides anonymous
        sessions); their names are the ``user`` of :meth:`writes` and method callbacks. A
        password travels encrypted under a secured policy; over SecurityPolicy None without
        a certificate it would cross the network readable, so the server offers user names
        there only with ``allow_cleartext_passwords=True`` (tests and closed networks).

        Without ``security`` only SecurityPolicy None is offered. With a list of policies
        (``["Basic256Sha256", "Aes256_Sha256_RsaPss"]``; add ``"None"`` to keep an open
        endpoint) each is offered in ``mode`` (``"sign"``, ``"encrypt"`` or ``"both"``) with
        the certificate in ``pki`` (created on first use). Client certificates must be in
        ``pki/trusted``; refused ones are stored in ``pki/rejected`` (``auto_trust=True``
        accepts every one: tests and demos only).

        Example::

            async with Server.start(
                "127.0.0.1:0", security=["Aes256_Sha256_RsaPss"], pki="/var/lib/myapp/pki"
            ) as server:
                print(server.endpoint)
        """
        accounts = sorted((users or {}).items())
        return Opening(
            cls._start(
                address, security, mode, pki, auto_trust, accounts, allow_cleartext_passwords
            )
        )

    @classmethod
    async def _start(cls, *args: Any) -> Server:
        return cls(await _native.opcua_serve(*args))

    @property
    def endpoint(self) -> str:
        """The endpoint URL clients connect to."""
        return self._handle.endpoint

    @property
    def dropped_writes(self) -> int:
        """Client writes lost because :meth:`writes` was not read fast enough."""
        return self._handle.dropped_writes

    def add_namespace(self, uri: str) -> int:
        """Register a namespace URI (or find it); returns its index for your NodeIds.

        Index 1 is the Throughput benchmark's; your first namespace is 2.
        """
        return self._handle.add_namespace(uri)

    def add_folder(self, parent: str, node_id: str, name: str) -> str:
        """Add a Folder (FolderType) below ``parent`` (``"i=85"`` is Objects).

        Returns its NodeId. Nodes added below a folder are organized by it.
        """
        self._handle.add_object(parent, node_id, name, True)
        return node_id

    def add_object(self, parent: str, node_id: str, name: str) -> str:
        """Add an Object (BaseObjectType) below ``parent``; returns its NodeId.

        Variables and methods added below it are its components (HasComponent).
        """
        self._handle.add_object(parent, node_id, name, False)
        return node_id

    def add_variable(
        self,
        parent: str,
        node_id: str,
        name: str,
        value: Any,
        *,
        data_type: str | None = None,
        writable: bool = False,
        description: str | None = None,
        eu_range: tuple[float, float] | None = None,
        units: str | tuple[str, str] | tuple[str, str, str] | None = None,
    ) -> str:
        """Add a Variable with an initial ``value``; returns its NodeId.

        ``data_type`` is a built-in DataType name (``"Double"``, ``"Float"``, ``"Int32"``,
        ``"UInt16"``, ``"Boolean"``, ``"String"``, ``"LocalizedText"`` ...); without it a
        bool is Boolean, an int Int32, a float Double, a str String and bytes a ByteString
        (a list: an array of that type). The value is converted to the DataType and refused
        (:class:`ValueError`) when it does not fit (300 for a Byte). ``writable=True`` lets
        clients write it (AccessLevel CurrentWrite); every write they make is in
        :meth:`writes`.

        ``eu_range=(low, high)`` and ``units`` make it an AnalogItemType with EURange and
        EngineeringUnits properties. ``units`` is a display name (``"°C"``), or a tuple of
        display name and UNECE common code (``("°C", "CEL")``), optionally with a
        description (``("°C", "CEL", "degree Celsius")``); the code gives the UnitId of
        OPC 10000-8.

            >>> import asyncio
            >>> async def main():
            ...     async with Server.start("127.0.0.1:0") as server:
            ...         ns = server.add_namespace("urn:example")
            ...         node = server.add_variable("i=85", f"ns={ns};s=Level", "Level", 3,
            ...                                    data_type="Float", eu_range=(0, 10),
            ...                                    units=("m", "MTR", "metre"))
            ...         return server.get_value(node)
            >>> asyncio.run(main())
            3.0
        """
        kind = data_type or _guess_type(value)
        unit_fields: tuple[str, str | None, str] | None
        if units is None:
            unit_fields = None
        elif isinstance(units, str):
            unit_fields = (units, None, "")
        elif len(units) == 2:
            unit_fields = (units[0], units[1], "")
        else:
            unit_fields = (units[0], units[1], units[2])
        range_fields = None if eu_range is None else (float(eu_range[0]), float(eu_range[1]))
        self._handle.add_variable(
            parent,
            node_id,
            name,
            value,
            kind,
            writable,
            description,
            range_fields,
            unit_fields,
        )
        return node_id

    def add_method(
        self,
        parent: str,
        node_id: str,
        name: str,
        callback: MethodCallback,
        *,
        inputs: list[tuple[str, str] | tuple[str, str, str]] | None = None,
        outputs: list[tuple[str, str] | tuple[str, str, str]] | None = None,
    ) -> str:
        """Add a Method of ``parent`` answered by ``callback`` (an ``async def``).

        ``inputs`` and ``outputs`` declare the arguments as ``(name, DataType)`` or
        ``(name, DataType, description)``; they become the InputArguments and
        OutputArguments properties, and the server checks the clients' arguments against
        them (Bad_TypeMismatch, Bad_ArgumentsMissing) before calling you. The callback gets
        the inputs as Python values (and ``user=`` the session's user name if it has a
        ``user`` parameter) and returns the outputs: None, one value, or a tuple of them.
        Raising :class:`StatusError` answers that StatusCode, :class:`ValueError`
        Bad_InvalidArgument, anything else Bad_InternalError. The server goes on serving
        while callbacks run.

            >>> import asyncio
            >>> async def main():
            ...     async with Server.start("127.0.0.1:0") as server:
            ...         ns = server.add_namespace("urn:example")
            ...         pump = server.add_object("i=85", f"ns={ns};s=Pump", "Pump")
            ...         async def start(speed: int, user: str | None = None) -> str:
            ...             await asyncio.sleep(0.01)
            ...             return f"running at {speed} rpm"
            ...         server.add_method(pump, f"ns={ns};s=Pump.Start", "Start", start,
            ...                           inputs=[("speed", "UInt32")],
            ...                           outputs=[("state", "String")])
            ...         async with Client.connect(server.endpoint) as client:
            ...             return await client.call(pump, f"ns={ns};s=Pump.Start",
            ...                                      ["uint32:1500"])
            >>> asyncio.run(main())
            ['running at 1500 rpm']
        """

        def triples(
            items: list[tuple[str, str] | tuple[str, str, str]] | None,
        ) -> list[tuple[str, str, str]]:
            return [(i[0], i[1], i[2] if len(i) > 2 else "") for i in items or []]  # type: ignore[misc]

        if not asyncio.iscoroutinefunction(callback):
            raise ValueError(f"the callback of {name} must be an async def function")
        self._handle.add_method(parent, node_id, name, triples(inputs), triples(outputs))
        self._methods[node_id] = callback
        self._ensure_pump()
        return node_id

    def set_value(self, node: str, value: Any) -> None:
        """Set a Variable's value from the application (a new reading, a simulated point).

        The value is converted to the Variable's DataType (:class:`ValueError` when it does
        not fit); clients subscribed to it get the change right away.
        """
        self._handle.set_value(node, value)

    def get_value(self, node: str) -> Any:
        """Return a Variable's current value, as a client's read would give it."""
        return self._handle.get_value(node)

    async def writes(self) -> AsyncIterator[ValueWrite]:
        """Every value a client writes, as it happens, until the server stops.

        Writes are queued from the start (up to 4,096; beyond that the newest are dropped
        and counted in :attr:`dropped_writes`).

            >>> import asyncio
            >>> async def main():
            ...     async with Server.start("127.0.0.1:0") as server:
            ...         ns = server.add_namespace("urn:example")
            ...         sp = server.add_variable("i=85", f"ns={ns};s=SP", "SP", 20.0,
            ...                                  writable=True)
            ...         async with Client.connect(server.endpoint) as client:
            ...             await client.write(sp, 18.0)
            ...         async for write in server.writes():
            ...             return write.node, write.value, write.user
            >>> asyncio.run(main())
            ('ns=2;s=SP', 18.0, None)
        """
        while True:
            event = await self._handle.next_write()
            if event is None:
                return
            node, value, timestamp, user = event
            yield ValueWrite(node, value, timestamp, user)

    def simulate(
        self,
        node: str,
        kind: str = "sine",
        *,
        interval: float = 1.0,
        period: float = 60.0,
        low: float = 0.0,
        high: float = 100.0,
    ) -> asyncio.Task[None]:
        """Change a Variable's value every ``interval`` seconds until the server stops.

        ``kind`` is ``"sine"`` (between ``low`` and ``high``, one cycle per ``period``
        seconds), ``"ramp"`` (from ``low`` up to ``high`` in ``period`` seconds, then again),
        ``"random"`` (uniform between ``low`` and ``high``) or ``"counter"`` (``low``, then
        one more each change). The values are converted to the Variable's DataType. Returns
        the asyncio task; cancel it to stop this point only. Call it from a running loop.

            >>> import asyncio
            >>> async def main():
            ...     async with Server.start("127.0.0.1:0") as server:
            ...         ns = server.add_namespace("urn:example")
            ...         node = server.add_variable("i=85", f"ns={ns};s=Count", "Count", 0)
            ...         server.simulate(node, "counter", interval=0.01, low=5)
            ...         await asyncio.sleep(0.1)
            ...         return server.get_value(node) > 5
            >>> asyncio.run(main())
            True
        """
        if kind not in _SIMULATIONS:
            raise ValueError(f"simulation {kind!r}: use one of {', '.join(_SIMULATIONS)}")
        if not (interval > 0 and period > 0):
            raise ValueError("interval and period must be positive numbers of seconds")
        if not low <= high:
            raise ValueError(f"low {low} is above high {high}")
        self._handle.get_value(node)  # an unknown node or a non-Variable raises here
        task = asyncio.get_running_loop().create_task(
            self._simulate(node, kind, interval, period, low, high)
        )
        self._keep(task)
        return task

    async def _simulate(
        self, node: str, kind: str, interval: float, period: float, low: float, high: float
    ) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        step = 0
        integral = isinstance(self.get_value(node), int)
        while not self._stopped:
            elapsed = loop.time() - started
            value: float
            if kind == "sine":
                mid, amplitude = (low + high) / 2, (high - low) / 2
                value = mid + amplitude * math.sin(2 * math.pi * elapsed / period)
            elif kind == "ramp":
                value = low + (high - low) * ((elapsed % period) / period)
            elif kind == "random":
                value = random.uniform(low, high)
            else:
                value = low + step
            self.set_value(node, round(value) if integral else value)
            step += 1
            await asyncio.sleep(interval)

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _ensure_pump(self) -> None:
        if self._pump is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError as e:  # pragma: no cover - needs a loop like every server call
                raise RuntimeError("add_method needs a running asyncio loop") from e
            self._pump = loop.create_task(self._serve_calls())

    async def _serve_calls(self) -> None:
        """Hands every method call to its callback, each in a task of its own."""
        while True:
            event = await self._handle.next_call()
            if event is None:
                return
            self._keep(asyncio.get_running_loop().create_task(self._answer(event)))

    async def _answer(self, call: dict[str, Any]) -> None:
        callback = self._methods.get(call["method"])
        if callback is None:
            self._handle.complete_call(call["id"], call["method"], [], _BAD_NOT_IMPLEMENTED)
            return
        inputs = call["inputs"]
        try:
            if "user" in inspect.signature(callback).parameters:
                result = await callback(*inputs, user=call.get("user"))
            else:
                result = await callback(*inputs)
        except StatusError as e:
            self._handle.complete_call(call["id"], call["method"], [], e.code)
            return
        except ValueError as e:
            _log.warning("method %s: %s", call["method"], e)
            self._handle.complete_call(call["id"], call["method"], [], _BAD_INVALID_ARGUMENT)
            return
        except Exception:
            _log.exception("method %s failed", call["method"])
            self._handle.complete_call(call["id"], call["method"], [], _BAD_INTERNAL_ERROR)
            return
        if result is None:
            outputs: list[Any] = []
        elif isinstance(result, (tuple, list)):
            outputs = list(result)
        else:
            outputs = [result]
        try:
            self._handle.complete_call(call["id"], call["method"], outputs, 0)
        except (TypeError, ValueError):
            _log.exception(
                "method %s returned outputs that do not fit its OutputArguments", call["method"]
            )

    async def stop(self) -> None:
        """Stop the server (and its simulations and method calls in progress)."""
        self._stopped = True
        for task in list(self._tasks):
            task.cancel()
        if self._pump is not None:
            self._pump.cancel()
        await self._handle.stop()


_BAD_NOT_IMPLEMENTED = 0x80400000
_BAD_INVALID_ARGUMENT = 0x80AB0000
_BAD_INTERNAL_ERROR = 0x80020000
_log = logging.getLogger("buildwire.opcua")


def _guess_type(value: Any) -> str:
    """Name the DataType of a Python value when none is given."""
    first = value[0] if isinstance(value, (list, tuple)) and value else value
    if isinstance(first, bool):
        return "Boolean"
    if isinstance(first, int):
        return "Int32"
    if isinstance(first, float):
        return "Double"
    if isinstance(first, str):
        return "String"
    if isinstance(first, bytes):
        return "ByteString"
    raise ValueError(
        f"cannot tell the DataType of {value!r}: pass data_type= (Double, Int32, String ...)"
    )
