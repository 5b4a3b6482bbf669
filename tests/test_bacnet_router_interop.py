"""Our router and BBMD between independent BACnet stacks, on 127.0.0.1 with distinct ports.

(a) BACpypes3 as a client on network 1 reads and writes our stress server on network 2
    through our router (`buildwire bacnet router`);
(b) our client on network 1 reads a BACpypes3 device on network 2 through our router;
(c) BACpypes3 registers as a foreign device of our BBMD (`buildwire bacnet bbmd`), finds our
    server on the BBMD's subnet with a broadcast Who-Is and reads it; Read-FDT lists it.

BACpypes3 binds its broadcast socket without SO_REUSEADDR, so on loopback it cannot share the
router's port to hear a broadcast I-Am-Router-To-Network: its router cache is told the route
(as that answer would), and the requests and answers still cross our router. Across separate
hosts (tests/test_bacnet_netns.py) every device is on port 47808 and discovery is broadcast.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_bacnet_interop import (
    DEVICE_INSTANCE,
    DEVICE_SCRIPT,
    PEERS,
    REPO,
    free_udp_port,
    stop,
    wait_for_line,
)

CLIENT_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_client.py"
FOREIGN_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_foreign.py"


@pytest.fixture(scope="module")
def peer_python() -> Path:
    """The Python 3.11 venv holding BACpypes3 (installed by scripts/peers.sh, idempotent)."""
    subprocess.run([str(REPO / "scripts" / "peers.sh"), "py311"], check=True, timeout=900)
    assert PEERS.exists(), f"{PEERS} is missing after scripts/peers.sh py311"
    return PEERS


@contextmanager
def running(command: list[str], ready: str) -> Iterator[subprocess.Popen[str]]:
    """Starts `command`, waits for a stdout line containing `ready`, stops it at the end."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_line(process, ready)
        yield process
    finally:
        stop(process)


@contextmanager
def our_router(buildwire_cmd: list[str]) -> Iterator[tuple[int, int]]:
    """`buildwire bacnet router` with network 1 and network 2 on 127.0.0.1: their ports."""
    one, two = free_udp_port(), free_udp_port()
    command = [
        *buildwire_cmd,
        "bacnet",
        "router",
        "--port",
        f"1=bip:127.0.0.1:{one}",
        "--port",
        f"2=bip:127.0.0.1:{two}",
    ]
    with running(command, "routing"):
        yield one, two


def test_bacpypes3_client_reads_and_writes_our_server_through_our_router(
    peer_python: Path, buildwire_cmd: list[str]
) -> None:
    server_port = free_udp_port()
    server = [
        *buildwire_cmd,
        "bacnet",
        "serve",
        "--bind",
        f"127.0.0.1:{server_port}",
        "--broadcast",
        "127.255.255.255",
        "--objects",
        "stress",
    ]
    with running(server, "serving"), our_router(buildwire_cmd) as (router_port, _):
        client = subprocess.run(
            [
                str(peer_python),
                str(CLIENT_SCRIPT),
                "--address",
                f"127.0.0.1/8:{free_udp_port()}",
                "--target",
                f"2:127.0.0.1:{server_port}",
                "--device",
                "400",
                "--router",
                f"127.0.0.1:{router_port}",
                "--router-net",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert client.returncode == 0, client.stderr
    results = json.loads(client.stdout)
    # The routed Who-Is reaches the device, whose I-Am comes back through the router.
    assert results["who_is"] == ["device,400"], results
    assert isinstance(results["read_ai1"], float), results
    assert results["write_av1"] is None, results  # a SimpleACK
    assert results["read_name"] == "AV-2", results
    assert results["read_av1"] == 55.5, results
    assert results["read_av1_slot8"] == 55.5, results
    assert results["wpm"] == "ok", results
    assert results["read_av2"] == 12.25 and results["read_av3"] == 13.5, results
    rpm = {(r["object"], r["property"]): r["value"] for r in results["rpm"]}
    assert isinstance(rpm[("analog-input,1", "present-value")], float), results["rpm"]
    assert "error" in str(rpm[("analog-input,99", "present-value")]), results["rpm"]
    # The stress server's 40 objects, the device first.
    assert results["object_list_length"] == 40, results
    assert len(results["object_list"]) == 40, results
    assert results["object_list"][0] == "device,400", results


def test_our_client_reads_a_bacpypes3_device_through_our_router(
    peer_python: Path, buildwire_cmd: list[str]
) -> None:
    device_port = free_udp_port()
    device = [
        str(peer_python),
        str(DEVICE_SCRIPT),
        "--address",
        f"127.0.0.1/8:{device_port}",
        "--instance",
        str(DEVICE_INSTANCE),
    ]
    with running(device, "ready"), our_router(buildwire_cmd) as (router_port, _):
        remote = f"2:127.0.0.1:{device_port}"

        def through_router(*args: str) -> dict:
            route = ["--router", f"127.0.0.1:{router_port}", "--bind", "127.0.0.1:0", "--json"]
            done = subprocess.run(
                [*buildwire_cmd, "bacnet", args[0], remote, *args[1:], *route],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
            return json.loads(done.stdout)

        answer = through_router("read", f"device,{DEVICE_INSTANCE}", "object-name")
        # The BACpypes3 device's name, answered through the router (its routed address).
        assert answer["address"].startswith("2:"), answer
        assert answer["value"] == [{"type": "character-string", "value": "Excelsior"}], answer
        # A write through the router, read back.
        through_router("write", "analog-value,1", "present-value", "21.5", "--priority", "8")
        back = through_router("read", "analog-value,1", "present-value")
        assert [v["value"] for v in back["value"]] == [21.5], back


def test_bacpypes3_foreign_device_of_our_bbmd_finds_our_server(
    peer_python: Path, buildwire_cmd: list[str]
) -> None:
    # The BBMD on 127.0.0.1 and our server on 127.0.0.2, both on the BBMD's port: the same
    # subnet, so the BBMD's local broadcast reaches the server.
    port = free_udp_port()
    bbmd = [*buildwire_cmd, "bacnet", "bbmd", "--bind", f"127.0.0.1:{port}"]
    server = [
        *buildwire_cmd,
        "bacnet",
        "serve",
        "--bind",
        f"127.0.0.2:{port}",
        "--broadcast",
        "127.255.255.255",
        "--objects",
        "stress",
    ]
    with running(bbmd, "BBMD on"), running(server, "serving"):
        foreign = subprocess.Popen(
            [
                str(peer_python),
                str(FOREIGN_SCRIPT),
                "--address",
                f"127.0.0.1/8:{free_udp_port()}",
                "--foreign",
                f"127.0.0.1:{port}",
                "--ttl",
                "30",
                "--device",
                "400",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert foreign.stdout is not None
            line = foreign.stdout.readline()
            assert line, foreign.stderr.read() if foreign.stderr else ""
            results = json.loads(line)
            assert results["registration_status"] == 0, results
            assert [f["device"] for f in results["found"]] == ["device,400"], results
            assert results["found"][0]["address"] == f"127.0.0.2:{port}", results
            assert isinstance(results["name"], str) and results["name"], results
            # While it is registered, Read-FDT lists it with its TTL.
            fdt = subprocess.run(
                [*buildwire_cmd, "bacnet", "fdt", f"127.0.0.1:{port}", "--json"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert fdt.returncode == 0, fdt.stderr
            entries = json.loads(fdt.stdout)
            assert len(entries if isinstance(entries, list) else entries["entries"]) == 1, entries
            assert "30" in fdt.stdout, entries
        finally:
            stop(foreign)
