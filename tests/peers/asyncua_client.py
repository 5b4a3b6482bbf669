"""An asyncua OPC UA client for interop tests: connects (anonymous, SecurityPolicy None) to
the endpoint given on the command line, browses Objects, reads CurrentTime and
NamespaceArray, writes and reads back ``ns=1;s=Setpoint``, calls setSize(1) and getData on
the throughput object, and prints the results as one JSON object.

Usage: python asyncua_client.py opc.tcp://HOST:PORT/
"""

from __future__ import annotations

import asyncio
import json
import sys

from asyncua import Client, ua


async def main(endpoint: str) -> None:
    out: dict = {}
    async with Client(url=endpoint, timeout=10) as client:
        objects = client.nodes.objects
        children = await objects.get_children()
        out["objects_children"] = [child.nodeid.to_string() for child in children]

        current_time = await client.get_node(ua.NodeId(2258, 0)).read_value()
        out["current_time"] = current_time.isoformat()
        out["namespace_array"] = await client.get_node(ua.NodeId(2255, 0)).read_value()

        setpoint = client.get_node(ua.NodeId("Setpoint", 1))
        await setpoint.write_value(ua.DataValue(ua.Variant(42.5, ua.VariantType.Double)))
        out["setpoint"] = await setpoint.read_value()

        throughput = client.get_node(ua.NodeId(5000, 1))
        await throughput.call_method(ua.NodeId(6000, 1), ua.Variant(1, ua.VariantType.UInt32))
        data = await throughput.call_method(ua.NodeId(6001, 1))
        out["get_data_length"] = len(data)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
