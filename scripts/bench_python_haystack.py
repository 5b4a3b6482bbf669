"""Benchmark the Python Haystack API against haystack-py and phable (not a test).

Decoding into Python objects and history reads into DataFrames, interleaved in rounds.

Usage (after `make develop`, with `scripts/peers.sh py313` for haystack-py)::

    .venv/bin/python scripts/bench_python_haystack.py --rounds 3 --iterations 7
    .venv/bin/python scripts/bench_python_haystack.py --json > python-haystack.json

Each round runs every decoder on every example file (../shared/data/haystack/), then the
history cases; a cell is the median of the round medians. What is timed per file:

- ``buildwire``: ``haystack.decode(bytes)`` and reading ``grid.rows`` (every value a Python
  object of ``buildwire.haystack``);
- ``rust``: the same decode into the native grid only (no Python objects), the reference of
  what the conversion adds;
- ``haystack-py``: its decoder in its own Python 3.13 process
  (``crates/bench/peers/haystack_py_decode.py``);
- ``phable``: ``phable.io.ph_json.ph_from_json`` (its only parser: JSON files only).

History: a year of 15-minute samples of one point (35,040 rows) served by our server;
``his-read to DataFrame`` is ``client.his_read(...).to_pandas()`` (HTTP included),
``answer to DataFrame`` decodes the answer's Zinc text and builds the DataFrame, against
``rust decode of the answer``; phable's ``his_read_by_id(...).to_pandas()`` against the
same server for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from buildwire import _native, haystack

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "haystack"
PEER_PYTHON = REPO / ".peers" / "py313" / "bin" / "python"
PEER_SCRIPT = REPO / "crates" / "bench" / "peers" / "haystack_py_decode.py"
FILES = [f"{name}.{fmt}" for name in ("alpha", "bravo") for fmt in ("zinc", "json", "trio")]
POINT = 'ver:"3.0"\nid,dis,point,his,kind,unit,tz\n@p,"Power",M,M,"Number","kW","UTC"\n'


def timed(action: Callable[[], Any], iterations: int) -> list[float]:
    """Milliseconds of each call of ``action`` (after one untimed warm-up call).

    As in the haystack-py script, freeing the previous result is not timed.
    """
    result = action()
    out = []
    for _ in range(iterations):
        result = None
        start = time.perf_counter()
        result = action()
        out.append((time.perf_counter() - start) * 1e3)
    del result
    return out


def ours(data: bytes, fmt: str) -> Callable[[], Any]:
    """Decode into Python objects (rows read)."""
    return lambda: haystack.decode(data, fmt).rows


def rust(data: bytes, fmt: str) -> Callable[[], Any]:
    """Decode into the native grid only."""
    return lambda: _native.haystack_decode(data.decode("utf-8-sig"), fmt)


def phable_json(data: bytes) -> Callable[[], Any] | None:
    """Phable's JSON parser, when phable is installed."""
    try:
        from phable.io.ph_json import ph_from_json
    except ImportError:
        return None
    return lambda: ph_from_json(data.decode("utf-8"))


def haystack_py(path: Path, iterations: int) -> list[float] | str:
    """haystack-py's decode times of one file, or why there are none."""
    if not PEER_PYTHON.exists():
        return "not installed (scripts/peers.sh py313)"
    run = subprocess.run(
        [str(PEER_PYTHON), str(PEER_SCRIPT), str(path), "--time", str(iterations + 1)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    answer = json.loads(run.stdout or '{"error": "no output"}')
    if "error" in answer:
        return answer["error"]
    return answer["ms"][1:]


async def his_cases(url: str, iterations: int) -> dict[str, list[float]]:
    """Time the history cases against our server at ``url`` (point @p holds a year)."""
    out: dict[str, list[float]] = {}
    span = "2023-01-01,2023-12-31"
    async with haystack.Client.connect(url, "bench", "bench-secret") as client:
        samples: list[float] = []
        frame = None
        for _ in range(iterations + 1):
            frame = None
            start = time.perf_counter()
            frame = (await client.his_read("@p", span)).to_pandas()
            samples.append((time.perf_counter() - start) * 1e3)
        assert len(frame) == 35040
        out["his-read to DataFrame (HTTP included)"] = samples[1:]
        answer = haystack.encode(await client.his_read("@p", span), "zinc")
    out["answer to DataFrame"] = timed(
        lambda: haystack.decode(answer, "zinc").to_pandas(), iterations
    )
    out["rust decode of the answer"] = timed(
        lambda: _native.haystack_decode(answer, "zinc"), iterations
    )
    try:
        from phable import HaystackClient, Ref
    except ImportError:
        return out
    client = HaystackClient.open(url, "bench", "bench-secret", content_type="json")
    try:
        out["phable his_read_by_id to DataFrame (HTTP included)"] = timed(
            lambda: client.his_read_by_id(Ref("p"), dt.date(2023, 1, 1)).to_pandas(),
            iterations,
        )
    except Exception as error:  # a failing peer is a result, not a crash
        out["phable his_read_by_id to DataFrame (HTTP included)"] = []
        print(f"phable: {error}", file=sys.stderr)
    finally:
        client.close()
    return out


async def load_year(url: str) -> None:
    """Write a year of 15-minute samples to @p."""
    start = dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc)
    samples = [
        (start + dt.timedelta(minutes=15 * i), haystack.Number(float(i % 96), "kW"))
        for i in range(365 * 96)
    ]
    async with haystack.Client.connect(url, "bench", "bench-secret") as client:
        for chunk in range(0, len(samples), 10_000):
            await client.his_write("@p", samples[chunk : chunk + 10_000])


def main() -> None:
    """Run the rounds and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    folder = tempfile.TemporaryDirectory()
    tmp = Path(folder.name) / "point.zinc"
    tmp.write_text(POINT)
    server = subprocess.Popen(
        [sys.executable, "-m", "buildwire", "haystack", "serve", "--bind", "127.0.0.1:0",
         "--data", str(tmp), "--user", "bench:bench-secret:admin", "--iterations", "4096"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    url = server.stdout.readline().split()[2]
    asyncio.run(load_year(url))

    rounds: list[dict[str, dict[str, list[float] | str]]] = []
    try:
        for _ in range(args.rounds):
            this: dict[str, dict[str, list[float] | str]] = {}
            for name in FILES:
                path = DATA / name
                data = path.read_bytes()
                fmt = path.suffix.lstrip(".")
                row: dict[str, list[float] | str] = {
                    "buildwire": timed(ours(data, fmt), args.iterations),
                    "rust": timed(rust(data, fmt), args.iterations),
                    "haystack-py": haystack_py(path, args.iterations),
                }
                parse = phable_json(data) if fmt == "json" else None
                row["phable"] = timed(parse, args.iterations) if parse else "JSON only"
                this[name] = row
            this["history"] = dict(asyncio.run(his_cases(url, args.iterations)))
            rounds.append(this)
    finally:
        server.terminate()
        server.wait(timeout=10)
        folder.cleanup()

    def cell(section: str, key: str) -> float | str:
        values = [r[section][key] for r in rounds]
        if any(isinstance(v, str) or not v for v in values):
            return next((v for v in values if isinstance(v, str)), "failed")
        return statistics.median(statistics.median(v) for v in values)  # type: ignore[arg-type]

    report = {
        section: {key: cell(section, key) for key in rounds[0][section]} for section in rounds[0]
    }
    if args.json:
        print(json.dumps({"rounds": rounds, "medians": report}, indent=1))
        return
    print(f"median of {args.rounds} round medians, {args.iterations} iterations each (ms)")
    print(f"{'file':12} {'buildwire':>10} {'rust':>8} {'haystack-py':>12} {'x':>6} {'phable':>8}")
    for name in FILES:
        r = report[name]
        ours_ms, peer = r["buildwire"], r["haystack-py"]
        ratio = f"{peer / ours_ms:.1f}" if isinstance(peer, float) else "-"
        peer_text = f"{peer:.2f}" if isinstance(peer, float) else str(peer)[:30]
        phable = r["phable"]
        phable_text = f"{phable:.2f}" if isinstance(phable, float) else str(phable)
        print(
            f"{name:12} {ours_ms:10.2f} {r['rust']:8.2f} {peer_text:>12} {ratio:>6} "
            f"{phable_text:>8}"
        )
    for key, value in report["history"].items():
        text = f"{value:.2f}" if isinstance(value, float) else str(value)
        print(f"{key}: {text}")


if __name__ == "__main__":
    main()
