"""The asyncua client on a secured channel, for the security interop tests: connects with a
policy and mode, its certificate and key (DER files made with `buildwire opcua certs create`)
and the application URI in that certificate, optionally logs in with a user name (asyncua
encrypts the password with the server's certificate), writes then reads ``ns=1;s=Setpoint``
and prints the result as JSON. Errors print ``{"error": ...}`` and exit 1.

Usage: python asyncua_secure_client.py ENDPOINT POLICY sign|encrypt CERT.der KEY.der
       APPLICATION_URI [--user NAME --password PASSWORD] [--write VALUE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys

from asyncua import Client, ua
from asyncua.crypto import security_policies

POLICIES = {
    "Basic256Sha256": security_policies.SecurityPolicyBasic256Sha256,
    "Aes128_Sha256_RsaOaep": security_policies.SecurityPolicyAes128Sha256RsaOaep,
    "Aes256_Sha256_RsaPss": security_policies.SecurityPolicyAes256Sha256RsaPss,
}
MODES = {
    "sign": ua.MessageSecurityMode.Sign,
    "encrypt": ua.MessageSecurityMode.SignAndEncrypt,
}


async def main(args: argparse.Namespace) -> dict:
    client = Client(args.endpoint, timeout=10)
    client.application_uri = args.application_uri
    if args.user:
        client.set_user(args.user)
        client.set_password(args.password)
    await client.set_security(POLICIES[args.policy], args.cert, args.key, mode=MODES[args.mode])
    async with client:
        node = client.get_node("ns=1;s=Setpoint")
        if args.write is not None:
            await node.write_value(ua.DataValue(ua.Variant(args.write, ua.VariantType.Double)))
        value = await node.read_value()
        policy_uri = client.security_policy.URI
        mode = client.security_policy.Mode
    return {"setpoint": value, "policy_uri": policy_uri, "mode": mode.name}


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser()
    for name in ("endpoint", "policy", "mode", "cert", "key", "application_uri"):
        parser.add_argument(name)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--write", type=float)
    arguments = parser.parse_args()
    try:
        print(json.dumps(asyncio.run(main(arguments))))
    except Exception as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
