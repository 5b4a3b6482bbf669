"""Grids straight from Rust: lazy rows, the columnar `to_pandas()` / `to_arrow()` paths, and
Python objects converted back without JSON text."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import serve_haystack

from buildwire import haystack
from buildwire.haystack import MARKER, NA, Coord, Grid, Number, Ref, Uri, XStr

MIXED = """ver:"3.0" dis:"mixed"
id,power,on,ts,name,ref,note,when
@a,1.5kW,T,2024-03-01T10:00:00-05:00 New_York,"A",@s "Site",M,2024-03-01
@b,,F,2024-03-01T11:00:00-05:00 New_York,,@s,"x",
@c,NaN,M,,"C",,NA,2024-03-02
"""


def test_decoded_rows_are_the_classes_of_the_package() -> None:
    grid = haystack.decode(MIXED)
    assert grid.meta == {"dis": "mixed"}
    assert grid.column_names == ["id", "power", "on", "ts", "name", "ref", "note", "when"]
    assert len(grid) == 3
    first = grid.rows[0]
    assert first["id"] == Ref("a")
    assert first["power"] == Number(1.5, "kW")
    assert first["on"] is True
    assert first["ts"].tz_name == "New_York"
    assert first["ts"].utcoffset() == dt.timedelta(hours=-5)
    assert first["ref"].dis == "Site"
    assert first["note"] is MARKER
    assert first["when"] == dt.date(2024, 3, 1)
    assert "power" not in grid.rows[1]
    assert grid.rows[2]["note"] is NA
    assert math.isnan(grid.rows[2]["power"].val)


def test_to_pandas_builds_typed_columns() -> None:
    frame = haystack.decode(MIXED).to_pandas()
    assert list(frame.columns) == ["id", "power", "on", "ts", "name", "ref", "note", "when"]
    assert frame["power"].dtype == np.float64
    assert frame["power"].iloc[0] == 1.5 and frame["power"].isna().tolist() == [
        False,
        True,
        True,
    ]
    assert frame.attrs["units"] == {"power": "kW"}
    assert str(frame["on"].dtype) == "boolean"
    assert frame["on"].tolist() == [True, False, True]
    assert str(frame["ts"].dtype) == "datetime64[ns, America/New_York]"
    assert frame["ts"].iloc[1] == pd.Timestamp("2024-03-01T16:00:00Z")
    assert pd.isna(frame["ts"].iloc[2])
    assert frame["id"].tolist() == ["a", "b", "c"]
    assert frame["ref"].tolist()[:2] == ["s", "s"] and frame["ref"].isna().tolist()[2]
    # Mixed kinds stay Python values.
    assert frame["note"].tolist() == [MARKER, "x", NA]
    assert frame["when"].tolist() == [dt.date(2024, 3, 1), None, dt.date(2024, 3, 2)]


def test_to_arrow_builds_typed_columns() -> None:
    table = haystack.decode(MIXED).to_arrow()
    assert table.schema.field("power").type == pa.float64()
    assert table.schema.field("power").metadata == {b"unit": b"kW"}
    assert table.column("power").null_count == 1
    assert table.schema.field("on").type == pa.bool_()
    assert table.schema.field("ts").type == pa.timestamp("ns", tz="America/New_York")
    assert table.column("ts").to_pylist()[0] == dt.datetime(
        2024, 3, 1, 15, 0, tzinfo=dt.timezone.utc
    )
    assert table.column("name").to_pylist() == ["A", None, "C"]
    assert table.column("id").to_pylist() == ["a", "b", "c"]
    assert table.column("note").to_pylist() == ["M", '"x"', "NA"]


def test_python_built_and_changed_grids_take_the_same_path() -> None:
    built = Grid(
        {"dis": "built"},
        [("v", {}), ("t", {})],
        [{"v": Number(2.0, "°F"), "t": "a"}, {"v": 3, "t": "b"}, {"t": "c"}],
    )
    frame = built.to_pandas()
    assert frame["v"].tolist()[:2] == [2.0, 3.0] and math.isnan(frame["v"].iloc[2])
    assert frame.attrs["units"] == {"v": "°F"}
    # Rows changed after decoding are what the frame shows.
    grid = haystack.decode(MIXED)
    grid.rows[0]["power"] = Number(99.0, "kW")
    assert grid.to_pandas()["power"].iloc[0] == 99.0
    assert grid.to_arrow().column("power").to_pylist()[0] == 99.0


def test_values_round_trip_through_rust_without_json() -> None:
    values = [
        MARKER,
        NA,
        None,
        True,
        "s",
        Number(1.0, "kW"),
        Ref("a", "A"),
        Uri("http://x"),
        Coord(1.5, -2.0),
        XStr("Foo", "x"),
        dt.date(2024, 2, 29),
        dt.time(10, 30, 0, 500000),
        {"a": Number(1.0)},
        [Number(2.0)],
    ]
    text = haystack.encode_value(values)
    assert haystack.decode_value(text) == values
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    assert haystack.encode_value(aware) == "2024-01-01T12:00:00-05:00"
    with pytest.raises(ValueError, match="no UTC offset"):
        haystack.encode_value(dt.datetime(2024, 1, 1))
    with pytest.raises(TypeError, match="not a Haystack value"):
        haystack.encode_value(object())
    with pytest.raises(ValueError, match="not a column"):
        haystack.encode(Grid({}, [("a", {})], [{"b": 1}]))


def test_example_building_to_pandas_and_arrow(haystack_data: Path) -> None:
    grid = haystack.read_file(haystack_data / "alpha.zinc")
    frame = grid.to_pandas()
    table = grid.to_arrow()
    assert len(frame) == len(table) == 2032
    assert frame.columns.tolist() == table.column_names == grid.column_names
    assert frame["id"].tolist() == table.column("id").to_pylist()
    assert frame["id"].tolist() == [row["id"].id for row in grid.rows]


POINT = """ver:"3.0"
id,dis,point,his,kind,unit,tz
@year,"Year of power",M,M,"Number","kW","UTC"
"""


async def test_a_year_of_samples_to_pandas_and_a_rollup(
    buildwire_cmd: list[str], tmp_path: Path
) -> None:
    data = tmp_path / "point.zinc"
    data.write_text(POINT)
    start = dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc)
    samples = [
        (start + dt.timedelta(minutes=15 * i), Number(float(i % 96), "kW")) for i in range(365 * 96)
    ]
    with serve_haystack(buildwire_cmd, data) as url:
        async with haystack.Client.connect(url) as client:
            for chunk in range(0, len(samples), 10_000):
                await client.his_write("@year", samples[chunk : chunk + 10_000])
            his = await client.his_read("@year", "2023-01-01,2023-12-31")
            frame = his.to_pandas()
            assert len(frame) == 35040
            assert str(frame["ts"].dtype) == "datetime64[ns, UTC]"
            assert frame["ts"].iloc[-1] == pd.Timestamp("2023-12-31T23:45:00Z")
            assert frame["val"].sum() == 365 * sum(range(96))
            assert frame.attrs["units"] == {"val": "kW"}
            # A buildwire server rolls up itself.
            daily = await client.his_rollup("@year", "2023-01-01,2023-12-31", "1day", "avg")
            assert daily.meta["hisRollup"] == "avg" and "hisRollupByClient" not in daily.meta
            assert len(daily) == 365
            assert set(daily.to_pandas()["val"]) == {47.5}
