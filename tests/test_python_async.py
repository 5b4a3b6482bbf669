"""The asyncio Python APIs: BACnet and OPC UA clients against our own servers on 127.0.0.1."""

from __future__ import annotations

import socket

import pytest

from buildwire import bacnet, opcua


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
        client.close()
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
        client.close()
        await server.stop()


async def test_bacnet_timeout_against_a_silent_address() -> None:
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    client = await bacnet.Client.bind("127.0.0.1:0")
    try:
        with pytest.raises(TimeoutError):
            await client.read(f"127.0.0.1:{silent.getsockname()[1]}", "ai,1", "pv")
    finally:
        client.close()
        silent.close()


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
