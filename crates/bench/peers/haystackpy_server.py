"""haystack-py's HTTP/WebSocket server (FastAPI + uvicorn) for interoperability tests and
the side-by-side benchmark: the in-memory backend loaded with one or more Hayson JSON
grids, SCRAM-SHA-256 for one user, on 127.0.0.1.

Prints ``ready`` on stdout once it accepts connections, then runs until killed.

    python haystackpy_server.py --port 8081 --user admin --password secret \\
        ../shared/data/haystack/alpha.json
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import uvicorn
from hs_py.auth_types import SimpleAuthenticator
from hs_py.encoding.json import decode_grid
from hs_py.fastapi_server import create_fastapi_app
from hs_py.storage.memory import InMemoryAdapter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data", nargs="*", type=Path, help="Hayson JSON grids to load")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", default="admin")
    parser.add_argument("--password", default="secret")
    parser.add_argument("--iterations", type=int, default=10_000, help="PBKDF2 iterations")
    parser.add_argument("--zinc-default", action="store_true", help="Zinc for */* (the spec)")
    args = parser.parse_args()

    entities = []
    for path in args.data:
        grid = decode_grid(path.read_bytes())
        entities.extend(dict(row) for row in grid)
    storage = InMemoryAdapter(entities)
    authenticator = SimpleAuthenticator({args.user: args.password}, iterations=args.iterations)
    app = create_fastapi_app(
        storage=storage,
        authenticator=authenticator,
        default_format="zinc" if args.zinc_default else "json",
    )
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                task.result()
                return
            await asyncio.sleep(0.05)
        print(f"ready {len(entities)} entities on http://127.0.0.1:{args.port}/api", flush=True)
        await task

    asyncio.run(serve())
    sys.exit(0)


if __name__ == "__main__":
    main()
