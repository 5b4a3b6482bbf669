"""The 40-object BACnet stress server (bac-py's benchmark profile) on rusty-bacnet.

Device 400 with 10 AI, 5 AO, 5 commandable AV, 5 BI, 3 BO, 3 BV, 3 MSI (4 states),
2 MSV (3 states), a Schedule, a Calendar and a Notification Class, on 127.0.0.1:PORT.

Protocol with `buildwire bench bacnet compare`: prints ``ready PORT`` once it serves; then
each ``count`` line on stdin is answered with ``executed N``: the confirmed requests the
server admitted for execution so far.

    python bacnet_stress_rusty.py --port 47900
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading

from rusty_bacnet import BACnetServer

AI_UNITS = [64, 62, 29, 53, 87, 47, 19, 3, 5, 27]


def build(port: int) -> BACnetServer:
    """Build the stress device's objects on a rusty-bacnet server."""
    server = BACnetServer(
        device_instance=400,
        device_name="Docker-Stress-400",
        interface="127.0.0.1",
        port=port,
        broadcast_address="127.255.255.255",
    )
    for i in range(1, 11):
        server.add_analog_input(i, f"AI-{i}", units=AI_UNITS[i - 1], present_value=60.0 + i * 1.5)
    for i in range(1, 6):
        server.add_analog_output(i, f"AO-{i}", units=64)
        server.add_analog_value(i, f"AV-{i}", units=64)
        server.add_binary_input(i, f"BI-{i}")
    for i in range(1, 4):
        server.add_binary_output(i, f"BO-{i}")
        server.add_binary_value(i, f"BV-{i}")
        server.add_multistate_input(i, f"MSI-{i}", number_of_states=4)
    for i in range(1, 3):
        server.add_multistate_value(i, f"MSV-{i}", number_of_states=3)
    server.add_schedule(1, "Schedule-1")
    server.add_calendar(1, "Calendar-1")
    server.add_notification_class(1, "NC-1", notification_class=1)
    return server


async def sample(server: BACnetServer) -> dict:
    """Sample the server's admission counters (call it on the server's event loop)."""
    return await server.request_admission_counters()


def answer_counts(server: BACnetServer, loop: asyncio.AbstractEventLoop) -> None:
    """Answer ``count`` lines on stdin from a thread (the counters are async)."""
    for line in sys.stdin:
        if line.strip() != "count":
            continue
        future = asyncio.run_coroutine_threadsafe(sample(server), loop)
        counters = future.result(timeout=5)
        print(f"executed {counters['confirmed_admitted_total']}", flush=True)
    loop.call_soon_threadsafe(loop.stop)


async def main() -> None:
    """Serve until killed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = build(args.port)
    await server.start()
    print(f"ready {args.port}", flush=True)
    loop = asyncio.get_running_loop()
    threading.Thread(target=answer_counts, args=(server, loop), daemon=True).start()
    await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except RuntimeError:
        pass
