"""OPC UA interoperability with asyncua on 127.0.0.1 (SecurityPolicy None), both directions.

(a) the asyncua client (tests/peers/asyncua_client.py) against `buildwire opcua serve
    --bench-methods`;
(b) our CLI client (`buildwire opcua browse/read/write/call --json`) against an asyncua server
    (tests/peers/asyncua_server.py) with the same Throughput object and Setpoint variable;
(c) `buildwire bench opcua throughput` against the asyncua server, checking the line format
    of open62541's benchmark.

Each test picks a free non-default port, starts and stops its own processes.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO / ".peers" / "py311" / "bin" / "python"
SERVER_SCRIPT = REPO / "tests" / "peers" / "asyncua_server.py"
CLIENT_SCRIPT = REPO / "tests" / "peers" / "asyncua_client.py"
RATE_LINE = re.compile(
    r"^Rate = \d+\.\d+ Mebibit/s = \d+\.\d+ Mebibyte/s Total Size = \d+\.\d+ MiB, "
    r"Time = \d+\.\d+ s$"
)


@pytest.fixture(scope="module")
def peer_python() -> Path:
    """The Python 3.11 venv holding asyncua (installed by scripts/peers.sh, idempotent)."""
    if not PEERS.exists():
        subprocess.run([str(REPO / "scripts" / "peers.sh"), "py311"], check=True, timeout=900)
    assert PEERS.exists(), f"{PEERS} is missing after scripts/peers.sh py311"
    check = subprocess.run([str(PEERS), "-c", "import asyncua"], capture_output=True, timeout=60)
    assert check.returncode == 0, check.stderr
    return PEERS


def free_tcp_port() -> int:
    """A TCP port free on 127.0.0.1 (never the default 4840)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port != 4840:
            return port


def start(command: list[str], needle: str = "listening on", timeout: float = 30):
    """Starts `command` and waits until it prints a line containing `needle`."""
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if needle in line:
            return process, line.strip()
        if not line and process.poll() is not None:
            break
    stop(process)
    log.seek(0)
    raise AssertionError(f"{command[:2]} did not print {needle!r}: {log.read()}")


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def our_server(buildwire_cmd: list[str]) -> Iterator[str]:
    port = free_tcp_port()
    process, line = start(
        [*buildwire_cmd, "opcua", "serve", "--bind", f"127.0.0.1:{port}", "--bench-methods"]
    )
    try:
        assert line == f"listening on opc.tcp://127.0.0.1:{port}/"
        yield f"opc.tcp://127.0.0.1:{port}/"
    finally:
        stop(process)


@pytest.fixture
def asyncua_server(peer_python: Path) -> Iterator[str]:
    port = free_tcp_port()
    process, _ = start([str(peer_python), str(SERVER_SCRIPT), str(port)])
    try:
        yield f"opc.tcp://127.0.0.1:{port}/"
    finally:
        stop(process)


def run_json(command: list[str]) -> dict:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_asyncua_client_against_our_server(peer_python: Path, our_server: str) -> None:
    out = run_json([str(peer_python), str(CLIENT_SCRIPT), our_server])
    assert "i=2253" in out["objects_children"]
    assert "ns=1;i=5000" in out["objects_children"]
    assert out["namespace_array"][0] == "http://opcfoundation.org/UA/"
    assert out["current_time"][:4] >= "2024"
    assert out["setpoint"] == 42.5
    assert out["get_data_length"] == 1024


def test_our_client_against_asyncua_server(buildwire_cmd: list[str], asyncua_server: str) -> None:
    opcua = [*buildwire_cmd, "opcua"]
    browsed = run_json([*opcua, "browse", asyncua_server, "--json"])
    ids = {reference["node_id"] for reference in browsed["references"]}
    assert {"i=2253", "ns=1;i=5000", "ns=1;s=Setpoint"} <= ids

    read = run_json([*opcua, "read", asyncua_server, "i=2258", "i=2255", "--json"])
    current_time, namespaces = read["results"]
    assert current_time["type"] == "DateTime" and current_time["value"][:4] >= "2024"
    assert namespaces["value"][0] == "http://opcfoundation.org/UA/"

    written = run_json(
        [*opcua, "write", asyncua_server, "ns=1;s=Setpoint", "12.75", "--type", "double", "--json"]
    )
    assert written["value"] == 12.75
    read = run_json([*opcua, "read", asyncua_server, "ns=1;s=Setpoint", "--json"])
    assert read["results"][0]["value"] == 12.75

    called = run_json(
        [*opcua, "call", asyncua_server, "ns=1;i=5000", "ns=1;i=6000", "uint32:1", "--json"]
    )
    assert called["outputs"] == []
    called = run_json([*opcua, "call", asyncua_server, "ns=1;i=5000", "ns=1;i=6001", "--json"])
    assert called["outputs"][0]["length"] == 1024

    # A node the server does not have: the server's Bad_ StatusCode reaches the user (asyncua
    # answers Bad_UserAccessDenied before looking the node up).
    failed = subprocess.run(
        [*opcua, "write", asyncua_server, "ns=1;s=Missing", "1", "--type", "double"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failed.returncode == 1
    assert re.search(r"^error: Bad\w+ \(0x8[0-9A-F]{7}\): writing ns=1;s=Missing", failed.stderr)


def test_throughput_benchmark_against_asyncua(
    buildwire_cmd: list[str], asyncua_server: str
) -> None:
    done = subprocess.run(
        [
            *buildwire_cmd,
            "bench",
            "opcua",
            "throughput",
            "--endpoint",
            asyncua_server,
            "--size-kib",
            "1",
            "--seconds",
            "2",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    rate_lines = [line for line in lines if line.startswith("Rate = ")]
    assert rate_lines, done.stdout
    assert all(RATE_LINE.match(line) for line in rate_lines), rate_lines
    report = json.loads(lines[-1])["report"]
    assert report["size_kib"] == 1
    assert report["calls"] > 0
    assert report["total_bytes"] == report["calls"] * 1024
    assert 1.9 <= report["elapsed_s"] < 10


def test_our_cli_checks_and_writes_typed_to_asyncua_server(
    buildwire_cmd: list[str], asyncua_server: str
) -> None:
    """`opcua endpoints` reads asyncua's endpoints, ServerStatus and namespaces; `opcua
    write` without --type sends the node's DataType (Float) and refuses what a Float cannot
    hold; `opcua call` types a bare argument by the method's InputArguments (UInt32)."""
    opcua = [*buildwire_cmd, "opcua"]
    checked = run_json([*opcua, "endpoints", asyncua_server, "--json"])
    policies = {(e["security_policy"], e["security_mode"]) for e in checked["endpoints"]}
    assert ("None", "None") in policies
    tokens = {t["type"] for e in checked["endpoints"] for t in e["user_tokens"]}
    assert "Anonymous" in tokens
    assert checked["server_status"]["state"] == "Running"
    assert checked["server_status"]["build_info"]["product_uri"]
    assert checked["namespaces"][0] == "http://opcfoundation.org/UA/"

    written = run_json([*opcua, "write", asyncua_server, "ns=1;s=Ratio", "0.25", "--json"])
    assert written["value"] == 0.25
    read = run_json([*opcua, "read", asyncua_server, "ns=1;s=Ratio", "--json"])
    assert read["results"][0]["type"] == "Float" and read["results"][0]["value"] == 0.25

    refused = subprocess.run(
        [*opcua, "write", asyncua_server, "ns=1;s=Ratio", "3.4e39"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 1
    assert "out of range for float" in refused.stderr and "Float" in refused.stderr

    called = run_json([*opcua, "call", asyncua_server, "ns=1;i=5000", "ns=1;i=6000", "2", "--json"])
    assert called["status"].startswith("Good")
