"""The OPC UA server modelled from Python (`buildwire.opcua.Server`): folders, objects,
variables (DataType, access level, AnalogItemType properties), methods with async
callbacks, local values, the stream of client writes and simulated points.

Checked with asyncua as the independent client (tests/peers/asyncua_model_client.py, run
from the peers' Python 3.11 venv while the server serves in this event loop) and with our
own client. Everything on 127.0.0.1, port 0.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import subprocess
from pathlib import Path

import pytest

from buildwire import opcua

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO / ".peers" / "py311" / "bin" / "python"
CLIENT_SCRIPT = REPO / "tests" / "peers" / "asyncua_model_client.py"
URI = "urn:buildwire:test:plant"
BAD_OUT_OF_RANGE = 0x803C0000


@pytest.fixture(scope="module")
def peer_python() -> Path:
    """The Python 3.11 venv holding asyncua (installed by scripts/peers.sh, idempotent)."""
    if not PEERS.exists():
        subprocess.run([str(REPO / "scripts" / "peers.sh"), "py311"], check=True, timeout=900)
    check = subprocess.run([str(PEERS), "-c", "import asyncua"], capture_output=True, timeout=60)
    assert check.returncode == 0, check.stderr
    return PEERS


def model(server: opcua.Server) -> dict[str, str]:
    """The plant of these tests; returns its NodeIds by name."""
    ns = server.add_namespace(URI)
    plant = server.add_folder("i=85", f"ns={ns};s=Plant", "Plant")
    nodes = {
        "plant": plant,
        "temp": server.add_variable(
            plant,
            f"ns={ns};s=Temp",
            "Temp",
            21.5,
            eu_range=(-20, 60),
            units=("°C", "CEL", "degree Celsius"),
        ),
        "setpoint": server.add_variable(
            plant, f"ns={ns};s=Setpoint", "Setpoint", 20.0, writable=True
        ),
        "counter": server.add_variable(
            plant, f"ns={ns};s=Counter", "Counter", 0, data_type="UInt32"
        ),
    }

    async def add(a: float, b: float) -> float:
        await asyncio.sleep(0.01)
        return a + b

    async def fail(text: str) -> None:
        raise opcua.StatusError(BAD_OUT_OF_RANGE, f"{text} is out of range")

    nodes["add"] = server.add_method(
        plant,
        f"ns={ns};s=Add",
        "Add",
        add,
        inputs=[("a", "Double", "first term"), ("b", "Double")],
        outputs=[("sum", "Double")],
    )
    nodes["fail"] = server.add_method(
        plant, f"ns={ns};s=Fail", "Fail", fail, inputs=[("text", "String")]
    )
    return nodes


async def test_asyncua_client_reads_writes_calls_and_subscribes(peer_python: Path) -> None:
    async with opcua.Server.start("127.0.0.1:0") as server:
        nodes = model(server)
        server.simulate(nodes["counter"], "counter", interval=0.05, low=1)
        peer = await asyncio.create_subprocess_exec(
            str(peer_python),
            str(CLIENT_SCRIPT),
            server.endpoint,
            URI,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(peer.communicate(), 60)
        assert peer.returncode == 0, stderr.decode()
        out = json.loads(stdout)
        writes = []
        async for write in server.writes():
            writes.append(write)
            break
    assert out["ns"] == 2
    assert out["plant_children"] == ["Add", "Counter", "Fail", "Setpoint", "Temp"]
    assert out["temp"] == 21.5
    assert out["temp_data_type"] == "i=11"
    assert out["temp_type_definition"] == "i=2368"  # AnalogItemType
    assert out["temp_access_level"] == ["CurrentRead"]
    assert out["temp_write"] == "BadNotWritable"
    assert out["eu_range"] == [-20.0, 60.0]
    assert out["units"] == {
        "namespace": "http://www.opcfoundation.org/UA/units/un/cefact",
        "unit_id": 4408652,
        "display_name": "°C",
        "description": "degree Celsius",
    }
    assert out["setpoint"] == 18.5
    assert out["add_inputs"] == [["a", "i=11"], ["b", "i=11"]]
    assert out["add"] == 3.25
    assert out["fail"] == "BadOutOfRange"
    counts = out["counter_values"]
    assert len(counts) == 3 and all(isinstance(c, int) for c in counts)
    assert counts == sorted(counts) and len(set(counts)) == 3
    (write,) = writes
    assert (write.node, write.value, write.user) == (nodes["setpoint"], 18.5, None)
    assert write.timestamp.tzinfo is not None


async def test_our_client_sees_local_values_and_method_results() -> None:
    async with opcua.Server.start("127.0.0.1:0") as server:
        nodes = model(server)
        async with opcua.Client.connect(server.endpoint) as client:
            async with client.subscribe(nodes["temp"], interval=0.05) as changes:
                first = await changes.next(timeout=5)
                server.set_value(nodes["temp"], 23)
                second = await changes.next(timeout=5)
            (total,) = await client.call(nodes["plant"], nodes["add"], ["double:2", "double:0.5"])
            with pytest.raises(opcua.StatusError) as refused:
                await client.call(nodes["plant"], nodes["fail"], ["string:x"])
            with pytest.raises(opcua.StatusError) as mismatch:
                await client.call(nodes["plant"], nodes["add"], ["string:a", "double:1"])
            await client.write(nodes["setpoint"], 17.0)
            read_back = await client.read(nodes["setpoint"])
        local = server.get_value(nodes["setpoint"])
    assert first is not None and first.value == 21.5
    assert second is not None and second.value == 23.0 and second.type == "Double"
    assert total == 2.5
    assert refused.value.name == "BadOutOfRange"
    assert mismatch.value.name == "BadInvalidArgument"
    assert read_back == [17.0]
    assert local == 17.0


async def test_server_keeps_serving_while_a_method_waits() -> None:
    """A callback that waits does not hold the server: another client reads meanwhile."""
    release = asyncio.Event()
    entered = asyncio.Event()

    async def slow(label: str, user: str | None = None) -> tuple[str, str]:
        entered.set()
        await release.wait()
        return label.upper(), repr(user)

    async with opcua.Server.start("127.0.0.1:0") as server:
        ns = server.add_namespace(URI)
        obj = server.add_object("i=85", f"ns={ns};s=Jobs", "Jobs")
        method = server.add_method(
            obj,
            f"ns={ns};s=Jobs.Run",
            "Run",
            slow,
            inputs=[("label", "String")],
            outputs=[("upper", "String"), ("user", "String")],
        )
        async with (
            opcua.Client.connect(server.endpoint) as caller,
            opcua.Client.connect(server.endpoint) as reader,
        ):
            call = asyncio.create_task(caller.call(obj, method, ["string:job"]))
            await asyncio.wait_for(entered.wait(), 5)
            (state,) = await reader.read("i=2259")  # ServerStatus.State, while Run waits
            assert not call.done()
            release.set()
            outputs = await asyncio.wait_for(call, 5)
    assert state == 0  # Running
    assert outputs == ["JOB", "None"]


async def test_model_mistakes_raise_value_error() -> None:
    async with opcua.Server.start("127.0.0.1:0") as server:
        ns = server.add_namespace(URI)
        with pytest.raises(ValueError, match="out of range for byte"):
            server.add_variable("i=85", f"ns={ns};s=B", "B", 300, data_type="Byte")
        with pytest.raises(ValueError, match="unknown DataType"):
            server.add_variable("i=85", f"ns={ns};s=C", "C", 1, data_type="Real")
        node = server.add_variable("i=85", f"ns={ns};s=F", "F", 1.0, data_type="Float")
        with pytest.raises(ValueError, match="out of range for float"):
            server.set_value(node, 3.4e39)
        with pytest.raises(ValueError, match="already exists"):
            server.add_variable("i=85", node, "F", 2.0)
        with pytest.raises(ValueError, match="not a Variable"):
            server.set_value("i=85", 1.0)
        with pytest.raises(ValueError, match="async def"):
            server.add_method("i=85", f"ns={ns};s=M", "M", print)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="simulation"):
            server.simulate(node, "square")
        with pytest.raises(ValueError, match="UNECE"):
            server.add_variable("i=85", f"ns={ns};s=U", "U", 1.0, units=("°C", "°C!"))


async def test_simulated_points_move_within_bounds() -> None:
    async with opcua.Server.start("127.0.0.1:0") as server:
        ns = server.add_namespace(URI)
        seen: dict[str, list[float]] = {}
        for kind in ("sine", "ramp", "random"):
            node = server.add_variable("i=85", f"ns={ns};s={kind}", kind, 0.0)
            server.simulate(node, kind, interval=0.01, period=0.2, low=10, high=20)
            seen[node] = []
        for _ in range(20):
            await asyncio.sleep(0.02)
            for node, values in seen.items():
                values.append(server.get_value(node))
    for node, values in seen.items():
        assert all(10 <= v <= 20 for v in values), (node, values)
        assert len(set(values)) > 3, (node, values)


async def test_writes_and_methods_know_the_user() -> None:
    async def whoami(user: str | None = None) -> str:
        return user or "anonymous"

    async with opcua.Server.start(
        "127.0.0.1:0", users={"alice": "secret"}, allow_cleartext_passwords=True
    ) as server:
        ns = server.add_namespace(URI)
        obj = server.add_object("i=85", f"ns={ns};s=Desk", "Desk")
        method = server.add_method(
            obj, f"ns={ns};s=Desk.WhoAmI", "WhoAmI", whoami, outputs=[("name", "String")]
        )
        sp = server.add_variable(
            obj, f"ns={ns};s=Desk.SP", "SP", 1, data_type="UInt16", writable=True
        )
        async with (
            opcua.Client.connect(
                server.endpoint, user="alice", password="secret", allow_cleartext_password=True
            ) as alice,
            opcua.Client.connect(server.endpoint) as anonymous,
        ):
            assert await alice.call(obj, method, []) == ["alice"]
            assert await anonymous.call(obj, method, []) == ["anonymous"]
            await alice.write(sp, 7)  # typed by the node's DataType: a UInt16
            with pytest.raises(ValueError, match="out of range for uint16"):
                await anonymous.write(sp, 70000)
        writes = server.writes()
        write = await writes.__anext__()
    assert (write.node, write.value, write.user) == (sp, 7, "alice")


async def test_values_cross_as_python_objects() -> None:
    """Values reach Python as Python objects (bytes, lists, aware datetimes) and go back
    from them: a ByteString method echoes bytes both ways, arrays are set from tuples."""
    received: list[bytes] = []

    async def reverse(data: bytes) -> bytes:
        received.append(data)
        return data[::-1]

    byte_strings = {"inputs": [("data", "ByteString")], "outputs": [("reversed", "ByteString")]}
    async with opcua.Server.start("127.0.0.1:0") as server:
        ns = server.add_namespace(URI)
        obj = server.add_object("i=85", f"ns={ns};s=Codec", "Codec")
        method = server.add_method(obj, f"ns={ns};s=Reverse", "Reverse", reverse, **byte_strings)
        levels = server.add_variable(
            obj, f"ns={ns};s=Codec.Levels", "Levels", (1.5, 2.5), data_type="Double"
        )
        blob = server.add_variable(obj, f"ns={ns};s=Codec.Blob", "Blob", b"\x00\xff")
        async with opcua.Client.connect(server.endpoint) as client:
            outputs = await client.call(obj, method, ["bytestring:0x0102ff"])
            values = await client.read(levels, blob)
            async with client.subscribe(levels, interval=0.05) as changes:
                first = await changes.next(timeout=5)
                server.set_value(levels, [3, 4.25, 5])
                second = await changes.next(timeout=5)
        local = server.get_value(blob)
    assert received == [b"\x01\x02\xff"]
    assert outputs == [b"\xff\x02\x01"]
    assert values == [[1.5, 2.5], {"length": 2, "hex": "00ff", "truncated": False}]
    assert local == {"length": 2, "hex": "00ff", "truncated": False}
    assert first is not None and first.value == [1.5, 2.5]
    assert second is not None and second.value == [3.0, 4.25, 5.0]
    assert second.source_timestamp is not None and second.server_timestamp is not None
    assert second.source_timestamp.utcoffset() == datetime.timedelta(0)
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs(now - second.source_timestamp) < datetime.timedelta(seconds=60)
