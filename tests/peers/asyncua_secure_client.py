"""The asyncua client on a secured channel, for the security interop tests: connects with a
policy and mode, its certificate and key (DER files made with `buildwire opcua certs create`)
and the application URI in that certificate, optionally logs in with a user name (asyncua
encrypts the password with the server's certificate), writes then reads ``ns=1;s=Setpoint``
and prints the result as JSON. Errors print ``{"error": ...}`` and exit 1.

Usage: python asyncua_secure_client.py ENDPOINT POLICY sign|encrypt CERT.der KEY.der
       APPLICATION_URI [--user NAME --password PASSWORD] [--write VALUE]
       [--renewals N]

With ``--renewals N`` the client asks for a 10 s token lifetime (the shortest our server
grants), waits until asyncua renewed the token N times (at 75 % of the lifetime each) and
reads again after each renewal; it reports the token ids it saw.
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
    if args.renewals:
        client.secure_channel_timeout = 10_000
    tokens: list[int] = []
    async with client:
        node = client.get_node("ns=1;s=Setpoint")
        if args.write is not None:
            await node.write_value(ua.DataValue(ua.Variant(args.write, ua.VariantType.Double)))
        value = await node.read_value()
        channel = client.uaclient.protocol._connection
        tokens.append(channel.security_token.TokenId)
        # Bounded wait: each renewal is due 7.5 s after the previous one.
        for _ in range(args.renewals * 40):
            if len(tokens) > args.renewals:
                break
            await asyncio.sleep(0.25)
            token = channel.security_token.TokenId
            if token != tokens[-1]:
                value = await node.read_value()
                tokens.append(token)
        policy_uri = client.security_policy.URI
        mode = client.security_policy.Mode
    return {"setpoint": value, "policy_uri": policy_uri, "mode": mode.name, "tokens": tokens}


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser()
    for name in ("endpoint", "policy", "mode", "cert", "key", "application_uri"):
        parser.add_argument(name)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--write", type=float)
    parser.add_argument("--renewals", type=int, default=0)
    arguments = parser.parse_args()
    try:
        print(json.dumps(asyncio.run(main(arguments))))
    except Exception as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
