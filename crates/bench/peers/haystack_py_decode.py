"""Times haystack-py's decoders on one file (run with the Python 3.13 of scripts/peers.sh).

Usage: python haystack_py_decode.py FILE --time N
Prints {"format", "rows", "ms": [N decode times]} or {"format", "error"} when decoding fails.

What is timed is the same for every decoder of the benchmark: from the file's bytes in memory
(so the UTF-8 decoding of the text is included) to a completely decoded grid; freeing the
previous iteration's grid is not timed.
"""

import json
import sys
import time
from pathlib import Path

from hs_py.encoding import json as hs_json
from hs_py.encoding import trio as hs_trio
from hs_py.encoding import zinc as hs_zinc


def main() -> None:
    """Decode the file N times and print the timings as JSON."""
    path = Path(sys.argv[1])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    fmt = path.suffix.lstrip(".")
    data = path.read_bytes()
    decode = {
        "zinc": lambda: hs_zinc.decode_grid(data.decode("utf-8")),
        "json": lambda: hs_json.decode_grid(data),
        "trio": lambda: hs_trio.parse_trio(data.decode("utf-8")),
    }[fmt]
    times = []
    rows = 0
    result = None
    try:
        for _ in range(count):
            # Free the previous grid before the clock starts.
            result = None
            start = time.perf_counter()
            result = decode()
            times.append((time.perf_counter() - start) * 1e3)
        rows = len(result) if isinstance(result, list) else len(result.rows)
    except Exception as error:  # noqa: BLE001 - a failing peer is a result, not a crash
        print(json.dumps({"format": fmt, "error": f"{type(error).__name__}: {error}"[:300]}))
        return
    print(json.dumps({"format": fmt, "rows": rows, "ms": times}))


if __name__ == "__main__":
    main()
