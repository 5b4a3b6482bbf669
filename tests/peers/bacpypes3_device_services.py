"""BACpypes3 using a device's management services, for interoperability tests: Who-Has by
object name and by object identifier, DeviceCommunicationControl (disable, then enable),
ReinitializeDevice (warm start) and UTCTimeSynchronization. Prints one JSON document.

    python bacpypes3_device_services.py --address 127.0.0.1/8:47822 \\
        --target 127.0.0.1:47821 --device 400
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from bacpypes3.apdu import (
    DeviceCommunicationControlRequest,
    ErrorRejectAbortNack,
    ReinitializeDeviceRequest,
    SimpleAckPDU,
    UTCTimeSynchronizationRequest,
)
from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser
from bacpypes3.basetypes import DateTime
from bacpypes3.pdu import Address
from bacpypes3.primitivedata import Date, ObjectIdentifier, Time


async def confirmed(app: Application, request: Any) -> str:
    """`ok` for a SimpleACK, else what came back."""
    try:
        response = await asyncio.wait_for(app.request(request), 10)
    except ErrorRejectAbortNack as error:
        return f"error: {error}"
    except Exception as error:  # reported to the test as data
        return f"{type(error).__name__}: {error}"
    return "ok" if isinstance(response, SimpleAckPDU) else repr(response)


async def read_name(app: Application, target: Address) -> str:
    """The name of analog-value,1, or what went wrong (a silent device times out)."""
    try:
        value = await asyncio.wait_for(
            app.read_property(target, "analog-value,1", "object-name"), 3
        )
    except Exception as error:  # reported to the test as data
        return f"{type(error).__name__}"
    return str(value)


def i_haves(found: Any) -> list[list[str]]:
    return [[str(h.deviceIdentifier), str(h.objectIdentifier), str(h.objectName)] for h in found]


async def main() -> None:
    parser = SimpleArgumentParser()
    parser.add_argument("--target", required=True, help="device address HOST:PORT")
    parser.add_argument("--device", type=int, required=True, help="device instance")
    args = parser.parse_args()
    app = Application.from_args(args)
    target = Address(args.target)
    results: dict[str, Any] = {}

    results["who_has_name"] = i_haves(
        await app.who_has(object_name="AV-2", address=target, timeout=2)
    )
    results["who_has_id"] = i_haves(
        await app.who_has(
            object_identifier=ObjectIdentifier("binary-value,3"), address=target, timeout=2
        )
    )
    results["who_has_nothing"] = i_haves(
        await app.who_has(object_name="no-such-object", address=target, timeout=1)
    )

    results["dcc_disable"] = await confirmed(
        app,
        DeviceCommunicationControlRequest(
            timeDuration=1, enableDisable="disable", destination=target
        ),
    )
    results["read_while_disabled"] = await read_name(app, target)
    results["dcc_enable"] = await confirmed(
        app, DeviceCommunicationControlRequest(enableDisable="enable", destination=target)
    )
    results["read_after_enable"] = await read_name(app, target)

    results["reinitialize"] = await confirmed(
        app,
        ReinitializeDeviceRequest(reinitializedStateOfDevice="warmstart", destination=target),
    )

    stamp = DateTime(date=Date((127, 3, 14, 7)), time=Time((15, 9, 26, 0)))
    app.request(UTCTimeSynchronizationRequest(time=stamp, destination=target))
    await asyncio.sleep(0.5)
    device = f"device,{args.device}"
    results["local_date"] = list(await app.read_property(target, device, "local-date"))
    results["local_time"] = list(await app.read_property(target, device, "local-time"))

    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    app.close()


if __name__ == "__main__":
    asyncio.run(main())
