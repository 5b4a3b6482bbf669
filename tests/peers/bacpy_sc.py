"""bac-py's BACnet/SC (Python 3.13, ``bac-py[secure]``) for interoperability tests.

    python bacpy_sc.py hub --port PORT --cert C --key K --ca CA
        runs bac-py's hub function on 127.0.0.1:PORT; prints ``ready PORT``; runs until
        stdin closes.
    python bacpy_sc.py client --hub wss://127.0.0.1:PORT --cert C --key K --ca CA --device N
        connects a bac-py node to the hub, broadcasts Who-Is for device N, sends a
        ReadProperty of its object-name to the VMAC that answered, and prints the results as
        one JSON document.

The NPDUs are written by hand (Clause 6 and 20 encodings) so that what crosses the wire is
exactly what the test checks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import struct
import sys

from bac_py.transport.sc import SCTransport, SCTransportConfig
from bac_py.transport.sc.hub_function import SCHubConfig, SCHubFunction
from bac_py.transport.sc.tls import SCTLSConfig
from bac_py.transport.sc.vmac import SCVMAC, DeviceUUID


def tls(args: argparse.Namespace) -> SCTLSConfig:
    """The TLS files given on the command line."""
    return SCTLSConfig(
        private_key_path=args.key, certificate_path=args.cert, ca_certificates_path=args.ca
    )


def who_is(device: int) -> bytes:
    """A global Who-Is for one device instance (NPDU and APDU)."""
    low = device.to_bytes(4, "big").lstrip(b"\x00") or b"\x00"
    # NPDU: version 1, control 0x20 (DNET present), DNET 0xFFFF, DLEN 0, hop count 255.
    npdu = b"\x01\x20\xff\xff\x00\xff"
    # Unconfirmed Who-Is with both range limits (context tags 0 and 1).
    tag0 = bytes([0x08 | len(low)]) + low
    tag1 = bytes([0x18 | len(low)]) + low
    return npdu + b"\x10\x08" + tag0 + tag1


def read_object_name(device: int, invoke_id: int) -> bytes:
    """A confirmed ReadProperty of the Device object's object-name, expecting a reply."""
    object_id = (8 << 22) | device
    apdu = bytes([0x00, 0x05, invoke_id, 0x0C, 0x0C]) + struct.pack("!I", object_id)
    apdu += bytes([0x19, 77])
    return b"\x01\x04" + apdu


async def run_hub(args: argparse.Namespace) -> None:
    """bac-py's hub function until stdin closes."""
    hub = SCHubFunction(
        SCVMAC.random(),
        DeviceUUID.generate(),
        config=SCHubConfig(bind_address="127.0.0.1", bind_port=args.port, tls_config=tls(args)),
    )
    await hub.start()
    print(f"ready {args.port}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await hub.stop()


async def run_client(args: argparse.Namespace) -> None:
    """Who-Is and ReadProperty through the hub; prints what came back."""
    transport = SCTransport(SCTransportConfig(primary_hub_uri=args.hub, tls_config=tls(args)))
    received: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
    transport.on_receive(lambda npdu, source: received.put_nowait((npdu, source)))
    await transport.start()
    results: dict[str, object] = {}
    i_am_from = None
    for _ in range(10):
        transport.send_broadcast(who_is(args.device))
        try:
            while True:
                npdu, source = await asyncio.wait_for(received.get(), 1.0)
                # An I-Am: unconfirmed (0x10) service 0 after the NPDU header.
                if b"\x10\x00\xc4" in npdu:
                    i_am_from = source
                    results["i_am"] = npdu.hex()
                    break
        except TimeoutError:
            continue
        break
    if i_am_from is not None:
        results["i_am_from"] = i_am_from.hex()
        transport.send_unicast(read_object_name(args.device, 7), i_am_from)
        try:
            while True:
                npdu, source = await asyncio.wait_for(received.get(), 5.0)
                # Complex-ACK (0x30) for invoke id 7, ReadProperty (0x0C).
                at = npdu.find(b"\x30\x07\x0c")
                if at >= 0 and source == i_am_from:
                    results["read_ack"] = npdu[at:].hex()
                    break
        except TimeoutError:
            results["read_ack"] = None
    print(json.dumps(results), flush=True)
    await transport.stop()


def main() -> None:
    """Parse the mode and run it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["hub", "client"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--hub", default="")
    parser.add_argument("--device", type=int, default=400)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--ca", required=True)
    args = parser.parse_args()
    asyncio.run(run_hub(args) if args.mode == "hub" else run_client(args))


if __name__ == "__main__":
    main()
