"""The complete Python BACnet client (issue 25) against our own device on 127.0.0.1.

Every service the server implements, each exception of the ``BacnetError`` family, the
client's and each call's ``timeout``/``retries``, where Who-Is broadcasts go, values as
Python objects, and REAL writes out of range.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from conftest import free_udp_port

from buildwire import bacnet

PROFILE = {
    "device": {"instance": 77, "name": "services-device"},
    "objects": [
        {"type": "analog-value", "instance": 1, "name": "Setpoint", "present_value": 21.0,
         "commandable": True},
        {"type": "analog-value", "instance": 2, "name": "Offset", "present_value": 0.5},
        {"type": "analog-input", "instance": 1, "name": "Zone-Temp", "present_value": 20.5},
        {"type": "calendar", "instance": 1, "name": "Holidays",
         "date_list": [{"date": "2026-01-01"}]},
        {"type": "trend-log", "instance": 1, "name": "Zone-Temp-Log",
         "log": "ai,1:present-value", "log_interval": 0.2, "buffer_size": 50},
    ],
}  # fmt: skip


@pytest.fixture
async def device() -> AsyncIterator[bacnet.Server]:
    async with bacnet.Server.start("127.0.0.1:0", json.dumps(PROFILE)) as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[bacnet.Client]:
    async with bacnet.Client.bind("127.0.0.1:0") as client:
        yield client


# --- exceptions ---------------------------------------------------------------------------


def test_the_exceptions_form_one_family_importable_from_buildwire_bacnet() -> None:
    for family in (
        bacnet.BacnetErrorResponse,
        bacnet.BacnetWriteMultipleError,
        bacnet.BacnetListError,
        bacnet.BacnetReject,
        bacnet.BacnetAbort,
        bacnet.BacnetTimeoutError,
    ):
        assert issubclass(family, bacnet.BacnetError)
        assert issubclass(family, RuntimeError)
    assert issubclass(bacnet.BacnetTimeoutError, asyncio.TimeoutError)
    assert issubclass(bacnet.BacnetTimeoutError, TimeoutError)
    assert issubclass(bacnet.BacnetWriteMultipleError, bacnet.BacnetErrorResponse)
    assert issubclass(bacnet.BacnetListError, bacnet.BacnetErrorResponse)


async def test_an_error_pdu_raises_bacnet_error_response_with_names_and_numbers(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    with pytest.raises(bacnet.BacnetErrorResponse) as unknown:
        await client.read(device.address, "av,99", "pv")
    error = unknown.value
    assert (error.error_class, error.error_class_number) == ("object", 1)
    assert (error.error_code, error.error_code_number) == ("unknown-object", 31)
    assert error.service == "read-property"
    assert "unknown-object" in str(error)
    with pytest.raises(bacnet.BacnetErrorResponse) as denied:
        await client.write(device.address, "ai,1", "pv", 1.0)
    assert denied.value.error_class == "property"
    assert denied.value.error_code == "write-access-denied"
    assert denied.value.error_code_number == 40


async def test_a_request_the_device_cannot_take_raises_bacnet_reject(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    # BACnet passwords have 1 to 20 characters: the device rejects a longer one.
    with pytest.raises(bacnet.BacnetReject) as rejected:
        await client.device_communication_control(device.address, "disable", password="x" * 21)
    assert rejected.value.reason == "parameter-out-of-range"
    assert rejected.value.reason_number == 6
    # Not disabled: the device still answers.
    assert await client.read(device.address, "av,2", "pv") == pytest.approx(0.5)


async def test_an_answer_too_long_to_send_raises_bacnet_abort(client: bacnet.Client) -> None:
    # The object-list of 20,001 objects needs more than the 64 segments this client takes.
    async with bacnet.Server.start("127.0.0.1:0", "large:20000") as big:
        with pytest.raises(bacnet.BacnetAbort) as aborted:
            await client.read_multiple(big.address, [("device,500", ["object-list"])])
    abort = aborted.value
    assert abort.by_device
    assert (abort.reason, abort.reason_number) == ("buffer-overflow", 1)
    assert "ask for less" in str(abort)


@pytest.fixture
def silent() -> Iterator[socket.socket]:
    """A UDP socket on 127.0.0.1 that receives requests and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.setblocking(False)
        yield sock


def address_of(sock: socket.socket) -> str:
    return f"127.0.0.1:{sock.getsockname()[1]}"


def received(sock: socket.socket) -> int:
    """How many datagrams wait on `sock` (read and dropped)."""
    count = 0
    while True:
        try:
            sock.recv(2048)
        except BlockingIOError:
            return count
        count += 1


async def test_a_silent_device_raises_a_timeout_after_the_clients_timeout_and_retries(
    silent: socket.socket,
) -> None:
    async with bacnet.Client.bind("127.0.0.1:0", timeout=0.2, retries=1) as client:
        assert (client.timeout, client.retries) == (0.2, 1)
        started = time.monotonic()
        with pytest.raises(asyncio.TimeoutError) as timed_out:
            await client.read(address_of(silent), "ai,1", "pv")
        assert isinstance(timed_out.value, bacnet.BacnetTimeoutError)
        # Two attempts of 0.2 s, far below the 12 s of the defaults.
        assert time.monotonic() - started < 6
        assert received(silent) == 2  # the request and its one retry


async def test_each_call_may_set_its_own_timeout_and_retries(silent: socket.socket) -> None:
    address = address_of(silent)
    async with bacnet.Client.bind("127.0.0.1:0") as client:
        assert (client.timeout, client.retries) == (3.0, 3)
        started = time.monotonic()
        with pytest.raises(bacnet.BacnetTimeoutError):
            await client.read(address, "ai,1", "pv", timeout=0.2, retries=0)
        with pytest.raises(bacnet.BacnetTimeoutError):
            await client.write(address, "av,1", "pv", 1.0, timeout=0.2, retries=0)
        with pytest.raises(bacnet.BacnetTimeoutError):
            await client.read_multiple(address, [("ai,1", ["pv"])], timeout=0.2, retries=2)
        assert time.monotonic() - started < 6
        assert received(silent) == 1 + 1 + 3
        with pytest.raises(ValueError, match="timeout"):
            await client.read(address, "ai,1", "pv", timeout=0)
        with pytest.raises(ValueError, match="retries must be 0 to 255"):
            await client.read(address, "ai,1", "pv", retries=300)
        with pytest.raises(ValueError, match="retries must be 0 to 255"):
            await bacnet.Client.bind("127.0.0.1:0", retries=-1)
        assert received(silent) == 0  # refused before anything was sent
        rows = await client.read_many(address, [("ai,1", "pv")], timeout=0.2, retries=0)
        assert "no answer" in rows[0]["error"]


# --- Who-Is and where broadcasts go -------------------------------------------------------


async def test_a_client_on_port_0_broadcasts_to_the_standard_port() -> None:
    async with bacnet.Client.bind("127.0.0.1:0") as client:
        assert client.broadcast_address == "127.255.255.255:47808"
    async with bacnet.Client.bind("127.0.0.1:0", "127.255.255.255", port=47809) as client:
        assert client.broadcast_address == "127.255.255.255:47809"


async def test_who_is_with_port_finds_a_device_on_that_port_and_logs_where_it_went(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_udp_port()
    async with bacnet.Server.start(f"127.0.0.1:{port}", json.dumps(PROFILE)) as server:
        async with bacnet.Client.bind("127.0.0.1:0", port=port) as client:
            with caplog.at_level(logging.INFO, logger="buildwire.bacnet"):
                found = await client.who_is(timeout=1.0)
            assert [row["device"] for row in found] == ["device,77"]
            assert found[0]["address"] == server.address
            assert f"Who-Is sent to 127.255.255.255:{port}" in caplog.text
            # The range limits who answers; an empty answer says where the Who-Is went.
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="buildwire.bacnet"):
                assert await client.who_is(timeout=0.5, low=1, high=10) == []
            assert f"no device answered the Who-Is sent to 127.255.255.255:{port}" in caplog.text
            # Directed to the device itself.
            direct = await client.who_is(timeout=0.5, device=server.address)
            assert [row["instance"] for row in direct] == [77]


async def test_who_has_finds_objects_by_identifier_and_by_name(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    by_id = await client.who_has("av,1", device=device.address, timeout=0.5)
    assert by_id == [bacnet.IHave(device.address, "device,77", "analog-value,1", "Setpoint")]
    by_name = await client.who_has(name="Zone-Temp", device=device.address, timeout=0.5)
    assert [(h.object, h.name) for h in by_name] == [("analog-input,1", "Zone-Temp")]
    assert await client.who_has(name="Nothing", device=device.address, timeout=0.5) == []
    with pytest.raises(ValueError, match="identifier or its name"):
        await client.who_has("av,1", name="Setpoint", device=device.address)


# --- the services -------------------------------------------------------------------------


async def test_write_multiple_writes_several_objects_in_one_request(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    await client.write_multiple(
        device.address,
        [
            ("av,1", "pv", 23.5, 8),
            ("av,1", "description", "lobby"),
            {"object": "av,2", "property": "pv", "value": 1.25},
        ],
    )
    assert await client.read(device.address, "av,1", "pv") == pytest.approx(23.5)
    assert await client.read(device.address, "av,1", "priority-array", index=8) == 23.5
    assert await client.read(device.address, "av,1", "description") == "lobby"
    assert await client.read(device.address, "av,2", "pv") == pytest.approx(1.25)


async def test_write_multiple_names_the_first_write_that_failed(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    with pytest.raises(bacnet.BacnetWriteMultipleError) as failed:
        await client.write_multiple(
            device.address, [("av,2", "pv", 2.0), ("av,9", "pv", 3.0), ("av,2", "pv", 4.0)]
        )
    error = failed.value
    assert error.first_failed == ("analog-value,9", "present-value", None)
    assert (error.error_class, error.error_code) == ("object", "unknown-object")
    assert await client.read(device.address, "av,2", "pv") == pytest.approx(2.0)
    with pytest.raises(ValueError, match="write is"):
        await client.write_multiple(device.address, [("av,2", "pv")])


async def test_read_range_reads_log_records_with_aware_timestamps(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    for _ in range(50):
        count = await client.read(device.address, "trend-log,1", "record-count")
        if count >= 3:
            break
        await asyncio.sleep(0.1)
    everything = await client.read_range(device.address, "trend-log,1")
    assert everything.object == "trend-log,1" and everything.property == "log-buffer"
    assert everything.item_count == len(everything.items) >= 3
    assert everything.first_item
    record = everything.items[0]
    assert isinstance(record, bacnet.LogRecord)
    assert record.value == pytest.approx(20.5)
    assert record.timestamp is not None and record.timestamp.tzinfo is not None
    age = datetime.datetime.now(datetime.timezone.utc) - record.timestamp
    assert datetime.timedelta(0) <= age < datetime.timedelta(minutes=1)
    first_two = await client.read_range(device.address, "trend-log,1", position=1, count=2)
    assert first_two.item_count == 2 and first_two.first_item
    assert first_two.items == everything.items[:2]
    later = await client.read_range(device.address, "trend-log,1", since=record.timestamp, count=1)
    assert later.item_count == 1 and later.items[0].timestamp > record.timestamp
    assert later.first_sequence_number is not None
    by_sequence = await client.read_range(
        device.address, "trend-log,1", sequence=later.first_sequence_number, count=1
    )
    assert by_sequence.items == later.items
    with pytest.raises(ValueError, match="timezone-aware"):
        await client.read_range(
            device.address, "trend-log,1", since=datetime.datetime(2026, 1, 1), count=1
        )


async def test_add_and_remove_list_elements_of_a_date_list(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    async def dates() -> list[object]:
        value = await client.read(device.address, "calendar,1", "date-list")
        return value if isinstance(value, list) else [value]

    assert len(await dates()) == 1
    christmas = {"date": "2026-12-25"}
    await client.add_list_element(device.address, "calendar,1", "date-list", [christmas])
    assert len(await dates()) == 2
    await client.remove_list_element(
        device.address, "calendar,1", "date-list", [{"date": "2026-01-01"}, christmas]
    )
    assert await dates() == []
    with pytest.raises(bacnet.BacnetErrorResponse) as not_a_list:
        await client.add_list_element(device.address, "av,1", "pv", [1.0])
    assert not_a_list.value.service == "add-list-element"
    # Removing a date the list does not hold: the device names the element, changes nothing.
    await client.add_list_element(device.address, "calendar,1", "date-list", [christmas])
    with pytest.raises(bacnet.BacnetListError) as missing:
        await client.remove_list_element(
            device.address, "calendar,1", "date-list", [christmas, {"date": "2027-05-01"}]
        )
    assert missing.value.first_failed_element == 2
    assert missing.value.service == "remove-list-element"
    assert (missing.value.error_class, missing.value.error_code) == (
        "services",
        "list-element-not-found",
    )
    assert missing.value.error_code_number == 81
    assert len(await dates()) == 1


async def test_device_communication_control_silences_and_enables_the_device(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    await client.device_communication_control(device.address, "disable", minutes=5)
    with pytest.raises(bacnet.BacnetTimeoutError):
        await client.read(device.address, "av,2", "pv", timeout=0.2, retries=0)
    await client.device_communication_control(device.address, "enable")
    assert await client.read(device.address, "av,2", "pv") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="disable-initiation"):
        await client.device_communication_control(device.address, "off")


async def test_reinitialize_device_is_acknowledged(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    await client.reinitialize_device(device.address, "warmstart")
    assert await client.read(device.address, "av,2", "pv") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="coldstart"):
        await client.reinitialize_device(device.address, "reboot")


async def device_date(client: bacnet.Client, device: bacnet.Server, expected: str) -> str:
    """The device's local-date once it starts with `expected` (a synchronization is
    unconfirmed: the device applies it shortly after it is sent), or as it stays."""
    for _ in range(20):
        date = str(await client.read(device.address, "device,77", "local-date"))
        if date.startswith(expected):
            break
        await asyncio.sleep(0.05)
    return date


async def test_utc_time_synchronization_sets_the_device_clock(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    when = datetime.datetime(2030, 6, 3, 12, 0, 0, tzinfo=datetime.timezone.utc)
    await client.time_synchronization(when, device=device.address, utc=True)
    # The device shows it in the host's zone: within a day of the UTC date.
    assert (await device_date(client, device, "2030-06-0")).startswith("2030-06-0")
    with pytest.raises(ValueError, match="timezone-aware"):
        await client.time_synchronization(datetime.datetime(2030, 1, 1), device=device.address)


async def test_local_time_synchronization_sends_the_wall_clock_of_its_zone(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    here = datetime.datetime.now().astimezone().tzinfo
    when = datetime.datetime(2031, 2, 4, 9, 30, 0, tzinfo=here)
    await client.time_synchronization(when, device=device.address)
    assert (await device_date(client, device, "2031-02-04")).startswith("2031-02-04")
    clock = await client.read(device.address, "device,77", "local-time")
    assert str(clock).startswith("09:3")


async def test_subscribe_cov_property_reports_one_property(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    async with client.subscribe(device.address, "av,2", "pv", increment=0.1) as changes:
        async for notification in changes:
            assert notification.values["present-value"] == pytest.approx(0.5)
            assert notification.timestamp.tzinfo is not None
            break


# --- values -------------------------------------------------------------------------------


async def test_values_come_back_as_python_objects(
    device: bacnet.Server, client: bacnet.Client
) -> None:
    assert await client.read(device.address, "device,77", "object-name") == "services-device"
    assert await client.read(device.address, "av,1", "out-of-service") is False
    assert await client.read(device.address, "av,1", "status-flags") == {
        "in-alarm": False,
        "fault": False,
        "overridden": False,
        "out-of-service": False,
    }
    assert await client.read(device.address, "device,77", "object-identifier") == "device,77"
    object_list = await client.read(device.address, "device,77", "object-list")
    assert object_list[:2] == ["device,77", "analog-value,1"]
    assert device.get("av,2", "pv") == pytest.approx(0.5)
    rows = await client.read_multiple(device.address, [("av,2", ["pv", "object-name"])])
    assert [row["value"] for row in rows] == [0.5, "Offset"]


@pytest.mark.parametrize("value", [3.4e39, -3.4e39, 1e400, float("inf")])
async def test_a_float_beyond_the_real_range_raises_value_error_and_writes_nothing(
    device: bacnet.Server, client: bacnet.Client, value: float
) -> None:
    with pytest.raises(ValueError, match=r"REAL|infinite"):
        await client.write(device.address, "av,2", "pv", value)
    with pytest.raises(ValueError, match=r"REAL|infinite"):
        await client.write_multiple(device.address, [("av,2", "pv", value)])
    with pytest.raises(ValueError, match=r"REAL|infinite"):
        device.set("av,2", "pv", value)
    assert await client.read(device.address, "av,2", "pv") == pytest.approx(0.5)
    # The largest REAL is written as it is; a double holds more.
    await client.write(device.address, "av,2", "pv", 3.4e38)
    assert await client.read(device.address, "av,2", "pv") == pytest.approx(3.4e38, rel=1e-6)


async def test_the_command_line_refuses_a_real_beyond_its_range_too(
    device: bacnet.Server, buildwire_cmd: list[str]
) -> None:
    done = await asyncio.to_thread(
        subprocess.run,
        [*buildwire_cmd, "bacnet", "write", device.address, "av,2", "pv", "3.4e39"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "out of range for a real" in done.stderr
    assert device.get("av,2", "pv") == pytest.approx(0.5)
