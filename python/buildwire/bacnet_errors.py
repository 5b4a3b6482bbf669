"""The exceptions of the BACnet client, one family under :class:`BacnetError`.

Import them from :mod:`buildwire.bacnet` (they are defined here so that the native module
can make them without importing the whole client module first).

- :class:`BacnetError`: any BACnet failure (the base; also a :class:`RuntimeError`);
- :class:`BacnetErrorResponse`: the device answered with an Error PDU (``error_class``,
  ``error_code``: names and numbers);
- :class:`BacnetWriteMultipleError`: WritePropertyMultiple failed at ``first_failed``;
- :class:`BacnetListError`: Add/RemoveListElement failed at ``first_failed_element``;
- :class:`BacnetReject`: the device rejected the request (``reason``);
- :class:`BacnetAbort`: the transaction was aborted (``reason``, ``by_device``);
- :class:`BacnetTimeoutError`: no answer after every retry (also an
  :class:`asyncio.TimeoutError`).

Example::

    try:
        await client.read(device, "ai,99", "pv")
    except bacnet.BacnetErrorResponse as error:
        print(error.error_class, error.error_code)      # object unknown-object
    except asyncio.TimeoutError:
        print("no answer")
"""

from __future__ import annotations

import asyncio

__all__ = [
    "BacnetAbort",
    "BacnetError",
    "BacnetErrorResponse",
    "BacnetListError",
    "BacnetReject",
    "BacnetTimeoutError",
    "BacnetWriteMultipleError",
]


class BacnetError(RuntimeError):
    """A BACnet request failed; the message says why and what to check.

    Every :class:`buildwire.bacnet.Client` method raises it or one of its subclasses. It is
    a :class:`RuntimeError`, so code written for the older plain ``RuntimeError`` keeps
    working.
    """


class BacnetErrorResponse(BacnetError):
    """The device answered with an Error PDU: its error class and code.

    ``error_class`` and ``error_code`` are the standard names (``"object"``,
    ``"unknown-object"``), ``error_class_number`` and ``error_code_number`` the numbers
    on the wire (proprietary codes have no name: their name is the number as text);
    ``service`` names the failed service (``"read-property"``).

        >>> error = BacnetErrorResponse(
        ...     "read-property failed", service="read-property", error_class="object",
        ...     error_class_number=1, error_code="unknown-object", error_code_number=31)
        >>> (error.error_class, error.error_code_number)
        ('object', 31)
    """

    def __init__(
        self,
        message: str,
        *,
        service: str,
        error_class: str,
        error_class_number: int,
        error_code: str,
        error_code_number: int,
    ) -> None:
        super().__init__(message)
        self.service = service
        self.error_class = error_class
        self.error_class_number = error_class_number
        self.error_code = error_code
        self.error_code_number = error_code_number


class BacnetWriteMultipleError(BacnetErrorResponse):
    """WritePropertyMultiple failed: the writes before ``first_failed`` were done.

    ``first_failed`` is ``(object, property, index)`` of the write that failed (``index``
    is ``None`` for a whole property).
    """

    def __init__(
        self,
        message: str,
        *,
        first_failed: tuple[str, str, int | None],
        **error: object,
    ) -> None:
        super().__init__(message, **error)  # type: ignore[arg-type]
        self.first_failed = first_failed


class BacnetListError(BacnetErrorResponse):
    """AddListElement or RemoveListElement failed: no element was added or removed.

    ``first_failed_element`` is the position (from 1, in the order given) of the first
    element the device refused.
    """

    def __init__(self, message: str, *, first_failed_element: int, **error: object) -> None:
        super().__init__(message, **error)  # type: ignore[arg-type]
        self.first_failed_element = first_failed_element


class BacnetReject(BacnetError):
    """The device rejected the request (it could not parse it, or does not offer it).

    ``reason`` is the reject reason's name (``"unrecognized-service"``), ``reason_number``
    its number.
    """

    def __init__(self, message: str, *, reason: str, reason_number: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.reason_number = reason_number


class BacnetAbort(BacnetError):
    """The transaction was aborted, by the device (``by_device``) or by this client.

    ``reason`` is the abort reason's name (``"segmentation-not-supported"``),
    ``reason_number`` its number.
    """

    def __init__(self, message: str, *, reason: str, reason_number: int, by_device: bool) -> None:
        super().__init__(message)
        self.reason = reason
        self.reason_number = reason_number
        self.by_device = by_device


# asyncio.TimeoutError is the built-in TimeoutError since Python 3.11; before, it is another
# class, and the timeout is both.
_TIMEOUTS: tuple[type[Exception], ...] = (
    (asyncio.TimeoutError,)
    if asyncio.TimeoutError is TimeoutError
    else (asyncio.TimeoutError, TimeoutError)
)


class BacnetTimeoutError(BacnetError, *_TIMEOUTS):  # type: ignore[misc]
    """No answer after every retry (the client's or the call's ``timeout`` and ``retries``).

    Also an :class:`asyncio.TimeoutError` and a :class:`TimeoutError` (one class since
    Python 3.11), so ``except asyncio.TimeoutError`` and ``except TimeoutError`` catch it.
    """


_KINDS: dict[str, type[BacnetError]] = {
    "error": BacnetErrorResponse,
    "write-multiple": BacnetWriteMultipleError,
    "change-list": BacnetListError,
    "reject": BacnetReject,
    "abort": BacnetAbort,
    "timeout": BacnetTimeoutError,
}


def _client_error(kind: str, message: str, details: dict[str, object]) -> BacnetError:
    """Make the exception of one failure (called by the native module)."""
    cls = _KINDS.get(kind, BacnetError)
    if cls is BacnetError or cls is BacnetTimeoutError:
        return cls(message)
    return cls(message, **details)  # type: ignore[arg-type]
