"""A tab on worker B that stops reading, watching a busy session hosted on worker A: B's relay
stops reading its channel, the channel fills (capacity 4), A's sends meet ChannelFull — and A
treats the tab as a slow one (lab.send_queue: dropped, resynced, closed 4408), bounded, with no
exception (docs/placement.md, "Backpressure")."""
from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path
from typing import Any

from lab import local_services
from lab.send_queue import CLOSE_TOO_SLOW
from tests.deploy.cluster import running_workers
from tests.deploy.sockets import health
from tests.lab.test_send_queue_daphne import Driver
from tests.raw_websocket import OP_CLOSE, RawTab, Visitor

LIMIT = 512 * 1024   # what A may hold for one tab
BUSY_S = 12


async def _scenario(a_url: str, b_url: str) -> dict[str, Any]:
    visitor = Visitor(a_url)
    session_id = await asyncio.to_thread(visitor.new_session, "busy")
    driver = Driver(await RawTab.open(a_url, session_id, visitor.cookie(), rcvbuf=1 << 20))
    await driver.command("create_topic", {"topic": "t", "partitions": 6, "replication_factor": 3})
    frozen = await RawTab.open(b_url, session_id, visitor.cookie(), rcvbuf=4096)   # relayed to A
    frozen.pause()
    stop = asyncio.get_running_loop().time() + BUSY_S
    while asyncio.get_running_loop().time() < stop:   # big records: frames of ~50 KB, faster than B's kernel buffers absorb
        await driver.command("produce", {"topic": "t", "values": ["x" * 2000] * 25, "acks": 1})
    during = health(a_url)
    frozen.resume()
    kinds, code = [], None
    while True:   # what the frozen tab gets once it reads again: a resync (`state`) or a close (4408)
        try:
            message = await frozen.receive(20)
        except (TimeoutError, ConnectionError):
            break
        if message.opcode == OP_CLOSE:
            code = frozen.close_code
            break
        kinds.append(message.json()["type"])
    frozen.close()
    driver.tab.close()
    return {"during": during, "kinds": kinds, "code": code, "driver_closed": driver.closed}


def test_a_relayed_tab_that_stops_reading_is_a_slow_tab_on_the_owner(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    # B's relay waits long for its browser (60 s), so what A does with a full channel shows.
    with running_workers(tmp_path, database_url, redis_url, count=2, KAFKA_LAB_CHANNEL_CAPACITY="4",
                         KAFKA_LAB_TAB_QUEUE_BYTES=str(LIMIT), KAFKA_LAB_MAX_RECORDS_PER_S="1000000",
                         each=[{"KAFKA_LAB_TAB_STALL_S": "4"}, {"KAFKA_LAB_TAB_STALL_S": "60"}]) as (a, b):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, _scenario(a.url, b.url)).result()
        logs = a.log() + b.log()

    stats = result["during"]["lab"]
    assert result["driver_closed"] is None, "the learner's own tab, which reads, was closed"
    assert stats["resyncs"] + stats["closed_slow"] >= 1, stats
    assert stats["tab_bytes_peak"] <= LIMIT + 1024 * 1024, stats   # a message over the limit at most
    assert result["code"] == CLOSE_TOO_SLOW or "state" in result["kinds"] or "hello" in result["kinds"], result
    assert "Traceback" not in logs and "ChannelFull" not in logs, logs[-4000:]
