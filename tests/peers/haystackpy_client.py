"""haystack-py's clients against a buildwire Haystack server, for interop tests.

The HTTP client logs in with SCRAM-SHA-256 and runs about, ops, formats, read (by filter,
with a limit, by id), nav (root, site, equip), hisWrite, hisRead, pointWrite (write and
read the priority array), and a watch (sub, poll, refresh, unsub). The WebSocket client
logs in with SCRAM in messages and runs about, read and nav. The results are printed as one
JSON object; any failure raises (exit status 1).

The server needs a writable, historized Number point (``writable``, ``his``,
``kind:"Number"``); give its id with ``--point`` or let the script find one. The user must
be an operator or an admin.

Usage: python haystackpy_client.py http://127.0.0.1:8080/api USER PASSWORD [--point ID]
       [--ws ws://127.0.0.1:8080/api/ws]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json

from hs_py.client import Client
from hs_py.encoding.scanner import city_to_tz
from hs_py.kinds import Number, Ref
from hs_py.ws_client import WebSocketClient


def _ref_id(value: object) -> str:
    """The id of a Ref cell, as haystack-py's pythonic rows give it."""
    if isinstance(value, Ref):
        return value.val
    text = str(value)
    return text[1:] if text.startswith("@") else text


async def http_checks(url: str, user: str, password: str, point: str | None) -> dict:
    out: dict = {}
    async with Client(url, user, password) as c:
        about = (await c.about())[0]
        out["about"] = {
            k: str(about[k]) for k in ("haystackVersion", "serverName", "productName", "tz")
        }
        out["ops"] = sorted(str(row["def"]) for row in await c.ops())
        out["formats"] = len(await c.formats())

        sites = await c.read("site")
        out["sites"] = len(sites)
        out["points_limited"] = len(await c.read("point", limit=5))
        site_id = _ref_id(sites[0]["id"])
        by_id = await c.read_by_ids([Ref(site_id), Ref("no-such-id")])
        out["read_by_ids"] = len(by_id)

        # haystack-py sends navId as a Str (the server accepts it as well as a Ref).
        out["nav_root"] = len(await c.nav())
        equips = await c.nav(f"@{site_id}")
        out["nav_site"] = len(equips)
        branch = next((row for row in equips if row.get("navId")), None)
        if branch is not None:
            out["nav_equip"] = len(await c.nav(f"@{_ref_id(branch['navId'])}"))

        if point is None:
            found = await c.read('writable and his and kind=="Number"', limit=1)
            if not found:
                raise SystemExit("no writable, historized Number point on the server")
            point = _ref_id(found[0]["id"])
        ref = Ref(point)
        out["point"] = point
        info = (await c.read_by_ids([ref]))[0]
        tz = str(info.get("tz") or about["tz"])
        unit = info.get("unit")

        # History: three samples an hour apart from local midnight today, in the point's
        # timezone (the spec forbids timezone conversion on hisWrite), read back.
        zone = city_to_tz(tz)
        today = datetime.datetime.now(zone).date()
        samples = [
            {
                "ts": datetime.datetime(today.year, today.month, today.day, h, tzinfo=zone),
                "val": Number(70.0 + h, unit),
            }
            for h in range(3)
        ]
        await c.his_write(ref, samples)
        his = await c.his_read(ref, "today", raw=True)
        out["his_today"] = len(his)
        out["his_meta_id"] = _ref_id(his.meta.get("id"))
        out["his_tz"] = tz

        # Priority array: write level 8 with a duration and level 16, then read it.
        await c.point_write(ref, 16, Number(65.0, unit), who="haystack-py")
        await c.point_write(
            ref, 8, Number(68.0, unit), who="haystack-py", duration=Number(30, "min")
        )
        array = await c.point_write_array(ref)
        out["priority_levels"] = len(array)
        level8 = next(row for row in array if int(row["level"]) == 8)
        out["level8"] = {"val": str(level8.get("val")), "who": level8.get("who")}

        # A watch sees the next write.
        sub = await c.watch_sub([ref], "haystack-py", raw=True)
        watch_id = sub.meta["watchId"]
        out["watch_sub_rows"] = len(sub)
        await c.point_write(ref, 8, None, who="haystack-py")
        changed = []
        for _ in range(50):
            changed = await c.watch_poll(watch_id)
            if changed:
                break
            await asyncio.sleep(0.05)
        out["watch_changes"] = len(changed)
        out["watch_refresh"] = len(await c.watch_poll(watch_id, refresh=True))
        await c.watch_close(watch_id)
    return out


async def ws_checks(url: str, user: str, password: str) -> dict:
    out: dict = {}
    async with WebSocketClient(url, username=user, password=password, heartbeat=0) as ws:
        about = (await ws.about())[0]
        out["ws_about"] = str(about["productName"])
        out["ws_sites"] = len(await ws.read("site"))
        out["ws_points_limited"] = len(await ws.read("point", limit=3))
        out["ws_nav_root"] = len(await ws.nav())
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("user")
    parser.add_argument("password")
    parser.add_argument("--point", default=None)
    parser.add_argument("--ws", default=None, help="WebSocket URL (default: URL + /ws)")
    args = parser.parse_args()
    out = await http_checks(args.url, args.user, args.password, args.point)
    ws_url = args.ws or args.url.replace("http", "ws", 1).rstrip("/") + "/ws"
    out.update(await ws_checks(ws_url, args.user, args.password))
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
