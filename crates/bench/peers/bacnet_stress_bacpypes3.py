"""The 40-object BACnet stress server (bac-py's benchmark profile) on BACpypes3.

Device 400 with 10 AI, 5 AO, 5 commandable AV, 5 BI, 3 BO, 3 commandable BV, 3 MSI
(4 states), 2 MSV (3 states), a Schedule, a Calendar and a Notification Class, on
127.0.0.1:PORT.

Protocol with `buildwire bench bacnet compare`: prints ``ready PORT`` once it serves; then
each ``count`` line on stdin is answered with ``executed N``: the confirmed requests whose
service handler ran so far.

    python bacnet_stress_bacpypes3.py --port 47900
"""

from __future__ import annotations

import asyncio
import sys
import threading

from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser
from bacpypes3.local.analog import AnalogInputObject, AnalogOutputObject, AnalogValueObjectCmd
from bacpypes3.local.binary import BinaryInputObject, BinaryOutputObject, BinaryValueObjectCmd
from bacpypes3.local.multistate import MultiStateInputObject, MultiStateValueObject
from bacpypes3.object import CalendarObject, NotificationClassObject, ScheduleObject

AI_UNITS = [
    "degreesFahrenheit",
    "degreesCelsius",
    "percentRelativeHumidity",
    "pascals",
    "litersPerSecond",
    "watts",
    "kilowattHours",
    "amperes",
    "volts",
    "hertz",
]
FLAGS = [0, 0, 0, 0]
SERVICES = [
    "do_ReadPropertyRequest",
    "do_WritePropertyRequest",
    "do_ReadPropertyMultipleRequest",
    "do_WritePropertyMultipleRequest",
    "do_SubscribeCOVRequest",
]


def objects() -> list:
    """Build the stress objects (the Device comes from the application)."""
    out: list = []
    for i in range(1, 11):
        out.append(
            AnalogInputObject(
                objectIdentifier=("analog-input", i),
                objectName=f"AI-{i}",
                presentValue=60.0 + i * 1.5,
                units=AI_UNITS[i - 1],
                statusFlags=FLAGS,
            )
        )
    for i in range(1, 6):
        out.append(
            AnalogOutputObject(
                objectIdentifier=("analog-output", i),
                objectName=f"AO-{i}",
                presentValue=50.0 + i,
                units="degreesFahrenheit",
                statusFlags=FLAGS,
            )
        )
        out.append(
            AnalogValueObjectCmd(
                objectIdentifier=("analog-value", i),
                objectName=f"AV-{i}",
                presentValue=70.0 + i,
                relinquishDefault=70.0 + i,
                units="degreesFahrenheit",
                statusFlags=FLAGS,
                covIncrement=0.1,
            )
        )
        out.append(
            BinaryInputObject(
                objectIdentifier=("binary-input", i),
                objectName=f"BI-{i}",
                presentValue="inactive",
                statusFlags=FLAGS,
            )
        )
    for i in range(1, 4):
        out.append(
            BinaryOutputObject(
                objectIdentifier=("binary-output", i),
                objectName=f"BO-{i}",
                presentValue="inactive",
                statusFlags=FLAGS,
            )
        )
        out.append(
            BinaryValueObjectCmd(
                objectIdentifier=("binary-value", i),
                objectName=f"BV-{i}",
                presentValue="inactive",
                relinquishDefault="inactive",
                statusFlags=FLAGS,
            )
        )
        out.append(
            MultiStateInputObject(
                objectIdentifier=("multi-state-input", i),
                objectName=f"MSI-{i}",
                presentValue=1,
                numberOfStates=4,
                statusFlags=FLAGS,
            )
        )
    for i in range(1, 3):
        out.append(
            MultiStateValueObject(
                objectIdentifier=("multi-state-value", i),
                objectName=f"MSV-{i}",
                presentValue=1,
                numberOfStates=3,
                statusFlags=FLAGS,
            )
        )
    out.append(ScheduleObject(objectIdentifier=("schedule", 1), objectName="Schedule-1"))
    out.append(CalendarObject(objectIdentifier=("calendar", 1), objectName="Calendar-1"))
    out.append(
        NotificationClassObject(
            objectIdentifier=("notification-class", 1),
            objectName="NC-1",
            notificationClass=1,
        )
    )
    return out


def count_executions(app: Application) -> list[int]:
    """Wrap the confirmed-service handlers of ``app`` to count the requests they run."""
    executed = [0]
    for name in SERVICES:
        handler = getattr(app, name)

        async def counted(apdu, _handler=handler):  # noqa: ANN001, ANN202
            executed[0] += 1
            return await _handler(apdu)

        setattr(app, name, counted)
    return executed


def answer_counts(executed: list[int]) -> None:
    """Answer ``count`` lines on stdin."""
    for line in sys.stdin:
        if line.strip() == "count":
            print(f"executed {executed[0]}", flush=True)


async def main() -> None:
    """Serve until killed."""
    parser = SimpleArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = sys.argv[sys.argv.index("--port") + 1]
    extra = ["--address", f"127.0.0.1/8:{port}", "--instance", "400", "--name", "Docker-Stress-400"]
    argv = [*sys.argv[1:], *extra]
    args = parser.parse_args(argv)
    app = Application.from_args(args)
    for obj in objects():
        app.add_object(obj)
    executed = count_executions(app)
    print(f"ready {args.port}", flush=True)
    threading.Thread(target=answer_counts, args=(executed,), daemon=True).start()
    await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
