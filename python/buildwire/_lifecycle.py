"""The one lifecycle of every client and server in buildwire (see docs/conventions.md).

- Clients are made with an async class method (``connect``/``bind``) and end with
  ``await client.close()``; servers and other services (routers, BBMDs, hubs) are made with
  ``start`` and end with ``await server.stop()``.
- What ``connect``/``bind``/``start`` return can be awaited (``client = await
  Client.connect(...)``) or used directly in ``async with`` (``async with
  Client.connect(...) as client:``), which closes or stops it at the end of the block. The
  objects themselves are async context managers too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Coroutine, Generator
from types import TracebackType
from typing import Any, Generic, TypeVar

__all__ = ["AsyncClient", "AsyncService", "Opening"]

_C = TypeVar("_C", bound="AsyncClient")
_S = TypeVar("_S", bound="AsyncService")
_T = TypeVar("_T", bound="AsyncClient | AsyncService")


class AsyncClient(ABC):
    """A client: ``async with`` it, or ``await client.close()`` when done."""

    @abstractmethod
    async def close(self) -> None:
        """Close the client; calling it again does nothing."""

    async def __aenter__(self: _C) -> _C:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


class AsyncService(ABC):
    """A server or other running service: ``async with`` it, or ``await it.stop()``."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop the service; calling it again does nothing."""

    async def __aenter__(self: _S) -> _S:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


class Opening(Coroutine[Any, Any, _T], Generic[_T]):
    """A client or service being opened: await it, or enter it with ``async with``.

    It is a coroutine too, so ``asyncio.run``, ``asyncio.create_task`` and
    ``asyncio.wait_for`` take it as they take ``async def`` calls.

    >>> import asyncio
    >>> from buildwire import bacnet
    >>> async def main():
    ...     async with bacnet.Server.start("127.0.0.1:0") as server:
    ...         async with bacnet.Client.bind("127.0.0.1:0") as client:
    ...             return await client.read(server.address, "ai,1", "pv")
    >>> asyncio.run(main())
    61.5
    """

    __slots__ = ("_opened", "_pending")

    def __init__(self, pending: Coroutine[Any, Any, _T]) -> None:
        self._pending = pending
        self._opened: _T | None = None

    def __await__(self) -> Generator[Any, None, _T]:
        return self._pending.__await__()

    def send(self, value: Any) -> Any:
        """Advance the opening (the coroutine protocol)."""
        return self._pending.send(value)

    def throw(self, *args: Any) -> Any:
        """Raise into the opening (the coroutine protocol)."""
        return self._pending.throw(*args)

    def close(self) -> None:
        """Abandon the opening (the coroutine protocol)."""
        self._pending.close()

    async def __aenter__(self) -> _T:
        self._opened = await self._pending
        return self._opened

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._opened is not None:
            await self._opened.__aexit__(exc_type, exc, tb)
