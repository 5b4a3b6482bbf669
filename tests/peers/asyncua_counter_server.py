"""An asyncua OPC UA server for subscription interop tests: SecurityPolicy None on
127.0.0.1:PORT with an Int32 ``ns=1;s=Counter`` that the server itself increments every
INTERVAL_MS milliseconds (default 100), from 1 upwards. Prints ``listening on <endpoint>``
once ready; runs until killed.

Usage: python asyncua_counter_server.py PORT [INTERVAL_MS]
"""

from __future__ import annotations

import asyncio
import logging
import sys

from asyncua import Server, ua


async def main(port: int, interval_ms: int) -> None:
    logging.basicConfig(level=logging.WARNING)
    server = Server()
    await server.init()
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    server.set_endpoint(endpoint)
    server.set_security_policy([ua.SecurityPolicyType.NoSecurity])
    counter = await server.nodes.objects.add_variable(
        ua.NodeId("Counter", 1),
        ua.QualifiedName("Counter", 1),
        ua.Variant(0, ua.VariantType.Int32),
    )
    async with server:
        print(f"listening on {endpoint}", flush=True)
        value = 0
        while True:
            await asyncio.sleep(interval_ms / 1000)
            value += 1
            await counter.write_value(ua.Variant(value, ua.VariantType.Int32))


if __name__ == "__main__":
    interval = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    asyncio.run(main(int(sys.argv[1]), interval))
