"""Shared fixtures: where the installed ``buildwire`` command and the shared data live."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def buildwire_cmd() -> list[str]:
    """The ``buildwire`` console script installed into this venv with the package."""
    script = Path(sys.executable).parent / "buildwire"
    if not script.exists():
        found = shutil.which("buildwire")
        assert found, "the buildwire command is not installed: run `make test`"
        script = Path(found)
    return [str(script)]


@pytest.fixture(scope="session")
def haystack_data() -> Path:
    """The Alpha and Bravo example buildings (shared/data/haystack beside the repo)."""
    path = SHARED / "data" / "haystack"
    assert path.is_dir(), f"{path} is missing: clone the project next to shared/"
    return path


def free_udp_port() -> int:
    """A UDP port free on 127.0.0.1 and on the loopback broadcast address."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
                other.bind(("127.255.255.255", port))
        except OSError:
            continue
        return port
    raise RuntimeError("no free UDP port found")


@contextmanager
def serve_haystack(
    cmd: list[str], data: Path, *options: str, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Run `buildwire haystack serve` on a free port of 127.0.0.1; yields its API URL."""
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [*cmd, "haystack", "serve", "--bind", "127.0.0.1:0", "--data", str(data), *options],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        log.seek(0)
        assert line.startswith("listening on http://127.0.0.1:"), f"{line!r}: {log.read()}"
        yield line.split()[2]
    finally:
        process.terminate()
        process.wait(timeout=10)
