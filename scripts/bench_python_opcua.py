"""Time the Python OPC UA client and server bindings (not a test; under a minute).

Usage (after ``make develop``)::

    .venv/bin/python scripts/bench_python_opcua.py
    .venv/bin/python scripts/bench_python_opcua.py --reads 1000 --changes 5000 --json

Starts ``buildwire opcua serve --simulate 100 --simulate-interval 10ms`` on 127.0.0.1 (a
port of its own) in a child process, then times through ``buildwire.opcua.Client``:

- ``read``: ``client.read(...)`` of 10 simulated Double points, ``--reads`` times, one after
  the other (each a round trip over loopback);
- ``browse``: ``client.browse("ns=1;s=Simulation")`` (100 references), ``--browses`` times;
- ``subscription``: ``client.subscribe(...)`` on the 100 points, sampling every 10 ms and
  publishing every 50 ms (so the server offers 10,000 changes a second); the time to take
  ``--changes`` data changes (``DataChange`` objects with datetimes) once the first has
  arrived;

and in this process, ``Server.get_value`` of a Double ``--gets`` times. Each case gives the
wall time and the CPU time of this process (all its threads: the tokio driver too) per call;
the CPU time is the steadier figure on a busy machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from typing import Any

from buildwire import opcua


def start_server() -> tuple[subprocess.Popen[str], str]:
    """Run ``buildwire opcua serve`` on a free loopback port; return it and its endpoint."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "buildwire",
            "opcua",
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--simulate",
            "100",
            "--simulate-interval",
            "10ms",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        for word in line.split():
            if word.startswith("opc.tcp://"):
                return process, word
    process.kill()
    raise RuntimeError("the server printed no endpoint")


def figures(count: int, elapsed: float, cpu: float) -> dict[str, Any]:
    """Wall and CPU time (of this process, every thread) per call, in microseconds."""
    return {
        "calls": count,
        "seconds": elapsed,
        "per_call_us": elapsed / count * 1e6,
        "cpu_per_call_us": cpu / count * 1e6,
    }


async def bench_client(endpoint: str, reads: int, browses: int, changes: int) -> dict[str, Any]:
    """Time reads, browses and a subscription burst against ``endpoint``."""
    nodes = [f"ns=1;s=Sim.{i}" for i in range(10)]
    points = [f"ns=1;s=Sim.{i}" for i in range(100)]
    results: dict[str, Any] = {}
    async with opcua.Client.connect(endpoint) as client:
        await client.read(*nodes)  # warm-up
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(reads):
            values = await client.read(*nodes)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        assert len(values) == 10 and all(isinstance(v, float) for v in values)
        results["read"] = figures(reads, elapsed, cpu)

        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(browses):
            refs = await client.browse("ns=1;s=Simulation")
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        assert len(refs) == 100
        results["browse"] = figures(browses, elapsed, cpu)

        async with client.subscribe(
            *points, interval=0.05, sampling=0.01, queue=100
        ) as subscription:
            first = await subscription.next(timeout=10.0)
            assert first is not None and first.source_timestamp is not None
            started, cpu = time.perf_counter(), time.process_time()
            taken = 0
            async for change in subscription:
                assert change.source_timestamp is not None
                taken += 1
                if taken == changes:
                    break
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu
        results["subscription"] = figures(changes, elapsed, cpu)
        results["subscription"]["changes_per_s"] = changes / elapsed
    return results


async def bench_server(gets: int) -> dict[str, Any]:
    """Time ``Server.get_value`` of a Double in this process."""
    async with opcua.Server.start("127.0.0.1:0") as server:
        ns = server.add_namespace("urn:bench")
        node = server.add_variable("i=85", f"ns={ns};s=X", "X", 1.5)
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(gets):
            value = server.get_value(node)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        assert value == 1.5
    return figures(gets, elapsed, cpu)


def main() -> None:
    """Run every case and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reads", type=int, default=1000)
    parser.add_argument("--browses", type=int, default=200)
    parser.add_argument("--changes", type=int, default=10000)
    parser.add_argument("--gets", type=int, default=10000)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    process, endpoint = start_server()
    try:
        results = asyncio.run(bench_client(endpoint, args.reads, args.browses, args.changes))
    finally:
        process.terminate()
        process.wait(timeout=10)
    results["get_value"] = asyncio.run(bench_server(args.gets))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, result in results.items():
        shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}
        print(f"{name:13} {shown}")


if __name__ == "__main__":
    main()
