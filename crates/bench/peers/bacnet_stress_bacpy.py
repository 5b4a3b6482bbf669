"""The 40-object BACnet stress server (bac-py's benchmark profile) on bac-py (Python 3.13).

Device 400 with 10 AI, 5 AO, 5 commandable AV, 5 BI, 3 BO, 3 commandable BV, 3 MSI
(4 states), 2 commandable MSV (3 states), a Schedule, a Calendar and a Notification Class,
on 127.0.0.1:PORT.

Protocol with `buildwire bench bacnet compare`: prints ``ready PORT`` once it serves; then
each ``count`` line on stdin is answered with ``executed N``: the confirmed requests its
service registry dispatched so far. bac-py's server answers a request that reuses an
invoke id within 6 s from its transaction cache without dispatching it, so N can be far
below the answers a client counts.

    python bacnet_stress_bacpy.py --port 47900
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading

from bac_py.app.application import BACnetApplication, DeviceConfig
from bac_py.app.server import DefaultServerHandlers
from bac_py.objects.analog import AnalogInputObject, AnalogOutputObject, AnalogValueObject
from bac_py.objects.binary import BinaryInputObject, BinaryOutputObject, BinaryValueObject
from bac_py.objects.calendar import CalendarObject
from bac_py.objects.device import DeviceObject
from bac_py.objects.multistate import MultiStateInputObject, MultiStateValueObject
from bac_py.objects.notification import NotificationClassObject
from bac_py.objects.schedule import ScheduleObject
from bac_py.types.enums import EngineeringUnits as U

AI_UNITS = [
    U.DEGREES_FAHRENHEIT,
    U.DEGREES_CELSIUS,
    U.PERCENT_RELATIVE_HUMIDITY,
    U.PASCALS,
    U.LITERS_PER_SECOND,
    U.WATTS,
    U.KILOWATT_HOURS,
    U.AMPERES,
    U.VOLTS,
    U.HERTZ,
]


def objects() -> list:
    """Build the stress objects (the Device is added separately)."""
    out: list = []
    for i in range(1, 11):
        out.append(
            AnalogInputObject(
                i, object_name=f"AI-{i}", present_value=60.0 + i * 1.5, units=AI_UNITS[i - 1]
            )
        )
    for i in range(1, 6):
        out.append(
            AnalogOutputObject(
                i, object_name=f"AO-{i}", present_value=50.0 + i, units=U.DEGREES_FAHRENHEIT
            )
        )
        out.append(
            AnalogValueObject(
                i,
                commandable=True,
                object_name=f"AV-{i}",
                present_value=70.0 + i,
                units=U.DEGREES_FAHRENHEIT,
            )
        )
        out.append(BinaryInputObject(i, object_name=f"BI-{i}"))
    for i in range(1, 4):
        out.append(BinaryOutputObject(i, object_name=f"BO-{i}"))
        out.append(BinaryValueObject(i, commandable=True, object_name=f"BV-{i}"))
        out.append(MultiStateInputObject(i, number_of_states=4, object_name=f"MSI-{i}"))
    for i in range(1, 3):
        out.append(
            MultiStateValueObject(i, commandable=True, number_of_states=3, object_name=f"MSV-{i}")
        )
    out.append(ScheduleObject(1, object_name="Schedule-1"))
    out.append(CalendarObject(1, object_name="Calendar-1"))
    out.append(NotificationClassObject(1, object_name="NC-1", notification_class=1))
    return out


def count_executions(app: BACnetApplication) -> list[int]:
    """Wrap the service registry's confirmed dispatch to count the requests it runs."""
    executed = [0]
    registry = app.service_registry
    dispatch = registry.dispatch_confirmed

    async def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        executed[0] += 1
        return await dispatch(*args, **kwargs)

    registry.dispatch_confirmed = counted
    return executed


def answer_counts(executed: list[int]) -> None:
    """Answer ``count`` lines on stdin."""
    for line in sys.stdin:
        if line.strip() == "count":
            print(f"executed {executed[0]}", flush=True)


async def main() -> None:
    """Serve until killed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = BACnetApplication(
        DeviceConfig(
            instance_number=400,
            name="Docker-Stress-400",
            interface="127.0.0.1",
            port=args.port,
        )
    )
    device = DeviceObject(400, object_name="Docker-Stress-400")
    app.object_db.add(device)
    for obj in objects():
        app.object_db.add(obj)
    DefaultServerHandlers(app, app.object_db, device).register()
    executed = count_executions(app)
    await app.start()
    print(f"ready {args.port}", flush=True)
    threading.Thread(target=answer_counts, args=(executed,), daemon=True).start()
    await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
