"""A bac-py client (Python 3.13) for interoperability tests: reads, writes with a priority,
reads several properties with ReadPropertyMultiple, and subscribes to COV (unconfirmed and
confirmed, process identifiers 1 and 2) on one device, changes the value it watches, then
subscribes to one property with a COV increment (SubscribeCOVProperty, process 3) and
prints every result as one JSON document on stdout. Once subscribed it prints
``subscribed`` and waits for a line on stdin before it changes the value.

    python bacpy_client.py --port 47822 --target 127.0.0.1:47821
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from bac_py import Client, decode_cov_values

PROCESSES = {"unconfirmed": 1, "confirmed": 2}


def plain(value: Any) -> Any:
    """A JSON-friendly copy of a bac-py value."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "value") and isinstance(value.value, int):
        return int(value.value)  # an enumeration
    return str(value)


def object_text(identifier: Any) -> str:
    """`analog-value,1` for a bac-py ObjectIdentifier."""
    name = identifier.object_type.name.lower().replace("_", "-")
    return f"{name},{identifier.instance_number}"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True, help="local UDP port")
    parser.add_argument("--target", required=True, help="device address HOST:PORT")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    received: dict[str, list[dict[str, Any]]] = {kind: [] for kind in PROCESSES}
    property_seen: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    def recorder(kind: str) -> Any:
        def on_notification(notification: Any, source: Any) -> None:
            received[kind].append(
                {
                    "process": notification.subscriber_process_identifier,
                    "object": object_text(notification.monitored_object_identifier),
                    "values": plain(decode_cov_values(notification)),
                }
            )
            arrived.set()

        return on_notification

    async def wait_for(count: int) -> None:
        """Waits until each subscription received `count` notifications (5 s at most)."""
        deadline = asyncio.get_running_loop().time() + 5
        while any(len(v) < count for v in received.values() if v is not property_seen):
            arrived.clear()
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(arrived.wait(), left)
            except TimeoutError:
                return

    target = args.target
    async with Client(
        instance_number=3999,
        interface="127.0.0.1",
        port=args.port,
        broadcast_address="127.255.255.255",
    ) as client:
        results["read_ai1"] = plain(await client.read(target, "ai,1", "pv"))
        results["read_name"] = plain(await client.read(target, "av,2", "object-name"))
        results["read_units"] = plain(await client.read(target, "ai,1", "units"))
        await client.write(target, "av,1", "pv", 55.5, priority=8)
        results["read_av1"] = plain(await client.read(target, "av,1", "pv"))
        results["read_av1_slot8"] = plain(await client.read(target, "av,1", "priority-array", 8))
        results["rpm"] = plain(
            await client.read_multiple(
                target, {"ai,1": ["pv", "object-name"], "bv,1": ["pv"], "av,1": ["pv"]}
            )
        )

        for kind, process in PROCESSES.items():
            await client.subscribe_cov_ex(
                target,
                "av,1",
                process,
                confirmed=kind == "confirmed",
                lifetime=120,
                callback=recorder(kind),
                timeout=10,
            )
        await wait_for(1)
        # The test reads the device's Active_COV_Subscriptions now (bac-py 1.5.7 cannot
        # decode that list), then sends a line to go on.
        print("subscribed", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await client.write(target, "av,1", "pv", 66.25, priority=8)
        await wait_for(2)
        for process in PROCESSES.values():
            await client.unsubscribe_cov_ex(target, "av,1", process, timeout=10)
        results["cov"] = received

        # SubscribeCOVProperty of av,2 present-value with a COV increment of 1.0 (process 3):
        # the initial notification, nothing for a change of 0.5, then a change of 2.0.
        def on_property(notification: Any, source: Any) -> None:
            property_seen.append(plain(decode_cov_values(notification)))
            arrived.set()

        client.app.register_cov_callback(3, on_property)
        await client.subscribe_cov_property(
            target, "av,2", "pv", 3, confirmed=True, lifetime=60, cov_increment=1.0, timeout=10
        )
        for value in (72.5, 74.0):
            await client.write(target, "av,2", "pv", value, priority=8)
        deadline = asyncio.get_running_loop().time() + 5
        while len(property_seen) < 2 and asyncio.get_running_loop().time() < deadline:
            arrived.clear()
            try:
                await asyncio.wait_for(arrived.wait(), 0.2)
            except TimeoutError:
                pass
        await asyncio.sleep(0.5)  # room for a wrong extra notification to arrive
        results["cov_property"] = property_seen

    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
