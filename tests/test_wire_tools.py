"""The protocol wire tools as Python users and the CLI see them."""

from __future__ import annotations

import json
import subprocess

import pytest

from buildwire import bacnet, opcua

# Original-Unicast-NPDU carrying ReadProperty(analog-input 5, present-value), invoke id 1.
READ_PROPERTY = bytes.fromhex("810a001101040005010c0c000000051955")
# A UA TCP Hello for opc.tcp://localhost:4840.
HELLO = bytes.fromhex(
    "48454c46380000000000000000000100000001000000000000000000180000006f70632e7463703a2f2f"
    "6c6f63616c686f73743a34383430"
)


def test_bacnet_dissect_read_property() -> None:
    frame = bacnet.dissect(READ_PROPERTY)
    assert "error" not in frame
    assert frame["bvll"]["function"] == "original-unicast-npdu"
    assert frame["apdu"]["service"] == "read-property"
    assert frame["apdu"]["invoke_id"] == 1
    # The service parameters as named fields, as a protocol analyser shows them.
    assert frame["payload"] == {"object": "analog-input,5", "property": "present-value"}


@pytest.mark.parametrize(
    "data",
    [b"", b"\x81", b"\x81\x0a\x00\x05", b"\x82\x0a\x00\x04", READ_PROPERTY[:-1], b"\xff" * 600],
)
def test_bacnet_dissect_never_raises_on_bad_input(data: bytes) -> None:
    frame = bacnet.dissect(data)
    assert frame["error"]["offset"] >= 0
    assert frame["error"]["message"]


def test_bacnet_names() -> None:
    oid = bacnet.ObjectIdentifier.parse("analog-value:7")
    assert (oid.object_type, oid.type_number, oid.instance) == ("analog-value", 2, 7)
    assert str(oid) == "analog-value,7"
    assert bacnet.property_identifier("pv") == ("present-value", 85)
    with pytest.raises(ValueError):
        bacnet.ObjectIdentifier.parse("nonsense,1")
    with pytest.raises(ValueError):
        bacnet.ObjectIdentifier.parse("ai,4194304")  # instance needs more than 22 bits


def test_opcua_dissect_hello() -> None:
    stream = opcua.dissect(HELLO + HELLO)
    assert stream["error"] is None
    assert [c["type"] for c in stream["chunks"]] == ["HEL", "HEL"]
    assert stream["chunks"][0]["endpoint_url"] == "opc.tcp://localhost:4840"


def test_opcua_dissect_reports_status_code_for_garbage() -> None:
    stream = opcua.dissect(HELLO + b"XYZF\x10\x00\x00\x00")
    assert len(stream["chunks"]) == 1
    assert stream["error"]["offset"] == len(HELLO)
    assert stream["error"]["status"].startswith("BadTcpMessageTypeInvalid")


def test_opcua_status_names() -> None:
    assert opcua.status_name(0x80070000) == "BadDecodingError"
    assert opcua.status_name(0) == "Good"
    assert opcua.status_name(0x8FFF0000) is None


def test_cli_decodes_both_protocols_as_json(buildwire_cmd: list[str]) -> None:
    out = subprocess.run(
        [*buildwire_cmd, "bacnet", "decode", READ_PROPERTY.hex(" "), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["apdu"]["service"] == "read-property"
    out = subprocess.run(
        [*buildwire_cmd, "opcua", "decode", "-", "--json"],
        input=HELLO.hex(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["chunks"][0]["receive_buffer_size"] == 65536


def test_cli_decode_failure_exits_1_with_the_place(buildwire_cmd: list[str]) -> None:
    out = subprocess.run(
        [*buildwire_cmd, "bacnet", "decode", "810a000802001008"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert "ERROR in npdu at byte 4" in out.stdout
    assert "npdu layer" in out.stderr


def test_cli_status_lookup(buildwire_cmd: list[str]) -> None:
    out = subprocess.run(
        [*buildwire_cmd, "opcua", "status", "BadTcpMessageTooLarge", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == {
        "name": "BadTcpMessageTooLarge",
        "severity": "bad",
        "value": "0x80800000",
    }
