"""An asyncua OPC UA server for interop tests: SecurityPolicy None on 127.0.0.1:PORT with
the throughput benchmark object of open62541's opcua-bench (``ns=1;i=5000`` with
``setSize`` ``ns=1;i=6000`` and ``getData`` ``ns=1;i=6001``) and a writable Double
``ns=1;s=Setpoint``. Prints ``listening on <endpoint>`` once ready; runs until killed.

Usage: python asyncua_server.py PORT
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from asyncua import Server, ua


async def main(port: int) -> None:
    logging.basicConfig(level=logging.WARNING)
    server = Server()
    await server.init()
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    server.set_endpoint(endpoint)
    server.set_security_policy([ua.SecurityPolicyType.NoSecurity])

    objects = server.nodes.objects
    payload = {"data": b""}

    async def set_size(_parent, size):
        kib = int(size.Value)
        payload["data"] = os.urandom(kib * 1024)
        return []

    async def get_data(_parent):
        return [ua.Variant(payload["data"], ua.VariantType.ByteString)]

    throughput = await objects.add_object(ua.NodeId(5000, 1), ua.QualifiedName("Throughput", 1))
    await throughput.add_method(
        ua.NodeId(6000, 1),
        ua.QualifiedName("setSize", 1),
        set_size,
        [ua.VariantType.UInt32],
        [],
    )
    await throughput.add_method(
        ua.NodeId(6001, 1),
        ua.QualifiedName("getData", 1),
        get_data,
        [],
        [ua.VariantType.ByteString],
    )
    setpoint = await objects.add_variable(
        ua.NodeId("Setpoint", 1),
        ua.QualifiedName("Setpoint", 1),
        ua.Variant(0.0, ua.VariantType.Double),
    )
    await setpoint.set_writable()
    # A writable Float: typed writes (`buildwire opcua write` without --type) must send a
    # Float here, and refuse numbers a Float cannot hold.
    ratio = await objects.add_variable(
        ua.NodeId("Ratio", 1),
        ua.QualifiedName("Ratio", 1),
        ua.Variant(0.5, ua.VariantType.Float),
    )
    await ratio.set_writable()

    async with server:
        print(f"listening on {endpoint}", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
