"""BACnet across separate hosts: network namespaces joined by veth pairs (iproute2, as root).

Three namespaces stand for three hosts: a client on IP subnet 10.77.1.0/24 (BACnet network 1),
a router with a port on each subnet, and the stress server on 10.77.2.0/24 (network 2). Every
device uses the standard port 47808 on its own address, as on a real site. The client knows
only the server's routed address `2:10.77.2.2:47808`: it finds the router with a broadcast
Who-Is-Router-To-Network on its own subnet, and its reads and writes cross the router.

Where namespaces cannot be made (not root, no `ip`, a sandbox without the permission), the
tests are skipped with the reason printed. Every namespace is deleted at the end, also when a
test fails; names carry the process id, so two runs at once do not collide.
"""

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest

SERVER_DEVICE = 2077


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def _skip_reason() -> str | None:
    if os.name != "posix" or os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    probe = f"bwprobe{os.getpid() % 100000}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot make a network namespace: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


@contextmanager
def _three_hosts() -> Iterator[dict[str, str]]:
    """Namespaces client, router, server; veth pairs client-router and router-server."""
    tag = str(os.getpid() % 100000)
    names = {role: f"bw{tag}{role[0]}" for role in ("client", "router", "server")}
    links = [
        # (namespace, interface, address), (namespace, interface, address)
        (("client", f"v{tag}c", "10.77.1.2/24"), ("router", f"v{tag}r1", "10.77.1.1/24")),
        (("server", f"v{tag}s", "10.77.2.2/24"), ("router", f"v{tag}r2", "10.77.2.1/24")),
    ]
    try:
        for name in names.values():
            _ip("netns", "add", name)
            _ip("-n", name, "link", "set", "lo", "up")
        for (ns_a, if_a, addr_a), (ns_b, if_b, addr_b) in links:
            _ip("link", "add", if_a, "netns", names[ns_a], "type", "veth", "peer", "name", if_b)
            # The peer end was made in the root namespace: move it.
            _ip("link", "set", if_b, "netns", names[ns_b])
            for ns, interface, address in ((ns_a, if_a, addr_a), (ns_b, if_b, addr_b)):
                _ip("-n", names[ns], "addr", "add", address, "dev", interface)
                _ip("-n", names[ns], "link", "set", interface, "up")
        yield names
    finally:
        for name in names.values():
            _ip("netns", "del", name, check=False)


@contextmanager
def _running(namespace: str, command: list[str]) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        ["ip", "netns", "exec", namespace, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        process.terminate()
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        if process.poll() is None:
            process.kill()
            process.wait()


def _cli(namespace: str, buildwire_cmd: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", "netns", "exec", namespace, *buildwire_cmd, "bacnet", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _until_ok(attempt, seconds: float = 20.0) -> subprocess.CompletedProcess[str]:
    deadline = time.monotonic() + seconds
    while True:
        done = attempt()
        if done.returncode == 0 or time.monotonic() > deadline:
            return done
        time.sleep(0.5)


def test_client_on_network_1_reads_and_writes_through_the_router(
    buildwire_cmd: list[str],
) -> None:
    reason = _skip_reason()
    if reason is not None:
        print(f"skipped: {reason}")
        pytest.skip(reason)
    with _three_hosts() as hosts:
        server = [
            *buildwire_cmd,
            "bacnet",
            "serve",
            "--bind",
            "10.77.2.2:47808",
            "--broadcast",
            "10.77.2.255",
            "--device-id",
            str(SERVER_DEVICE),
            "--objects",
            "stress",
        ]
        router = [
            *buildwire_cmd,
            "bacnet",
            "router",
            "--port",
            "1=bip:10.77.1.1:47808,broadcast=10.77.1.255",
            "--port",
            "2=bip:10.77.2.1:47808,broadcast=10.77.2.255",
        ]
        with _running(hosts["server"], server), _running(hosts["router"], router):
            device = "2:10.77.2.2:47808"
            client = ["--bind", "10.77.1.2:47808"]
            name = _until_ok(
                lambda: _cli(
                    hosts["client"],
                    buildwire_cmd,
                    "read",
                    device,
                    f"device,{SERVER_DEVICE}",
                    "object-name",
                    *client,
                )
            )
            assert name.returncode == 0, name.stderr
            [object_name] = json.loads(name.stdout)["value"]
            assert object_name["type"] == "character-string", object_name
            written = _cli(
                hosts["client"],
                buildwire_cmd,
                "write",
                device,
                "av,1",
                "pv",
                "61.5",
                "--priority",
                "8",
                *client,
            )
            assert written.returncode == 0, written.stderr
            read_back = _cli(hosts["client"], buildwire_cmd, "read", device, "av,1", "pv", *client)
            assert read_back.returncode == 0, read_back.stderr
            assert json.loads(read_back.stdout)["value"] == [{"type": "real", "value": 61.5}]
            # The server is not reachable from the client's subnet except through the router.
            direct = subprocess.run(
                ["ip", "netns", "exec", hosts["client"], "ip", "route", "get", "10.77.2.2"],
                capture_output=True,
                text=True,
                check=False,
            )
            assert direct.returncode != 0, direct.stdout
