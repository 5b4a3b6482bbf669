"""UserName logins across OPC UA stacks, on 127.0.0.1 (issue 23, user tokens).

- node-opcua's client logs in to our server with a user name over a Basic256Sha256
  SignAndEncrypt channel and over a SecurityPolicy None channel: on the None endpoint our
  UserName token policy names Basic256Sha256, so node-opcua encrypts the password with our
  certificate (the server refuses a clear one); a wrong password is BadUserAccessDenied.
- asyncua's client does the same over a None channel.
- Our Python client logs in to an asyncua server whose None endpoint offers UserName with
  Basic256Sha256: the password goes encrypted, as that server requires.
- `opcua serve --user` without `--security` makes a certificate and offers UserName
  encrypted on its None endpoint: node-opcua and our client log in there.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_opcua_interop import REPO, free_tcp_port, peer_python, start, stop
from test_opcua_security import start_asyncua_secure_server

from buildwire import opcua

__all__ = ["peer_python"]

NODE_PEERS = REPO / ".peers" / "node-opcua"
NODE_CLIENT = REPO / "tests" / "peers" / "node_opcua_client.js"
ASYNCUA_LOGIN = REPO / "tests" / "peers" / "asyncua_login.py"


@pytest.fixture(scope="session")
def node_opcua() -> list[str]:
    """`node` with node-opcua on its module path (installed once into .peers/node-opcua by
    scripts/peers.sh, which keeps it until its pinned version changes)."""
    node = shutil.which("node")
    assert node, "node is not installed: `make system-deps` installs nodejs and npm"
    subprocess.run([str(REPO / "scripts" / "peers.sh"), "node-opcua"], check=True, timeout=900)
    assert (NODE_PEERS / "node_modules" / "node-opcua").is_dir()
    return [node, str(NODE_CLIENT)]


def node_env() -> dict[str, str]:
    return {**os.environ, "NODE_PATH": str(NODE_PEERS / "node_modules")}


def run_node(command: list[str], timeout: float = 120) -> dict:
    """The last JSON line a node-opcua run printed (its log lines are not JSON)."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=node_env())
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"node-opcua printed no result (exit {done.returncode}): {done.stderr}"
    return json.loads(lines[-1])


@pytest.fixture
def user_server(buildwire_cmd: list[str], tmp_path: Path) -> Iterator[str]:
    """Our server with user alice, a None and a Basic256Sha256 SignAndEncrypt endpoint and
    a certificate made on first run."""
    port = free_tcp_port()
    process, _ = start(
        [
            *buildwire_cmd,
            "opcua",
            "serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--user",
            "alice:s3cret",
            "--security",
            "Basic256Sha256,None",
            "--mode",
            "encrypt",
            "--pki",
            str(tmp_path / "server-pki"),
            "--auto-trust",
        ]
    )
    try:
        yield f"opc.tcp://127.0.0.1:{port}/"
    finally:
        stop(process)


@pytest.mark.parametrize("mode", ["encrypt", "none"])
def test_node_opcua_logs_in_with_a_user_name(
    node_opcua: list[str], user_server: str, tmp_path: Path, mode: str
) -> None:
    pki = str(tmp_path / "node-pki")
    result = run_node([*node_opcua, "login", user_server, mode, pki, "alice", "s3cret"])
    assert result == {"state": 0, "status": "Good"}, result
    result = run_node([*node_opcua, "login", user_server, mode, pki, "alice", "wrong"])
    assert result["status"] == "BadUserAccessDenied", result


def test_asyncua_logs_in_over_a_none_channel(peer_python: Path, user_server: str) -> None:
    def login(password: str) -> dict:
        done = subprocess.run(
            [str(peer_python), str(ASYNCUA_LOGIN), user_server, "alice", password],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return json.loads(done.stdout)

    result = login("s3cret")
    assert result["state"] == 0, result
    # asyncua followed our token policy: the password went encrypted.
    assert result["token_policy_uri"].endswith("#Basic256Sha256"), result
    assert "BadUserAccessDenied" in login("wrong")["error"]


def test_a_none_only_server_with_users_encrypts_them(
    buildwire_cmd: list[str], node_opcua: list[str], tmp_path: Path
) -> None:
    """`opcua serve --user` alone (no --security): the server makes its certificate on first
    run, so its only endpoint (None) offers UserName encrypted under Basic256Sha256, which
    clients that drop clear UserName policies (open62541's) need to find an endpoint."""
    port = free_tcp_port()
    command = [*buildwire_cmd, "opcua", "serve", "--bind", f"127.0.0.1:{port}"]
    command += ["--user", "alice:s3cret", "--pki", str(tmp_path / "server-pki")]
    process, _ = start(command)
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    try:
        pki = str(tmp_path / "node-pki")
        result = run_node([*node_opcua, "login", endpoint, "none", pki, "alice", "s3cret"])
        assert result == {"state": 0, "status": "Good"}, result

        async def main() -> list[Any]:
            async with opcua.Client.connect(endpoint, "alice", "s3cret") as client:
                return await client.read("i=2259")

        assert asyncio.run(main()) == [0]
    finally:
        stop(process)


def test_our_client_encrypts_for_a_token_policy_over_a_none_channel(
    buildwire_cmd: list[str], peer_python: Path, tmp_path: Path
) -> None:
    process, endpoint = start_asyncua_secure_server(
        buildwire_cmd, peer_python, tmp_path / "asyncua", "--user", "alice:s3cret"
    )
    try:

        async def login(password: str) -> list[Any]:
            async with opcua.Client.connect(endpoint, "alice", password) as client:
                return await client.read("ns=1;s=Setpoint")

        # asyncua refuses a clear password when its policy names Basic256Sha256: the
        # login works only because our client encrypted it.
        assert asyncio.run(login("s3cret")) == [21.5]
        with pytest.raises(opcua.BadUserAccessError) as refused:
            asyncio.run(login("wrong"))
        assert isinstance(refused.value, RuntimeError)
        assert refused.value.name in ("BadUserAccessDenied", "BadIdentityTokenRejected")
    finally:
        stop(process)
