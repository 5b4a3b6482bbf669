"""`buildwire gateway` over real BACnet devices on 127.0.0.1, read by phable.

The devices: our `buildwire bacnet serve --objects stress` (device 400, 36 point objects),
a BACpypes3 device (tests/peers/bacpypes3_device.py, device 3021, 5 point objects) and a
rusty-bacnet device that cannot segment (44 point objects, its object-list read element by
element). The gateway discovers them, serves the model with a SCRAM user, and phable (an independent
Haystack client) reads the model, a value written on the BACpypes3 device with our BACnet
CLI (curVal and hisRead), and writes a level 8 that our CLI then reads from the device's
priority-array.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from phable import HaystackClient, Number, Ref
from test_bacnet_interop import (
    DEVICE_INSTANCE,
    RUSTY_INSTANCE,
    RUSTY_SCRIPT,
    bacpypes3_device,  # noqa: F401  (a fixture this module uses)
    free_udp_port,
    our_server,  # noqa: F401  (a fixture this module uses)
    peer_python,  # noqa: F401  (a fixture this module uses)
    stop,
    wait_for_line,
)

from buildwire import bacnet, gateway, haystack

USER, PASSWORD = "op", "gateway-secret"


@pytest.fixture
def running_gateway(
    buildwire_cmd: list[str],
    our_server: int,  # noqa: F811
    bacpypes3_device: int,  # noqa: F811
) -> Iterator[tuple[str, int, int]]:
    """The gateway over both devices: its API URL and the two device ports."""
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [
            *buildwire_cmd,
            "gateway",
            "run",
            "--bacnet",
            f"127.0.0.1:{free_udp_port()}",
            "--device",
            f"127.0.0.1:{our_server}",
            "--device",
            f"127.0.0.1:{bacpypes3_device}",
            "--who-is-wait",
            "1s",
            "--site",
            "lab:UTC",
            "--haystack",
            "127.0.0.1:0",
            "--user",
            f"{USER}:{PASSWORD}:operator",
            "--report",
            "1h",
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        if not line.startswith("serving Haystack on "):
            log.seek(0)
            raise AssertionError(f"the gateway said {line!r}: {log.read()}")
        yield line.split()[3], our_server, bacpypes3_device
    finally:
        stop(process)


def bacnet_cli(buildwire_cmd: list[str], *args: str) -> str:
    done = subprocess.run(
        [*buildwire_cmd, "bacnet", *args], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_phable_reads_the_model_of_both_devices(running_gateway: tuple[str, int, int]) -> None:
    url, _, _ = running_gateway
    client = HaystackClient.open(url, USER, PASSWORD)
    assert client.read("site")["id"].val == "lab"
    ours = client.read_all("point and equipRef==@bacnet.dev400")
    assert len(ours.rows) == 36
    theirs = client.read_all(f"point and equipRef==@bacnet.dev{DEVICE_INSTANCE}")
    by_id = {row["id"].val: row for row in theirs.rows}
    assert sorted(by_id) == [
        f"bacnet.dev{DEVICE_INSTANCE}.{name}" for name in ("ai1", "av1", "bi1", "bv1", "msv1")
    ]
    setpoint = by_id[f"bacnet.dev{DEVICE_INSTANCE}.av1"]
    assert setpoint["dis"] == "setpoint"
    assert setpoint["unit"] == "°C"
    assert setpoint["bacnetWrite"] == "AV1"
    assert "writable" in setpoint and "sp" in setpoint
    zone = by_id[f"bacnet.dev{DEVICE_INSTANCE}.ai1"]
    assert zone["curVal"] == Number(19.25, "°C")
    # The rules tagged "zone-temp" from its name and unit.
    assert "zone" in zone and "temp" in zone and "sensor" in zone
    assert by_id[f"bacnet.dev{DEVICE_INSTANCE}.bi1"]["kind"] == "Bool"
    client.close()


def test_a_bacpypes3_change_reaches_phable_and_phable_writes_reach_the_device(
    buildwire_cmd: list[str], running_gateway: tuple[str, int, int]
) -> None:
    url, _, port = running_gateway
    device = f"127.0.0.1:{port}"
    point = Ref(f"bacnet.dev{DEVICE_INSTANCE}.av1")
    client = HaystackClient.open(url, USER, PASSWORD)
    bacnet_cli(buildwire_cmd, "write", device, "av,1", "pv", "23.5", "--priority", "16")
    deadline = time.monotonic() + 15
    seen = None
    while time.monotonic() < deadline:
        seen = client.read_by_id(point).get("curVal")
        if seen == Number(23.5, "°C"):
            break
        time.sleep(0.2)
    assert seen == Number(23.5, "°C")
    history = client.his_read_by_id(point, dt.date.today())
    assert Number(23.5, "°C") in [row["val"] for row in history.rows]

    client.point_write(point, 8, Number(18, "°C"), "phable")
    slot = bacnet_cli(buildwire_cmd, "read", device, "av,1", "priority-array", "--index", "8")
    assert "18" in slot, slot
    client.point_write(point, 8)  # relinquish
    slot = bacnet_cli(buildwire_cmd, "read", device, "av,1", "priority-array", "--index", "8")
    assert "null" in slot.lower(), slot
    client.close()


def test_discover_writes_a_model_a_person_can_edit(
    buildwire_cmd: list[str],
    bacpypes3_device: int,  # noqa: F811
    tmp_path: Path,
) -> None:
    out = tmp_path / "site.trio"
    done = subprocess.run(
        [
            *buildwire_cmd,
            "gateway",
            "discover",
            "--bacnet",
            f"127.0.0.1:{free_udp_port()}",
            "--device",
            f"127.0.0.1:{bacpypes3_device}",
            "--who-is-wait",
            "1s",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "1 devices, 5 points" in done.stdout
    text = out.read_text()
    assert f"id:@bacnet.dev{DEVICE_INSTANCE}.msv1" in text
    assert text.count("bacnetCur:") == 5


async def test_the_python_gateway_follows_a_device_into_a_haystack_watch() -> None:
    async with bacnet.Server.start("127.0.0.1:0") as device:
        async with gateway.Gateway.start(
            devices=[device.address],
            bacnet="127.0.0.1:0",
            haystack="127.0.0.1:0",
            who_is_wait=0.3,
            config={"collect": {"health_interval_seconds": 0.5}},
        ) as gw:
            assert gw.report["devices"] == 1
            assert gw.report["points"] == 36
            assert gw.report["invalid"] == []
            assert "id:@bacnet.dev400.av2" in gw.model("trio")
            async with haystack.Client.connect(gw.url) as client:
                async with client.subscribe(["@bacnet.dev400.av2"], interval=0.1) as changes:
                    first = await asyncio.wait_for(changes.__anext__(), 10)
                    assert first.entity["curStatus"] == "ok"
                    device.set("av,2", "pv", 66.5)
                    value = None
                    while value != 66.5:
                        change = await asyncio.wait_for(changes.__anext__(), 10)
                        value = change.entity["curVal"].val
            assert gw.stats["cov_points"] > 0
            assert gw.stats["changes"] >= 1


async def test_a_wrong_configuration_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"site\.tz"):
        await gateway.Gateway.start({"site": {"tz": "Atlantis"}})
    with pytest.raises(ValueError, match="unknown field"):
        await gateway.Gateway.start({"bacnet": {"brodcast": "127.255.255.255"}})


def test_a_rusty_bacnet_device_that_cannot_segment_is_modelled_and_followed(
    buildwire_cmd: list[str],
    peer_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    # 4 objects and 40 more analog values: its object-list is too long for one unsegmented
    # answer, so discovery reads it element by element.
    port = free_udp_port()
    device = subprocess.Popen(
        [
            str(peer_python),
            str(RUSTY_SCRIPT),
            "--port",
            str(port),
            "--instance",
            str(RUSTY_INSTANCE),
            "--extra",
            "40",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    gateway_process = None
    try:
        wait_for_line(device, "ready")
        time.sleep(0.3)
        out = tmp_path / "rusty.json"
        common = [
            "--bacnet",
            f"127.0.0.1:{free_udp_port()}",
            "--device",
            f"127.0.0.1:{port}",
            "--who-is-wait",
            "1s",
        ]
        done = subprocess.run(
            [*buildwire_cmd, "gateway", "discover", *common, "--out", str(out), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["devices"] == 1 and report["points"] == 44, report
        assert report["invalid"] == [], report
        gateway_process = subprocess.Popen(
            [*buildwire_cmd, "gateway", "run", *common, "--haystack", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        url = wait_for_line(gateway_process, "serving Haystack on").split()[3]
        # The sensor changes on the device: the gateway follows it (COV or polling).
        assert device.stdin is not None
        device.stdin.write("ai 23.75\n")
        device.stdin.flush()
        wait_for_line(device, "set")
        point = f"@bacnet.dev{RUSTY_INSTANCE}.ai1"
        deadline = time.monotonic() + 20
        seen = None
        while time.monotonic() < deadline:
            read = subprocess.run(
                [*buildwire_cmd, "haystack", "client", url, "read", f"id=={point}", "--json"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert read.returncode == 0, read.stderr
            seen = json.loads(read.stdout)["rows"][0].get("curVal", {}).get("val")
            if seen == 23.75:
                break
            time.sleep(0.5)
        assert seen == 23.75
    finally:
        if gateway_process is not None:
            stop(gateway_process)
        stop(device)
