"""The Python API of BACnet networks: a router, a BBMD, a foreign device and the table reads,
on loopback.

The BBMD and a device share one UDP port on two loopback addresses (one "subnet": the
device hears the BBMD's broadcasts on 127.255.255.255); a client on another address and port
registers as a foreign device, so its Who-Is reaches the device through the BBMD.
"""

import asyncio
import socket

from buildwire import bacnet, bacnet_network


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_foreign_device_finds_a_device_through_a_python_bbmd() -> None:
    async def scenario() -> None:
        port = _free_udp_port()
        bbmd = await bacnet_network.Bbmd.start(
            f"127.0.0.61:{port}", broadcast="127.255.255.255", max_foreign_devices=4
        )
        server = await bacnet.Server.start(f"127.0.0.62:{port}", broadcast="127.255.255.255")
        client = await bacnet_network.foreign_client(
            "127.0.0.63:0", f"127.0.0.61:{port}", ttl=30, broadcast="127.255.255.255"
        )
        try:
            assert bbmd.address == f"127.0.0.61:{port}"
            assert [entry["address"] for entry in bbmd.bdt()] == [f"127.0.0.61:{port}"]
            found: list = []
            for _ in range(10):
                found = await client.who_is(timeout=1.0)
                if found:
                    break
            assert found, "the foreign device's Who-Is found no device through the BBMD"
            assert client.broadcast_address == f"127.0.0.61:{port}"  # the BBMD
            fdt = bbmd.fdt()
            assert len(fdt) == 1 and fdt[0]["address"].startswith("127.0.0.63:"), fdt
            assert fdt[0]["ttl"] == 30
            # The same tables read over the network.
            remote_fdt = await bacnet_network.read_fdt(f"127.0.0.61:{port}")
            assert [e["address"] for e in remote_fdt] == [e["address"] for e in fdt]
            remote_bdt = await bacnet_network.read_bdt(f"127.0.0.61:{port}")
            assert [e["address"] for e in remote_bdt] == [f"127.0.0.61:{port}"]
            assert bbmd.stats()["registrations"] >= 1
        finally:
            await client.close()
            await server.stop()
            await bbmd.stop()

    asyncio.run(scenario())


def test_a_python_router_carries_reads_and_writes_to_network_2() -> None:
    async def scenario() -> None:
        one, two = _free_udp_port(), _free_udp_port()
        router = await bacnet_network.Router.start(
            [f"1=bip:127.0.0.1:{one}", f"2=bip:127.0.0.1:{two}"]
        )
        server = await bacnet.Server.start(f"127.0.0.64:{two}", broadcast="127.255.255.255")
        # The client shares network 1's port on another address, so the router's broadcast
        # I-Am-Router-To-Network reaches it.
        client = await bacnet.Client.bind(f"127.0.0.65:{one}", "127.255.255.255")
        try:
            assert [p["network"] for p in router.ports()] == [1, 2]
            device = f"2:127.0.0.64:{two}"
            assert await client.read(device, "ai,1", "pv") == 61.5
            await client.write(device, "av,3", "pv", 44.25, priority=8)
            assert await client.read(device, "av,3", "pv") == 44.25
            assert router.stats()["routed"] >= 6
        finally:
            await client.close()
            await server.stop()
            await router.stop()

    asyncio.run(scenario())
