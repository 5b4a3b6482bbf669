"""The Python Haystack API over the Rust codecs, on the shared example buildings."""

from __future__ import annotations

import datetime as dt
import json
import math
import subprocess
from pathlib import Path

import pytest

from buildwire import haystack
from buildwire.haystack import MARKER, NA, REMOVE, Coord, Number, Ref, Symbol, Uri, XStr


def test_scalars_decode_to_python_types() -> None:
    values = haystack.decode_value(
        '[M, NA, R, T, "s", 10.6EER, -INF, NaN, @a "A", `http://x`, ^site, C(1.5,-2), '
        'Foo("x"), 2024-02-29, 10:30:00.5, 2020-07-10T01:00:09.879-04:00 New_York, {a:1}]'
    )
    assert values[:5] == [MARKER, NA, REMOVE, True, "s"]
    assert values[5] == Number(10.6, "EER")
    assert values[6] == Number(-math.inf)
    assert math.isnan(values[7].val)
    assert values[8] == Ref("a", "A") and values[8].dis == "A"
    assert values[9:13] == [Uri("http://x"), Symbol("site"), Coord(1.5, -2.0), XStr("Foo", "x")]
    assert values[13] == dt.date(2024, 2, 29)
    assert values[14] == dt.time(10, 30, 0, 500000)
    when = values[15]
    assert when.tz_name == "New_York"
    assert when.utcoffset() == dt.timedelta(hours=-4)
    assert when.microsecond == 879000
    assert values[16] == {"a": Number(1.0)}


def test_values_encode_back_to_the_same_zinc() -> None:
    text = '[M,NA,R,T,"s",10.6EER,@a "A",^site,2024-02-29,{a:1 b:"x"}]'
    assert haystack.encode_value(haystack.decode_value(text)) == text


@pytest.mark.parametrize("name", ["alpha", "bravo"])
def test_example_buildings_agree_across_formats(haystack_data: Path, name: str) -> None:
    grids = {
        fmt: haystack.decode((haystack_data / f"{name}.{fmt}").read_text(), fmt)
        for fmt in ("zinc", "json", "trio")
    }
    zinc = grids["zinc"]
    assert len(zinc.rows) == {"alpha": 2032, "bravo": 1077}[name]
    assert grids["json"].rows == zinc.rows
    assert grids["trio"].rows == zinc.rows
    # Python objects encode back to the same grid.
    assert haystack.decode(haystack.encode(zinc, "zinc")).rows == zinc.rows


def test_bravo_number_with_unit_that_looks_like_an_exponent(haystack_data: Path) -> None:
    grid = haystack.decode((haystack_data / "bravo.zinc").read_text())
    nested = [v for row in grid.rows for v in row.values() if isinstance(v, dict)]
    found = [v for d in nested for v in d.values() if v == Number(10.6, "EER")]
    assert found, "10.6EER must decode as 10.6 with unit EER"


def test_decode_errors_say_where(haystack_data: Path) -> None:
    with pytest.raises(ValueError, match=r"line 3"):
        haystack.decode('ver:"3.0"\na,b\n1,"unterminated\n')
    with pytest.raises(ValueError, match="unknown format"):
        haystack.decode("", "xml")


def test_convert_fast_path_matches_the_object_path(haystack_data: Path) -> None:
    text = (haystack_data / "bravo.zinc").read_text()
    hayson = json.loads(haystack.convert(text, "zinc", "json"))
    assert len(hayson["rows"]) == 1077


def test_grid_to_dataframe(haystack_data: Path) -> None:
    pd = pytest.importorskip("pandas", reason="pandas is optional; requirements-dev installs it")
    grid = haystack.decode((haystack_data / "alpha.zinc").read_text())
    frame = grid.to_dataframe()
    assert isinstance(frame, pd.DataFrame)
    assert frame.shape == (2032, len(grid.columns))
    assert frame["point"].sum() == 1846
    assert frame.attrs["units"]["area"] == "ft²"


def test_cli_convert_round_trip(
    buildwire_cmd: list[str], haystack_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bravo.json"
    subprocess.run(
        [*buildwire_cmd, "haystack", "convert", str(haystack_data / "bravo.zinc"), str(out)],
        check=True,
        capture_output=True,
    )
    back = subprocess.run(
        [*buildwire_cmd, "haystack", "convert", str(out), "-", "--to", "zinc"],
        check=True,
        capture_output=True,
        text=True,
    )
    original = haystack.decode((haystack_data / "bravo.zinc").read_text())
    assert haystack.decode(back.stdout).rows == original.rows
    report = subprocess.run(
        [*buildwire_cmd, "haystack", "decode", str(out), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(report.stdout)["rows"] == 1077


def test_cli_query_counts_and_errors(buildwire_cmd: list[str], haystack_data: Path) -> None:
    alpha, bravo = str(haystack_data / "alpha.zinc"), str(haystack_data / "bravo.zinc")

    def count(*args: str) -> int:
        out = subprocess.run(
            [*buildwire_cmd, "haystack", "query", *args, "--count"],
            check=True,
            capture_output=True,
            text=True,
        )
        return int(out.stdout)

    assert count(alpha, "site") == 1
    assert count(alpha, bravo, 'point and his and kind=="Number"') == 1632 + 815
    assert count(bravo, 'equipRef->siteRef->geoCity=="Fort Wayne"') == 913
    out = subprocess.run(
        [*buildwire_cmd, "haystack", "query", bravo, "ahu", "--json", "--limit", "2"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert len(json.loads(out.stdout)["rows"]) == 2
    bad = subprocess.run(
        [*buildwire_cmd, "haystack", "query", alpha, "point and ("],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1
    assert "column 12" in bad.stderr
