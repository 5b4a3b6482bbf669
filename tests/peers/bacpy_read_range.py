"""bac-py (Python 3.13) reading a Trend Log's log-buffer with ReadRange, for interoperability
tests: the record count, then ReadRange by position, by sequence number, by time and
without a range. Prints one JSON document with what bac-py decoded of each answer.

    python bacpy_read_range.py --port 47822 --target 127.0.0.1:47821 --log trend-log,1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from bac_py import Client
from bac_py.services.read_range import RangeByPosition, RangeBySequenceNumber, RangeByTime
from bac_py.types.primitives import BACnetDate, BACnetTime


def summary(ack: Any) -> dict[str, Any]:
    """The decoded ReadRange-ACK: flags, item count, first sequence number, data size."""
    flags = ack.result_flags
    return {
        "flags": [flags.first_item, flags.last_item, flags.more_items],
        "count": ack.item_count,
        "first_sequence": ack.first_sequence_number,
        "bytes": len(ack.item_data),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True, help="local UDP port")
    parser.add_argument("--target", required=True, help="device address HOST:PORT")
    parser.add_argument("--log", required=True, help="the trend log, e.g. trend-log,1")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    async with Client(
        instance_number=3998,
        interface="127.0.0.1",
        port=args.port,
        broadcast_address="127.255.255.255",
    ) as client:
        results["record_count"] = await client.read(args.target, args.log, "record-count")
        queries = {
            "position": RangeByPosition(reference_index=1, count=2),
            "position_backwards": RangeByPosition(reference_index=3, count=-2),
            "sequence": RangeBySequenceNumber(reference_sequence_number=2, count=100),
            # Every record is later than 2000-01-01.
            "time": RangeByTime(
                reference_date=BACnetDate(2000, 1, 1, 6),
                reference_time=BACnetTime(0, 0, 0, 0),
                count=2,
            ),
            "all": None,
        }
        for name, query in queries.items():
            ack = await client.read_range(
                args.target, args.log, "log-buffer", range_qualifier=query, timeout=10
            )
            results[name] = summary(ack)
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
