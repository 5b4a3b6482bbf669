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
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from buildwire import _native
from buildwire._lifecycle import AsyncClient, AsyncService, Opening, Subscribing
from buildwire._time import parse_datetime

__all__ = [
    "BadCommunicationError",
    "BadNodeIdError",
    "BadSecurityError",
    "BadTimeoutError",
    "BadUserAccessError",
    "Client",
    "DataChange",
    "Server",
    "StatusError",
    "Subscription",
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


def _bad_rows(node_ids: tuple[str, ...] | list[str], rows: list[dict[str, Any]]) -> None:
    """Raise the error of the first bad status among per-node results, naming them all."""
    bad = [(n, r) for n, r in zip(node_ids, rows) if r["status"].startswith("Bad")]
    if bad:
        message = "; ".join(f"{n}: {r['status']}" for n, r in bad)
        raise _status_error(int(bad[0][1]["code"]), message)


def dissect(stream: bytes) -> dict[str, Any]:
    """Split captured UA TCP bytes into chunks and describe each.

    Returns ``{"chunks": [...], "error": None | {"offset", "status", "message"}}``.
    Malformed input never raises: the first problem is reported in ``error``.
    """
    result: dict[str, Any] = json.loads(_native.opcua_dissect(stream))
    return result


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
            source_timestamp=parse_datetime(row.get("source_timestamp")),
            server_timestamp=parse_datetime(row.get("server_timestamp")),
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
        result: list[dict[str, Any]] = json.loads(await self._handle.browse(node_id))
        return result

    async def read(self, *node_ids: str, attribute: str | None = None) -> list[Any]:
        """Read one attribute of each node (default: Value); raises if a status is bad.

        ``attribute`` is a name as in the CLI's ``--attribute``: ``"browse-name"``,
        ``"display-name"``, ``"data-type"``, ``"node-class"``, ``"access-level"`` ...
        (``BrowseName`` and ``browse_name`` work too).
        """
        rows = json.loads(await self._handle.read(list(node_ids), attribute))
        _bad_rows(node_ids, rows)
        return [r["value"] for r in rows]

    async def write(self, node_id: str, value: Any, type_name: str = "double") -> None:
        """Write the Value attribute as ``type_name`` (double, int32, string, boolean...)."""
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        await self._handle.write(node_id, text, type_name)

    async def call(self, object_id: str, method_id: str, args: list[str]) -> list[Any]:
        """Call a method with typed text arguments (``"uint32:4"``, ``"string:abc"``)."""
        outputs = json.loads(await self._handle.call(object_id, method_id, args))
        return [
            bytes.fromhex(o["bytes_hex"]) if isinstance(o, dict) and "bytes_hex" in o else o
            for o in outputs
        ]

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
        rows = json.loads(
            await self._handle.monitor(subscription, node_ids, sampling_ms, queue, deadband)
        )
        refused = [r for r in rows if not r["status"].startswith("Good")]
        if refused:
            await self._handle.delete_subscriptions([subscription])
            message = "; ".join(f"{r['node']}: {r['status']}" for r in refused)
            raise _status_error(int(refused[0]["code"]), "not monitored: " + message)
        self._id = subscription
        return self

    async def next(self, timeout: float = 60.0) -> DataChange | None:
        """Wait for the next change of any subscription of the client (None after ``timeout``)."""
        await self.start()
        text = await self._handle.next_change(timeout)
        if text is None:
            return None
        return DataChange._from_row(json.loads(text))

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
        state = json.loads(await self._handle.state())
        await self._handle.delete_subscriptions(state["subscriptions"])

    async def _end(self) -> None:
        await self.delete()


class Server(AsyncService):
    """An OPC UA server with namespace 0 and the Throughput benchmark object (ns=1;i=5000)."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def start(
        cls,
        address: str = "127.0.0.1:4840",
        *,
        security: list[str] | None = None,
        mode: str = "both",
        pki: str | None = None,
        auto_trust: bool = False,
    ) -> Opening[Server]:
        """Start serving on ``address`` (port 0 picks one); await it or ``async with`` it.

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
        return Opening(cls._start(address, security, mode, pki, auto_trust))

    @classmethod
    async def _start(cls, *args: Any) -> Server:
        return cls(await _native.opcua_serve(*args))

    @property
    def endpoint(self) -> str:
        """The endpoint URL clients connect to."""
        return self._handle.endpoint

    async def stop(self) -> None:
        """Stop the server."""
        await self._handle.stop()
