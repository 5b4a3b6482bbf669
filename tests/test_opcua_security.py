"""OPC UA security interop with asyncua on 127.0.0.1, both directions (issue 12, `sec`).

(a) the asyncua client (tests/peers/asyncua_secure_client.py) against `buildwire opcua serve
    --security ...` for each of Basic256Sha256, Aes128_Sha256_RsaOaep and
    Aes256_Sha256_RsaPss with Sign and with SignAndEncrypt: writing and reading a value while
    logged in with a UserName token whose password asyncua encrypts with our certificate, and
    a wrong password refused;
(b) our CLI client (`buildwire opcua read --security POLICY --mode sign|encrypt`) against an
    asyncua server (tests/peers/asyncua_secure_server.py) offering every secured policy;
(c) an untrusted client certificate refused with BadCertificateUntrusted, stored in the
    server's rejected/ folder, and accepted once `buildwire opcua certs trust` moved it.

Certificates for asyncua are made with `buildwire opcua certs create` (DER files read by
asyncua's `cryptography`). Each test uses its own free port and throw-away PKI folders.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_opcua_interop import free_tcp_port, peer_python, start, stop  # noqa: F401

REPO = Path(__file__).resolve().parent.parent
SECURE_SERVER = REPO / "tests" / "peers" / "asyncua_secure_server.py"
SECURE_CLIENT = REPO / "tests" / "peers" / "asyncua_secure_client.py"
POLICIES = ["Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"]
MODES = {"sign": "Sign", "encrypt": "SignAndEncrypt"}


def run(command: list[str], timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def create_certificate(buildwire_cmd: list[str], pki: Path, uri: str) -> dict:
    done = run(
        [
            *buildwire_cmd,
            "opcua",
            "certs",
            "create",
            "--pki",
            str(pki),
            "--application-uri",
            uri,
            "--json",
        ]
    )
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    assert created["action"] == "created"
    assert created["application_uri"] == uri
    assert created["key_bits"] == 2048
    return created


@pytest.fixture
def asyncua_identity(buildwire_cmd: list[str], tmp_path: Path) -> dict:
    """A client certificate for asyncua, made by our `certs create`."""
    created = create_certificate(buildwire_cmd, tmp_path / "asyncua", "urn:test:asyncua:client")
    return {
        "cert": created["certificate_file"],
        "key": created["key_file"],
        "uri": "urn:test:asyncua:client",
        "thumbprint": created["thumbprint"],
    }


def serve(buildwire_cmd: list[str], pki: Path, *extra: str):
    port = free_tcp_port()
    process, line = start(
        [
            *buildwire_cmd,
            "opcua",
            "serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--security",
            ",".join(POLICIES),
            "--pki",
            str(pki),
            "--user",
            "alice:s3cret",
            *extra,
        ]
    )
    assert line == f"listening on opc.tcp://127.0.0.1:{port}/"
    return process, f"opc.tcp://127.0.0.1:{port}/"


@pytest.fixture
def our_secure_server(buildwire_cmd: list[str], tmp_path: Path) -> Iterator[str]:
    process, endpoint = serve(buildwire_cmd, tmp_path / "server", "--auto-trust")
    try:
        yield endpoint
    finally:
        stop(process)


def asyncua_client(
    python: Path, endpoint: str, policy: str, mode: str, identity: dict, *extra: str
) -> subprocess.CompletedProcess[str]:
    return run(
        [
            str(python),
            str(SECURE_CLIENT),
            endpoint,
            policy,
            mode,
            identity["cert"],
            identity["key"],
            identity["uri"],
            *extra,
        ]
    )


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("mode", list(MODES))
def test_asyncua_client_against_our_secured_server(
    peer_python: Path,  # noqa: F811
    our_secure_server: str,
    asyncua_identity: dict,
    policy: str,
    mode: str,
) -> None:
    value = 10.0 * (POLICIES.index(policy) + 1) + (0.5 if mode == "sign" else 0.25)
    login = ["--user", "alice", "--password", "s3cret"]
    done = asyncua_client(
        peer_python,
        our_secure_server,
        policy,
        mode,
        asyncua_identity,
        *login,
        "--write",
        str(value),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["setpoint"] == value
    assert out["policy_uri"] == f"http://opcfoundation.org/UA/SecurityPolicy#{policy}"
    assert out["mode"] == MODES[mode]
    # The encrypted password is checked: a wrong one is refused.
    wrong = ["--user", "alice", "--password", "wrong"]
    done = asyncua_client(peer_python, our_secure_server, policy, mode, asyncua_identity, *wrong)
    assert done.returncode == 1
    assert "BadUserAccessDenied" in json.loads(done.stdout)["error"]


def start_asyncua_secure_server(
    buildwire_cmd: list[str], python: Path, folder: Path, *options: str
) -> tuple[subprocess.Popen[str], str]:
    """tests/peers/asyncua_secure_server.py with a new certificate in `folder` and `options`
    (``--user NAME:PASSWORD``); returns the process and its endpoint."""
    created = create_certificate(buildwire_cmd, folder, "urn:test:asyncua")
    port = free_tcp_port()
    process, _ = start(
        [
            str(python),
            str(SECURE_SERVER),
            str(port),
            created["certificate_file"],
            created["key_file"],
            "urn:test:asyncua",
            *options,
        ]
    )
    return process, f"opc.tcp://127.0.0.1:{port}/"


@pytest.fixture
def asyncua_secure_server(
    buildwire_cmd: list[str],
    peer_python: Path,  # noqa: F811
    tmp_path: Path,
) -> Iterator[str]:
    process, endpoint = start_asyncua_secure_server(
        buildwire_cmd, peer_python, tmp_path / "asyncua-server"
    )
    try:
        yield endpoint
    finally:
        stop(process)


@pytest.mark.parametrize(
    ("policy", "mode"),
    [(policy, "encrypt") for policy in POLICIES] + [("Basic256Sha256", "sign")],
)
def test_our_client_against_asyncua_secured_server(
    buildwire_cmd: list[str], asyncua_secure_server: str, tmp_path: Path, policy: str, mode: str
) -> None:
    pki = tmp_path / "client"
    read = [
        *buildwire_cmd,
        "opcua",
        "read",
        asyncua_secure_server,
        "ns=1;s=Setpoint",
        "--security",
        policy,
        "--mode",
        mode,
        "--pki",
        str(pki),
        "--json",
    ]
    # First contact: the server's certificate is unknown, stored in rejected/ and refused.
    done = run(read)
    assert done.returncode != 0
    assert "is not trusted" in done.stderr and "certs trust" in done.stderr, done.stderr
    listed = json.loads(
        run([*buildwire_cmd, "opcua", "certs", "list", "--pki", str(pki), "--json"]).stdout
    )
    assert [c["application_uri"] for c in listed["rejected"]] == ["urn:test:asyncua"]
    thumbprint = listed["rejected"][0]["thumbprint"]
    trusted = run([*buildwire_cmd, "opcua", "certs", "trust", thumbprint[:12], "--pki", str(pki)])
    assert trusted.returncode == 0, trusted.stderr
    done = run(read)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["results"][0]
    assert result["value"] == 21.5
    assert result["status"].startswith("Good")


def test_untrusted_client_certificate_is_rejected_then_trusted(
    buildwire_cmd: list[str],
    peer_python: Path,  # noqa: F811
    asyncua_identity: dict,
    tmp_path: Path,
) -> None:
    pki = tmp_path / "server"
    process, endpoint = serve(buildwire_cmd, pki)
    try:
        done = asyncua_client(
            peer_python, endpoint, "Aes256_Sha256_RsaPss", "encrypt", asyncua_identity
        )
        assert done.returncode == 1
        assert "BadCertificateUntrusted" in json.loads(done.stdout)["error"], done.stdout
    finally:
        stop(process)
    listed = json.loads(
        run([*buildwire_cmd, "opcua", "certs", "list", "--pki", str(pki), "--json"]).stdout
    )
    assert [c["thumbprint"] for c in listed["rejected"]] == [asyncua_identity["thumbprint"]]
    assert listed["trusted"] == []
    thumbprint = asyncua_identity["thumbprint"]
    trusted = run([*buildwire_cmd, "opcua", "certs", "trust", thumbprint, "--pki", str(pki)])
    assert trusted.returncode == 0, trusted.stderr
    # The server reads trusted/ when it starts.
    process, endpoint = serve(buildwire_cmd, pki)
    try:
        done = asyncua_client(
            peer_python, endpoint, "Aes256_Sha256_RsaPss", "encrypt", asyncua_identity
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["setpoint"] == 0.0
    finally:
        stop(process)


def test_python_client_on_a_secured_channel(
    buildwire_cmd: list[str], asyncua_secure_server: str, tmp_path: Path
) -> None:
    """The asyncio Client with security= against the asyncua server, then against ours."""
    import asyncio

    from buildwire import opcua

    async def read(endpoint: str, pki: Path, **extra: object) -> list[object]:
        client = await opcua.Client.connect(
            endpoint,
            security="Aes128_Sha256_RsaOaep",
            mode="sign",
            pki=str(pki),
            **extra,  # type: ignore[arg-type]
        )
        try:
            return await client.read("ns=1;s=Setpoint")
        finally:
            await client.close()

    pki = tmp_path / "python"
    with pytest.raises(RuntimeError, match="BadCertificateUntrusted"):
        asyncio.run(read(asyncua_secure_server, pki))
    assert list((pki / "rejected").glob("*.der")), "the server's certificate lands in rejected/"
    assert asyncio.run(read(asyncua_secure_server, pki, trust_server=True)) == [21.5]

    process, endpoint = serve(buildwire_cmd, tmp_path / "server", "--auto-trust")
    try:
        values = asyncio.run(
            read(endpoint, pki, trust_server=True, user="alice", password="s3cret")
        )
        assert values == [0.0]
    finally:
        stop(process)


@pytest.mark.parametrize(("policy", "mode"), [("Aes256_Sha256_RsaPss", "encrypt")])
def test_asyncua_renews_its_token_on_our_server(
    peer_python: Path,  # noqa: F811
    our_secure_server: str,
    asyncua_identity: dict,
    policy: str,
    mode: str,
) -> None:
    """asyncua renews the 10 s token twice (OPN Renew, new keys) and reads after each."""
    done = asyncua_client(
        peer_python, our_secure_server, policy, mode, asyncua_identity, "--renewals", "2"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["tokens"] == [1, 2, 3]
    assert out["setpoint"] == 0.0


def test_python_server_and_client_on_every_secured_policy(tmp_path: Path) -> None:
    """The asyncio Server with security= and the asyncio Client against it."""
    import asyncio

    from buildwire import opcua

    async def main() -> list[list[object]]:
        server = await opcua.Server.start(
            "127.0.0.1:0", security=POLICIES, mode="encrypt", pki=str(tmp_path / "server")
        )
        results = []
        try:
            # The client certificate is not trusted yet: refused and stored in rejected/.
            with pytest.raises(RuntimeError, match="BadCertificateUntrusted"):
                await opcua.Client.connect(
                    server.endpoint,
                    security="Basic256Sha256",
                    pki=str(tmp_path / "client"),
                    trust_server=True,
                )
        finally:
            await server.stop()
        rejected = list((tmp_path / "server" / "rejected").glob("*.der"))
        assert len(rejected) == 1
        rejected[0].rename(tmp_path / "server" / "trusted" / rejected[0].name)
        server = await opcua.Server.start(
            "127.0.0.1:0", security=POLICIES, mode="encrypt", pki=str(tmp_path / "server")
        )
        try:
            for policy in POLICIES:
                client = await opcua.Client.connect(
                    server.endpoint,
                    security=policy,
                    pki=str(tmp_path / "client"),
                    trust_server=True,
                )
                results.append(await client.read("i=2255"))
                await client.close()
        finally:
            await server.stop()
        return results

    for namespaces in asyncio.run(main()):
        assert namespaces[0][0] == "http://opcfoundation.org/UA/"


def test_our_subscriber_over_an_encrypted_channel_to_asyncua(
    buildwire_cmd: list[str], asyncua_secure_server: str, tmp_path: Path
) -> None:
    """Encryption and subscriptions together: our CLI subscribes over
    Aes256_Sha256_RsaPss / SignAndEncrypt and sees a write made over another secured
    channel."""
    secure = [
        "--security",
        "Aes256_Sha256_RsaPss",
        "--mode",
        "encrypt",
        "--pki",
        str(tmp_path / "client"),
        "--trust-server",
    ]
    subscriber, first = start(
        [
            *buildwire_cmd,
            "opcua",
            "subscribe",
            asyncua_secure_server,
            "ns=1;s=Setpoint",
            "--interval",
            "50ms",
            "--duration",
            "30",
            "--json",
            *secure,
        ],
        needle='"value"',
    )
    try:
        assert json.loads(first)["value"] == 21.5
        wrote = run(
            [
                *buildwire_cmd,
                "opcua",
                "write",
                asyncua_secure_server,
                "ns=1;s=Setpoint",
                "33.5",
                "--type",
                "double",
                *secure,
            ]
        )
        assert wrote.returncode == 0, wrote.stderr
        assert subscriber.stdout is not None
        for line in subscriber.stdout:
            row = json.loads(line)
            if row.get("value") == 33.5:
                assert row["status"].startswith("Good")
                break
        else:
            raise AssertionError("the written value never arrived")
    finally:
        stop(subscriber)
