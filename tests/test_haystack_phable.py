"""phable (the Python Haystack client most SkySpark/Haxall users have) against our server.

`buildwire haystack serve` runs on 127.0.0.1 on a free port, with a small site of its own
(a writable, historized Number point and a Bool one) and a SCRAM user. phable logs in (it
sends the SCRAM proof as base64 without `=` padding) with JSON and with Zinc, then runs
about, read (by filter and by ids), hisWrite/hisRead (one point and a batch, and its
DataFrame helper on the answer), pointWrite and its priority array, a watch (sub, poll,
unsub) through `call`, and close. phable is pinned in requirements-dev.txt.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import tempfile
import time
import urllib.error
import zoneinfo
from collections.abc import Iterator
from typing import IO

import pytest

# Installed by requirements-dev.txt (`make test`): missing, the tests fail rather than skip.
from phable import (
    AuthError,
    CallError,
    Grid,
    GridCol,
    HaystackClient,
    Marker,
    Number,
    Ref,
)

USER, PASSWORD = "op", "phable-secret"
SITE = """ver:"3.0"
id,dis,site,equip,point,writable,his,kind,unit,tz,siteRef,equipRef
@ph-site,"Phable Site",M,,,,,,,"New_York",,
@ph-ahu,"Phable AHU",,M,,,,,,,@ph-site,
@ph-sp,"Phable Setpoint",,,M,M,M,"Number","°F","New_York",@ph-site,@ph-ahu
@ph-cmd,"Phable Command",,,M,M,M,"Bool",,"New_York",@ph-site,@ph-ahu
"""
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


@pytest.fixture(scope="module")
def api_url(buildwire_cmd: list[str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Our server on 127.0.0.1 (a free port), serving SITE; yields its API URL."""
    data = tmp_path_factory.mktemp("phable") / "site.zinc"
    data.write_text(SITE)
    log = tempfile.TemporaryFile(mode="w+")
    command = [
        *buildwire_cmd,
        "haystack",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data",
        str(data),
        "--user",
        f"{USER}:{PASSWORD}:operator",
        "--iterations",
        "4096",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        assert line.startswith("listening on http://127.0.0.1:"), _failed(line, log)
        yield line.split()[2]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _failed(line: str, log: IO[str]) -> str:
    log.seek(0)
    return f"the server said {line!r}: {log.read()}"


@pytest.fixture(params=["json", "zinc"])
def client(api_url: str, request: pytest.FixtureRequest) -> Iterator[HaystackClient]:
    """A phable client logged in with SCRAM, in JSON or Zinc."""
    opened = HaystackClient.open(api_url, USER, PASSWORD, content_type=request.param)
    yield opened
    try:
        opened.close()
    except urllib.error.HTTPError:
        pass  # the test closed it already


def test_phable_logs_in_every_time(api_url: str) -> None:
    # phable's proof is base64 without padding: every login must work, not just the lucky ones.
    for _ in range(5):
        HaystackClient.open(api_url, USER, PASSWORD).close()


def test_wrong_password_is_an_auth_error(api_url: str) -> None:
    with pytest.raises(AuthError):
        HaystackClient.open(api_url, USER, "not-the-password")


def test_about_and_read(client: HaystackClient) -> None:
    about = client.about()
    assert about["productName"] == "buildwire"
    assert about["userName"] == USER
    site = client.read("site")
    assert site["id"] == Ref("ph-site")
    points = client.read_all("point and writable")
    assert sorted(row["id"].val for row in points.rows) == ["ph-cmd", "ph-sp"]
    by_ids = client.read_by_ids([Ref("ph-sp"), Ref("ph-ahu")])
    assert [row["dis"] for row in by_ids.rows] == ["Phable Setpoint", "Phable AHU"]
    assert client.read_by_id(Ref("ph-cmd"))["kind"] == "Bool"


def test_read_by_str_ids_is_an_error(client: HaystackClient) -> None:
    with pytest.raises(CallError) as refused:
        client.call("read", Grid.to_grid({"id": "ph-sp"}))
    assert "needs Refs" in refused.value.help_msg.meta["dis"]


def test_his_write_then_read(client: HaystackClient) -> None:
    day = dt.date(2024, 7, 1)
    start = dt.datetime(2024, 7, 1, 9, 0, tzinfo=NEW_YORK)
    rows = [
        {"ts": start + dt.timedelta(minutes=15 * i), "val": Number(70 + i, "°F")} for i in range(4)
    ]
    client.his_write_by_id(Ref("ph-sp"), rows)
    client.his_write_by_ids(
        [Ref("ph-cmd")],
        [{"ts": start, "v0": True}, {"ts": start + dt.timedelta(hours=1), "v0": False}],
    )

    one = client.his_read_by_id(Ref("ph-sp"), day)
    assert [row["val"] for row in one.rows] == [Number(70 + i, "°F") for i in range(4)]
    assert one.rows[0]["ts"] == start
    assert one.meta["id"] == Ref("ph-sp")
    # The `val` column names its point too: phable's DataFrame helpers read it there.
    assert one.cols[1].meta["id"] == Ref("ph-sp")

    both = client.his_read_by_ids([Ref("ph-sp"), Ref("ph-cmd")], day)
    assert [col.meta["id"] for col in both.cols[1:]] == [Ref("ph-sp"), Ref("ph-cmd")]
    assert len(both.rows) == 5

    frame = one.to_pandas()
    assert list(frame["id"].unique()) == ["ph-sp"]
    assert list(frame["val_num"]) == [70.0, 71.0, 72.0, 73.0]
    assert len(both.to_pandas()) == 6


def test_point_write_and_its_array(client: HaystackClient) -> None:
    client.point_write(Ref("ph-sp"), 8, Number(68, "°F"), "phable")
    array = client.point_write_array(Ref("ph-sp"))
    assert len(array.rows) == 17
    level8 = array.rows[7]
    assert level8["level"] == Number(8)
    assert level8["val"] == Number(68, "°F")
    assert level8["who"] == "phable"
    client.point_write(Ref("ph-sp"), 8)  # relinquish
    assert "val" not in client.point_write_array(Ref("ph-sp")).rows[7]


def test_watch_sub_poll_unsub(client: HaystackClient) -> None:
    sub = client.call(
        "watchSub",
        Grid.to_grid([{"id": Ref("ph-sp")}], {"watchDis": "phable", "lease": Number(1, "min")}),
    )
    watch_id = sub.meta["watchId"]
    assert [row["id"] for row in sub.rows] == [Ref("ph-sp")]

    def poll(**meta: object) -> Grid:
        grid = Grid({"ver": "3.0", "watchId": watch_id, **meta}, [GridCol("empty")], [])
        return client.call("watchPoll", grid)

    poll()  # take what is pending
    client.point_write(Ref("ph-sp"), 10, Number(66, "°F"), "phable")
    deadline = time.monotonic() + 5
    changed = poll()
    while not changed.rows and time.monotonic() < deadline:
        time.sleep(0.1)
        changed = poll()
    assert [row["id"] for row in changed.rows] == [Ref("ph-sp")]
    assert len(poll(refresh=Marker()).rows) == 1
    unsub = Grid(
        {"ver": "3.0", "watchId": watch_id, "close": Marker()},
        [GridCol("id")],
        [{"id": Ref("ph-sp")}],
    )
    client.call("watchUnsub", unsub)
    with pytest.raises(CallError):
        poll()
    client.point_write(Ref("ph-sp"), 10)


def test_close_ends_the_session(client: HaystackClient) -> None:
    client.close()
    with pytest.raises(urllib.error.HTTPError) as refused:
        client.about()
    assert refused.value.code == 401
