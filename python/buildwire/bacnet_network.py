"""BACnet networks for Python: routers, BBMDs and foreign devices (asyncio).

Devices behind a router are addressed ``"NETWORK:HEXMAC"`` (as bac-py writes them) or
``"NETWORK:HOST:PORT"``; the client finds the router with Who-Is-Router-To-Network, or uses
the one named after ``@`` (``"2:0a000005bac0@10.0.1.1:47808"``). Every method of
:class:`buildwire.bacnet.Client` takes these addresses.

Example (a router between two loopback "networks" that differ by port, a device behind it):

    >>> import asyncio
    >>> from buildwire import bacnet, bacnet_network
    >>> async def main():
    ...     router = await bacnet_network.Router.start(
    ...         ["1=bip:127.0.0.1:47931", "2=bip:127.0.0.1:47932"])
    ...     server = await bacnet.Server.start("127.0.0.3:47932")
    ...     client = await bacnet.Client.bind("127.0.0.2:47931", "127.255.255.255")
    ...     value = await client.read("2:127.0.0.3:47932", "ai,1", "pv")
    ...     await client.close()
    ...     await server.stop()
    ...     await router.stop()
    ...     return value
    >>> asyncio.run(main())
    61.5

"""

from __future__ import annotations

import json
from typing import Any

from buildwire import _native
from buildwire._lifecycle import AsyncService, Opening
from buildwire.bacnet import Client

__all__ = ["Bbmd", "Router", "foreign_client", "read_bdt", "read_fdt"]


class Router(AsyncService):
    """A running BACnet router. Start it with :meth:`Router.start`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def start(
        cls,
        ports: list[str],
        routes: list[str] | None = None,
        device_id: int | None = None,
        objects: str = "none",
        accept_routing_table_updates: bool = False,
    ) -> Opening[Router]:
        """Bind the ports and start routing.

        ``ports``: ``"NETWORK=bip:HOST:PORT[,broadcast=IP][,bdt=FILE]"`` or
        ``"NETWORK=bip6:[ADDRESS]:PORT[,vmac=HEX6][,interface=NAME][,group=ADDRESS]"``.
        ``routes``: static routes ``"NETWORK=PORT_NETWORK[:NEXT_HOP_HEXMAC]"``.
        ``device_id`` hosts a device in the router (``objects``: ``"none"`` or ``"stress"``).
        Await it or use it in ``async with``.
        """
        return Opening(
            cls._start(ports, routes or [], device_id, objects, accept_routing_table_updates)
        )

    @classmethod
    async def _start(cls, *args: Any) -> Router:
        return cls(await _native.bacnet_router(*args))

    def ports(self) -> list[dict[str, Any]]:
        """Return the ports: ``network``, ``link``, ``address`` and ``vmac`` (B/IPv6)."""
        result: list[dict[str, Any]] = json.loads(self._handle.ports())
        return result

    def routes(self) -> list[dict[str, Any]]:
        """Return the routing table: ``network``, ``port`` (1-based), ``next_hop``, ``static``."""
        result: list[dict[str, Any]] = json.loads(self._handle.routes())
        return result

    def stats(self) -> dict[str, int]:
        """Counters: routed, rejects sent, loops dropped, hop counts exhausted..."""
        result: dict[str, int] = json.loads(self._handle.stats())
        return result

    def set_busy(self, busy: bool) -> None:
        """Announce Router-Busy-To-Network (or Router-Available) and reject while busy."""
        self._handle.set_busy(busy)

    async def stop(self) -> None:
        """Stop routing."""
        self._handle.close()


class Bbmd(AsyncService):
    """A running BBMD (Annex J). Start it with :meth:`Bbmd.start`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def start(
        cls,
        bind: str,
        bdt: list[str] | None = None,
        broadcast: str | None = None,
        allow_write_bdt: bool = False,
        max_foreign_devices: int = 512,
    ) -> Opening[Bbmd]:
        """Start a BBMD on ``bind`` (its own IP address and port).

        ``bdt`` lists the peer BBMDs as ``"ADDRESS:PORT[/MASK]"`` (default mask /32:
        two-hop); this BBMD is added when missing. Await it or use it in ``async with``.
        """
        return Opening(cls._start(bind, bdt or [], broadcast, allow_write_bdt, max_foreign_devices))

    @classmethod
    async def _start(cls, *args: Any) -> Bbmd:
        return cls(await _native.bacnet_bbmd(*args))

    @property
    def address(self) -> str:
        """The address it listens on."""
        return str(self._handle.local_address)

    def bdt(self) -> list[dict[str, str]]:
        """Return the broadcast distribution table: ``address`` and ``mask``."""
        result: list[dict[str, str]] = json.loads(self._handle.bdt())
        return result

    def fdt(self) -> list[dict[str, Any]]:
        """Return the foreign device table: ``address``, ``ttl`` and ``remaining`` seconds."""
        result: list[dict[str, Any]] = json.loads(self._handle.fdt())
        return result

    def stats(self) -> dict[str, int]:
        """Counters: forwarded, registrations, NAKs, rate-limited..."""
        result: dict[str, int] = json.loads(self._handle.stats())
        return result

    async def stop(self) -> None:
        """Stop the BBMD."""
        self._handle.close()


async def read_bdt(address: str, timeout: float = 3.0) -> list[dict[str, str]]:
    """Read-BDT from the BBMD at ``address``."""
    result: list[dict[str, str]] = json.loads(await _native.bacnet_read_bdt(address, timeout))
    return result


async def read_fdt(address: str, timeout: float = 3.0) -> list[dict[str, Any]]:
    """Read-FDT from the BBMD at ``address``."""
    result: list[dict[str, Any]] = json.loads(await _native.bacnet_read_fdt(address, timeout))
    return result


def foreign_client(
    bind: str, bbmd: str, ttl: int = 60, broadcast: str | None = None
) -> Opening[Client]:
    """Start a client registered as a foreign device with the BBMD at ``bbmd``.

    The registration is renewed at half of ``ttl``; Who-Is then reaches the BBMD's subnets.
    Await it or use it in ``async with``.
    """
    return Opening(_foreign_client(bind, bbmd, ttl, broadcast))


async def _foreign_client(bind: str, bbmd: str, ttl: int, broadcast: str | None) -> Client:
    return Client(await _native.bacnet_foreign_client(bind, bbmd, ttl, broadcast))
