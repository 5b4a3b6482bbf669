"""bac-py's BACnet/SC hub and echo nodes for `buildwire bench bacnet sc --peer bac-py`
(Python 3.13, ``bac-py[secure]``), speaking the launcher protocol of the stress servers.

    python bacnet_sc_bacpy.py hub --port PORT [--certs DIR | --no-tls]
        bac-py's hub function on 127.0.0.1:PORT; prints ``ready PORT``.
    python bacnet_sc_bacpy.py echo --hub URI --vmac HEX --name NAME [--certs DIR | --no-tls]
        a bac-py node with VMAC HEX on the hub that sends every benchmark NPDU back,
        unchanged, to the VMAC it came from; prints ``ready 0``.

Both answer each ``count`` line on stdin with ``executed N`` (echoes sent by the echo node;
0 for the hub, which counts nothing) and stop when stdin closes. With ``--certs`` the TLS
files are DIR/NAME.crt, DIR/NAME.key and DIR/ca.crt, as buildwire writes them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from bac_py.transport.sc import SCTransport, SCTransportConfig
from bac_py.transport.sc.hub_function import SCHubConfig, SCHubFunction
from bac_py.transport.sc.tls import SCTLSConfig
from bac_py.transport.sc.vmac import SCVMAC, DeviceUUID

# The NPDU header of the benchmark's messages: a proprietary network-layer message of
# vendor 0xFFFF, then the 6-octet id.
HEADER = bytes([0x01, 0x80, 0x80, 0xFF, 0xFF])


def tls(args: argparse.Namespace, name: str) -> SCTLSConfig:
    if args.no_tls:
        return SCTLSConfig(allow_plaintext=True)
    return SCTLSConfig(
        private_key_path=f"{args.certs}/{name}.key",
        certificate_path=f"{args.certs}/{name}.crt",
        ca_certificates_path=f"{args.certs}/ca.crt",
    )


async def serve_counts(count: list[int]) -> None:
    """Answers `count` on stdin until it closes."""
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        if line.strip() == "count":
            print(f"executed {count[0]}", flush=True)


async def run_hub(args: argparse.Namespace) -> None:
    hub = SCHubFunction(
        SCVMAC.random(),
        DeviceUUID.generate(),
        config=SCHubConfig(bind_address="127.0.0.1", bind_port=args.port, tls_config=tls(args, "hub")),
    )
    await hub.start()
    print(f"ready {args.port}", flush=True)
    await serve_counts([0])
    await hub.stop()


async def run_echo(args: argparse.Namespace) -> None:
    transport = SCTransport(
        SCTransportConfig(
            primary_hub_uri=args.hub,
            tls_config=tls(args, args.name),
            vmac=SCVMAC(bytes.fromhex(args.vmac)),
            min_reconnect_time=0.5,
            max_reconnect_time=5.0,
        )
    )
    echoed = [0]

    def on_npdu(npdu: bytes, source: bytes) -> None:
        if len(npdu) >= 11 and npdu.startswith(HEADER):
            transport.send_unicast(npdu, source)
            echoed[0] += 1

    transport.on_receive(on_npdu)
    await transport.start()
    if not await transport.hub_connector.wait_connected(timeout=10):
        print(f"echo node {args.vmac}: no connection to {args.hub}", file=sys.stderr)
        sys.exit(1)
    print("ready 0", flush=True)
    await serve_counts(echoed)
    await transport.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=["hub", "echo"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--hub", default="")
    parser.add_argument("--vmac", default="")
    parser.add_argument("--name", default="echo1")
    parser.add_argument("--certs", default="")
    parser.add_argument("--no-tls", action="store_true")
    args = parser.parse_args()
    asyncio.run(run_hub(args) if args.role == "hub" else run_echo(args))


if __name__ == "__main__":
    main()
