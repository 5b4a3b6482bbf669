"""Issue 25, safe inputs: the Python client parses values with the same Rust code as the
CLI, so a number a REAL cannot hold is refused with ValueError instead of being written as
infinity, and the device keeps its value."""

import math

import pytest

from buildwire import bacnet


async def test_a_real_out_of_range_is_refused_not_written_as_infinity() -> None:
    async with (
        bacnet.Server.start("127.0.0.1:0") as server,
        bacnet.Client.bind("127.0.0.1:0") as client,
    ):
        device = server.address
        before = await client.read(device, "av,1", "pv")
        for too_big in (3.4e39, -1e300, "1e400", "3.4e39"):
            with pytest.raises(ValueError, match="out of range for a real"):
                await client.write(device, "av,1", "pv", too_big, priority=8)
        after = await client.read(device, "av,1", "pv")
        assert after == before and math.isfinite(after)
        with pytest.raises(ValueError, match="out of range for a double"):
            await client.write(device, "av,1", "description", "1e400", value_type="double")
        # The largest REAL still goes through.
        await client.write(device, "av,1", "pv", 3.4e38, priority=8)
        assert await client.read(device, "av,1", "pv") == pytest.approx(3.4e38, rel=1e-6)
