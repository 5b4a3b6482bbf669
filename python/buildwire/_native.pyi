"""Type stubs of the Rust extension module ``buildwire._native``."""

__version__: str

def run_cli(argv: list[str]) -> int:
    """Run the ``buildwire`` command line with ``argv`` (program name first)."""

def bacnet_dissect(datagram: bytes) -> str:
    """Dissect a BACnet/IP datagram; JSON text."""

def bacnet_parse_object_identifier(text: str) -> tuple[str, int, int]:
    """Parse ``ai,1``; (type name, type number, instance)."""

def bacnet_property(text: str) -> tuple[str, int]:
    """Resolve a property name or alias; (name, number)."""

def opcua_dissect(stream: bytes) -> str:
    """Dissect UA TCP bytes; JSON text."""

def opcua_status_name(code: int) -> str | None:
    """Name of a StatusCode, or None."""

def haystack_convert(text: str, from_: str, to: str) -> str:
    """Convert a grid between ``zinc``, ``json``, ``json3`` and ``trio``."""

def haystack_convert_value(text: str, from_: str, to: str) -> str:
    """Convert one value between ``zinc`` and ``json`` (Hayson)."""
