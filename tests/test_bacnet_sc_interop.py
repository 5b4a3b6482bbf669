"""BACnet/SC interoperability with bac-py (Python 3.13, ``bac-py[secure]``), mutual TLS 1.3 with
certificates from ``buildwire bacnet sc-certs``, on 127.0.0.1, in both directions.

(a) bac-py's node against our hub (``buildwire bacnet sc-hub``) and our device
    (``buildwire bacnet serve --transport sc``): its Who-Is reaches our device through our hub,
    the I-Am comes back from the device's VMAC, and a ReadProperty of the device's object-name
    is answered. bac-py's node sends an Originating VMAC to the hub, which Annex AB.5.3 says it
    must not; our hub relays it with the node's registered VMAC (see crates/bacnet/src/sc/hub.rs).
(b) our device as a node of bac-py's hub, asked the same by bac-py's node through that hub.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_bacnet_interop import PEERS_313, REPO, stop, wait_for_line

SCRIPT = REPO / "tests" / "peers" / "bacpy_sc.py"
DEVICE = 4711
# "Docker-Stress-400": the stress profile's device name, as a BACnet character string.
NAME = b"Docker-Stress-400".hex()


@pytest.fixture(scope="module")
def peer_python_313() -> Path:
    """The Python 3.13 venv holding bac-py (installed by scripts/peers.sh, idempotent)."""
    subprocess.run([str(REPO / "scripts" / "peers.sh"), "py313"], check=True, timeout=900)
    assert PEERS_313.exists(), f"{PEERS_313} is missing after scripts/peers.sh py313"
    return PEERS_313


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory, buildwire_cmd: list[str]) -> Path:
    """A CA and operational certificates made by `buildwire bacnet sc-certs`."""
    folder = tmp_path_factory.mktemp("sc-pki")
    made = subprocess.run(
        [*buildwire_cmd, "bacnet", "sc-certs", str(folder), "--names", "hub,device,peer"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    return folder


def tls(pki: Path, name: str) -> list[str]:
    """--cert, --key and --ca of `name`."""
    cert, key, ca = pki / f"{name}.crt", pki / f"{name}.key", pki / "ca.crt"
    return ["--cert", str(cert), "--key", str(key), "--ca", str(ca)]


def free_tcp_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running(command: list[str], ready: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Starts `command`; yields its first stdout line containing `ready` and the process;
    stops it after."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield wait_for_line(process, ready, timeout=30), process
    finally:
        stop(process)


def our_device(buildwire_cmd: list[str], pki: Path, hub: str) -> list[str]:
    return [
        *buildwire_cmd,
        "bacnet",
        "serve",
        "--transport",
        "sc",
        "--hub",
        hub,
        *tls(pki, "device"),
        "--device-id",
        str(DEVICE),
        "--objects",
        "stress",
    ]


def bacpy_client(python: Path, pki: Path, hub: str) -> dict:
    client = [str(python), str(SCRIPT), "client", "--hub", hub, "--device", str(DEVICE)]
    done = subprocess.run(
        [*client, *tls(pki, "peer")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def check(results: dict, device_line: str) -> None:
    # The I-Am names our device, and came from the VMAC our device printed.
    assert "i_am" in results, results
    instance = (8 << 22) | DEVICE
    assert f"c4{instance:08x}" in results["i_am"], results
    vmac = device_line.split("vmac ")[1].split()[0].replace(":", "")
    assert results["i_am_from"] == vmac, (results, device_line)
    # The Complex-ACK of the ReadProperty carries the device's object-name.
    assert results["read_ack"] is not None, results
    assert results["read_ack"].startswith("30070c"), results
    assert NAME in results["read_ack"], results


def test_bacpy_node_reads_our_device_through_our_hub(
    buildwire_cmd: list[str], peer_python_313: Path, pki: Path
) -> None:
    port = free_tcp_port()
    hub = [*buildwire_cmd, "bacnet", "sc-hub", "--bind", f"127.0.0.1:{port}", *tls(pki, "hub")]
    uri = f"wss://127.0.0.1:{port}"
    with running([*hub, "--report", "1"], "BACnet/SC hub on") as (hub_line, hub_process):
        assert uri in hub_line, hub_line
        with running(our_device(buildwire_cmd, pki, uri), "serving") as (device_line, _):
            results = bacpy_client(peer_python_313, pki, uri)
        check(results, device_line)
        # bac-py's node put an Originating VMAC on what it sent to the hub; the hub replaced
        # it (and relayed with the registered one, which `check` saw as the I-Am's source).
        report = json.loads(wait_for_line(hub_process, '"originating_replaced":'))
        while report["originating_replaced"] == 0 and report["unicast_relayed"] < 2:
            report = json.loads(wait_for_line(hub_process, '"originating_replaced":'))
        assert report["originating_replaced"] >= 1, report


def test_our_device_on_bacpy_hub_answers_bacpy_node(
    buildwire_cmd: list[str], peer_python_313: Path, pki: Path
) -> None:
    port = free_tcp_port()
    hub = [str(peer_python_313), str(SCRIPT), "hub", "--port", str(port), *tls(pki, "hub")]
    uri = f"wss://127.0.0.1:{port}"
    with running(hub, "ready"):
        with running(our_device(buildwire_cmd, pki, uri), "serving") as (device_line, _):
            results = bacpy_client(peer_python_313, pki, uri)
    check(results, device_line)


def test_python_hub_and_device_answer_bacpy_node(peer_python_313: Path, tmp_path: Path) -> None:
    """The Python API: certificates, a hub and an SC device, asked by bac-py's node and by our
    Python SC client."""
    import asyncio

    from buildwire import bacnet_sc

    async def scenario() -> tuple[dict, str, dict]:
        bacnet_sc.make_certificates(tmp_path, ["hub", "device", "peer"])
        hub = await bacnet_sc.Hub.start("127.0.0.1:0", **bacnet_sc.tls_files(tmp_path, "hub"))
        device = await bacnet_sc.Device.start(
            hub.uri, **bacnet_sc.tls_files(tmp_path, "device"), device_id=DEVICE
        )
        try:
            results = await asyncio.to_thread(bacpy_client, peer_python_313, tmp_path, hub.uri)
            # Our own Python client node too: Who-Is, write, read back.
            client = await bacnet_sc.Client.connect(
                hub.uri, **bacnet_sc.tls_files(tmp_path, "peer")
            )
            found = await client.who_is()
            assert [d["address"] for d in found if d["instance"] == DEVICE] == [device.vmac]
            await client.write(device.vmac, "av,1", "pv", 21.5, priority=8)
            assert await client.read(device.vmac, "av,1", "pv") == 21.5
            return results, device.vmac, await hub.stats()
        finally:
            await device.stop()
            await hub.stop()

    results, vmac, stats = asyncio.run(scenario())
    check(results, f"vmac {vmac}")
    assert stats["nodes"] == 2 and stats["unicast_relayed"] >= 4, stats
