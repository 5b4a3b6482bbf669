"""OPC UA client resilience against an independent server, on 127.0.0.1.

Our client (`buildwire opcua read ... --repeat N --interval DURATION --json`, a client that
reconnects by itself) polls an asyncua server (tests/peers/asyncua_server.py); the server
process is killed (SIGKILL) and started again on the same port. The client reports the loss,
reconnects with backoff, finds that the restarted server no longer knows its session, creates
exactly one new session and goes on reading: the value written into the restarted server
shows up in its output without any restart of the client.

Our client also reads many nodes of the asyncua server in one `read` (batched to the
server's published MaxNodesPerRead, or to our fallback batch size when it publishes none).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from test_opcua_interop import PEERS, REPO, SERVER_SCRIPT, free_tcp_port, run_json, start, stop


@pytest.fixture(scope="module")
def peer_python() -> Path:
    """The Python 3.11 venv holding asyncua (installed by scripts/peers.sh, idempotent)."""
    if not PEERS.exists():
        subprocess.run([str(REPO / "scripts" / "peers.sh"), "py311"], check=True, timeout=900)
    assert PEERS.exists(), f"{PEERS} is missing after scripts/peers.sh py311"
    return PEERS


def read_until(process: subprocess.Popen[str], done: Callable[[dict], bool]) -> list[dict]:
    """JSON lines of `process` until `done` accepts one (the client's repeat count bounds
    the wait: it exits after its last round)."""
    seen: list[dict] = []
    assert process.stdout is not None
    for line in process.stdout:
        value = json.loads(line)
        seen.append(value)
        if done(value):
            return seen
    raise AssertionError(f"the client ended before the expected line: {seen}")


def setpoint(line: dict) -> float | None:
    results = line.get("results")
    return results[0]["value"] if results else None


def test_our_client_resumes_after_the_asyncua_server_restarts(
    buildwire_cmd: list[str], peer_python: Path
) -> None:
    port = free_tcp_port()
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    server, _ = start([str(peer_python), str(SERVER_SCRIPT), str(port)])
    restarted = None
    client = subprocess.Popen(
        [
            *buildwire_cmd,
            "opcua",
            "read",
            endpoint,
            "ns=1;s=Setpoint",
            "--repeat",
            "120",
            "--interval",
            "100ms",
            "--reconnect-timeout",
            "30",
            "--json",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first = read_until(client, lambda line: "round" in line)
        assert first[0]["event"] == "connected"
        assert setpoint(first[-1]) == 0.0

        server.kill()
        server.wait()
        restarted, _ = start([str(peer_python), str(SERVER_SCRIPT), str(port)])
        written = run_json(
            [
                *buildwire_cmd,
                "opcua",
                "write",
                endpoint,
                "ns=1;s=Setpoint",
                "42.5",
                "--type",
                "double",
                "--json",
            ]
        )
        assert written["value"] == 42.5

        resumed = read_until(client, lambda line: setpoint(line) == 42.5)
        events = [line["event"] for line in resumed if "event" in line]
        assert "lost" in events and "reconnecting" in events, resumed
        reconnected = [line for line in resumed if line.get("event") == "reconnected"]
        assert len(reconnected) == 1, resumed
        # asyncua forgot the session with its process: one new session, not a storm.
        assert reconnected[0]["session_reactivated"] is False
        assert resumed[-1]["reconnects"] == 1

        assert client.stdout is not None
        rest = [json.loads(line) for line in client.stdout]
        rounds = [line for line in rest if "round" in line]
        assert rounds and all(setpoint(line) == 42.5 for line in rounds), rest
        assert client.wait(timeout=60) == 0
    finally:
        stop(client)
        stop(server)
        if restarted is not None:
            stop(restarted)


def test_our_client_reads_many_nodes_of_asyncua_in_batches(
    buildwire_cmd: list[str], peer_python: Path
) -> None:
    port = free_tcp_port()
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    server, _ = start([str(peer_python), str(SERVER_SCRIPT), str(port)])
    try:
        # 2500 reads: more than our fallback batch of 1000 when the server publishes no
        # MaxNodesPerRead, so at least three batches go out and come back in order.
        nodes = ["i=2258", "ns=1;s=Setpoint", "i=2255", "i=2259", "i=99999999"] * 500
        read = run_json([*buildwire_cmd, "opcua", "read", endpoint, *nodes, "--json"])
        results = read["results"]
        assert len(results) == len(nodes)
        for index, result in enumerate(results):
            assert result["node"] == nodes[index]
        for offset in range(0, len(nodes), 5):
            current_time, value, namespaces, state, missing = results[offset : offset + 5]
            assert current_time["type"] == "DateTime"
            assert value["value"] == 0.0
            assert namespaces["value"][0] == "http://opcfoundation.org/UA/"
            assert state["value"] == 0  # ServerState Running
            assert missing["status"].startswith("BadNodeIdUnknown")
    finally:
        stop(server)
