"""BACnet Secure Connect (Annex AB) for Python: test certificates, a hub, and devices on a hub.

Hub and nodes speak WebSockets over TLS 1.3 with mutual authentication: each side presents an
operational certificate issued by a CA the other trusts. ``make_certificates`` writes a test CA
and certificates (EC P-256, subject alternative names for 127.0.0.1, ::1 and localhost).

Example (a hub and the 40-object stress device on it, on loopback):

    >>> import asyncio, tempfile
    >>> from buildwire import bacnet_sc
    >>> async def main():
    ...     pki = tempfile.mkdtemp()
    ...     bacnet_sc.make_certificates(pki, ["hub", "device"])
    ...     hub = await bacnet_sc.Hub.start("127.0.0.1:0", **bacnet_sc.tls_files(pki, "hub"))
    ...     device = await bacnet_sc.Device.start(hub.uri, **bacnet_sc.tls_files(pki, "device"))
    ...     nodes = (await hub.stats())["nodes"]
    ...     await device.stop()
    ...     await hub.stop()
    ...     return nodes
    >>> asyncio.run(main())
    1

"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from buildwire import _native
from buildwire._bacnet_values import property_value
from buildwire._lifecycle import AsyncClient, AsyncService, Opening

__all__ = ["Client", "Device", "Hub", "make_certificates", "tls_files"]


def make_certificates(directory: str | Path, names: list[str], days: int = 365) -> list[str]:
    """Write ``ca.crt``/``ca.key`` and ``NAME.crt``/``NAME.key`` per name; return the files."""
    return _native.bacnet_sc_certs(str(directory), list(names), days)


def tls_files(directory: str | Path, name: str) -> dict[str, Any]:
    """Return the ``cert``, ``key`` and ``ca`` arguments of certificate ``name`` in a folder."""
    folder = Path(directory)
    return {
        "cert": str(folder / f"{name}.crt"),
        "key": str(folder / f"{name}.key"),
        "ca": [str(folder / "ca.crt")],
    }


class Hub(AsyncService):
    """A running BACnet/SC hub. Start it with :meth:`Hub.start`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def start(
        cls,
        bind: str,
        cert: str | None = None,
        key: str | None = None,
        ca: list[str] | None = None,
        no_tls: bool = False,
    ) -> Opening[Hub]:
        """Listen on ``bind`` (``HOST:PORT``; port 0 picks one) with mutual TLS 1.3.

        ``no_tls=True`` serves plaintext ``ws://``: only for comparing with TLS. Await it or
        use it in ``async with``.
        """
        return Opening(cls._start(bind, cert, key, ca or [], no_tls))

    @classmethod
    async def _start(cls, *args: Any) -> Hub:
        return cls(await _native.bacnet_sc_hub(*args))

    @property
    def uri(self) -> str:
        """``wss://HOST:PORT`` for nodes to connect to."""
        return str(self._handle.uri)

    async def stats(self) -> dict[str, int]:
        """Counters: nodes, connections, relayed unicasts, broadcast copies, refusals."""
        result: dict[str, int] = json.loads(await self._handle.stats())
        return result

    async def stop(self) -> None:
        """Disconnect every node and stop."""
        await self._handle.stop()


class Device(AsyncService):
    """The 40-object stress device on a BACnet/SC node. Start it with :meth:`Device.start`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def start(
        cls,
        hub: str,
        cert: str | None = None,
        key: str | None = None,
        ca: list[str] | None = None,
        no_tls: bool = False,
        device_id: int = 400,
        failover_hub: str | None = None,
    ) -> Opening[Device]:
        """Connect to ``hub`` (and ``failover_hub`` when it fails) and serve.

        Await it or use it in ``async with``.
        """
        return Opening(cls._start(hub, cert, key, ca or [], no_tls, device_id, failover_hub))

    @classmethod
    async def _start(cls, *args: Any) -> Device:
        return cls(await _native.bacnet_sc_device(*args))

    @property
    def vmac(self) -> str:
        """The node's VMAC, ``xx:xx:xx:xx:xx:xx``."""
        return str(self._handle.vmac)

    async def stop(self) -> None:
        """Stop serving and leave the hub."""
        await self._handle.stop()


class Client(AsyncClient):
    """A BACnet client on its own BACnet/SC node; devices are addressed by VMAC.

    Start it with :meth:`Client.connect`. Values come back as Python values (a list of
    several for a list or array property).
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def connect(
        cls,
        hub: str,
        cert: str | None = None,
        key: str | None = None,
        ca: list[str] | None = None,
        no_tls: bool = False,
    ) -> Opening[Client]:
        """Join the hub at ``hub`` (``wss://HOST:PORT``) as a new node.

        Await it or use it in ``async with``.
        """
        return Opening(cls._connect(hub, cert, key, ca or [], no_tls))

    @classmethod
    async def _connect(cls, *args: Any) -> Client:
        return cls(await _native.bacnet_sc_client(*args))

    async def close(self) -> None:
        """Leave the hub and stop the client."""
        self._handle.close()

    async def who_is(self, timeout: float = 2.0) -> list[dict[str, Any]]:
        """Broadcast Who-Is through the hub; each answer's VMAC ``address`` and ``instance``."""
        result: list[dict[str, Any]] = json.loads(await self._handle.who_is(timeout))
        return result

    async def read(self, device: str, object_id: str, property_id: str) -> Any:
        """ReadProperty from the device at VMAC ``device``, e.g. ``read(v, "av,1", "pv")``."""
        return property_value(await self._handle.read(device, object_id, property_id))

    async def write(
        self,
        device: str,
        object_id: str,
        property_id: str,
        value: Any,
        priority: int | None = None,
    ) -> None:
        """WriteProperty; the value is typed from the object (real for analog values...)."""
        if value is None:
            text = "null"
        elif isinstance(value, bool):
            text = str(value).lower()
        else:
            text = str(value)
        await self._handle.write(device, object_id, property_id, text, priority)
