"""BACpypes3 reading a device's schedules for interoperability tests: reads every property
(the property-list plus object-identifier, object-name and object-type) of each ``--object``,
then for each ``--at`` sets the device clock with TimeSynchronization, waits for the device
to evaluate its schedules and reads each ``--watch`` property. Prints one JSON document.

    python bacpypes3_schedule.py --address 127.0.0.1/8:47822 --target 127.0.0.1:47821 \\
        --object schedule,1 --at 2026-12-24T10:00 --watch schedule,1:present-value \\
        --watch binary-value,1:priority-array:9
"""

from __future__ import annotations

import asyncio
import datetime
import json
import sys
from typing import Any

from bacpypes3.apdu import TimeSynchronizationRequest
from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser
from bacpypes3.basetypes import DateTime
from bacpypes3.pdu import Address
from bacpypes3.primitivedata import Date, Enumerated, ObjectIdentifier, Time

# The device evaluates its schedules once a second.
EVALUATION_WAIT = 1.6


def plain(value: Any) -> Any:
    """A JSON-friendly copy of a BACpypes3 value (sequences through dict_contents)."""
    if isinstance(value, (ObjectIdentifier, Enumerated)):
        return str(value)  # "schedule,1", "present-value"
    if hasattr(value, "dict_contents"):
        return plain(value.dict_contents())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
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


async def read(app: Application, target: Address, obj: str, prop: str, index: Any = None) -> Any:
    try:
        return plain(await asyncio.wait_for(app.read_property(target, obj, prop, index), 10))
    except Exception as error:  # reported to the test as data
        return {"error": f"{type(error).__name__}: {error}"}


async def main() -> None:
    parser = SimpleArgumentParser()
    parser.add_argument("--target", required=True, help="device address HOST:PORT")
    parser.add_argument("--object", action="append", default=[], help="read all of it")
    parser.add_argument("--at", action="append", default=[], help="device time, ISO 8601")
    parser.add_argument("--watch", action="append", default=[], help="OBJECT:PROPERTY[:INDEX]")
    args = parser.parse_args()
    app = Application.from_args(args)
    target = Address(args.target)
    results: dict[str, Any] = {"objects": {}, "clock": []}

    for obj in args.object:
        properties = await app.read_property(target, obj, "property-list")
        names = ["object-identifier", "object-name", "object-type", "property-list"]
        names += [str(p) for p in properties]
        results["objects"][obj] = {name: await read(app, target, obj, name) for name in names}

    for when in args.at:
        moment = datetime.datetime.fromisoformat(when)
        stamp = DateTime(
            date=Date((moment.year - 1900, moment.month, moment.day, moment.isoweekday())),
            time=Time((moment.hour, moment.minute, moment.second, 0)),
        )
        app.request(TimeSynchronizationRequest(time=stamp, destination=target))
        await asyncio.sleep(EVALUATION_WAIT)
        seen = {"at": when}
        for watch in args.watch:
            obj, prop, *index = watch.split(":")
            seen[watch] = await read(app, target, obj, prop, int(index[0]) if index else None)
        results["clock"].append(seen)

    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    app.close()


if __name__ == "__main__":
    asyncio.run(main())
