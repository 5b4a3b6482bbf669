"""The conventions of docs/conventions.md, checked across every public Python class.

One lifecycle (clients ``close``, services ``stop``, both async, every one an async context
manager, and the openers usable in ``async with`` directly), one subscription shape, and
changes as dataclasses with timezone-aware timestamps.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import importlib
import inspect
import subprocess
import sys
import typing

import pytest
from conftest import REPO

from buildwire import bacnet, haystack, opcua
from buildwire._lifecycle import AsyncClient, AsyncService, Opening, Subscribing

MODULES = ["bacnet", "bacnet_network", "bacnet_sc", "gateway", "haystack", "opcua"]


def public_classes() -> list[type]:
    found = []
    for name in MODULES:
        module = importlib.import_module(f"buildwire.{name}")
        for attr in module.__all__:
            value = getattr(module, attr)
            if inspect.isclass(value) and value.__module__ == module.__name__:
                found.append(value)
    return found


def test_every_module_lists_only_what_it_has() -> None:
    for name in MODULES:
        module = importlib.import_module(f"buildwire.{name}")
        missing = [attr for attr in module.__all__ if not hasattr(module, attr)]
        assert not missing, f"buildwire.{name}.__all__ names {missing}"


def test_clients_close_and_services_stop_asynchronously_in_async_with() -> None:
    lifecycle = [c for c in public_classes() if hasattr(c, "close") or hasattr(c, "stop")]
    # Subscriptions and watches end with their own verb (delete/cancel/close) and are
    # checked below; every other class with close/stop is a client or a service.
    endpoints = [c for c in lifecycle if not issubclass(c, Subscribing)]
    assert len(endpoints) >= 9, endpoints
    for cls in endpoints:
        assert issubclass(cls, (AsyncClient, AsyncService)), f"{cls.__qualname__}"
        verb = "close" if issubclass(cls, AsyncClient) else "stop"
        assert inspect.iscoroutinefunction(getattr(cls, verb)), f"{cls.__qualname__}.{verb}"
        assert inspect.iscoroutinefunction(cls.__aenter__), cls
        assert inspect.iscoroutinefunction(cls.__aexit__), cls


def test_openers_return_an_awaitable_context_manager() -> None:
    openers = []
    for cls in public_classes():
        for verb in ("connect", "bind", "start"):
            method = getattr(cls, verb, None)
            if method is not None and issubclass(cls, (AsyncClient, AsyncService)):
                openers.append((cls, verb, method))
    assert len(openers) >= 9, openers
    for cls, verb, method in openers:
        hints = typing.get_type_hints(method, vars(sys.modules[cls.__module__]))
        assert typing.get_origin(hints["return"]) is Opening, f"{cls.__qualname__}.{verb}"
        assert typing.get_args(hints["return"]) == (cls,), f"{cls.__qualname__}.{verb}"


def test_subscriptions_have_one_shape() -> None:
    for client, made in (
        (bacnet.Client, bacnet.CovSubscription),
        (opcua.Client, opcua.Subscription),
        (haystack.Client, haystack.Watch),
    ):
        subscribe = client.subscribe
        assert not inspect.iscoroutinefunction(subscribe), f"{client.__module__}.subscribe"
        hints = typing.get_type_hints(subscribe, vars(sys.modules[client.__module__]))
        assert hints["return"] is made
        assert issubclass(made, Subscribing), made
        assert hasattr(made, "__aiter__"), f"{made.__qualname__} is not async-iterable"


def test_changes_are_dataclasses_with_aware_timestamps() -> None:
    for change, fields in (
        (bacnet.CovNotification, ["timestamp"]),
        (opcua.DataChange, ["source_timestamp", "server_timestamp"]),
        (haystack.EntityChange, ["timestamp"]),
    ):
        assert dataclasses.is_dataclass(change)
        hints = typing.get_type_hints(change, vars(sys.modules[change.__module__]))
        for name in fields:
            assert dt.datetime in (hints[name], *typing.get_args(hints[name])), (change, name)


def test_state_is_a_property_not_a_coroutine() -> None:
    assert isinstance(inspect.getattr_static(opcua.Client, "reconnects"), property)
    for cls in public_classes():
        for name, _member in inspect.getmembers(cls, inspect.iscoroutinefunction):
            assert not name.startswith(("is_", "get_")), f"{cls.__qualname__}.{name}"


def test_bacnet_lifecycle_and_subscription_on_a_live_device() -> None:
    async def scenario() -> tuple[float, dt.datetime, bool]:
        async with bacnet.Server.start("127.0.0.1:0") as server:
            async with bacnet.Client.bind("127.0.0.1:0") as client:
                async with client.subscribe(server.address, "ai,1") as changes:
                    async for change in changes:
                        return change.values["present-value"], change.timestamp, True
        raise AssertionError("no notification")

    value, stamp, _ = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert value == 61.5
    assert stamp.tzinfo is not None


def test_opcua_lifecycle_read_attribute_and_subscription() -> None:
    async def scenario() -> tuple[list, opcua.DataChange, int]:
        async with opcua.Server.start("127.0.0.1:0") as server:
            async with opcua.Client.connect(server.endpoint) as client:
                names = await client.read("i=2256", "i=2258", attribute="browse-name")
                async with client.subscribe("i=2258", interval=0.05) as changes:
                    async for change in changes:
                        return names, change, client.reconnects
        raise AssertionError("no change")

    names, change, reconnects = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert names == ["ServerStatus", "CurrentTime"]
    assert change.node == "i=2258"
    assert change.status.startswith("Good")
    assert change.source_timestamp is not None and change.source_timestamp.tzinfo is not None
    assert reconnects == 0


def test_opcua_read_names_an_unknown_attribute() -> None:
    async def scenario() -> None:
        async with opcua.Server.start("127.0.0.1:0") as server:
            async with opcua.Client.connect(server.endpoint) as client:
                await client.read("i=2258", attribute="colour")

    with pytest.raises(ValueError, match="unknown attribute"):
        asyncio.run(asyncio.wait_for(scenario(), 30))


def test_haystack_decode_detects_the_format_of_str_and_bytes(haystack_data) -> None:
    zinc = haystack.read_file(haystack_data / "alpha.zinc")
    for name in ("alpha.json", "alpha.trio"):
        other = haystack.read_file(haystack_data / name)
        assert len(other.rows) == len(zinc.rows), name
    text = (haystack_data / "alpha.json").read_text()
    assert haystack.detect_format(text) == "json"
    assert len(haystack.decode(text).rows) == len(zinc.rows)
    assert len(haystack.decode(text.encode()).rows) == len(zinc.rows)
    assert haystack.detect_format('{"meta": {"ver": "3.0"}, "rows": [{"id": "r:a"}]}') == "json3"
    assert haystack.detect_format("dis: x\n---\ndis: y\n") == "trio"


def test_python_m_buildwire_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "buildwire", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("buildwire ")


def test_haystack_url_that_answers_404_says_to_check_the_api_path() -> None:
    import http.server
    import threading

    class NotHere(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotHere)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/wrong/"
    try:
        with pytest.raises(ConnectionError, match="check its path"):
            asyncio.run(haystack.Client.connect(url, "admin", "secret"))
    finally:
        server.shutdown()
        server.server_close()
