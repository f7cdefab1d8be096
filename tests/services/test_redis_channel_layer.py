"""channels_redis on a real Redis (the `redis_url` fixture): what several Daphne workers rely on.

A group spans layer instances (each worker process has its own), a specific channel made by one
process receives what another process sends to it, and a layer prefix keeps two runs sharing one
Redis apart. Every coroutine runs in a thread of its own (the suite's main thread may hold
Playwright's event loop).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from channels_redis.core import RedisChannelLayer

from lab.local_services import channel_layer_prefix

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
RECEIVE_TIMEOUT_S = 10.0
NOTHING_WITHIN_S = 1.0   # how long "nothing arrives" is watched for

# Another process: makes a specific channel, says its name, echoes the first message it receives
# back to the message's `reply_to` channel.
ECHO = """
import asyncio, json, sys
from channels_redis.core import RedisChannelLayer

async def main(url, prefix):
    layer = RedisChannelLayer(hosts=[url], prefix=prefix)
    mine = await layer.new_channel()
    print(json.dumps({"channel": mine}), flush=True)
    message = await asyncio.wait_for(layer.receive(mine), 30)
    await layer.send(message["reply_to"], {"type": "echo", "text": message["text"], "from": mine})
    await layer.flush()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def run_async(coroutine: Callable[[], Awaitable[Any]]) -> Any:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine()).result()


def layer(url: str, prefix: str) -> RedisChannelLayer:
    return RedisChannelLayer(hosts=[url], prefix=prefix)


async def _nothing_arrives(on: RedisChannelLayer, channel: str) -> bool:
    try:
        await asyncio.wait_for(on.receive(channel), NOTHING_WITHIN_S)
    except TimeoutError:
        return True
    return False


def test_a_group_send_from_one_layer_reaches_members_on_another(redis_url: str) -> None:
    prefix = channel_layer_prefix()

    async def scenario() -> tuple[dict, dict, bool]:
        worker_a, worker_b, sender = layer(redis_url, prefix), layer(redis_url, prefix), layer(redis_url, prefix)
        tab_a, tab_b = await worker_a.new_channel(), await worker_b.new_channel()
        await worker_a.group_add("lab-session", tab_a)
        await worker_b.group_add("lab-session", tab_b)
        await sender.group_send("lab-session", {"type": "lab.frame", "frame": 7})
        got_a = await asyncio.wait_for(worker_a.receive(tab_a), RECEIVE_TIMEOUT_S)
        got_b = await asyncio.wait_for(worker_b.receive(tab_b), RECEIVE_TIMEOUT_S)
        await worker_b.group_discard("lab-session", tab_b)
        await sender.group_send("lab-session", {"type": "lab.frame", "frame": 8})
        after_discard = await asyncio.wait_for(worker_a.receive(tab_a), RECEIVE_TIMEOUT_S)
        left_out = await _nothing_arrives(worker_b, tab_b)
        for each in (worker_a, worker_b, sender):
            await each.flush()
        return (got_a, got_b), after_discard, left_out

    (got_a, got_b), after_discard, left_out = run_async(scenario)

    assert got_a == got_b == {"type": "lab.frame", "frame": 7}
    assert after_discard == {"type": "lab.frame", "frame": 8}
    assert left_out, "a channel discarded from the group still got the group's message"


def test_a_specific_channel_receives_from_another_process(redis_url: str) -> None:
    prefix = channel_layer_prefix()
    echo = subprocess.Popen([sys.executable, "-c", ECHO, redis_url, prefix], cwd=REPO_ROOT, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = echo.stdout.readline()
        assert line, echo.stderr.read()
        theirs = json.loads(line)["channel"]

        async def scenario() -> dict:
            here = layer(redis_url, prefix)
            mine = await here.new_channel()
            await here.send(theirs, {"type": "ping", "text": "hello from the other worker", "reply_to": mine})
            answer = await asyncio.wait_for(here.receive(mine), RECEIVE_TIMEOUT_S)
            await here.flush()
            return answer

        answer = run_async(scenario)
        assert echo.wait(timeout=30) == 0, echo.stderr.read()
    finally:
        if echo.poll() is None:
            echo.kill()
            echo.wait()

    assert answer == {"type": "echo", "text": "hello from the other worker", "from": theirs}
    assert "!" in theirs, "not a process-specific channel"


def test_layers_with_different_prefixes_share_nothing(redis_url: str) -> None:
    async def scenario() -> bool:
        this_run, other_run = layer(redis_url, channel_layer_prefix()), layer(redis_url, channel_layer_prefix())
        tab = await this_run.new_channel()
        await this_run.group_add("lab-session", tab)
        await other_run.group_send("lab-session", {"type": "lab.frame", "frame": 1})
        isolated = await _nothing_arrives(this_run, tab)
        await this_run.flush()
        await other_run.flush()
        return isolated

    assert run_async(scenario), "a group_send under another prefix reached this run's group"
