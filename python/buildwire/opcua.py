"""OPC UA for Python: an asyncio client and server, stream dissection, StatusCode names.

Example (our server with the Throughput methods, and a client calling them):

    >>> import asyncio
    >>> from buildwire import opcua
    >>> async def main():
    ...     server = await opcua.Server.start("127.0.0.1:0")
    ...     client = await opcua.Client.connect(server.endpoint)
    ...     await client.call("ns=1;i=5000", "ns=1;i=6000", ["uint32:4"])
    ...     (data,) = await client.call("ns=1;i=5000", "ns=1;i=6001", [])
    ...     names = [r["browse_name"] for r in await client.browse("i=85")]
    ...     await client.close()
    ...     await server.stop()
    ...     return len(data), names
    >>> asyncio.run(main())
    (4096, ['Server', '1:Throughput'])

Wire tools:

    >>> from buildwire import opcua
    >>> opcua.status_name(0x80070000)
    'BadDecodingError'

"""

from __future__ import annotations

import json
from typing import Any

from buildwire import _native

__all__ = ["Client", "Server", "dissect", "status_name"]


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


class Client:
    """An asyncio OPC UA client session. Create it with :meth:`connect`.

    NodeIds are text: ``"i=2258"``, ``"ns=1;i=5000"``, ``"ns=2;s=Name"``. Bad status codes
    raise :class:`RuntimeError` naming the code.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    async def connect(
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
    ) -> Client:
        """Connect to ``opc.tcp://host:port`` and activate a session (anonymous by default).

        With ``security`` (``"Basic256Sha256"``, ``"Aes128_Sha256_RsaOaep"`` or
        ``"Aes256_Sha256_RsaPss"``) the channel is signed (``mode="sign"``) or signed and
        encrypted (``mode="encrypt"``) with our certificate in ``pki`` (created on first use).
        The server's certificate must be in ``pki/trusted`` (an unknown one is stored in
        ``pki/rejected`` and refused) unless ``trust_server=True``. The password is encrypted
        with the server's certificate. ``user_cert``/``user_key`` (DER files) log in with an
        X.509 user certificate instead.

        Example::

            client = await Client.connect(
                "opc.tcp://127.0.0.1:4840",
                "alice",
                "secret",
                security="Aes256_Sha256_RsaPss",
                pki="/var/lib/myapp/pki",
            )
        """
        handle = await _native.opcua_connect(
            endpoint,
            user,
            password,
            security,
            mode if security else None,
            pki,
            trust_server,
            user_cert,
            user_key,
        )
        return cls(handle)

    async def browse(self, node_id: str = "i=85") -> list[dict[str, Any]]:
        """Forward hierarchical references of a node (default: the Objects folder)."""
        result: list[dict[str, Any]] = json.loads(await self._handle.browse(node_id))
        return result

    async def read(self, *node_ids: str) -> list[Any]:
        """Read the Value attribute of each node (raises if a status is bad)."""
        rows = json.loads(await self._handle.read(list(node_ids)))
        bad = [
            f"{n}: {r['status']}" for n, r in zip(node_ids, rows) if r["status"].startswith("Bad")
        ]
        if bad:
            raise RuntimeError("; ".join(bad))
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

    async def close(self) -> None:
        """Close the session and the connection."""
        await self._handle.close()


class Server:
    """An OPC UA server with namespace 0 and the Throughput benchmark object (ns=1;i=5000)."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    async def start(
        cls,
        address: str = "127.0.0.1:4840",
        *,
        security: list[str] | None = None,
        mode: str = "both",
        pki: str | None = None,
        auto_trust: bool = False,
    ) -> Server:
        """Start serving on ``address`` (port 0 picks one).

        Without ``security`` only SecurityPolicy None is offered. With a list of policies
        (``["Basic256Sha256", "Aes256_Sha256_RsaPss"]``; add ``"None"`` to keep an open
        endpoint) each is offered in ``mode`` (``"sign"``, ``"encrypt"`` or ``"both"``) with
        the certificate in ``pki`` (created on first use). Client certificates must be in
        ``pki/trusted``; refused ones are stored in ``pki/rejected`` (``auto_trust=True``
        accepts every one: tests and demos only).

        Example::

            server = await Server.start(
                "127.0.0.1:0", security=["Aes256_Sha256_RsaPss"], pki="/var/lib/myapp/pki"
            )
        """
        handle = await _native.opcua_serve(address, security, mode, pki, auto_trust)
        return cls(handle)

    @property
    def endpoint(self) -> str:
        """The endpoint URL clients connect to."""
        return self._handle.endpoint

    async def stop(self) -> None:
        """Stop the server."""
        await self._handle.stop()
