"""A BACpypes3 client for interoperability tests: runs Who-Is, ReadProperty, WriteProperty
with a priority, ReadPropertyMultiple, WritePropertyMultiple and an object-list read against
one device, and prints every result as one JSON document on stdout.

    python bacpypes3_client.py --address 127.0.0.1/8:47822 --target 127.0.0.1:47821 \\
        --device 400 [--broadcast] [--router 127.0.0.1:47830 --router-net 2]

With `--router`, the target is a remote station (`NETWORK:HOST:PORT`) and BACpypes3's router
cache is told that this router reaches `--router-net`, as an I-Am-Router-To-Network would.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from bacpypes3.apdu import (
    ErrorRejectAbortNack,
    SimpleAckPDU,
    WritePropertyMultipleRequest,
)
from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser
from bacpypes3.basetypes import PropertyValue, WriteAccessSpecification
from bacpypes3.constructeddata import Any as AnyValue
from bacpypes3.pdu import Address
from bacpypes3.primitivedata import Real


def plain(value: Any) -> Any:
    """A JSON-friendly copy of a BACpypes3 value."""
    if isinstance(value, ErrorRejectAbortNack):
        return {"error": str(value)}
    if isinstance(value, BaseException):
        return {"error": f"{type(value).__name__}: {value}"}
    if hasattr(value, "errorClass") and hasattr(value, "errorCode"):
        return {"error_class": str(value.errorClass), "error_code": str(value.errorCode)}
    choice = getattr(value, "_choice", None)
    if choice:
        return plain(getattr(value, choice))
    if type(value).__name__ == "Null":
        return None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], int):
        return f"{value[0]},{value[1]}"
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    if value is None:
        return None
    return str(value)


async def attempt(coro: Any) -> Any:
    """Awaits `coro`, turning exceptions into an error entry."""
    try:
        return plain(await asyncio.wait_for(coro, 10))
    except Exception as error:  # reported to the test as data
        return plain(error)


async def main() -> None:
    parser = SimpleArgumentParser()
    parser.add_argument("--target", required=True, help="device address HOST:PORT")
    parser.add_argument("--device", type=int, required=True, help="device instance")
    parser.add_argument("--broadcast", action="store_true", help="also broadcast Who-Is")
    parser.add_argument("--router", help="router HOST:PORT to the target's network")
    parser.add_argument("--router-net", type=int, help="the network behind --router")
    args = parser.parse_args()
    app = Application.from_args(args)
    target = Address(args.target)
    if args.router is not None:
        # The application's one adapter; its own network number is not known (None).
        snet = next(iter(app.nsap.adapters))
        await app.nsap.update_router_references(snet, Address(args.router), [args.router_net])
    results: dict[str, Any] = {}

    i_ams = await app.who_is(args.device, args.device, target)
    results["who_is"] = [plain(i_am.iAmDeviceIdentifier) for i_am in i_ams]
    if args.broadcast:
        i_ams = await app.who_is(args.device, args.device)
        results["who_is_broadcast"] = [plain(i_am.iAmDeviceIdentifier) for i_am in i_ams]

    results["read_ai1"] = await attempt(
        app.read_property(target, "analog-input,1", "present-value")
    )
    results["read_name"] = await attempt(app.read_property(target, "analog-value,2", "object-name"))
    results["write_av1"] = await attempt(
        app.write_property(target, "analog-value,1", "present-value", 55.5, priority=8)
    )
    results["read_av1"] = await attempt(
        app.read_property(target, "analog-value,1", "present-value")
    )
    results["read_av1_slot8"] = await attempt(
        app.read_property(target, "analog-value,1", "priority-array", 8)
    )

    try:
        rpm = await asyncio.wait_for(
            app.read_property_multiple(
                target,
                [
                    "analog-input,1",
                    ["present-value", "units"],
                    "binary-value,1",
                    ["present-value"],
                    "analog-input,99",
                    ["present-value"],
                ],
            ),
            10,
        )
        results["rpm"] = [
            {
                "object": plain(objid),
                "property": str(prop),
                "index": index,
                "value": plain(value),
            }
            for objid, prop, index, value in rpm
        ]
    except Exception as error:  # reported to the test as data
        results["rpm"] = plain(error)

    request = WritePropertyMultipleRequest(
        listOfWriteAccessSpecs=[
            WriteAccessSpecification(
                objectIdentifier="analog-value,2",
                listOfProperties=[
                    PropertyValue(
                        propertyIdentifier="present-value",
                        value=AnyValue(Real(12.25)),
                        priority=9,
                    )
                ],
            ),
            WriteAccessSpecification(
                objectIdentifier="analog-value,3",
                listOfProperties=[
                    PropertyValue(
                        propertyIdentifier="present-value",
                        value=AnyValue(Real(13.5)),
                        priority=9,
                    )
                ],
            ),
        ],
        destination=target,
    )
    try:
        response = await asyncio.wait_for(app.request(request), 10)
        results["wpm"] = "ok" if isinstance(response, SimpleAckPDU) else plain(response)
    except Exception as error:  # reported to the test as data
        results["wpm"] = plain(error)
    results["read_av2"] = await attempt(
        app.read_property(target, "analog-value,2", "present-value")
    )
    results["read_av3"] = await attempt(
        app.read_property(target, "analog-value,3", "present-value")
    )
    results["object_list_length"] = await attempt(
        app.read_property(target, f"device,{args.device}", "object-list", 0)
    )
    results["object_list"] = await attempt(
        app.read_property(target, f"device,{args.device}", "object-list")
    )

    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    app.close()


if __name__ == "__main__":
    asyncio.run(main())
