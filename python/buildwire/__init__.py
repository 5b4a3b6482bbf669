"""buildwire: BACnet, Project Haystack and OPC UA in one fast, safe stack.

The protocol work happens in Rust; this package exposes it to Python with asyncio-friendly,
typed APIs and installs the ``buildwire`` command.

Example:
    >>> import buildwire
    >>> buildwire.__version__  # doctest: +ELLIPSIS
    '...'

"""

from buildwire._native import __version__

__all__ = ["__version__"]
