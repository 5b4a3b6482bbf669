"""A rusty-bacnet device for interoperability tests: serves an analog input, a commandable
analog value, a commandable binary value and a multi-state value on 127.0.0.1:PORT, and
``--extra N`` more analog values (instances 101...). It does not segment (rusty-bacnet's
default), so a long object-list cannot be read whole.

Prints ``ready`` on stdout once it listens. Each line ``ai VALUE`` read from stdin sets the
analog input's present value locally (as a sensor would), then ``set`` is printed.

    python rusty_bacnet_device.py --port 47820 --instance 3041

With ``--password PW`` it guards DeviceCommunicationControl and ReinitializeDevice with PW
(accepting a warm start) and adds a calendar (``calendar,1``, no dates) and a trend log
(``trend-log,1``) of the analog input polled every second.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from rusty_bacnet import (
    BACnetServer,
    ObjectIdentifier,
    ObjectType,
    PropertyIdentifier,
    PropertyValue,
)


async def read_commands(server: BACnetServer) -> None:
    """Applies `ai VALUE` lines from stdin until it closes."""
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        words = line.split()
        if len(words) == 2 and words[0] == "ai":
            await server.set_present_value_local(
                ObjectIdentifier(ObjectType.ANALOG_INPUT, 1), PropertyValue.real(float(words[1]))
            )
            print("set", flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--instance", type=int, required=True)
    parser.add_argument("--extra", type=int, default=0, help="more analog values, 101...")
    parser.add_argument("--password", help="device-management password; adds a calendar and log")
    args = parser.parse_args()
    management = {}
    if args.password:
        management = {
            "dcc_password": args.password,
            "reinit_password": args.password,
            "dcc_policy": "require_password",
            "on_reinitialize": lambda request: True,
        }
    server = BACnetServer(
        device_instance=args.instance,
        device_name="rusty-peer",
        interface="127.0.0.1",
        port=args.port,
        broadcast_address="127.255.255.255",
        **management,
    )
    server.add_analog_input(1, "zone-temp", units=62, present_value=19.25)
    server.add_analog_value(1, "setpoint", units=62)
    server.add_binary_value(1, "fan-enable")
    server.add_multistate_value(1, "mode", 3)
    for i in range(args.extra):
        server.add_analog_value(101 + i, f"extra-{101 + i}", units=62)
    if args.password:
        server.add_calendar(1, "holidays")
        reference = (ObjectIdentifier(ObjectType.ANALOG_INPUT, 1), PropertyIdentifier.PRESENT_VALUE)
        server.add_trend_log(1, "zone-temp-log", reference=reference, log_interval=100)
    await server.start()
    print("ready", flush=True)
    try:
        await read_commands(server)
    finally:
        await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
