"""An asyncua client for the Python-modelled server test (tests/test_opcua_server_model.py).

Connects (anonymous, SecurityPolicy None) to the endpoint on the command line, finds the
namespace by its URI, browses the Plant folder, reads the Temp variable with its DataType,
AccessLevel, type definition and AnalogItemType properties (EURange, EngineeringUnits as
asyncua decodes them), writes Setpoint, calls Add with the method's declared arguments,
subscribes to Counter until it has seen three values, and prints everything as one JSON
object.

Usage: python asyncua_model_client.py opc.tcp://HOST:PORT/ NAMESPACE_URI
"""

from __future__ import annotations

import asyncio
import json
import sys

from asyncua import Client, ua


class Collector:
    """asyncua subscription handler: keeps every value of the data changes."""

    def __init__(self) -> None:
        self.values: list = []
        self.enough = asyncio.Event()

    def datachange_notification(self, node, value, data) -> None:
        self.values.append(value)
        if len(self.values) >= 3:
            self.enough.set()


async def main(endpoint: str, uri: str) -> None:
    out: dict = {}
    async with Client(url=endpoint, timeout=10) as client:
        ns = await client.get_namespace_index(uri)
        out["ns"] = ns
        plant = client.get_node(ua.NodeId("Plant", ns))
        names = [(await child.read_browse_name()).Name for child in await plant.get_children()]
        out["plant_children"] = sorted(names)
        temp = client.get_node(ua.NodeId("Temp", ns))
        out["temp"] = await temp.read_value()
        out["temp_data_type"] = (await temp.read_data_type()).to_string()
        out["temp_type_definition"] = (await temp.read_type_definition()).to_string()
        out["temp_access_level"] = sorted(a.name for a in await temp.get_access_level())
        eu_range = await client.get_node(ua.NodeId("Temp.EURange", ns)).read_value()
        out["eu_range"] = [eu_range.Low, eu_range.High]
        units = await client.get_node(ua.NodeId("Temp.EngineeringUnits", ns)).read_value()
        out["units"] = {
            "namespace": units.NamespaceUri,
            "unit_id": units.UnitId,
            "display_name": units.DisplayName.Text,
            "description": units.Description.Text,
        }
        try:
            await temp.write_value(ua.DataValue(ua.Variant(1.0, ua.VariantType.Double)))
            out["temp_write"] = "Good"
        except ua.UaStatusCodeError as e:
            out["temp_write"] = type(e).__name__

        setpoint = client.get_node(ua.NodeId("Setpoint", ns))
        await setpoint.write_value(ua.DataValue(ua.Variant(18.5, ua.VariantType.Double)))
        out["setpoint"] = await setpoint.read_value()

        add = client.get_node(ua.NodeId("Add", ns))
        inputs = await client.get_node(ua.NodeId("Add.InputArguments", ns)).read_value()
        out["add_inputs"] = [(a.Name, a.DataType.to_string()) for a in inputs]
        out["add"] = await plant.call_method(
            add.nodeid,
            ua.Variant(1.25, ua.VariantType.Double),
            ua.Variant(2.0, ua.VariantType.Double),
        )
        try:
            await plant.call_method(
                ua.NodeId("Fail", ns), ua.Variant("boom", ua.VariantType.String)
            )
            out["fail"] = "Good"
        except ua.UaStatusCodeError as e:
            out["fail"] = type(e).__name__

        collector = Collector()
        subscription = await client.create_subscription(50, collector)
        await subscription.subscribe_data_change(client.get_node(ua.NodeId("Counter", ns)))
        await asyncio.wait_for(collector.enough.wait(), 10)
        await subscription.delete()
        out["counter_values"] = collector.values[:3]
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
