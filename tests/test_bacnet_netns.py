"""BACnet across separate hosts: network namespaces joined by veth pairs and bridges (iproute2,
as root).

Three namespaces stand for three hosts: a client on IP subnet 10.77.1.0/24 (BACnet network 1),
a router with a port on each subnet, and the stress server on 10.77.2.0/24 (network 2). Every
device uses the standard port 47808 on its own address, as on a real site. The client knows
only the server's routed address `2:10.77.2.2:47808`: it finds the router with a broadcast
Who-Is-Router-To-Network on its own subnet, and its reads and writes cross the router.

A second scenario has three IP subnets, each a bridge in a gateway namespace that forwards
IP between them: a BBMD on each of subnets 1 and 2 with the same BDT, a client on subnet 1, the
server on subnet 2, and a foreign device on subnet 3, which has no BBMD. Broadcast Who-Is finds
the server from subnet 1 through both BBMDs, and from subnet 3 after registering with BBMD 1.

A third joins a BACnet/IP network to a BACnet/IPv6 one: the client's Who-Is crosses the router
and reaches the server in the third namespace by IPv6 multicast (FF02::BAC0) over an IPv6-only
link; reads and writes follow by the server's virtual MAC.

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


@contextmanager
def _subnets(hosts: dict[str, tuple[int, int]]) -> Iterator[dict[str, str]]:
    """One namespace per host, plus `gw`: a bridge per subnet (10.78.S.0/24, the bridge is
    10.78.S.254) and IP forwarding between them. `hosts` maps a role to (subnet, host number);
    every host's default route goes through the gateway."""
    tag = str(os.getpid() % 100000)
    gateway = f"bw{tag}gw"
    names = {role: f"bw{tag}{role}" for role in hosts}
    made = [gateway]
    try:
        _ip("netns", "add", gateway)
        _ip("-n", gateway, "link", "set", "lo", "up")
        subprocess.run(
            ["ip", "netns", "exec", gateway, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"],
            check=True,
        )
        for subnet in sorted({s for s, _ in hosts.values()}):
            bridge = f"br{tag}{subnet}"
            _ip("-n", gateway, "link", "add", bridge, "type", "bridge")
            _ip("-n", gateway, "addr", "add", f"10.78.{subnet}.254/24", "dev", bridge)
            _ip("-n", gateway, "link", "set", bridge, "up")
        for role, (subnet, host) in hosts.items():
            name = names[role]
            _ip("netns", "add", name)
            made.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
            inside, outside = f"v{tag}{role}", f"w{tag}{role}"
            _ip("link", "add", inside, "netns", name, "type", "veth", "peer", "name", outside)
            _ip("link", "set", outside, "netns", gateway)
            _ip("-n", gateway, "link", "set", outside, "master", f"br{tag}{subnet}")
            _ip("-n", gateway, "link", "set", outside, "up")
            _ip("-n", name, "addr", "add", f"10.78.{subnet}.{host}/24", "dev", inside)
            _ip("-n", name, "link", "set", inside, "up")
            _ip("-n", name, "route", "add", "default", "via", f"10.78.{subnet}.254")
        yield names
    finally:
        for name in made:
            _ip("netns", "del", name, check=False)


def test_broadcasts_cross_bbmds_between_subnets_and_reach_a_foreign_device(
    buildwire_cmd: list[str], tmp_path
) -> None:
    reason = _skip_reason()
    if reason is not None:
        print(f"skipped: {reason}")
        pytest.skip(reason)
    bdt = tmp_path / "site.bdt"
    bdt.write_text("10.78.1.1:47808\n10.78.2.1:47808\n")
    hosts = {"b1": (1, 1), "c1": (1, 2), "b2": (2, 1), "s2": (2, 2), "f3": (3, 2)}
    with _subnets(hosts) as ns:
        bbmd = [*buildwire_cmd, "bacnet", "bbmd", "--bdt", str(bdt), "--bind"]
        server = [
            *buildwire_cmd,
            "bacnet",
            "serve",
            "--bind",
            "10.78.2.2:47808",
            "--device-id",
            str(SERVER_DEVICE),
        ]
        with (
            _running(ns["b1"], [*bbmd, "10.78.1.1:47808"]),
            _running(ns["b2"], [*bbmd, "10.78.2.1:47808"]),
            _running(ns["s2"], server),
        ):

            def whois(namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
                done = _cli(namespace, buildwire_cmd, "whois", "--timeout", "2", *args)
                found = done.returncode == 0 and str(SERVER_DEVICE) in done.stdout
                return subprocess.CompletedProcess(
                    done.args, 0 if found else 1, done.stdout, done.stderr
                )

            # A Who-Is broadcast on subnet 1 crosses BBMD 1 and BBMD 2 to the server on subnet
            # 2, and its I-Am comes back the same way.
            local = _until_ok(
                lambda: whois(ns["c1"], "--bind", "10.78.1.2:47808", "--broadcast", "10.78.1.255")
            )
            assert local.returncode == 0, (local.stdout, local.stderr)
            # A foreign device on subnet 3 (no BBMD there) registers with BBMD 1 and finds it.
            foreign = _until_ok(
                lambda: whois(
                    ns["f3"],
                    "--bind",
                    "10.78.3.2:47808",
                    "--broadcast",
                    "10.78.3.255",
                    "--foreign",
                    "10.78.1.1:47808",
                    "--ttl",
                    "30",
                )
            )
            assert foreign.returncode == 0, (foreign.stdout, foreign.stderr)
            fdt = _cli(ns["c1"], buildwire_cmd, "fdt", "10.78.1.1:47808")
            assert fdt.returncode == 0, fdt.stderr
            assert "10.78.3.2:47808" in fdt.stdout, fdt.stdout


@contextmanager
def _bip_and_bip6_hosts() -> Iterator[dict[str, str]]:
    """Namespaces client, router, server: an IPv4 link client-router (10.79.1.0/24) and an
    IPv6-only link router-server (fd79::/64 and link-local addresses, duplicate address
    detection off so that the addresses are usable at once)."""
    tag = str(os.getpid() % 100000)
    names = {role: f"bw{tag}6{role[0]}" for role in ("client", "router", "server")}
    v4 = (("client", f"x{tag}c", "10.79.1.2/24"), ("router", f"x{tag}r1", "10.79.1.1/24"))
    v6 = (("server", f"x{tag}s", "fd79::2/64"), ("router", f"x{tag}r2", "fd79::1/64"))
    try:
        for name in names.values():
            _ip("netns", "add", name)
            _ip("-n", name, "link", "set", "lo", "up")
        for family, ((ns_a, if_a, addr_a), (ns_b, if_b, addr_b)) in (("4", v4), ("6", v6)):
            _ip("link", "add", if_a, "netns", names[ns_a], "type", "veth", "peer", "name", if_b)
            _ip("link", "set", if_b, "netns", names[ns_b])
            for ns, interface, address in ((ns_a, if_a, addr_a), (ns_b, if_b, addr_b)):
                if family == "6":
                    no_dad = f"net.ipv6.conf.{interface}.accept_dad=0"
                    subprocess.run(
                        ["ip", "netns", "exec", names[ns], "sysctl", "-q", "-w", no_dad],
                        check=True,
                    )
                    _ip("-n", names[ns], "-6", "addr", "add", address, "dev", interface, "nodad")
                else:
                    _ip("-n", names[ns], "addr", "add", address, "dev", interface)
                _ip("-n", names[ns], "link", "set", interface, "up")
        yield names
    finally:
        for name in names.values():
            _ip("netns", "del", name, check=False)


def test_ipv6_multicast_between_namespaces_and_bip_to_bip6_through_the_router(
    buildwire_cmd: list[str],
) -> None:
    """A client on a BACnet/IP network finds the stress server on a BACnet/IPv6 network in
    another namespace: its global Who-Is crosses our router, which multicasts it on
    FF02::BAC0 over the IPv6 link; the server's I-Am comes back by multicast and through the
    router. Then the client reads and writes the server through the router by its virtual
    MAC, which the router resolved (Address-Resolution) on the IPv6 side."""
    reason = _skip_reason()
    if reason is not None:
        print(f"skipped: {reason}")
        pytest.skip(reason)
    with _bip_and_bip6_hosts() as hosts:
        tag = str(os.getpid() % 100000)
        server = [
            *buildwire_cmd,
            "bacnet",
            "serve",
            "--transport",
            "bip6",
            "--bind",
            "[::]:47808",
            "--interface",
            f"x{tag}s",
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
            "1=bip:10.79.1.1:47808,broadcast=10.79.1.255",
            "--port",
            f"2=bip6:[::]:47808,interface=x{tag}r2,vmac=0000fe",
        ]
        with _running(hosts["server"], server), _running(hosts["router"], router):
            client = ["--bind", "10.79.1.2:47808"]

            def whois() -> subprocess.CompletedProcess[str]:
                done = _cli(
                    hosts["client"],
                    buildwire_cmd,
                    "whois",
                    "--timeout",
                    "2",
                    "--broadcast",
                    "10.79.1.255",
                    *client,
                )
                found = done.returncode == 0 and str(SERVER_DEVICE) in done.stdout
                return subprocess.CompletedProcess(
                    done.args, 0 if found else 1, done.stdout, done.stderr
                )

            found = _until_ok(whois)
            assert found.returncode == 0, (found.stdout, found.stderr)
            # Network 2, the server's 3-byte virtual MAC (its device instance by default).
            device = f"2:{SERVER_DEVICE:06x}"
            assert device in found.stdout, found.stdout
            name = _cli(
                hosts["client"],
                buildwire_cmd,
                "read",
                device,
                f"device,{SERVER_DEVICE}",
                "object-name",
                *client,
            )
            assert name.returncode == 0, name.stderr
            [object_name] = json.loads(name.stdout)["value"]
            assert object_name["type"] == "character-string", object_name
            written = _cli(
                hosts["client"],
                buildwire_cmd,
                "write",
                device,
                "av,2",
                "pv",
                "17.25",
                "--priority",
                "8",
                *client,
            )
            assert written.returncode == 0, written.stderr
            back = _cli(hosts["client"], buildwire_cmd, "read", device, "av,2", "pv", *client)
            assert back.returncode == 0, back.stderr
            assert json.loads(back.stdout)["value"] == [{"type": "real", "value": 17.25}]
