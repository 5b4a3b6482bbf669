"""BACnet values by name in Python (issue 25): enumerations are IntEnum members that still
compare equal to their numbers, multi-state values carry their state-text, constructed
values are decoded. Against our own device on 127.0.0.1."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

from buildwire import _native, bacnet
from buildwire.bacnet_enums import (
    ENUMERATIONS,
    BinaryPv,
    EngineeringUnits,
    EventState,
    ObjectType,
    PropertyIdentifier,
    Segmentation,
    ServicesSupported,
)

ROOT = Path(__file__).resolve().parent.parent


def test_generated_enumerations_match_the_rust_tables() -> None:
    tables = json.loads(_native.bacnet_enumerations())
    assert set(tables) == set(ENUMERATIONS)
    for name, members in tables.items():
        cls = ENUMERATIONS[name]
        assert [(m.bacnet_name, int(m)) for m in cls] == [(n, v) for n, v in members], name
    # The checked-in module is what the generator writes today.
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_bacnet_enums.py"), "--check"], check=False
    )
    assert check.returncode == 0, "run scripts/gen_bacnet_enums.py"


def test_enum_members_compare_equal_to_their_numbers_and_carry_names() -> None:
    units = EngineeringUnits(62)
    assert units == 62
    assert units is EngineeringUnits.DEGREES_CELSIUS
    assert units.name == "DEGREES_CELSIUS"
    assert units.bacnet_name == "degrees-celsius" == str(units) == f"{units}"
    assert f"{units:d}" == "62"
    assert EngineeringUnits.from_name("degrees-celsius") is units
    # A proprietary unit keeps its number.
    vendor = EngineeringUnits(60000)
    assert vendor == 60000 and vendor.bacnet_name == "60000"
    assert ObjectType(0).bacnet_name == "analog-input"
    assert PropertyIdentifier.PRESENT_VALUE == 85


async def test_read_gives_named_values() -> None:
    async with (
        bacnet.Server.start("127.0.0.1:0") as server,
        bacnet.Client.bind("127.0.0.1:0") as client,
    ):
        device = server.address
        units = await client.read(device, "ai,1", "units")
        assert units == 64
        assert units is EngineeringUnits.DEGREES_FAHRENHEIT
        assert str(units) == "degrees-fahrenheit"
        assert await client.read(device, "ai,1", "object-type") is ObjectType.ANALOG_INPUT
        assert await client.read(device, "ai,1", "event-state") is EventState.NORMAL
        await client.write(device, "bv,1", "pv", "active", priority=8)
        pv = await client.read(device, "bv,1", "pv")
        assert pv == 1 and pv is BinaryPv.ACTIVE
        assert await client.read(device, "bv,1", "priority-array", index=8) is BinaryPv.ACTIVE
        segmentation = await client.read(device, "device,400", "segmentation-supported")
        assert segmentation is Segmentation.SEGMENTED_BOTH
        services = await client.read(device, "device,400", "protocol-services-supported")
        assert ServicesSupported.READ_PROPERTY in services
        types = await client.read(device, "device,400", "protocol-object-types-supported")
        assert ObjectType.ANALOG_INPUT in types
        flags = await client.read(device, "ai,1", "status-flags")
        assert flags == {
            "in-alarm": False,
            "fault": False,
            "overridden": False,
            "out-of-service": False,
        }
        properties = await client.read(device, "ai,1", "property-list")
        assert PropertyIdentifier.UNITS in properties
        # A multi-state present-value carries the object's state-text.
        state = await client.read(device, "msv,1", "pv")
        assert isinstance(state, bacnet.State)
        assert state.name == f"State {int(state)}"
        # So does a COV notification of a multi-state object.
        async with client.subscribe(device, "msv,1") as changes:
            first = await changes.__anext__()
            assert isinstance(first.values["present-value"], bacnet.State)
            assert first.values["present-value"].name.startswith("State ")
        rows = await client.read_multiple(device, [("ai,2", ["units"])])
        assert rows[0]["value"] is EngineeringUnits.DEGREES_CELSIUS
        # The server's own view is named the same way.
        assert server.get("ai,1", "units") is EngineeringUnits.DEGREES_FAHRENHEIT


def test_states_and_date_times_become_python_values() -> None:
    state = bacnet.State(2, "State 2")
    assert state == 2 and state.name == "State 2" and str(state) == "State 2"
    value = bacnet._element_value(
        {"type": "date-time", "value": {"date": "2026-11-27 (weekday 5)", "time": "22:40:05.25"}}
    )
    assert value == datetime.datetime(2026, 11, 27, 22, 40, 5, 250000)
    # An unspecified field keeps the texts.
    any_day = {"date": "*-12-25", "time": "08:00:00.00"}
    assert bacnet._element_value({"type": "date-time", "value": any_day}) == any_day


def test_dissect_names_service_parameters() -> None:
    frame = bacnet.dissect(bytes.fromhex("810a0017010400050f0f0c0140000119553e91013f4908"))
    assert frame["apdu"]["service"] == "write-property"
    assert frame["payload"]["object"] == "binary-value,1"
    assert frame["payload"]["value"][0]["name"] == "active"
