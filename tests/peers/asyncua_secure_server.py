"""An asyncua OPC UA server with every secured policy asyncua supports (Basic256Sha256,
Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss, each Sign and SignAndEncrypt) on
127.0.0.1:PORT, for the security interop tests. Its certificate and key are DER files (made
with `buildwire opcua certs create`), its application URI the one in the certificate. A
writable Double ``ns=1;s=Setpoint`` starts at 21.5. Prints ``listening on <endpoint>`` once
ready; runs until killed.

Usage: python asyncua_secure_server.py PORT CERT.der KEY.der APPLICATION_URI
"""

from __future__ import annotations

import asyncio
import logging
import sys

from asyncua import Server, ua


async def main(port: int, cert: str, key: str, application_uri: str) -> None:
    logging.basicConfig(level=logging.WARNING)
    server = Server()
    await server.init()
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    server.set_endpoint(endpoint)
    await server.set_application_uri(application_uri)
    server.set_security_policy(
        [
            ua.SecurityPolicyType.Basic256Sha256_Sign,
            ua.SecurityPolicyType.Basic256Sha256_SignAndEncrypt,
            ua.SecurityPolicyType.Aes128Sha256RsaOaep_Sign,
            ua.SecurityPolicyType.Aes128Sha256RsaOaep_SignAndEncrypt,
            ua.SecurityPolicyType.Aes256Sha256RsaPss_Sign,
            ua.SecurityPolicyType.Aes256Sha256RsaPss_SignAndEncrypt,
        ]
    )
    await server.load_certificate(cert)
    await server.load_private_key(key)
    setpoint = await server.nodes.objects.add_variable(
        ua.NodeId("Setpoint", 1),
        ua.QualifiedName("Setpoint", 1),
        ua.Variant(21.5, ua.VariantType.Double),
    )
    await setpoint.set_writable()
    async with server:
        print(f"listening on {endpoint}", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]))
