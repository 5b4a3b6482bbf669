"""The asyncio Python APIs: BACnet and OPC UA clients against our own servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import signal
import socket

import pytest

from buildwire import bacnet, opcua

NORMAL = {"in-alarm": False, "fault": False, "overridden": False, "out-of-service": False}
"""Status flags of an object in its normal state, as the BACnet client decodes them."""


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_bacnet_client_reads_and_writes_the_stress_device() -> None:
    server = await bacnet.Server.start("127.0.0.1:0")
    client = await bacnet.Client.bind("127.0.0.1:0")
    try:
        assert server.object_count == 40
        device = server.address
        assert await client.read(device, "ai,1", "pv") == pytest.approx(61.5)
        assert await client.read(device, "device,400", "object-list", index=0) == 40
        object_list = await client.read(device, "device,400", "object-list")
        assert object_list[0] == "device,400" and len(object_list) == 40
        # Commandable: write at priority 8, then relinquish it.
        await client.write(device, "av,1", "pv", 42.5, priority=8)
        assert await client.read(device, "av,1", "pv") == pytest.approx(42.5)
        assert await client.read(device, "av,1", "priority-array", index=8) == pytest.approx(42.5)
        await client.write(device, "av,1", "pv", None, priority=8)
        assert await client.read(device, "av,1", "priority-array", index=8) is None
        await client.write(device, "bv,1", "pv", "active", priority=8)
        assert await client.read(device, "bv,1", "pv") == 1
        rows = await client.read_multiple(device, [("ai,1", ["pv", "units"]), ("ai,99", ["pv"])])
        assert rows[0]["value"] == pytest.approx(61.5)
        assert rows[1]["property"] == "units"
        assert rows[2]["error"] == "object: unknown-object"
        with pytest.raises(RuntimeError, match="unknown-property"):
            await client.read(device, "ai,1", "bit-text")
        with pytest.raises(ValueError, match="nonsense"):
            await client.read(device, "nonsense,1", "pv")
    finally:
        await client.close()
        await server.stop()


async def test_bacnet_server_objects_and_write_stream() -> None:
    server = await bacnet.Server.start("127.0.0.1:0")
    client = await bacnet.Client.bind("127.0.0.1:0")
    try:
        device = server.address
        added = server.add_object(
            {
                "type": "av",
                "instance": 50,
                "name": "Zone-Setpoint",
                "present_value": 21.0,
                "commandable": True,
                "units": "degrees-celsius",
            }
        )
        assert added == "analog-value,50"
        assert server.object_count == 41
        assert await client.read(device, "device,400", "object-list", index=0) == 41
        assert await client.read(device, "av,50", "object-name") == "Zone-Setpoint"
        with pytest.raises(ValueError, match="duplicate-name"):
            server.add_object({"type": "bv", "instance": 77, "name": "Zone-Setpoint"})
        with pytest.raises(ValueError, match="already-exists"):
            server.add_object({"type": "av", "instance": 50, "name": "Other"})
        with pytest.raises(ValueError, match="units"):
            server.add_object({"type": "ai", "instance": 77, "name": "X", "units": "furlongs"})

        # A simulated sensor: local sets bypass the network's write rules.
        server.set("ai,1", "pv", 70.25)
        assert server.get("ai,1", "pv") == pytest.approx(70.25)
        assert await client.read(device, "ai,1", "pv") == pytest.approx(70.25)
        with pytest.raises(RuntimeError, match="write-access-denied"):
            await client.write(device, "ai,1", "pv", 1.0)

        # Network writes arrive in order with the value after each write.
        await client.write(device, "av,50", "pv", 23.5, priority=8)
        await client.write(device, "av,50", "pv", 19.0, priority=12)  # loses to priority 8
        await client.write(device, "av,50", "object-name", "Setpoint-2")
        seen = []
        async for write in server.writes():
            seen.append((write.property, write.value))
            if write.property == "object-name" or len(seen) > 10:
                break
        names = [name for name, _ in seen]
        # Priority 8: the present-value, the array and the command priority change;
        # priority 12 under it changes only the array; then the rename.
        assert names == [
            "present-value",
            "priority-array",
            "current-command-priority",
            "priority-array",
            "object-name",
        ]
        assert seen[0][1] == pytest.approx(23.5)
        assert seen[1][1][7] == pytest.approx(23.5) and seen[1][1][11] is None
        assert seen[2][1] == 8
        assert seen[3][1][11] == pytest.approx(19.0)
        assert seen[4][1] == "Setpoint-2"
        assert server.get("av,50", "pv") == pytest.approx(23.5)
        assert server.dropped_writes == 0

        server.remove_object("av,50")
        assert server.object_count == 40
        with pytest.raises(RuntimeError, match="unknown-object"):
            await client.read(device, "av,50", "pv")
        with pytest.raises(ValueError, match="unknown-object"):
            server.remove_object("av,50")
    finally:
        await client.close()
        await server.stop()


async def test_bacnet_who_is_by_broadcast_on_loopback() -> None:
    port = free_udp_port()
    server = await bacnet.Server.start(f"127.0.0.1:{port}", broadcast="127.255.255.255")
    # Broadcasts go to the client's own port: a second loopback address shares it.
    client = await bacnet.Client.bind(f"127.0.0.2:{port}", broadcast="127.255.255.255")
    try:
        found = await client.who_is(timeout=1.0)
        assert [d["device"] for d in found] == ["device,400"]
        assert found[0]["address"] == server.address
        assert await client.who_is(timeout=0.5, low=1, high=10) == []
    finally:
        await client.close()
        await server.stop()


async def test_bacnet_timeout_against_a_silent_address() -> None:
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    client = await bacnet.Client.bind("127.0.0.1:0")
    try:
        with pytest.raises(TimeoutError):
            await client.read(f"127.0.0.1:{silent.getsockname()[1]}", "ai,1", "pv")
    finally:
        await client.close()
        silent.close()


async def test_bacnet_subscribe_async_iterator() -> None:
    server = await bacnet.Server.start("127.0.0.1:0")
    client = await bacnet.Client.bind("127.0.0.1:0")
    device = server.address
    try:
        # SubscribeCOV, unconfirmed: the initial notification, then each written value.
        async with client.subscribe(device, "av,1", lifetime=120) as changes:
            assert await client.read(device, "device,400", "active-cov-subscriptions") != []
            assert server.cov_subscriptions == 1
            first = await changes.__anext__()
            assert first.device == "device,400" and first.object == "analog-value,1"
            assert first.values == {"present-value": 71.0, "status-flags": NORMAL}
            assert first.confirmed is False
            assert first.process == changes.process_identifier
            assert 0 < first.time_remaining <= 120
            await client.write(device, "av,1", "pv", 72.5, priority=8)
            changed = await changes.__anext__()
            assert changed.values["present-value"] == pytest.approx(72.5)
            # A timed-out wait loses nothing: the next notification is still delivered.
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(changes.__anext__(), 0.3)
            await client.write(device, "av,1", "pv", 73.5, priority=8)
            assert (await changes.__anext__()).values["present-value"] == pytest.approx(73.5)
        # Leaving the block cancelled it on the device.
        assert await client.read(device, "device,400", "active-cov-subscriptions") == []
        assert server.cov_subscriptions == 0

        # SubscribeCOVProperty, confirmed, with a COV increment of 1.0: a local sensor reading
        # 0.5 away is not reported, the next one 1.5 away is.
        seen = []
        watch = client.subscribe(device, "ai,1", "pv", confirmed=True, increment=1.0)
        async for notification in watch:
            assert notification.confirmed is True
            seen.append(notification.values)
            if len(seen) == 1:
                server.set("ai,1", "pv", 62.0)
                server.set("ai,1", "pv", 63.0)
            else:
                break
        # SubscribeCOVProperty reports the property and the object's status flags.
        assert seen == [
            {"present-value": 61.5, "status-flags": NORMAL},
            {"present-value": 63.0, "status-flags": NORMAL},
        ]
        await watch.cancel()
        assert [n async for n in watch] == []  # iteration ends once cancelled
        assert await client.read(device, "device,400", "active-cov-subscriptions") == []

        # A subscription dropped without cancel() is cancelled on the device too.
        dropped = client.subscribe(device, "bv,1")
        await dropped.__anext__()
        assert server.cov_subscriptions == 1
        del dropped
        for _ in range(50):
            if server.cov_subscriptions == 0:
                break
            await asyncio.sleep(0.05)
        assert server.cov_subscriptions == 0

        # The device's refusal raises at subscription time.
        with pytest.raises(RuntimeError, match="unknown-object"):
            async with client.subscribe(device, "ai,99"):
                pass
        with pytest.raises(ValueError, match="property_id"):
            await client.subscribe(device, "ai,1", increment=1.0).start()
    finally:
        await client.close()
        await server.stop()


async def test_bacnet_subscription_is_renewed_and_survives_a_device_restart() -> None:
    port = free_udp_port()
    server = await bacnet.Server.start(f"127.0.0.1:{port}")
    client = await bacnet.Client.bind("127.0.0.1:0")
    device = server.address
    try:
        # Lifetime 2 s: the client renews it before it ends, the device keeps it.
        async with client.subscribe(server.address, "ai,1", lifetime=2) as changes:
            assert (await changes.__anext__()).values["present-value"] == pytest.approx(61.5)
            await asyncio.sleep(3.5)
            assert server.cov_subscriptions == 1  # renewed, not added again
            assert await client.read(device, "device,400", "active-cov-subscriptions") != []
            # A restarted device has forgotten the subscription; the client makes it again
            # and the new device's initial notification brings its value.
            await server.stop()
            server = await bacnet.Server.start(f"127.0.0.1:{port}")
            server.set("ai,1", "pv", 80.0)

            async def restored() -> None:
                async for notification in changes:
                    if notification.values["present-value"] == pytest.approx(80.0):
                        return

            await asyncio.wait_for(restored(), 8)
            assert await client.read(device, "device,400", "active-cov-subscriptions") != []
        assert await client.read(device, "device,400", "active-cov-subscriptions") == []
    finally:
        await client.close()
        await server.stop()


async def test_bacnet_cli_subscribe_streams_and_cancels_on_ctrl_c(buildwire_cmd: list[str]) -> None:
    server = await bacnet.Server.start("127.0.0.1:0")
    command = [*buildwire_cmd, "bacnet", "subscribe", server.address, "ai,2", "--json"]
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        first = json.loads(await asyncio.wait_for(process.stdout.readline(), 10))
        assert first["object"] == "analog-input,2" and first["confirmed"] is False
        assert first["values"]["present-value"] == [{"type": "real", "value": 63.0}]
        assert server.cov_subscriptions == 1
        server.set("ai,2", "pv", 64.5)
        changed = json.loads(await asyncio.wait_for(process.stdout.readline(), 10))
        assert changed["values"]["present-value"] == [{"type": "real", "value": 64.5}]
        process.send_signal(signal.SIGINT)
        # Exit status 130 after Ctrl-C (docs/conventions.md), after the cancellation.
        assert await asyncio.wait_for(process.wait(), 10) == 130
        assert server.cov_subscriptions == 0  # cancelled, not left to its lifetime
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await server.stop()


async def test_bacnet_read_many_batches_and_keeps_order() -> None:
    server = await bacnet.Server.start("127.0.0.1:0")
    client = await bacnet.Client.bind("127.0.0.1:0")
    device = server.address
    try:
        object_list = await client.read(device, "device,400", "object-list")
        references = [(o, p) for o in object_list for p in ("object-name", "object-type")]
        references += [("ai,99", "pv"), ("av,1", "priority-array", 16), ("ai,1", "pv")]
        rows = await client.read_many(device, references)
        assert len(rows) == len(references)
        for (object_id, property_id, *_), row in zip(references[:-3], rows, strict=False):
            assert (row["object"], row["property"]) == (object_id, property_id)
        # Names come back in full.
        assert [(r["object"], r["property"], r["index"]) for r in rows[-3:]] == [
            ("analog-input,99", "present-value", None),
            ("analog-value,1", "priority-array", 16),
            ("analog-input,1", "present-value", None),
        ]
        names = [row["value"] for row in rows[: 2 * len(object_list) : 2]]
        assert names[0] == "Docker-Stress-400" and names[1] == "AI-1"
        assert names[-1] == "NC-1" and len(set(names)) == 40
        assert rows[-3]["error"] == "object: unknown-object"
        assert rows[-2]["index"] == 16 and rows[-2]["value"] is None
        assert rows[-1]["value"] == pytest.approx(61.5)
        # Each answer equals what a single ReadProperty gives.
        for row in rows[:10]:
            assert row["value"] == await client.read(device, row["object"], row["property"])
        assert await client.read_many(device, []) == []
    finally:
        await client.close()
        await server.stop()


async def test_opcua_client_against_our_server() -> None:
    server = await opcua.Server.start("127.0.0.1:0")
    client = await opcua.Client.connect(server.endpoint)
    try:
        names = [r["browse_name"] for r in await client.browse("i=85")]
        assert "Server" in names and "1:Throughput" in names
        (now,) = await client.read("i=2258")
        assert now.startswith("20")
        namespaces = (await client.read("i=2255"))[0]
        assert namespaces[0] == "http://opcfoundation.org/UA/"
        assert await client.call("ns=1;i=5000", "ns=1;i=6000", ["uint32:2"]) == []
        (data,) = await client.call("ns=1;i=5000", "ns=1;i=6001", [])
        assert isinstance(data, bytes) and len(data) == 2048
        with pytest.raises(RuntimeError, match="BadNodeIdUnknown"):
            await client.read("ns=7;i=1")
        with pytest.raises(ValueError):
            await client.read("not a node id")
    finally:
        await client.close()
        await server.stop()
