"""BACpypes3 at max-APDU 480 for the segmentation interoperability tests.

Two modes:

- ``serve --objects N``: a device with N analog values (object-list of N + 1 entries),
  accepting and sending APDUs of at most 480 bytes; prints ``ready`` and runs until killed.
- ``read --target HOST:PORT --device ID``: reads the device's object-list whole (which
  needs a segmented Complex-ACK at this APDU size) and its length (array index 0), and
  prints ``{"length": L, "object_list": [...]}`` as one JSON line.

    python bacpypes3_segmented.py --address 127.0.0.1/8:47820 --instance 3031 \\
        serve --objects 1499
    python bacpypes3_segmented.py --address 127.0.0.1/8:47822 \\
        read --target 127.0.0.1:47821 --device 500
"""

from __future__ import annotations

import asyncio
import json
import sys

from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser
from bacpypes3.local.analog import AnalogValueObject
from bacpypes3.pdu import Address

MAX_APDU = 480
MAX_SEGMENTS = 64


def limit_apdu(app: Application) -> None:
    """Makes the application's transactions use 480-byte APDUs and up to 64 segments."""
    app.device_object.maxApduLengthAccepted = MAX_APDU
    app.device_object.maxSegmentsAccepted = MAX_SEGMENTS


async def serve(app: Application, count: int) -> None:
    for instance in range(1, count + 1):
        app.add_object(
            AnalogValueObject(
                objectIdentifier=("analog-value", instance),
                objectName=f"AV-{instance}",
                presentValue=float(instance % 1000) / 10.0,
                units="degreesCelsius",
                statusFlags=[0, 0, 0, 0],
            )
        )
    print("ready", flush=True)
    await asyncio.Future()


def object_id_text(value: object) -> str:
    object_type, instance = value  # type: ignore[misc]
    return f"{object_type},{instance}"


async def read(app: Application, target: str, device: int) -> None:
    address = Address(target)
    length = await asyncio.wait_for(
        app.read_property(address, f"device,{device}", "object-list", 0), 30
    )
    whole = await asyncio.wait_for(
        app.read_property(address, f"device,{device}", "object-list"), 60
    )
    listed = [object_id_text(v) for v in whole]
    json.dump({"length": int(length), "object_list": listed}, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    app.close()


async def main() -> None:
    # Plain options rather than sub-commands: argparse sub-parsers would reset the
    # parent parser's --address and --instance to their defaults.
    parser = SimpleArgumentParser()
    parser.add_argument("mode", choices=["serve", "read"])
    parser.add_argument("--objects", type=int, help="serve: number of analog values")
    parser.add_argument("--target", help="read: device address HOST:PORT")
    parser.add_argument("--device", type=int, help="read: device instance")
    args = parser.parse_args()
    app = Application.from_args(args)
    limit_apdu(app)
    if args.mode == "serve":
        await serve(app, args.objects or 0)
    else:
        await read(app, args.target, args.device)


if __name__ == "__main__":
    asyncio.run(main())
