"""The Python package and the ``buildwire`` command it installs."""

from __future__ import annotations

import json
import re
import subprocess

from conftest import REPO

import buildwire


def cargo_version() -> str:
    text = (REPO / "Cargo.toml").read_text()
    match = re.search(r'^version = "([^"]+)"', text, re.MULTILINE)
    assert match
    return match.group(1)


def test_version_matches_the_rust_workspace() -> None:
    assert buildwire.__version__ == cargo_version()


def test_command_prints_its_version(buildwire_cmd: list[str]) -> None:
    out = subprocess.run([*buildwire_cmd, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"buildwire {cargo_version()}"


def test_help_teaches_with_examples(buildwire_cmd: list[str]) -> None:
    out = subprocess.run([*buildwire_cmd, "--help"], capture_output=True, text=True, check=True)
    assert "Examples:" in out.stdout
    assert "bench" in out.stdout


def test_usage_error_exits_2_and_says_what_to_do(buildwire_cmd: list[str]) -> None:
    out = subprocess.run([*buildwire_cmd, "no-such-command"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "--help" in out.stderr


def test_udp_limit_report_is_json_with_checked_replies(buildwire_cmd: list[str]) -> None:
    out = subprocess.run(
        [
            *buildwire_cmd,
            *["bench", "limit", "udp", "--in-flight", "4", "--warmup", "0.1"],
            *["--seconds", "0.4", "--json"],
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout)
    assert report["benchmark"] == "limit udp"
    assert report["machine"]["cores"] >= 1
    assert report["config"]["in_flight"] == 4
    (m,) = report["results"]
    assert m["answered"] > 0
    assert m["errors"] == 0
    assert m["latency_ms"]["count"] == m["answered"]
    # The human table goes to stderr when stdout carries JSON.
    assert "udp-limit" in out.stderr


def test_bad_option_value_is_explained(buildwire_cmd: list[str]) -> None:
    out = subprocess.run(
        [*buildwire_cmd, "bench", "limit", "udp", "--placement", "sideways"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "same-core" in out.stderr
