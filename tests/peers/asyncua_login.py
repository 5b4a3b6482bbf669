"""The asyncua client logging in with a user name over a SecurityPolicy None channel, for
the user token interop tests: asyncua encrypts the password when the server's UserName
token policy names a security policy. Reads ServerStatus.State and prints
``{"state": N, "token_policy_uri": URI}``; errors print ``{"error": ...}`` and exit 1.

Usage: python asyncua_login.py ENDPOINT USER PASSWORD
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys

from asyncua import Client, ua


async def main(endpoint: str, user: str, password: str) -> dict:
    client = Client(endpoint, timeout=10)
    client.set_user(user)
    client.set_password(password)
    async with client:
        state = await client.get_node(ua.NodeId(2259)).read_value()
        endpoints = await client.get_endpoints()
    none = next(e for e in endpoints if e.SecurityMode == ua.MessageSecurityMode.None_)
    policy = next(t for t in none.UserIdentityTokens if t.TokenType == ua.UserTokenType.UserName)
    return {"state": int(state), "token_policy_uri": policy.SecurityPolicyUri}


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    try:
        result = asyncio.run(main(*sys.argv[1:4]))
    except Exception as error:  # reported to the test as JSON
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
    print(json.dumps(result))
