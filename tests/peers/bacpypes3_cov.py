"""A BACpypes3 COV subscriber for interoperability tests: subscribes to one object of a device
twice (unconfirmed and confirmed notifications, process identifiers 1 and 2), changes its
present value with WriteProperty, cancels both subscriptions, writes once more, and prints
what it received as one JSON document on stdout.

    python bacpypes3_cov.py --address 127.0.0.1/8:47822 --target 127.0.0.1:47821 \\
        --object analog-value,1 --value 75.5 --after-cancel 80.25
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from bacpypes3.app import Application
from bacpypes3.argparse import SimpleArgumentParser
from bacpypes3.pdu import Address
from bacpypes3.primitivedata import ObjectIdentifier

PROCESSES = {"unconfirmed": 1, "confirmed": 2}
# Each SubscribeCOV notification carries present-value and status-flags.
VALUES_PER_NOTIFICATION = 2


def plain(value: Any) -> Any:
    """A JSON-friendly copy of a value from a notification."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return str(value)


async def drain(scm: Any, count: int, timeout: float) -> list[list[Any]]:
    """Up to `count` (property, value) pairs from a subscription, waiting `timeout` each."""
    pairs = []
    for _ in range(count):
        try:
            prop, value = await asyncio.wait_for(scm.get_value(), timeout)
        except asyncio.TimeoutError:
            break
        pairs.append([str(prop), plain(value)])
    return pairs


async def main() -> None:
    parser = SimpleArgumentParser()
    parser.add_argument("--target", required=True, help="device address HOST:PORT")
    parser.add_argument("--object", required=True, help="monitored object, e.g. analog-value,1")
    parser.add_argument("--value", type=float, required=True, help="value to write")
    parser.add_argument("--after-cancel", type=float, required=True, help="written last")
    parser.add_argument("--lifetime", type=int, default=120)
    args = parser.parse_args()
    app = Application.from_args(args)
    target = Address(args.target)
    monitored = ObjectIdentifier(args.object)

    # Count how each notification arrived: through the confirmed or the unconfirmed service.
    arrivals: dict[str, list[int]] = {"confirmed": [], "unconfirmed": []}
    confirmed_handler = app.do_ConfirmedCOVNotificationRequest
    unconfirmed_handler = app.do_UnconfirmedCOVNotificationRequest

    async def on_confirmed(apdu: Any) -> None:
        arrivals["confirmed"].append(int(apdu.subscriberProcessIdentifier))
        await confirmed_handler(apdu)

    async def on_unconfirmed(apdu: Any) -> None:
        arrivals["unconfirmed"].append(int(apdu.subscriberProcessIdentifier))
        await unconfirmed_handler(apdu)

    app.do_ConfirmedCOVNotificationRequest = on_confirmed
    app.do_UnconfirmedCOVNotificationRequest = on_unconfirmed

    results: dict[str, Any] = {}
    contexts = {}
    for kind, process in PROCESSES.items():
        scm = app.change_of_value(target, monitored, process, kind == "confirmed", args.lifetime)
        # BACpypes3's context manager files the subscription only after the SimpleACK comes
        # back, and the initial notification (Clause 13.14.1.1) may arrive in the same
        # instant: file it first so that notification is not dropped.
        app._cov_contexts[(target, process)] = scm
        await asyncio.wait_for(scm.refresh_subscription(), 10)
        contexts[kind] = scm
    for kind, scm in contexts.items():
        results[f"{kind}_initial"] = await drain(scm, VALUES_PER_NOTIFICATION, 5)

    await asyncio.wait_for(
        app.write_property(target, monitored, "present-value", args.value, priority=8), 10
    )
    for kind, scm in contexts.items():
        results[f"{kind}_changed"] = await drain(scm, VALUES_PER_NOTIFICATION, 5)

    # Cancel both subscriptions (SubscribeCOV without the optional parameters), then write
    # again: nothing more may arrive.
    for scm in contexts.values():
        if scm.refresh_subscription_handle:
            scm.refresh_subscription_handle.cancel()
        await asyncio.wait_for(scm.__aexit__(None, None, None), 10)
    for kind, process in PROCESSES.items():
        app._cov_contexts[(target, process)] = contexts[kind]
    await asyncio.wait_for(
        app.write_property(target, monitored, "present-value", args.after_cancel, priority=8),
        10,
    )
    for kind, scm in contexts.items():
        results[f"{kind}_after_cancel"] = await drain(scm, 1, 1.5)
    results["arrivals"] = arrivals

    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    app.close()


if __name__ == "__main__":
    asyncio.run(main())
