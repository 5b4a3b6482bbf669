"""The drivers' log events reach Python's `logging`, on loggers named after the Rust
modules (`buildwire.opcua.driver.server`, `buildwire.bacnet.driver.server`,
`buildwire.haystack.client.http`), with their fields on the record, and follow the loggers'
levels; a client's login is logged without its password."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import serve_haystack

from buildwire import bacnet, haystack, opcua

PASSWORD = "Pw-not-in-python-logs-41d2"


async def _wait_for(
    caplog: pytest.LogCaptureFixture, wanted: Callable[[logging.LogRecord], bool]
) -> logging.LogRecord:
    """The first captured record `wanted` accepts; events arrive from a thread of the
    extension, so wait for them (up to 10 s)."""
    for _ in range(500):
        for record in caplog.records:
            if wanted(record):
                return record
        await asyncio.sleep(0.02)
    seen = [(r.name, r.getMessage()) for r in caplog.records]
    raise AssertionError(f"no such record among {seen}")


async def test_opcua_session_events_reach_python_logging(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="buildwire")
    async with opcua.Server.start("127.0.0.1:0") as server:
        async with opcua.Client.connect(server.endpoint) as client:
            await client.read("i=2258")
        opened = await _wait_for(caplog, lambda r: r.getMessage().startswith("channel open"))
        activated = await _wait_for(
            caplog, lambda r: r.getMessage().startswith("session activated")
        )
        closed = await _wait_for(caplog, lambda r: r.getMessage().startswith("session closed"))
    assert activated.name == "buildwire.opcua.driver.server"
    assert activated.levelno == logging.INFO
    assert activated.buildwire["user"] == "anonymous"  # type: ignore[attr-defined]
    assert opened.buildwire["policy"] == "None"  # type: ignore[attr-defined]
    assert isinstance(closed.buildwire["channel_id"], int)  # type: ignore[attr-defined]
    assert "user=anonymous" in activated.getMessage()


async def test_a_malformed_bacnet_datagram_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="buildwire.bacnet")
    async with bacnet.Server.start("127.0.0.1:0") as server:
        host, port = server.address.rsplit(":", 1)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as peer:
            peer.bind(("127.0.0.1", 0))
            # Original-Unicast-NPDU with an NPDU of protocol version 7 (only 1 exists).
            peer.sendto(bytes.fromhex("810a00060704"), (host, int(port)))
            record = await _wait_for(
                caplog, lambda r: r.getMessage().startswith("malformed message from a peer")
            )
            peer_port = peer.getsockname()[1]
    assert record.name == "buildwire.bacnet.driver.server"
    assert record.levelno == logging.WARNING
    assert str(peer_port) in record.buildwire["peer"]  # type: ignore[attr-defined]


async def test_logger_levels_filter_the_events(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="buildwire")
    logging.getLogger("buildwire.opcua").setLevel(logging.WARNING)
    try:
        async with opcua.Server.start("127.0.0.1:0") as server:
            async with opcua.Client.connect(server.endpoint) as client:
                await client.read("i=2258")
            # A BACnet warning after the OPC UA events: once it is here, they were handled.
            async with bacnet.Server.start("127.0.0.1:0") as device:
                host, port = device.address.rsplit(":", 1)
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as peer:
                    peer.sendto(bytes.fromhex("810a00060704"), (host, int(port)))
                    await _wait_for(caplog, lambda r: r.name.startswith("buildwire.bacnet"))
    finally:
        logging.getLogger("buildwire.opcua").setLevel(logging.NOTSET)
    assert not [r for r in caplog.records if r.name.startswith("buildwire.opcua")]


async def test_the_command_line_inside_python_writes_its_own_json_logs() -> None:
    """`python -m buildwire ... --log-format json` swaps the extension's Python layer for
    the command line's stderr layer, as the binary writes it."""
    command = ["opcua", "serve", "--bind", "127.0.0.1:0", "--log-format", "json"]
    server = subprocess.Popen(
        [sys.executable, "-m", "buildwire", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = await asyncio.to_thread(server.stdout.readline)
        endpoint = first.split(" on ", 1)[1].split()[0]
        async with opcua.Client.connect(endpoint) as client:
            await client.read("i=2258")
        await asyncio.sleep(0.2)
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.to_thread(server.communicate, timeout=30)
    assert server.returncode == 0, stderr
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    messages = [event["message"] for event in events]
    assert "session activated" in messages, stderr
    assert all(event["target"].startswith("buildwire_") for event in events)


async def test_haystack_client_requests_and_login_reach_logging_without_the_password(
    caplog: pytest.LogCaptureFixture,
    buildwire_cmd: list[str],
    haystack_data: Path,
    tmp_path: Path,
) -> None:
    users = tmp_path / "users.txt"
    users.write_text(f"alice:{PASSWORD}:admin\n")
    caplog.set_level(logging.DEBUG, logger="buildwire.haystack")
    site = haystack_data / "alpha.zinc"
    with serve_haystack(buildwire_cmd, site, "--user-password-file", str(users)) as url:
        async with haystack.Client.connect(url, "alice", PASSWORD) as client:
            await client.about()
        request = await _wait_for(
            caplog,
            lambda r: r.getMessage().startswith("request ") and r.buildwire.get("op") == "about",  # type: ignore[attr-defined]
        )
    assert request.name == "buildwire.haystack.client.http"
    assert request.levelno == logging.DEBUG
    assert request.buildwire["status"] == 200  # type: ignore[attr-defined]
    assert request.buildwire["duration_ms"] >= 0  # type: ignore[attr-defined]
    steps = [
        r.buildwire["step"]  # type: ignore[attr-defined]
        for r in caplog.records
        if r.getMessage().startswith("login: sending ")
    ]
    assert steps == ["hello", "scram-first", "scram-final"]
    logged = "\n".join(f"{r.getMessage()} {getattr(r, 'buildwire', {})}" for r in caplog.records)
    assert PASSWORD not in logged
    assert "authtoken" not in logged.lower()


async def test_bacnet_client_requests_reach_logging_at_debug_and_refusals_at_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="buildwire.bacnet.driver.client")
    async with bacnet.Server.start("127.0.0.1:0") as server:
        async with bacnet.Client.bind("127.0.0.1:0") as client:
            await client.read(server.address, "analog-input,1", "present-value")
            answered = await _wait_for(
                caplog, lambda r: r.getMessage().startswith("request answered ")
            )
            with pytest.raises(bacnet.BacnetError):
                await client.read(server.address, "analog-input,999999", "present-value")
            refused = await _wait_for(
                caplog, lambda r: r.getMessage().startswith("request refused by the peer ")
            )
    assert answered.name == "buildwire.bacnet.driver.client"
    assert answered.levelno == logging.DEBUG
    fields = answered.buildwire  # type: ignore[attr-defined]
    assert fields["service"] == "read-property"
    assert fields["answer"] == "complex-ack"
    assert fields["peer"] == server.address
    assert refused.levelno == logging.INFO
    assert refused.buildwire["answer"] == "error"  # type: ignore[attr-defined]
    assert "unknown-object" in refused.buildwire["reason"]  # type: ignore[attr-defined]
