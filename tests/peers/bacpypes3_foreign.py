"""A BACpypes3 application registered as a foreign device with a BBMD, for interoperability
tests: waits for the registration, broadcasts Who-Is (Distribute-Broadcast-To-Network through
the BBMD), reads the object-name of the device it was asked to find, and prints the results as
one JSON document on stdout. It stays registered until stdin closes, so that the test can read
the BBMD's foreign device table meanwhile.

    python bacpypes3_foreign.py --address 127.0.0.1/8:47822 --foreign 127.0.0.1:47830 \\
        --ttl 30 --device 400
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser


async def main() -> None:
    parser = SimpleArgumentParser()
    parser.add_argument("--device", type=int, required=True, help="device instance to find")
    args = parser.parse_args()
    app = Application.from_args(args)
    results: dict[str, Any] = {}
    # Registration: BACpypes3 sends Register-Foreign-Device at start; wait for the BBMD's ack.
    # The application's one link layer is BACpypes3's foreign-device B/IP stack.
    link = next(iter(app.link_layers.values()))
    status = None
    for _ in range(50):
        status = getattr(link, "bbmdRegistrationStatus", None)
        if status == 0:
            break
        await asyncio.sleep(0.1)
    results["registration_status"] = status
    i_ams = await app.who_is(args.device, args.device)
    results["found"] = [
        {"device": str(i_am.iAmDeviceIdentifier), "address": str(i_am.pduSource)} for i_am in i_ams
    ]
    if i_ams:
        try:
            name = await asyncio.wait_for(
                app.read_property(i_ams[0].pduSource, f"device,{args.device}", "object-name"), 10
            )
            results["name"] = str(name)
        except Exception as error:  # reported to the test as data
            results["name"] = {"error": f"{type(error).__name__}: {error}"}
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    # Stay registered until the test closes stdin.
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    app.close()


if __name__ == "__main__":
    asyncio.run(main())
