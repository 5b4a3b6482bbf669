"""Shared fixtures: where the installed ``buildwire`` command and the shared data live."""

from __future__ import annotations

import shutil
import sys
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
