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

__all__ = ["AsyncClient", "AsyncService", "Opening", "Subscribing"]

_E = TypeVar("_E", bound="_EndsOnExit")
_Sub = TypeVar("_Sub", bound="Subscribing")
_T = TypeVar("_T", bound="AsyncClient | AsyncService")


class _EndsOnExit(ABC):
    """Ends itself (close, stop, cancel ...) when its ``async with`` block ends."""

    @abstractmethod
    async def _end(self) -> None:
        """End it the way its class does."""

    async def __aenter__(self: _E) -> _E:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._end()


class AsyncClient(_EndsOnExit):
    """A client: ``async with`` it, or ``await client.close()`` when done."""

    @abstractmethod
    async def close(self) -> None:
        """Close the client; calling it again does nothing."""

    async def _end(self) -> None:
        await self.close()


class AsyncService(_EndsOnExit):
    """A server or other running service: ``async with`` it, or ``await it.stop()``."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop the service; calling it again does nothing."""

    async def _end(self) -> None:
        await self.stop()


class Subscribing(_EndsOnExit):
    """A subscription: made on entering ``async with`` (or when awaited), ended on exit.

    Subclasses make it on the device or server in :meth:`start` (once) and end it there in
    ``_end`` (their public verb: ``delete``, ``cancel`` or ``close``).
    """

    @abstractmethod
    async def start(self: _Sub) -> _Sub:
        """Subscribe now (once); the device's or server's refusal raises here."""

    def __await__(self: _Sub) -> Generator[Any, None, _Sub]:
        return self.start().__await__()

    async def __aenter__(self: _Sub) -> _Sub:
        return await self.start()


class Opening(Coroutine[Any, Any, _T], Generic[_T]):
    """A client or service being opened: await it, or enter it with ``async with``.

    It is a coroutine too, so ``asyncio.run``, ``asyncio.create_task`` and
    ``asyncio.wait_for`` take it as they take ``async def`` calls.
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
