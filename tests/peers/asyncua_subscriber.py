"""An asyncua OPC UA subscription client for interop tests (anonymous, SecurityPolicy None).

Against the endpoint given on the command line it:

- subscribes (100 ms) to ``ns=1;s=Setpoint`` three times: plainly, with an absolute
  deadband of 5 and with a percent deadband of 10 % (the server gives Setpoint an EURange of
  0..100, so 10 units), then writes 1, 2, 3, 10, 30, 31 and collects what each item saw;
- counts keep-alives of a second subscription (50 ms, keep-alive count 2) on an unchanging
  node for about one second;
- asks for a percent deadband on a node without EURange and reports the status;
- deletes the first subscription and reports what a second delete of the same id answers.

It prints one JSON object with the results.

Usage: python asyncua_subscriber.py opc.tcp://HOST:PORT/
"""

from __future__ import annotations

import asyncio
import json
import sys

from asyncua import Client, ua


class Collector:
    """Collects data changes per client handle."""

    def __init__(self) -> None:
        self.values: dict[int, list] = {}

    def datachange_notification(self, node, value, data) -> None:
        handle = data.monitored_item.ClientHandle
        self.values.setdefault(handle, []).append(value)

    def status_change_notification(self, status) -> None:
        pass


async def main(endpoint: str) -> None:
    out: dict = {}
    async with Client(url=endpoint, timeout=10) as client:
        setpoint = client.get_node(ua.NodeId("Setpoint", 1))
        await setpoint.write_value(ua.DataValue(ua.Variant(0.0, ua.VariantType.Double)))
        collector = Collector()
        sub = await client.create_subscription(100, collector)
        out["revised_publishing_interval"] = sub.parameters.RequestedPublishingInterval
        plain = await sub.subscribe_data_change(setpoint, queuesize=10, sampling_interval=20)
        absolute = await sub.deadband_monitor(setpoint, 5.0, deadbandtype=1, queuesize=10)
        percent = await sub.deadband_monitor(setpoint, 10.0, deadbandtype=2, queuesize=10)
        await asyncio.sleep(0.5)
        for value in [1.0, 2.0, 3.0, 10.0, 30.0, 31.0]:
            await setpoint.write_value(ua.DataValue(ua.Variant(value, ua.VariantType.Double)))
            await asyncio.sleep(0.25)
        await asyncio.sleep(0.5)
        by_server = {data.server_handle: handle for handle, data in sub._monitored_items.items()}
        handles = {
            "plain": by_server[plain],
            "absolute": by_server[absolute],
            "percent": by_server[percent],
        }
        out["values"] = {name: collector.values.get(handle, []) for name, handle in handles.items()}

        # Keep-alives: count empty NotificationMessages of a quiet subscription.
        params = ua.CreateSubscriptionParameters(
            RequestedPublishingInterval=50,
            RequestedLifetimeCount=100,
            RequestedMaxKeepAliveCount=2,
            MaxNotificationsPerPublish=0,
            PublishingEnabled=True,
            Priority=0,
        )
        quiet = await client.create_subscription(params, Collector())
        await quiet.subscribe_data_change(client.get_node(ua.NodeId(2255, 0)))
        counts = {"keep_alives": 0, "messages": 0}
        callbacks = client.uaclient._subscription_callbacks
        original = callbacks[quiet.subscription_id]

        async def counting(result) -> None:
            counts["messages"] += 1
            if not result.NotificationMessage.NotificationData:
                counts["keep_alives"] += 1
            await original(result)

        callbacks[quiet.subscription_id] = counting
        await asyncio.sleep(1.2)
        out.update(counts)
        out["quiet_keep_alive_count"] = quiet.parameters.RequestedMaxKeepAliveCount

        try:
            await sub.deadband_monitor(client.get_node(ua.NodeId(2258, 0)), 10.0, deadbandtype=2)
            out["percent_without_range"] = "Good"
        except ua.UaStatusCodeError as error:
            out["percent_without_range"] = ua.StatusCode(error.code).name

        first_id = sub.subscription_id
        await sub.delete()
        results = await client.uaclient.delete_subscriptions([first_id])
        out["second_delete"] = results[0].name
        await quiet.delete()
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
