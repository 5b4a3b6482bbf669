"""OPC UA subscriptions with asyncua on 127.0.0.1 (SecurityPolicy None), both directions.

(a) the asyncua client (tests/peers/asyncua_subscriber.py) against `buildwire opcua serve`:
    data changes after writes, absolute and percent deadbands (Setpoint has an EURange of
    0..100), keep-alives of a quiet subscription, Bad_DeadbandFilterInvalid without an
    EURange, and deletion;
(b) our CLI `buildwire opcua subscribe --json` against an asyncua server whose Int32
    ``ns=1;s=Counter`` counts up every 100 ms (tests/peers/asyncua_counter_server.py): the
    values arrive in order, without gaps;
(c) our Python client (``buildwire.opcua.Client.subscribe``) against the same asyncua
    server, and against `buildwire opcua serve` killed and started again on its port: the
    subscription comes back by itself and reports the restarted server's values.

Each test picks a free non-default port, starts and stops its own processes.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_opcua_interop import free_tcp_port, peer_python, start, stop

REPO = Path(__file__).resolve().parent.parent
SUBSCRIBER_SCRIPT = REPO / "tests" / "peers" / "asyncua_subscriber.py"
COUNTER_SCRIPT = REPO / "tests" / "peers" / "asyncua_counter_server.py"

__all__ = ["peer_python"]


@pytest.fixture
def our_server(buildwire_cmd: list[str]) -> Iterator[str]:
    port = free_tcp_port()
    process, line = start([*buildwire_cmd, "opcua", "serve", "--bind", f"127.0.0.1:{port}"])
    try:
        assert line == f"listening on opc.tcp://127.0.0.1:{port}/"
        yield f"opc.tcp://127.0.0.1:{port}/"
    finally:
        stop(process)


@pytest.fixture
def counter_server(peer_python: Path) -> Iterator[str]:
    port = free_tcp_port()
    process, _ = start([str(peer_python), str(COUNTER_SCRIPT), str(port), "100"])
    try:
        yield f"opc.tcp://127.0.0.1:{port}/"
    finally:
        stop(process)


def test_asyncua_subscribes_to_our_server(peer_python: Path, our_server: str) -> None:
    done = subprocess.run(
        [str(peer_python), str(SUBSCRIBER_SCRIPT), our_server],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["revised_publishing_interval"] == 100
    values = result["values"]
    # Every write is reported (written values reach the items at once).
    assert values["plain"] == [0.0, 1.0, 2.0, 3.0, 10.0, 30.0, 31.0]
    # Absolute deadband 5: only changes of more than 5 from the last reported value.
    assert values["absolute"] == [0.0, 10.0, 30.0]
    # Percent deadband 10 % of 0..100 = 10: 10.0 is not beyond 0.0 + 10.
    assert values["percent"] == [0.0, 30.0]
    # A quiet 50 ms subscription with keep-alive count 2: keep-alives, about one per 100 ms,
    # and nothing but the first message (the initial value) carries data.
    assert result["quiet_keep_alive_count"] == 2
    assert result["keep_alives"] >= 3
    assert result["messages"] - result["keep_alives"] <= 1
    assert result["percent_without_range"] == "BadDeadbandFilterInvalid"
    assert result["second_delete"] == "BadSubscriptionIdInvalid"


def test_our_subscribe_cli_against_asyncua(buildwire_cmd: list[str], counter_server: str) -> None:
    done = subprocess.run(
        [
            *buildwire_cmd,
            "opcua",
            "subscribe",
            counter_server,
            "ns=1;s=Counter",
            "--interval",
            "50ms",
            "--queue",
            "10",
            "--duration",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    rows = [row for row in rows if "event" not in row]  # connection events, if any
    assert len(rows) >= 10, rows
    assert all(row["node"] == "ns=1;s=Counter" for row in rows)
    assert all(row["type"] == "Int32" and row["status"].startswith("Good") for row in rows)
    assert all(row["source_timestamp"] and row["server_timestamp"] for row in rows)
    counts = [row["value"] for row in rows]
    # In order and without gaps: the counter goes up by one per change.
    assert counts == list(range(counts[0], counts[0] + len(counts))), counts


def test_subscribe_cli_explains_bad_input(buildwire_cmd: list[str], our_server: str) -> None:
    done = subprocess.run(
        [*buildwire_cmd, "opcua", "subscribe", our_server, "ns=1;s=Setpoint", "--deadband", "x:1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "abs:X or pct:X" in done.stderr
    done = subprocess.run(
        [*buildwire_cmd, "opcua", "subscribe", our_server, "ns=1;s=Missing", "--duration", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "BadNodeIdUnknown" in done.stderr
    assert "buildwire opcua browse" in done.stderr


def test_our_python_client_subscribes_to_asyncua(counter_server: str) -> None:
    from buildwire import opcua

    async def main() -> list[int]:
        client = await opcua.Client.connect(counter_server)
        counts: list[int] = []
        async with client.subscribe("ns=1;s=Counter", interval=0.05, queue=10) as changes:
            async for change in changes:
                assert change.node == "ns=1;s=Counter"
                assert change.status.startswith("Good")
                counts.append(change.value)
                if len(counts) == 10:
                    break
        await client.close()
        return counts

    counts = asyncio.run(asyncio.wait_for(main(), 60))
    assert counts == list(range(counts[0], counts[0] + 10)), counts


def test_python_subscription_survives_a_server_restart(buildwire_cmd: list[str]) -> None:
    from buildwire import opcua

    port = free_tcp_port()
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    serve = [*buildwire_cmd, "opcua", "serve", "--bind", f"127.0.0.1:{port}"]
    write = [*buildwire_cmd, "opcua", "write", endpoint, "ns=1;s=Setpoint", "--type", "double"]
    first, _ = start(serve)
    restarted = None

    async def wait_for(changes: opcua.Subscription, value: float) -> None:
        while True:
            change = await changes.next(timeout=20)
            assert change is not None, f"no change to {value}"
            if change.value == value:
                return

    async def main() -> int:
        nonlocal restarted
        client = await opcua.Client.connect(endpoint, reconnect_timeout=20)
        changes = await client.subscribe("ns=1;s=Setpoint", interval=0.05)
        subprocess.run([*write, "12.5"], check=True, timeout=30)
        await wait_for(changes, 12.5)
        first.kill()
        first.wait()
        restarted, _ = start(serve)
        subprocess.run([*write, "42.5"], check=True, timeout=30)
        # The client notices, reconnects with a new session, creates the subscription
        # again and reports the restarted server's value.
        await wait_for(changes, 42.5)
        reconnects = client.reconnects
        await changes.delete()
        await client.close()
        return reconnects

    try:
        assert asyncio.run(asyncio.wait_for(main(), 90)) == 1
    finally:
        stop(first)
        if restarted is not None:
            stop(restarted)
