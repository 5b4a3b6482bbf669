"""The OPC UA client's errors carry their StatusCode (issue 23, Python errors): one
:class:`buildwire.opcua.StatusError` with ``code`` and ``name``, a subclass per family, all
still :class:`RuntimeError`; timeouts are also :class:`asyncio.TimeoutError`."""

from __future__ import annotations

import asyncio

import pytest

from buildwire import opcua


def test_error_classes_keep_runtime_error_and_timeout_error() -> None:
    for family in (
        opcua.BadNodeIdError,
        opcua.BadSecurityError,
        opcua.BadUserAccessError,
        opcua.BadCommunicationError,
        opcua.BadTimeoutError,
    ):
        assert issubclass(family, opcua.StatusError)
        assert issubclass(family, RuntimeError)
    assert issubclass(opcua.BadUserAccessError, opcua.BadSecurityError)
    assert issubclass(opcua.BadTimeoutError, asyncio.TimeoutError)
    error = opcua._status_error(0x800A0000, "no answer")
    assert isinstance(error, opcua.BadTimeoutError)
    assert (error.code, error.name, str(error)) == (0x800A0000, "BadTimeout", "no answer")
    unnamed = opcua._status_error(0x80FE0000)
    assert type(unnamed) is opcua.StatusError
    assert unnamed.name == "0x80FE0000"


def test_client_methods_raise_status_errors() -> None:
    async def main() -> None:
        async with opcua.Server.start("127.0.0.1:0") as server:
            async with opcua.Client.connect(server.endpoint) as client:
                with pytest.raises(opcua.BadNodeIdError) as unknown:
                    await client.read("i=2258", "ns=1;s=Missing")
                assert unknown.value.name == "BadNodeIdUnknown"
                assert unknown.value.code == 0x80340000
                assert "ns=1;s=Missing: BadNodeIdUnknown" in str(unknown.value)
                with pytest.raises(RuntimeError):
                    await client.write("ns=1;s=Missing", 1.0)
                with pytest.raises(opcua.StatusError) as refused:
                    async with client.subscribe("ns=1;s=Missing"):
                        pass
                assert isinstance(refused.value, opcua.BadNodeIdError)
            with pytest.raises(opcua.BadCommunicationError) as closed:
                await client.read("i=2258")
            assert closed.value.name == "BadConnectionClosed"
            # Nobody listens any more: the connection cannot be made.
            endpoint = server.endpoint
        with pytest.raises(opcua.StatusError) as gone:
            await opcua.Client.connect(endpoint, reconnect_timeout=0.5)
        assert isinstance(gone.value, (opcua.BadCommunicationError, opcua.BadTimeoutError))

    asyncio.run(main())
