"""Smoke runs of the Haystack load benchmarks: a second or two each, checking the report.

No speed is asserted here (rule 5): the numbers live in BENCHMARKS.md. What is checked is
that every target ran, every counted reply was checked correct (no errors), and the JSON
report has the documented shape.
"""

import json
import subprocess
from pathlib import Path

import pytest


@pytest.mark.parametrize("api", ["http", "ws"])
def test_haystack_load_benchmark_smoke(
    api: str, buildwire_cmd: list[str], haystack_data: Path
) -> None:
    """Runs `buildwire bench haystack http|ws` briefly against buildwire and the limit."""
    result = subprocess.run(
        [
            *buildwire_cmd,
            "bench",
            "haystack",
            api,
            "--data",
            str(haystack_data),
            "--buildings",
            "bravo",
            "--connections",
            "2",
            "--warmup",
            "0.5",
            "--seconds",
            "1",
            "--targets",
            "buildwire,limit",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["benchmark"] == f"haystack {api}"
    assert report["config"]["connections"] == 2
    targets = {entry["target"]: entry for entry in report["results"]}
    assert set(targets) == {"buildwire", "limit"}
    for name, entry in targets.items():
        assert "error" not in entry, f"{name}: {entry.get('error')}"
        ops = {op["name"]: op for op in entry["outcome"]["ops"]}
        assert set(ops) == {"about", "ops", "read site", "read point", "nav", "overall"}
        overall = ops["overall"]
        assert overall["errors"] == 0, f"{name}: {overall['first_error']}"
        assert overall["answered"] > 0
        assert overall["answered"] == sum(
            op["answered"] for op_name, op in ops.items() if op_name != "overall"
        )
        assert ops["read point"]["bytes_per_sec"] > 0
