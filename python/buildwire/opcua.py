"""OPC UA tools: UA TCP stream dissection and StatusCode names.

The OPC UA client and server APIs arrive with the OPC UA stack issue; what is here wraps the
Rust wire layers that exist today.

Example:
    >>> from buildwire import opcua
    >>> opcua.status_name(0x80070000)
    'BadDecodingError'

"""

from __future__ import annotations

import json
from typing import Any

from buildwire import _native

__all__ = ["dissect", "status_name"]


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
