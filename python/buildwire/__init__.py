"""buildwire: BACnet, Project Haystack and OPC UA in one fast, safe stack.

The protocol work happens in Rust; this package exposes it to Python with asyncio-friendly,
typed APIs and installs the ``buildwire`` command.

Example:
    >>> import buildwire
    >>> buildwire.__version__  # doctest: +ELLIPSIS
    '...'

Logging:
    The servers and clients log what happens to them (OPC UA channels and sessions, BACnet
    peers' errors, BACnet/SC connections, reconnects) to Python's :mod:`logging`, on
    loggers named after the Rust module that logs: ``buildwire.opcua.driver.server``,
    ``buildwire.bacnet.driver.server``, ``buildwire.bacnet.driver.sc.hub``. Each record
    carries the event's fields as a dict, ``record.buildwire``. Configure them as any
    logger::

        import logging

        logging.basicConfig(level=logging.INFO)
        logging.getLogger("buildwire.opcua").setLevel(logging.WARNING)

"""

from buildwire._native import __version__

__all__ = ["__version__"]
