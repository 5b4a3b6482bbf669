"""Our Haystack client (Python API and `buildwire haystack client`) against haystack-py's
server (crates/bench/peers/haystackpy_server.py: FastAPI, in-memory backend, SCRAM) on 127.0.0.1,
with the Alpha building loaded. haystack-py's deviations from the spec that the assertions
meet are named where they matter.
"""

from __future__ import annotations

import datetime as dt
import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from buildwire import haystack

REPO = Path(__file__).resolve().parent.parent
PEER_PYTHON = REPO / ".peers" / "py313" / "bin" / "python"
SERVER_SCRIPT = REPO / "crates" / "bench" / "peers" / "haystackpy_server.py"
ALPHA_POINTS = 1846


def free_tcp_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def haystack_py_url(haystack_data: Path) -> Iterator[str]:
    """haystack-py's server with Alpha on a free port; user admin, password secret."""
    subprocess.run([str(REPO / "scripts" / "peers.sh"), "py313"], check=True, timeout=900)
    port = free_tcp_port()
    process = subprocess.Popen(
        [
            str(PEER_PYTHON),
            str(SERVER_SCRIPT),
            "--port",
            str(port),
            str(haystack_data / "alpha.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("ready 2032"), line + (
            process.stderr.read() if process.stderr else ""
        )
        yield f"http://127.0.0.1:{port}/api"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_python_client_against_haystack_py(haystack_py_url: str) -> None:
    with pytest.raises(PermissionError, match="login refused"):
        await haystack.Client.connect(haystack_py_url, "admin", "wrong")
    for wire in ("zinc", "json"):
        client = await haystack.Client.connect(haystack_py_url, "admin", "secret", wire=wire)
        about = await client.about()
        assert about["productName"] == "hs-py"
        points = await client.read("point")
        assert len(points.rows) == ALPHA_POINTS
        assert len((await client.read("point", limit=5)).rows) == 5
        sites = await client.read("site")
        site_id = sites.rows[0]["id"]
        assert isinstance(site_id, haystack.Ref)
        by_id = await client.read_ids([site_id])
        assert by_id.rows[0]["site"] is haystack.MARKER
        assert (await client.nav()).rows
        with pytest.raises(RuntimeError, match="server error"):
            await client.read("point and (")

    client = await haystack.Client.connect(haystack_py_url, "admin", "secret")
    command = (await client.read("cmd and point", limit=1)).rows[0]["id"]
    await client.point_write(command, 8, haystack.Number(55.0, "%"), who="pytest")
    array = await client.point_write_array(command)
    level8 = next(row for row in array.rows if row["level"].val == 8)
    assert level8["val"].val == 55.0

    point = (await client.read("his and point", limit=1)).rows[0]["id"]
    utc = haystack.DateTime.fromisoformat("2024-05-01T10:00:00+00:00")
    await client.his_write(point, [(utc, 1.5), (utc.replace(hour=11), 2.5)])
    his = await client.his_read(point, "2024-05-01")
    values = sorted(row["val"].val for row in his.rows)
    assert values == [1.5, 2.5]
    frame = his.to_dataframe()
    assert list(frame["val"].sort_values()) == [1.5, 2.5]

    # The WebSocket API after the HTTP login.
    ws = await haystack.Client.connect(haystack_py_url, "admin", "secret", websocket=True)
    assert len((await ws.read("point")).rows) == ALPHA_POINTS
    assert (await ws.about())["productName"] == "hs-py"


def test_cli_client_against_haystack_py(haystack_py_url: str, buildwire_cmd: list[str]) -> None:
    env = {"BUILDWIRE_HAYSTACK_PASSWORD": "secret", "PATH": "/usr/bin:/bin"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*buildwire_cmd, "haystack", "client", haystack_py_url, *args, "-u", "admin"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )

    read = run("read", "point and his", "--limit", "3", "--json")
    assert read.returncode == 0, read.stderr
    grid = json.loads(read.stdout)
    assert grid["_kind"] == "grid" and len(grid["rows"]) == 3
    zinc = run("read", "site")
    assert zinc.returncode == 0, zinc.stderr
    assert zinc.stdout.startswith('ver:"3.0"')
    over_ws = run("read", "point", "--ws", "--json")
    assert over_ws.returncode == 0, over_ws.stderr
    assert len(json.loads(over_ws.stdout)["rows"]) == ALPHA_POINTS
    bad = run("read", "point and (")
    assert bad.returncode != 0
    assert "server error" in bad.stderr
    refused = subprocess.run(
        [*buildwire_cmd, "haystack", "client", haystack_py_url, "about", "-u", "admin"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "BUILDWIRE_HAYSTACK_PASSWORD": "nope"},
    )
    assert refused.returncode != 0
    assert "login refused" in refused.stderr


async def test_rollups_against_haystack_py_are_folded_by_the_client(haystack_py_url: str) -> None:
    # haystack-py has no rollup: it answers raw samples, which the client folds itself.
    async with haystack.Client.connect(haystack_py_url, "admin", "secret") as client:
        point = (await client.read('his and point and kind=="Number"', limit=1)).rows[0]["id"]
        start = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
        samples = [(start + dt.timedelta(minutes=10 * i), float(i)) for i in range(12)]
        await client.his_write(point, samples)
        span = "2024-05-01T00:00:00Z UTC,2024-05-01T02:00:00Z UTC"
        hourly = await client.his_rollup(point, span, "1h", "max")
        assert "hisRollupByClient" in hourly.meta and hourly.meta["hisRollup"] == "max"
        frame = hourly.to_pandas()
        assert frame["val"].tolist() == [5.0, 11.0]
        assert frame["ts"].dt.tz_convert("UTC").dt.hour.tolist() == [0, 1]
