"""Walks namespace 0 of the endpoint given on the command line with asyncua, as a generic client
does, and prints what it found as one JSON object: the children of the four Types folders,
DataType and ValueRank of BaseDataVariableType (i=63), ServerStatus.BuildInfo (i=2260) decoded
as a structure, the ServerCapabilities members with their values, and the NodeId of the
throughput method's InputArguments property with the node read back through that id.

Usage: python asyncua_address_space.py opc.tcp://HOST:PORT/
"""

from __future__ import annotations

import asyncio
import json
import sys

from asyncua import Client, ua

TYPES_FOLDERS = {"ObjectTypes": 88, "VariableTypes": 89, "DataTypes": 90, "ReferenceTypes": 91}


def plain(value: object) -> object:
    """Return a JSON-friendly form of a read value."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, ua.LocalizedText):
        return value.Text
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


async def main(endpoint: str) -> None:
    out: dict = {}
    async with Client(url=endpoint, timeout=10) as client:
        folders = {}
        for name, number in TYPES_FOLDERS.items():
            children = await client.get_node(ua.NodeId(number, 0)).get_children()
            folders[name] = [(await c.read_browse_name()).Name for c in children]
        out["types_folders"] = folders
        subtypes = await client.get_node(ua.NodeId(58, 0)).get_children(refs=45)
        out["base_object_subtypes"] = len(subtypes)

        base_variable = client.get_node(ua.NodeId(63, 0))
        out["i63_data_type"] = (await base_variable.read_data_type()).to_string()
        rank = await base_variable.read_attribute(ua.AttributeIds.ValueRank)
        out["i63_value_rank"] = rank.Value.Value

        build_info = await client.get_node(ua.NodeId(2260, 0)).read_value()
        out["build_info_type"] = type(build_info).__name__
        out["build_info"] = {
            "ProductUri": build_info.ProductUri,
            "ManufacturerName": build_info.ManufacturerName,
            "ProductName": build_info.ProductName,
            "SoftwareVersion": build_info.SoftwareVersion,
            "BuildNumber": build_info.BuildNumber,
            "BuildDate": build_info.BuildDate.isoformat(),
        }
        build_date = await client.get_node(ua.NodeId(2266, 0)).read_data_value()
        out["build_date_source_timestamp"] = (
            build_date.SourceTimestamp.isoformat() if build_date.SourceTimestamp else None
        )

        capabilities = client.get_node(ua.NodeId(2268, 0))
        members = {}
        for member in await capabilities.get_children():
            name = (await member.read_browse_name()).Name
            node_class = await member.read_node_class()
            if node_class == ua.NodeClass.Variable:
                members[name] = plain(await member.read_value())
            else:
                members[name] = node_class.name
        out["capabilities"] = members

        method = client.get_node(ua.NodeId(6000, 1))
        properties = await method.get_properties()
        for prop in properties:
            if (await prop.read_browse_name()).Name == "InputArguments":
                text = prop.nodeid.to_string()
                out["input_arguments_id"] = text
                again = client.get_node(text)
                out["input_arguments_round_trip"] = again.nodeid == prop.nodeid
                out["input_arguments_class"] = (await again.read_node_class()).name
                arguments = await again.read_value()
                out["input_arguments"] = [a.Name for a in arguments]
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
