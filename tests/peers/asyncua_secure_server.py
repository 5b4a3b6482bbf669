"""An asyncua OPC UA server with every secured policy asyncua supports (Basic256Sha256,
Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss, each Sign and SignAndEncrypt) on
127.0.0.1:PORT, for the security interop tests. Its certificate and key are DER files (made
with `buildwire opcua certs create`), its application URI the one in the certificate. A
writable Double ``ns=1;s=Setpoint`` starts at 21.5. Prints ``listening on <endpoint>`` once
ready; runs until killed.

With ``--user NAME:PASSWORD`` the server also offers a SecurityPolicy None endpoint, and
only that user may log in (UserName tokens only). asyncua's None endpoint then names
Basic256Sha256 in its UserName token policy (it has a certificate and an encrypting
endpoint) and refuses a password sent in clear.

Usage: python asyncua_secure_server.py PORT CERT.der KEY.der APPLICATION_URI
       [--user NAME:PASSWORD]
"""

from __future__ import annotations

import asyncio
import logging
import sys

from asyncua import Server, ua
from asyncua.crypto.permission_rules import SimpleRoleRuleset, User, UserRole
from asyncua.server.user_managers import UserManager


class OneUser(UserManager):
    def __init__(self, name: str, password: str) -> None:
        self.name, self.password = name, password

    def get_user(self, iserver, username=None, password=None, certificate=None):
        if (username, password) == (self.name, self.password):
            return User(role=UserRole.User, name=username)
        return None


async def main(port: int, cert: str, key: str, application_uri: str, user: str | None) -> None:
    logging.basicConfig(level=logging.WARNING)
    name, _, password = (user or "").partition(":")
    server = Server(user_manager=OneUser(name, password)) if user else Server()
    await server.init()
    endpoint = f"opc.tcp://127.0.0.1:{port}/"
    server.set_endpoint(endpoint)
    await server.set_application_uri(application_uri)
    none = [ua.SecurityPolicyType.NoSecurity] if user else []
    server.set_security_policy(
        [
            *none,
            ua.SecurityPolicyType.Basic256Sha256_Sign,
            ua.SecurityPolicyType.Basic256Sha256_SignAndEncrypt,
            ua.SecurityPolicyType.Aes128Sha256RsaOaep_Sign,
            ua.SecurityPolicyType.Aes128Sha256RsaOaep_SignAndEncrypt,
            ua.SecurityPolicyType.Aes256Sha256RsaPss_Sign,
            ua.SecurityPolicyType.Aes256Sha256RsaPss_SignAndEncrypt,
        ],
        permission_ruleset=SimpleRoleRuleset() if user else None,
    )
    if user:
        server.set_identity_tokens([ua.UserNameIdentityToken])
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
    user = sys.argv[6] if sys.argv[5:6] == ["--user"] else None
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], user))
