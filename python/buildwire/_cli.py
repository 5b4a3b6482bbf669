"""Entry point of the ``buildwire`` command installed with the Python package.

It runs the same Rust command line as the standalone binary.
"""

import os
import signal
import sys

from buildwire._native import run_cli


def main() -> None:
    """Run ``buildwire`` with the process arguments and exit with its status."""
    # The Rust code runs with the GIL released and never returns to Python while a benchmark
    # or server runs, so Python's own Ctrl-C handler would never fire: restore the default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # Like other command-line tools, end quietly when the reader of a pipe goes away.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Benchmarks start this same command line in child processes (decode workers, servers);
    # the running executable is the Python interpreter, so name the command explicitly.
    os.environ.setdefault("BUILDWIRE_PROGRAM", os.path.abspath(sys.argv[0]))
    sys.exit(run_cli(["buildwire", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
