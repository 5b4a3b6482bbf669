"""The BACnet to Haystack gateway for Python.

A BACnet site discovered as a tagged Haystack model, live values and history in a store,
the Haystack API over it with writes back to the devices (the user's guide chapter "BACnet
to Haystack gateway" explains the model).

Example (a simulated device, the gateway in front of it, and its report):

    >>> import asyncio
    >>> from buildwire import bacnet, gateway
    >>> async def main():
    ...     async with bacnet.Server.start("127.0.0.1:0") as device:
    ...         async with gateway.Gateway.start(
    ...             devices=[device.address], bacnet="127.0.0.1:0", haystack="127.0.0.1:0",
    ...             who_is_wait=0.3,
    ...         ) as gw:
    ...             return gw.report["devices"], gw.report["points"], gw.url.startswith("http")
    >>> asyncio.run(main())
    (1, 36, True)

"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from buildwire import _native
from buildwire._lifecycle import AsyncService, Opening

__all__ = ["Gateway"]


class Gateway(AsyncService):
    """A running gateway. Create it with :meth:`Gateway.start`; end it with :meth:`stop`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def start(
        cls,
        config: Mapping[str, Any] | None = None,
        *,
        bacnet: str | None = None,
        broadcast: str | None = None,
        devices: Sequence[str] = (),
        who_is_wait: float | None = None,
        store: str | None = None,
        haystack: str | None = None,
        site: str | None = None,
        tz: str | None = None,
        rules: str | None = None,
        users: Sequence[str] = (),
    ) -> Opening[Gateway]:
        """Discover, store and serve: await it or use it in ``async with``.

        ``config`` has the sections and keys of the TOML configuration file (``site``,
        ``bacnet``, ``collect``, ``store``, ``haystack``) as a dict; the keyword arguments
        override it: ``bacnet`` the gateway's own BACnet/IP address, ``broadcast`` the
        Who-Is broadcast address, ``devices`` addresses asked by unicast Who-Is,
        ``who_is_wait`` seconds, ``store`` (``"memory"``, ``redis://...``,
        ``postgres://...``), ``haystack`` where the API listens (port 0 picks one),
        ``site`` and ``tz`` the site's id and timezone, ``rules`` the text of a rules file
        (default: the shipped rules), ``users`` as ``NAME:PASSWORD:ROLE``. A wrong key or
        value raises :class:`ValueError`; an unreachable store :class:`ConnectionError`.

            >>> Gateway.start({"site": {"tz": "Atlantis"}})  # doctest: +SKIP
            Traceback (most recent call last):
            ValueError: gateway configuration: site.tz "Atlantis" is not a Haystack timezone ...
        """
        merged: dict[str, dict[str, Any]] = {
            section: dict(values) for section, values in (config or {}).items()
        }

        def put(section: str, key: str, value: Any) -> None:
            if value is not None:
                merged.setdefault(section, {})[key] = value

        put("bacnet", "bind", bacnet)
        put("bacnet", "broadcast", broadcast)
        if devices:
            put("bacnet", "devices", [*merged.get("bacnet", {}).get("devices", []), *devices])
        put("bacnet", "who_is_wait_seconds", who_is_wait)
        put("store", "url", store)
        put("haystack", "bind", haystack)
        put("site", "id", site)
        put("site", "tz", tz)
        return Opening(cls._start(json.dumps(merged), rules, list(users)))

    @classmethod
    async def _start(cls, config_json: str, rules: str | None, users: list[str]) -> Gateway:
        return cls(await _native.gateway_start(config_json, rules, users))

    @property
    def url(self) -> str:
        """The Haystack HTTP API's URL (``http://127.0.0.1:8080/api``)."""
        return self._handle.url

    @property
    def ws_url(self) -> str:
        """The Haystack WebSocket API's URL."""
        return self._handle.ws_url

    @property
    def report(self) -> dict[str, Any]:
        """What discovery found.

        Keys: ``devices``, ``points``, ``other_objects``, ``problems``, ``invalid`` (points
        and their problems) and ``untagged`` (points no rule tagged).
        """
        report: dict[str, Any] = json.loads(self._handle.report)
        return report

    @property
    def stats(self) -> dict[str, int]:
        """The collector's counters.

        Keys: ``cov_points``, ``polled_points``, ``changes``, ``samples``, ``store_errors``.
        """
        stats: dict[str, int] = json.loads(self._handle.stats)
        return stats

    def model(self, format: str = "trio") -> str:
        """Encode the model as stored at start: ``"trio"``, ``"zinc"`` or ``"json"`` text."""
        return self._handle.model(format)

    async def stop(self) -> None:
        """Stop serving and collecting (subscriptions are cancelled); again does nothing."""
        await self._handle.stop()
