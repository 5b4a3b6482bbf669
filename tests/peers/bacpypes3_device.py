"""A BACpypes3 device for interoperability tests: serves a commandable AV, an AI, a BI, a
commandable BV and an MSV at the address given with ``--address 127.0.0.1/8:PORT``.

Prints ``ready`` on stdout once it listens, then runs until killed. With
``--dcc-password`` it also takes DeviceCommunicationControl (BACpypes3's mixin, not part of
its default Application), guarded by that password (in 0.0.110 only the password check
works: a correct password ends in device: operational-problem).

    python bacpypes3_device.py --address 127.0.0.1/8:47820 --instance 3021
"""

from __future__ import annotations

import asyncio

from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser
from bacpypes3.local.analog import AnalogInputObject, AnalogValueObjectCmd
from bacpypes3.local.binary import BinaryInputObject, BinaryValueObjectCmd
from bacpypes3.local.multistate import MultiStateValueObject
from bacpypes3.service.device import DeviceCommunicationControlServices


def objects() -> list:
    """The objects served, with values the tests check."""
    return [
        AnalogValueObjectCmd(
            objectIdentifier=("analog-value", 1),
            objectName="setpoint",
            presentValue=21.5,
            relinquishDefault=21.5,
            units="degreesCelsius",
            statusFlags=[0, 0, 0, 0],
            covIncrement=0.1,
        ),
        AnalogInputObject(
            objectIdentifier=("analog-input", 1),
            objectName="zone-temp",
            presentValue=19.25,
            units="degreesCelsius",
            statusFlags=[0, 0, 0, 0],
        ),
        BinaryInputObject(
            objectIdentifier=("binary-input", 1),
            objectName="occupied",
            presentValue="active",
            statusFlags=[0, 0, 0, 0],
        ),
        BinaryValueObjectCmd(
            objectIdentifier=("binary-value", 1),
            objectName="fan-enable",
            presentValue="inactive",
            relinquishDefault="inactive",
            statusFlags=[0, 0, 0, 0],
        ),
        MultiStateValueObject(
            objectIdentifier=("multi-state-value", 1),
            objectName="mode",
            presentValue=2,
            numberOfStates=3,
            statusFlags=[0, 0, 0, 0],
        ),
    ]


class ManagedApplication(Application, DeviceCommunicationControlServices):
    """The default Application and DeviceCommunicationControl."""


async def main() -> None:
    parser = SimpleArgumentParser()
    parser.add_argument("--dcc-password", help="offer DeviceCommunicationControl")
    args = parser.parse_args()
    if args.dcc_password:
        app = ManagedApplication.from_args(args)
        app.device_object._dcc_password = args.dcc_password
    else:
        app = Application.from_args(args)
    for obj in objects():
        app.add_object(obj)
    print("ready", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
