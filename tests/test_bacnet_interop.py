"""BACnet/IP interoperability with BACpypes3 on 127.0.0.1, in both directions.

(a) the BACpypes3 client (tests/peers/bacpypes3_client.py) against `buildwire bacnet serve`;
(b) our CLI client (`buildwire bacnet whois/read/write/rpm/wpm --json`) against a BACpypes3
device (tests/peers/bacpypes3_device.py).

Each test picks free ports, starts and stops its own processes, and checks every value.
BACpypes3 binds its broadcast socket without SO_REUSEADDR, so two applications cannot share
one port on loopback: Who-Is goes to the device's address directly here (both sides answer
a directed Who-Is with a directed I-Am).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from buildwire import bacnet

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO / ".peers" / "py311" / "bin" / "python"
DEVICE_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_device.py"
CLIENT_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_client.py"
DEVICE_INSTANCE = 3021


@pytest.fixture(scope="module")
def peer_python() -> Path:
    """The Python 3.11 venv holding BACpypes3 (installed by scripts/peers.sh, idempotent)."""
    subprocess.run([str(REPO / "scripts" / "peers.sh"), "py311"], check=True, timeout=900)
    assert PEERS.exists(), f"{PEERS} is missing after scripts/peers.sh py311"
    return PEERS


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


def wait_for_line(process: subprocess.Popen[str], needle: str, timeout: float = 20) -> str:
    """Reads stdout until a line contains `needle`."""
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if needle in line:
            return line
        if not line and process.poll() is not None:
            break
    stop(process)
    err = process.stderr.read() if process.stderr else ""
    raise AssertionError(f"process did not print {needle!r}: {err}")


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_our_server(buildwire_cmd: list[str], port: int, *options: str) -> subprocess.Popen[str]:
    """`buildwire bacnet serve` on 127.0.0.1:PORT with the loopback broadcast address."""
    return subprocess.Popen(
        [
            *buildwire_cmd,
            "bacnet",
            "serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--broadcast",
            "127.255.255.255",
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextlib.contextmanager
def our_profile_server(
    buildwire_cmd: list[str], tmp_path: Path, profile: dict
) -> Iterator[tuple[int, str]]:
    """`buildwire bacnet serve` of a JSON device profile: its port and its `serving` line."""
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    port = free_udp_port()
    process = start_our_server(buildwire_cmd, port, "--objects", str(path))
    try:
        yield port, wait_for_line(process, "serving")
    finally:
        stop(process)


@pytest.fixture
def our_server(buildwire_cmd: list[str]) -> Iterator[int]:
    """`buildwire bacnet serve --objects stress` on 127.0.0.1:PORT."""
    port = free_udp_port()
    process = start_our_server(buildwire_cmd, port, "--objects", "stress")
    try:
        line = wait_for_line(process, "serving")
        assert "device,400" in line and "40 objects" in line, line
        assert f"127.0.0.1:{port}" in line, line
        yield port
    finally:
        stop(process)


@pytest.fixture
def bacpypes3_device(peer_python: Path) -> Iterator[int]:
    """The BACpypes3 device on 127.0.0.1:PORT."""
    port = free_udp_port()
    process = subprocess.Popen(
        [
            str(peer_python),
            str(DEVICE_SCRIPT),
            "--address",
            f"127.0.0.1/8:{port}",
            "--instance",
            str(DEVICE_INSTANCE),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_line(process, "ready")
        time.sleep(0.3)  # let its sockets finish binding
        yield port
    finally:
        stop(process)


def test_bacpypes3_client_against_our_server(peer_python: Path, our_server: int) -> None:
    client_port = free_udp_port()
    done = subprocess.run(
        [
            str(peer_python),
            str(CLIENT_SCRIPT),
            "--address",
            f"127.0.0.1/8:{client_port}",
            "--target",
            f"127.0.0.1:{our_server}",
            "--device",
            "400",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["who_is"] == ["device,400"]
    assert results["read_ai1"] == pytest.approx(61.5)
    assert results["read_name"] == "AV-2"
    assert results["write_av1"] is None  # a SimpleACK
    assert results["read_av1"] == pytest.approx(55.5)
    assert results["read_av1_slot8"] == pytest.approx(55.5)
    rpm = results["rpm"]
    assert [(r["object"], r["property"]) for r in rpm] == [
        ("analog-input,1", "present-value"),
        ("analog-input,1", "units"),
        ("binary-value,1", "present-value"),
        ("analog-input,99", "present-value"),
    ]
    assert rpm[0]["value"] == pytest.approx(61.5)
    assert rpm[1]["value"] == 64  # degrees-fahrenheit
    assert rpm[2]["value"] == 0  # inactive
    assert rpm[3]["value"] == {"error_class": "object", "error_code": "unknown-object"}
    assert results["wpm"] == "ok"
    assert results["read_av2"] == pytest.approx(12.25)
    assert results["read_av3"] == pytest.approx(13.5)
    assert results["object_list_length"] == 40
    object_list = results["object_list"]
    assert len(object_list) == 40
    assert object_list[0] == "device,400"
    assert object_list[1] == "analog-input,1"
    assert object_list[-1] == "notification-class,1"


def cli_json(buildwire_cmd: list[str], *args: str) -> object:
    done = subprocess.run(
        [*buildwire_cmd, "bacnet", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def values(reply: dict) -> list:
    return [v["value"] for v in reply["value"]]


def test_our_cli_against_bacpypes3_device(buildwire_cmd: list[str], bacpypes3_device: int) -> None:
    device = f"127.0.0.1:{bacpypes3_device}"
    found = cli_json(
        buildwire_cmd,
        "whois",
        "--bind",
        "127.0.0.1:0",
        "--to",
        device,
        "--timeout",
        "2",
        "--low",
        str(DEVICE_INSTANCE),
        "--high",
        str(DEVICE_INSTANCE),
    )
    assert isinstance(found, list) and len(found) == 1, found
    assert found[0]["address"] == device
    assert found[0]["device"] == f"device,{DEVICE_INSTANCE}"
    assert found[0]["instance"] == DEVICE_INSTANCE

    read = cli_json(buildwire_cmd, "read", device, "av,1", "pv")
    assert read["object"] == "analog-value,1"
    assert read["property"] == "present-value"
    assert read["value"] == [{"type": "real", "value": 21.5}]
    assert values(cli_json(buildwire_cmd, "read", device, "ai,1", "pv")) == [19.25]
    assert values(cli_json(buildwire_cmd, "read", device, "ai,1", "object-name")) == ["zone-temp"]

    wrote = cli_json(buildwire_cmd, "write", device, "av,1", "pv", "30.5", "--priority", "8")
    assert wrote["ok"] is True
    assert values(cli_json(buildwire_cmd, "read", device, "av,1", "pv")) == [30.5]
    slot = cli_json(buildwire_cmd, "read", device, "av,1", "priority-array", "--index", "8")
    assert slot["value"] == [{"type": "real", "value": 30.5}]

    rpm = cli_json(
        buildwire_cmd,
        "rpm",
        device,
        "av,1:pv,units",
        "bi,1:pv",
        "msv,1:pv",
        "ai,99:pv",
    )
    assert [r["object"] for r in rpm] == [
        "analog-value,1",
        "binary-input,1",
        "multi-state-value,1",
        "analog-input,99",
    ]
    av = {r["property"]: r for r in rpm[0]["results"]}
    assert av["present-value"]["value"] == [{"type": "real", "value": 30.5}]
    assert av["units"]["value"] == [{"type": "enumerated", "value": 62}]  # degrees-celsius
    assert rpm[1]["results"][0]["value"] == [{"type": "enumerated", "value": 1}]  # active
    assert rpm[2]["results"][0]["value"] == [{"type": "unsigned", "value": 2}]
    assert rpm[3]["results"][0]["error"] == {"class": "object", "code": "unknown-object"}

    wpm = cli_json(
        buildwire_cmd, "wpm", device, "av,1:pv=31.25", "bv,1:pv=active", "--priority", "9"
    )
    assert wpm == {"ok": True, "writes": 2}
    after = cli_json(buildwire_cmd, "rpm", device, "av,1:priority-array[9]", "bv,1:pv")
    assert after[0]["results"][0]["value"] == [{"type": "real", "value": 31.25}]
    assert after[1]["results"][0]["value"] == [{"type": "enumerated", "value": 1}]
    # Priority 8 still wins over 9.
    assert values(cli_json(buildwire_cmd, "read", device, "av,1", "pv")) == [30.5]

    length = cli_json(
        buildwire_cmd, "read", device, f"device,{DEVICE_INSTANCE}", "object-list", "--index", "0"
    )
    assert values(length) == [7]
    object_list = cli_json(
        buildwire_cmd, "read", device, f"device,{DEVICE_INSTANCE}", "object-list"
    )
    assert values(object_list) == [
        f"device,{DEVICE_INSTANCE}",
        "network-port,1",
        "analog-value,1",
        "analog-input,1",
        "binary-input,1",
        "binary-value,1",
        "multi-state-value,1",
    ]


def test_our_cli_reports_errors_from_bacpypes3(
    buildwire_cmd: list[str], bacpypes3_device: int
) -> None:
    device = f"127.0.0.1:{bacpypes3_device}"
    done = subprocess.run(
        [*buildwire_cmd, "bacnet", "read", device, "av,42", "pv"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "unknown-object" in done.stderr, done.stderr


def test_points_and_epics_of_a_bacpypes3_device(
    buildwire_cmd: list[str], bacpypes3_device: int
) -> None:
    """Issue 25: `bacnet points` and `bacnet epics` of a device that is not ours (its
    device instance found through the wildcard or a Who-Is, its object-list, RPM reads)."""
    device = f"127.0.0.1:{bacpypes3_device}"
    points = cli_json(buildwire_cmd, "points", device)
    assert isinstance(points, list)
    by_object = {p["object"]: p for p in points}
    # Every object of the object-list but the device.
    object_list = values(
        cli_json(buildwire_cmd, "read", device, f"device,{DEVICE_INSTANCE}", "object-list")
    )
    assert sorted(by_object) == sorted(o for o in object_list if not o.startswith("device,"))
    assert all(p["device"] == f"device,{DEVICE_INSTANCE}" for p in points)
    setpoint = by_object["analog-value,1"]
    assert setpoint["name"] == "setpoint"
    assert setpoint["units"] == "degrees-celsius"
    assert setpoint["commandable"] is True
    assert setpoint["status_flags"] == "normal"
    # BACpypes3 leaves out-of-service out of these objects (a read answers
    # unknown-property): no value, and not an error either.
    assert setpoint["out_of_service"] is None
    assert setpoint["errors"] == []
    zone = by_object["analog-input,1"]
    assert zone["name"] == "zone-temp"
    assert zone["present_value"] == "19.25"
    assert zone["commandable"] is False
    assert by_object["binary-value,1"]["commandable"] is True
    assert by_object["multi-state-value,1"]["name"] == "mode"

    listing = cli_json(buildwire_cmd, "epics", device)
    assert listing[0]["device"] == f"device,{DEVICE_INSTANCE}"
    objects = {o["object"]: o for o in listing[0]["objects"]}
    assert sorted(objects) == sorted(object_list)
    for name, obj in objects.items():
        properties = {p["property"]: p for p in obj["properties"]}
        assert properties["object-identifier"]["value"][0]["value"] == name, obj
        assert "value" in properties["object-name"], obj
    av = {p["property"]: p for p in objects["analog-value,1"]["properties"]}
    assert abs(av["cov-increment"]["value"][0]["value"] - 0.1) < 1e-6, av["cov-increment"]
    assert len(av["priority-array"]["value"]) == 16, av["priority-array"]


# ---- segmentation: a 1,500-entry object-list at max-APDU 480, in both directions ----

SEGMENTED_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_segmented.py"
MAX_APDU = 480
# BVLL (4 bytes) + the shortest NPDU (2 bytes, no addresses) in front of every APDU here.
LINK_OVERHEAD = 6


class UdpRelay:
    """Forwards datagrams between one client and one BACnet/IP peer on 127.0.0.1 and keeps
    every datagram the peer sent, so a test can see how the answer was cut on the wire."""

    def __init__(self, target_port: int) -> None:
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.back.bind(("127.0.0.1", 0))
        self.back.connect(("127.0.0.1", target_port))
        self.port = self.front.getsockname()[1]
        self.from_peer: list[bytes] = []
        self._client: tuple[str, int] | None = None
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self._running:
            ready, _, _ = select.select([self.front, self.back], [], [], 0.1)
            for sock in ready:
                data, source = sock.recvfrom(65535)
                if sock is self.front:
                    self._client = source
                    self.back.send(data)
                elif self._client is not None:
                    self.from_peer.append(data)
                    self.front.sendto(data, self._client)

    def close(self) -> None:
        self._running = False
        self._thread.join(timeout=2)
        self.front.close()
        self.back.close()

    def segments(self) -> list[bytes]:
        """The APDUs of segmented Complex-ACKs the peer sent (type 3 with SEG set)."""
        apdus = []
        for datagram in self.from_peer:
            if datagram[:2] != b"\x81\x0a" or datagram[4] != 0x01 or datagram[5] != 0x00:
                continue  # not an original-unicast NPDU without addresses
            apdu = datagram[LINK_OVERHEAD:]
            if apdu[0] & 0xF0 == 0x30 and apdu[0] & 0x08:
                apdus.append(apdu)
        return apdus


def check_segmented(relay: UdpRelay, entries: int, slack: int = 0) -> None:
    segments = relay.segments()
    # 5 bytes per object identifier: the answer cannot fit in fewer segments than this.
    assert len(segments) >= entries * 5 // MAX_APDU, len(segments)
    assert max(len(s) for s in segments) <= MAX_APDU + slack
    sequence_numbers = sorted({s[2] for s in segments})
    assert sequence_numbers == list(range(len(sequence_numbers)))


def test_bacpypes3_reads_segmented_object_list_from_our_server(
    peer_python: Path, buildwire_cmd: list[str]
) -> None:
    port = free_udp_port()
    server = start_our_server(
        buildwire_cmd, port, "--objects", "large:1499", "--max-apdu", str(MAX_APDU)
    )
    relay = None
    try:
        line = wait_for_line(server, "serving")
        assert "device,500" in line and "1500 objects" in line, line
        relay = UdpRelay(port)
        done = subprocess.run(
            [
                str(peer_python),
                str(SEGMENTED_SCRIPT),
                "--address",
                f"127.0.0.1/8:{free_udp_port()}",
                "read",
                "--target",
                f"127.0.0.1:{relay.port}",
                "--device",
                "500",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result["length"] == 1500
        object_list = result["object_list"]
        assert len(object_list) == 1500
        assert object_list[0] == "device,500"
        assert object_list[1:] == [f"analog-value,{i}" for i in range(1, 1500)]
        check_segmented(relay, 1500)
    finally:
        if relay is not None:
            relay.close()
        stop(server)


def test_our_client_reads_segmented_object_list_from_bacpypes3(
    peer_python: Path, buildwire_cmd: list[str]
) -> None:
    port = free_udp_port()
    instance = 3031
    device = subprocess.Popen(
        [
            str(peer_python),
            str(SEGMENTED_SCRIPT),
            "--address",
            f"127.0.0.1/8:{port}",
            "--instance",
            str(instance),
            "serve",
            "--objects",
            "1498",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    relay = None
    try:
        wait_for_line(device, "ready")
        time.sleep(0.3)
        relay = UdpRelay(port)
        address = f"127.0.0.1:{relay.port}"
        read_args = ["read", address, f"device,{instance}", "object-list"]
        limit = ["--max-apdu", str(MAX_APDU), "--timeout", "10"]
        assert values(cli_json(buildwire_cmd, *read_args, "--index", "0", *limit)) == [1500]
        listed = values(cli_json(buildwire_cmd, *read_args, *limit))
        assert len(listed) == 1500
        assert listed[0] == f"device,{instance}"
        # BACpypes3 lists its network-port object after the device.
        assert listed[1] == "network-port,1"
        assert sorted(listed[2:], key=lambda text: int(text.split(",")[1])) == [
            f"analog-value,{i}" for i in range(1, 1499)
        ]
        # BACpypes3 0.0.110 fills each segment with max-APDU bytes of service data and puts
        # its 5-byte segment header on top, so its segments are 485 bytes where Clause 20.1.2.5
        # counts the header within max-APDU-length-accepted. Our client accepts the overshoot
        # (a receiver gains nothing by refusing it); our server never sends it (test above).
        check_segmented(relay, 1500, slack=5)
    finally:
        if relay is not None:
            relay.close()
        stop(device)


# ---- COV and the other peers: rusty-bacnet as a device, bac-py as a client ----

COV_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_cov.py"
RUSTY_SCRIPT = REPO / "tests" / "peers" / "rusty_bacnet_device.py"
BACPY_SCRIPT = REPO / "tests" / "peers" / "bacpy_client.py"
PEERS_313 = REPO / ".peers" / "py313" / "bin" / "python"
RUSTY_INSTANCE = 3041
STATUS_NORMAL = [{"type": "bit-string", "value": "0000"}]


@pytest.fixture(scope="module")
def peer_python_313() -> Path:
    """The Python 3.13 venv holding bac-py (installed by scripts/peers.sh, idempotent)."""
    subprocess.run([str(REPO / "scripts" / "peers.sh"), "py313"], check=True, timeout=900)
    assert PEERS_313.exists(), f"{PEERS_313} is missing after scripts/peers.sh py313"
    return PEERS_313


def run_bacpypes3(peer_python: Path, script: Path, port: int, *args: str) -> dict:
    """Runs a BACpypes3 peer script against 127.0.0.1:PORT and returns its JSON result."""
    done = subprocess.run(
        [
            str(peer_python),
            str(script),
            "--address",
            f"127.0.0.1/8:{free_udp_port()}",
            "--target",
            f"127.0.0.1:{port}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def real(value: float) -> list[dict]:
    return [{"type": "real", "value": value}]


class Subscriber:
    """`buildwire bacnet subscribe ... --json` running in the background: one JSON object
    per notification on stdout."""

    def __init__(self, buildwire_cmd: list[str], device: str, obj: str, *options: str) -> None:
        self.process = subprocess.Popen(
            [*buildwire_cmd, "bacnet", "subscribe", device, obj, "--json", *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def next(self, timeout: float = 10) -> dict:
        """The next notification; fails after `timeout` seconds without one."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            stop(self.process)
            err = self.process.stderr.read() if self.process.stderr else ""
            raise AssertionError(f"no notification within {timeout} s: {err}")
        return json.loads(line)

    def finish(self, status: int = 0) -> str:
        """Waits for the command to end (by itself with --count: status 0; after Ctrl-C:
        130) and returns its stderr."""
        try:
            _, err = self.process.communicate(timeout=15)
        finally:
            stop(self.process)
        assert self.process.returncode == status, err
        return err


def test_bacpypes3_subscribes_to_cov_on_our_server(peer_python: Path, our_server: int) -> None:
    results = run_bacpypes3(
        peer_python,
        COV_SCRIPT,
        our_server,
        *("--object", "analog-value,1", "--value", "75.5", "--after-cancel", "80.25"),
    )
    for kind in ("unconfirmed", "confirmed"):
        # The initial notification (Clause 13.14.1.1), then the written value.
        assert results[f"{kind}_initial"] == [
            ["present-value", 71.0],
            ["status-flags", [0, 0, 0, 0]],
        ], kind
        assert results[f"{kind}_changed"] == [
            ["present-value", 75.5],
            ["status-flags", [0, 0, 0, 0]],
        ], kind
        assert results[f"{kind}_after_cancel"] == [], kind
    # Each subscription got its notifications through the service it asked for.
    assert results["arrivals"] == {"confirmed": [2, 2], "unconfirmed": [1, 1]}


def test_our_cli_subscribes_to_cov_on_bacpypes3_device(
    buildwire_cmd: list[str], bacpypes3_device: int
) -> None:
    device = f"127.0.0.1:{bacpypes3_device}"
    plain = Subscriber(buildwire_cmd, device, "av,1", "--count", "2", "--lifetime", "60")
    confirmed = Subscriber(buildwire_cmd, device, "av,1", "--count", "2", "--confirmed")
    for subscriber, is_confirmed in ((plain, False), (confirmed, True)):
        first = subscriber.next()
        assert first["device"] == f"device,{DEVICE_INSTANCE}"
        assert first["object"] == "analog-value,1"
        assert first["address"] == device
        assert first["confirmed"] is is_confirmed
        assert first["values"] == {"present-value": real(21.5), "status-flags": STATUS_NORMAL}
    cli_json(buildwire_cmd, "write", device, "av,1", "pv", "24.75", "--priority", "8")
    for subscriber, is_confirmed in ((plain, False), (confirmed, True)):
        changed = subscriber.next()
        assert changed["confirmed"] is is_confirmed
        assert changed["values"]["present-value"] == real(24.75)
        err = subscriber.finish()
        kind = "confirmed" if is_confirmed else "unconfirmed"
        assert f"subscribed to analog-value,1 at {device}" in err and kind in err, err
    assert plain.process.returncode == 0 and confirmed.process.returncode == 0


@contextlib.contextmanager
def rusty_bacnet(peer_python: Path, *options: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """The rusty-bacnet device on 127.0.0.1:PORT, and its process (stdin takes commands)."""
    port = free_udp_port()
    process = subprocess.Popen(
        [
            str(peer_python),
            str(RUSTY_SCRIPT),
            *("--port", str(port), "--instance", str(RUSTY_INSTANCE), *options),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_line(process, "ready")
        yield port, process
    finally:
        if process.stdin is not None:
            process.stdin.close()
        stop(process)


@pytest.fixture
def rusty_device(peer_python: Path) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """The rusty-bacnet device with its five objects."""
    with rusty_bacnet(peer_python) as device:
        yield device


def test_our_cli_against_rusty_bacnet(
    buildwire_cmd: list[str], rusty_device: tuple[int, subprocess.Popen[str]]
) -> None:
    port, process = rusty_device
    device = f"127.0.0.1:{port}"
    read = cli_json(buildwire_cmd, "read", device, "ai,1", "pv")
    assert read["object"] == "analog-input,1" and read["value"] == real(19.25)
    assert values(cli_json(buildwire_cmd, "read", device, "ai,1", "object-name")) == ["zone-temp"]

    wrote = cli_json(buildwire_cmd, "write", device, "av,1", "pv", "30.5", "--priority", "8")
    assert wrote["ok"] is True
    assert values(cli_json(buildwire_cmd, "read", device, "av,1", "pv")) == [30.5]
    slot = cli_json(buildwire_cmd, "read", device, "av,1", "priority-array", "--index", "8")
    assert slot["value"] == real(30.5)

    rpm = cli_json(
        buildwire_cmd, "rpm", device, "av,1:pv,units", "ai,1:pv,object-name", "msv,1:pv", "ai,99:pv"
    )
    assert [r["object"] for r in rpm] == [
        "analog-value,1",
        "analog-input,1",
        "multi-state-value,1",
        "analog-input,99",
    ]
    av = {r["property"]: r["value"] for r in rpm[0]["results"]}
    assert av == {"present-value": real(30.5), "units": [{"type": "enumerated", "value": 62}]}
    ai = {r["property"]: r["value"] for r in rpm[1]["results"]}
    assert ai["present-value"] == real(19.25)
    assert ai["object-name"] == [{"type": "character-string", "value": "zone-temp"}]
    assert rpm[2]["results"][0]["value"] == [{"type": "unsigned", "value": 1}]
    assert rpm[3]["results"][0]["error"] == {"class": "object", "code": "unknown-object"}
    wpm = cli_json(
        buildwire_cmd, "wpm", device, "av,1:pv=31.25", "bv,1:pv=active", "--priority", "9"
    )
    assert wpm == {"ok": True, "writes": 2}
    after = cli_json(buildwire_cmd, "rpm", device, "av,1:priority-array[9]", "bv,1:pv")
    assert after[0]["results"][0]["value"] == real(31.25)
    assert after[1]["results"][0]["value"] == [{"type": "enumerated", "value": 1}]
    object_list = cli_json(buildwire_cmd, "read", device, f"device,{RUSTY_INSTANCE}", "object-list")
    assert values(object_list) == [
        f"device,{RUSTY_INSTANCE}",
        "analog-input,1",
        "analog-value,1",
        "binary-value,1",
        "multi-state-value,1",
    ]

    # COV: a written value (unconfirmed) and a sensor value set inside the device (confirmed).
    av_sub = Subscriber(buildwire_cmd, device, "av,1", "--count", "2")
    ai_sub = Subscriber(buildwire_cmd, device, "ai,1", "--count", "2", "--confirmed")
    first = av_sub.next()
    assert first["device"] == f"device,{RUSTY_INSTANCE}" and first["confirmed"] is False
    assert first["values"] == {"present-value": real(30.5), "status-flags": STATUS_NORMAL}
    first = ai_sub.next()
    assert first["object"] == "analog-input,1" and first["confirmed"] is True
    assert first["values"] == {"present-value": real(19.25), "status-flags": STATUS_NORMAL}
    cli_json(buildwire_cmd, "write", device, "av,1", "pv", "28.0", "--priority", "8")
    assert av_sub.next()["values"]["present-value"] == real(28.0)
    assert process.stdin is not None
    process.stdin.write("ai 23.5\n")
    process.stdin.flush()
    wait_for_line(process, "set")
    changed = ai_sub.next()
    assert changed["confirmed"] is True
    assert changed["values"]["present-value"] == real(23.5)
    av_sub.finish()
    ai_sub.finish()

    # SubscribeCOVProperty with our increment of 2.0: 23.5, then (normally) not 24.0, then
    # 26.0. Under a loaded CI machine rusty-bacnet was once seen to report 24.0 as well
    # (one run in many; not reproduced alone): which changes a device reports is its
    # business, so the test asks only that 26.0 arrives, at most one notification late.
    pv_sub = Subscriber(
        buildwire_cmd, device, "ai,1", "--property", "pv", "--increment", "2", "--count", "3"
    )
    first = pv_sub.next()
    assert first["values"]["present-value"] == real(23.5)
    for reading in ("24.0", "26.0"):
        process.stdin.write(f"ai {reading}\n")
        process.stdin.flush()
        wait_for_line(process, "set")
    reported = pv_sub.next()["values"]["present-value"]
    if reported == real(24.0):
        reported = pv_sub.next()["values"]["present-value"]
    assert reported == real(26.0)
    # Ctrl-C: cancels on the device, exits 130 like every command interrupted in a terminal.
    pv_sub.process.send_signal(signal.SIGINT)
    pv_sub.finish(status=130)


def subscriptions(elements: list[dict]) -> list[tuple[int, bool]]:
    """(process identifier, confirmed) of each BACnetCOVSubscription in Active_COV_Subscriptions
    as `buildwire bacnet read --json` shows them."""
    found: list[tuple[int, bool]] = []
    process = None
    for element in elements:
        if element.get("context") == 0:  # the recipient: [0] address, [1] process identifier
            process = int(element["children"][1]["hex"], 16)
        elif element.get("context") == 2:  # issue-confirmed-notifications
            assert process is not None
            found.append((process, element["hex"] == "01"))
    return found


def test_bacpy_client_against_our_server(
    peer_python_313: Path, buildwire_cmd: list[str], our_server: int
) -> None:
    client_port = free_udp_port()
    client = subprocess.Popen(
        [
            str(peer_python_313),
            str(BACPY_SCRIPT),
            "--port",
            str(client_port),
            "--target",
            f"127.0.0.1:{our_server}",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_line(client, "subscribed", timeout=60)
        active = cli_json(
            buildwire_cmd,
            "read",
            f"127.0.0.1:{our_server}",
            "device,400",
            "active-cov-subscriptions",
        )
        assert subscriptions(active["value"]) == [(1, False), (2, True)]
        out, err = client.communicate("go\n", timeout=60)
    finally:
        stop(client)
    assert client.returncode == 0, err
    results = json.loads(out.strip().splitlines()[-1])
    assert results["read_ai1"] == pytest.approx(61.5)
    assert results["read_name"] == "AV-2"
    assert results["read_units"] == 64  # degrees-fahrenheit
    assert results["read_av1"] == pytest.approx(55.5)
    assert results["read_av1_slot8"] == pytest.approx(55.5)
    assert results["rpm"] == {
        "analog-input,1": {"present-value": pytest.approx(61.5), "object-name": "AI-1"},
        "binary-value,1": {"present-value": 0},
        "analog-value,1": {"present-value": pytest.approx(55.5)},
    }
    for kind, process in (("unconfirmed", 1), ("confirmed", 2)):
        received = results["cov"][kind]
        assert [n["process"] for n in received] == [process, process], kind
        assert {n["object"] for n in received} == {"analog-value,1"}
        # The initial notification, then the change.
        assert [n["values"]["present-value"] for n in received] == [55.5, 66.25], kind
        assert {n["values"]["status-flags"] for n in received} == {"BitString('0000')"}
    # SubscribeCOVProperty with an increment of 1.0: 72.0, then not 72.5, then 74.0.
    assert [n["present-value"] for n in results["cov_property"]] == [72.0, 74.0]


# ---- Schedule, Calendar and NotificationClass of our device, read by BACpypes3 ----

SCHEDULE_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_schedule.py"


def any_real(value: float) -> dict:
    """A REAL inside BACpypes3's AnyAtomic, as its dict_contents shows it."""
    return {"any": [{"real": value}]}


def test_bacpypes3_reads_every_property_of_our_schedule_calendar_and_notification_class(
    peer_python: Path, our_server: int
) -> None:
    results = run_bacpypes3(
        peer_python,
        SCHEDULE_SCRIPT,
        our_server,
        *("--object", "schedule,1", "--object", "calendar,1", "--object", "notification-class,1"),
        # Thursday before Christmas, Christmas, a Saturday, Thanksgiving, its evening.
        *("--at", "2026-12-24T10:00", "--at", "2026-12-25T10:00", "--at", "2026-12-26T10:00"),
        *("--at", "2026-11-26T09:00", "--at", "2026-11-27T18:30"),
        *("--watch", "schedule,1:present-value", "--watch", "calendar,1:present-value"),
        *("--watch", "device,400:local-date", "--watch", "device,400:local-time"),
    )
    schedule = results["objects"]["schedule,1"]
    optional = ["description", "weekly-schedule", "exception-schedule"]
    required = ["effective-period", "schedule-default", "list-of-object-property-references"]
    required += ["priority-for-writing", "status-flags", "reliability", "out-of-service"]
    assert set(schedule["property-list"]) == {"present-value", *required, *optional}
    assert schedule["object-identifier"] == "schedule,1"
    assert schedule["object-name"] == "Schedule-1"
    assert schedule["object-type"] == "schedule"
    assert schedule["description"] == ""
    assert schedule["effective-period"] == {
        "startDate": [255, 255, 255, 255],
        "endDate": [255, 255, 255, 255],
    }
    workday = {
        "daySchedule": [
            {"time": [8, 0, 0, 0], "value": any_real(72.0)},
            {"time": [18, 0, 0, 0], "value": {"any": [{"null": []}]}},
        ]
    }
    assert schedule["weekly-schedule"] == [workday] * 5 + [{"daySchedule": []}] * 2
    assert schedule["exception-schedule"] == [
        {
            "period": {"calendarReference": "calendar,1"},
            "listOfTimeValues": [{"time": [0, 0, 0, 0], "value": any_real(60.0)}],
            "eventPriority": 10,
        }
    ]
    assert schedule["schedule-default"] == any_real(65.0)
    assert schedule["present-value"] in (any_real(65.0), any_real(72.0), any_real(60.0))
    assert schedule["list-of-object-property-references"] == []
    assert schedule["priority-for-writing"] == 16
    assert schedule["status-flags"] == [0, 0, 0, 0]
    assert schedule["reliability"] == "no-fault-detected"
    assert schedule["out-of-service"] == 0

    calendar = results["objects"]["calendar,1"]
    assert set(calendar["property-list"]) == {"present-value", "description", "date-list"}
    assert (calendar["object-name"], calendar["object-type"]) == ("Calendar-1", "calendar")
    assert calendar["present-value"] in (0, 1)
    # January 1 and December 25 of any year; the 4th Thursday (day 4) of November (month 11).
    assert calendar["date-list"] == [
        {"date": [255, 1, 1, 255]},
        {"date": [255, 12, 25, 255]},
        {"weekNDay": "0b.04.04"},
    ]

    nc = results["objects"]["notification-class,1"]
    assert set(nc["property-list"]) == {
        "description",
        "notification-class",
        "priority",
        "ack-required",
        "recipient-list",
    }
    assert (nc["object-name"], nc["object-type"]) == ("NC-1", "notification-class")
    assert nc["notification-class"] == 1
    assert nc["priority"] == [3, 3, 3]
    assert nc["ack-required"] == [1, 0, 0]
    assert nc["recipient-list"] == [
        {
            "validDays": [1] * 7,
            "fromTime": [0, 0, 0, 0],
            "toTime": [23, 59, 59, 99],
            "recipient": {"device": "device,999"},
            "processIdentifier": 1,
            "issueConfirmedNotifications": 0,
            "transitions": [1, 1, 1],
        }
    ]

    # The device clock follows TimeSynchronization; schedule and calendar follow the clock.
    clock = [
        (c["schedule,1:present-value"], c["calendar,1:present-value"]) for c in results["clock"]
    ]
    assert clock == [
        (any_real(72.0), 0),  # Thursday 10:00: occupied
        (any_real(60.0), 1),  # Christmas: the holiday's exception (priority 10) wins
        (any_real(65.0), 0),  # Saturday: no weekly entry, the default
        (any_real(60.0), 1),  # Thanksgiving 2026 (November 26)
        (any_real(65.0), 0),  # Friday after 18:00: NULL hands back to the default
    ]
    assert [c["device,400:local-date"] for c in results["clock"]] == [
        [126, 12, 24, 4],
        [126, 12, 25, 5],
        [126, 12, 26, 6],
        [126, 11, 26, 4],
        [126, 11, 27, 5],
    ]
    assert results["clock"][0]["device,400:local-time"][:2] == [10, 0]


SCHEDULED_DEVICE = {
    "device": {"instance": 410, "name": "scheduled-device"},
    "objects": [
        {"type": "binary-value", "instance": 1, "name": "Lights", "commandable": True},
        {"type": "binary-output", "instance": 1, "name": "Fan"},
        {
            "type": "schedule",
            "instance": 1,
            "name": "Lights-Schedule",
            "weekly_schedule": [[["07:00", {"enumerated": 1}], ["19:00", None]]] * 5 + [[], []],
            "schedule_default": {"enumerated": 0},
            "references": ["bv,1:present-value", "bo,1:present-value"],
            "priority_for_writing": 9,
        },
    ],
}


def test_our_schedule_writes_its_references_on_the_device_clock(
    peer_python: Path, buildwire_cmd: list[str], tmp_path: Path
) -> None:
    with our_profile_server(buildwire_cmd, tmp_path, SCHEDULED_DEVICE) as (port, line):
        assert "device,410" in line and "4 objects" in line, line
        watch = ["schedule,1:present-value", "binary-value,1:priority-array:9"]
        watch += ["binary-value,1:present-value", "binary-output,1:present-value"]
        results = run_bacpypes3(
            peer_python,
            SCHEDULE_SCRIPT,
            port,
            "--object",
            "schedule,1",
            # Monday 2026-11-23 before, at and after the occupied period; then Saturday.
            *("--at", "2026-11-23T06:59", "--at", "2026-11-23T07:00"),
            *("--at", "2026-11-23T19:30", "--at", "2026-11-28T12:00"),
            *[arg for w in watch for arg in ("--watch", w)],
        )
    schedule = results["objects"]["schedule,1"]
    assert schedule["list-of-object-property-references"] == [
        {
            "objectIdentifier": "binary-value,1",
            "propertyIdentifier": "present-value",
        },
        {
            "objectIdentifier": "binary-output,1",
            "propertyIdentifier": "present-value",
        },
    ]
    assert schedule["priority-for-writing"] == 9
    seen = [[c[w] for w in watch] for c in results["clock"]]

    # BACpypes3 shows an enumerated value inside Any or a priority value as its number text.
    def slot(number: int) -> dict:
        return {"enumerated": str(number)}

    off = [{"any": [slot(0)]}, slot(0), "inactive", "inactive"]
    on = [{"any": [slot(1)]}, slot(1), "active", "active"]
    # Each evaluation writes the value at priority 9 of every referenced property.
    assert seen == [off, on, off, off]


DEVICE_SERVICES_SCRIPT = REPO / "tests" / "peers" / "bacpypes3_device_services.py"


def test_bacpypes3_uses_the_device_services_of_our_server(
    peer_python: Path, our_server: int
) -> None:
    results = run_bacpypes3(peer_python, DEVICE_SERVICES_SCRIPT, our_server, "--device", "400")
    # Who-Has by name and by identifier, answered with I-Have; nothing for an unknown name.
    assert results["who_has_name"] == [["device,400", "analog-value,2", "AV-2"]]
    assert results["who_has_id"] == [["device,400", "binary-value,3", "BV-3"]]
    assert results["who_has_nothing"] == []
    # DeviceCommunicationControl: a disabled device answers nothing until enabled again.
    assert results["dcc_disable"] == "ok"
    assert results["read_while_disabled"] == "TimeoutError"
    assert results["dcc_enable"] == "ok"
    assert results["read_after_enable"] == "AV-1"
    assert results["reinitialize"] == "ok"
    # UTCTimeSynchronization to Sunday 2027-03-14 15:09:26 UTC: the device shows it with the
    # host's UTC offset of today (the server runs with this process's environment).
    offset = datetime.datetime.now().astimezone().utcoffset() or datetime.timedelta()
    local = datetime.datetime(2027, 3, 14, 15, 9, 26) + offset
    assert results["local_date"] == [local.year - 1900, local.month, local.day, local.isoweekday()]
    assert results["local_time"][:3] == [local.hour, local.minute, local.second]


READ_RANGE_SCRIPT = REPO / "tests" / "peers" / "bacpy_read_range.py"
LOGGING_DEVICE = {
    "device": {"instance": 420, "name": "logging-device"},
    "objects": [
        {"type": "analog-input", "instance": 1, "name": "Zone-Temp", "present_value": 20.5},
        {
            "type": "trend-log",
            "instance": 1,
            "name": "Zone-Temp-Log",
            "log": "ai,1:present-value",
            "log_interval": 1,
            "buffer_size": 100,
        },
    ],
}


def test_bacpy_reads_our_trend_log_with_read_range(
    peer_python_313: Path, buildwire_cmd: list[str], tmp_path: Path
) -> None:
    with our_profile_server(buildwire_cmd, tmp_path, LOGGING_DEVICE) as (port, _):
        # No request in the meantime: the log samples from the start, once a second.
        time.sleep(3.3)
        done = subprocess.run(
            [
                str(peer_python_313),
                str(READ_RANGE_SCRIPT),
                *("--port", str(free_udp_port()), "--target", f"127.0.0.1:{port}"),
                *("--log", "trend-log,1"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    records = results["record_count"]
    assert records >= 3
    # A sample may land between two requests: the later answers may hold one more record.
    everything = results["all"]
    assert everything["count"] in (records, records + 1)
    record_bytes = everything["bytes"] // everything["count"]
    assert record_bytes > 0 and everything["bytes"] == everything["count"] * record_bytes
    # Flags are [first-item, last-item, more-items].
    assert everything["flags"] == [True, True, False]
    assert everything["first_sequence"] is None
    assert results["position"] == {
        "flags": [True, False, False],
        "count": 2,
        "first_sequence": None,
        "bytes": 2 * record_bytes,
    }
    assert results["position_backwards"]["count"] == 2  # records 2 and 3
    assert results["position_backwards"]["flags"][0] is False
    sequence = results["sequence"]
    assert sequence["first_sequence"] == 2 and sequence["count"] >= records - 1
    assert sequence["flags"][:2] == [False, True]
    by_time = results["time"]
    assert by_time["first_sequence"] == 1 and by_time["count"] == 2
    assert by_time["flags"][0] is True


def test_our_client_falls_back_and_batches_against_rusty_bacnet(
    peer_python: Path, buildwire_cmd: list[str]
) -> None:
    extra = 400  # 405 objects: an object-list of about 2 KB, more than one APDU

    async def read_names(device: str) -> list[dict]:
        client = await bacnet.Client.bind("127.0.0.1:0")
        try:
            objects = [f"analog-value,{101 + i}" for i in range(extra)]
            return await client.read_many(device, [(o, "object-name") for o in objects])
        finally:
            await client.close()

    with rusty_bacnet(peer_python, "--extra", str(extra)) as (port, _):
        relay = UdpRelay(port)
        try:
            device = f"127.0.0.1:{relay.port}"
            listed = cli_json(
                buildwire_cmd, "read", device, f"device,{RUSTY_INSTANCE}", "object-list"
            )
            fallback_answers = list(relay.from_peer)
            relay.from_peer.clear()
            rows = asyncio.run(read_names(device))
            batch_answers = list(relay.from_peer)
        finally:
            relay.close()
    names = [v["value"] for v in listed["value"]]
    assert len(names) == 5 + extra
    assert names[-1] == f"analog-value,{100 + extra}"
    # rusty-bacnet does not segment: it aborted the whole read (an Abort PDU from the server,
    # reason 4, segmentation-not-supported), and the client read the length, then each element.
    first_apdu = fallback_answers[0][LINK_OVERHEAD:]
    assert first_apdu[0] == 0x71 and first_apdu[2] == 4, first_apdu.hex()
    # The abort, the length and each element (an element read the busy device aborted or
    # dropped is read once more, alone).
    assert len(fallback_answers) >= 1 + 1 + len(names)
    # read_many: 400 reads in a few ReadPropertyMultiple requests (at most 64 reads each).
    assert [row["value"] for row in rows] == [f"extra-{101 + i}" for i in range(extra)]
    assert len(batch_answers) <= 10, len(batch_answers)
