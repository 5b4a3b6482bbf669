"""Type stubs of the Rust extension module ``buildwire._native``."""

__version__: str

def run_cli(argv: list[str]) -> int:
    """Run the ``buildwire`` command line with ``argv`` (program name first)."""
