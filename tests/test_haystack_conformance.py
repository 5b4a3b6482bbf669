"""Conformance: our decodings of the example buildings equal those of haystack-core.

haystack-core (npm) is an independent decoder; both sides are compared as canonical JSON v4
(Hayson), row by row. The other independent decoder, libhaystack (Rust), is compared in
``crates/bench/tests/haystack_conformance.rs``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from buildwire import haystack

ORACLE = REPO / "crates" / "bench" / "peers" / "haystack_core_decode.mjs"


@pytest.fixture(scope="module")
def node_peer() -> dict[str, str]:
    """Environment for running the haystack-core oracle (installs it on first use)."""
    assert shutil.which("node"), "node is not installed: apt-get install nodejs"
    subprocess.run([str(REPO / "scripts" / "peers.sh"), "node"], check=True)
    peers = Path(os.environ.get("BUILDWIRE_PEERS", REPO / ".peers"))
    return {**os.environ, "NODE_PATH": str(peers / "node" / "node_modules")}


def normalize(value: Any) -> Any:
    """Canonical form for comparison: the only liberty Hayson allows that the two encoders
    take differently is how a unitless number is written (bare, or as a number kind), and
    float formatting of integral values; both are folded here.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return {"_kind": "number", "val": float(value)}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if value.get("_kind") == "number":
        out = dict(value)
        if isinstance(out["val"], (int, float)):
            out["val"] = float(out["val"])
        if not out.get("unit"):
            out.pop("unit", None)
        return out
    return {k: normalize(v) for k, v in value.items() if k != "_kind" or v != "dict"}


def same(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("fmt", ["zinc", "json", "trio"])
@pytest.mark.parametrize("name", ["alpha", "bravo"])
def test_rows_equal_haystack_core(
    node_peer: dict[str, str], haystack_data: Path, name: str, fmt: str
) -> None:
    path = haystack_data / f"{name}.{fmt}"
    theirs = json.loads(
        subprocess.run(
            ["node", str(ORACLE), str(path)],
            env=node_peer,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    ours = json.loads(haystack.convert(path.read_text(), fmt, "json"))
    assert len(ours["rows"]) == len(theirs["rows"]) == {"alpha": 2032, "bravo": 1077}[name]
    mismatches = [
        (i, ours_row.get("id"))
        for i, (ours_row, their_row) in enumerate(zip(ours["rows"], theirs["rows"]))
        if not same(normalize(ours_row), normalize(their_row))
    ]
    assert not mismatches, f"{len(mismatches)} rows differ, first: {mismatches[:3]}"
    if fmt != "trio":  # Trio has no grid meta
        assert same(normalize(ours["meta"]), normalize(theirs["meta"]))
        assert [c["name"] for c in ours["cols"]] == [c["name"] for c in theirs["cols"]]
