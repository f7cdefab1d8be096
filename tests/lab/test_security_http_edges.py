"""The edges of the ASGI app a stranger can reach: `..` under /static/ is a 404 (not a 500), and a
WebSocket is accepted only from the page's own origin — scheme, host and port."""
from __future__ import annotations

import asyncio
import concurrent.futures

import pytest
from channels.testing import HttpCommunicator, WebsocketCommunicator


def _run(coroutine):
    """asyncio.run in a thread of its own: in the whole suite, Playwright's sync API (tests/e2e)
    keeps an event loop running in the main thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _status(path: str) -> int:
    from lab.asgi import application

    async def go() -> int:
        answer = await HttpCommunicator(application, "GET", path).get_response(timeout=10)
        return answer["status"]
    return _run(go())


@pytest.mark.parametrize("path", ["/static/../lab/settings.py", "/static/%2e%2e/lab/settings.py",
                                  "/static/css/../../../etc/passwd", "/static/..%2f..%2fetc/passwd"])
def test_dot_dot_under_static_is_not_found(path: str) -> None:
    assert _status(path) == 404


async def _accept(scope, receive, send) -> None:
    await receive()
    await send({"type": "websocket.accept"})


def _connects(origin: str, host: str = "localhost:8000") -> bool:
    from lab.origin_check import SameOriginValidator

    async def go() -> bool:
        communicator = WebsocketCommunicator(SameOriginValidator(_accept), "/ws/x",
                                             headers=[(b"host", host.encode()), (b"origin", origin.encode())])
        connected, _ = await communicator.connect(timeout=5)
        await communicator.disconnect()
        return connected
    return _run(go())


def test_a_websocket_from_the_page_s_own_origin_is_accepted() -> None:
    assert _connects("http://localhost:8000")


@pytest.mark.parametrize("origin", ["http://localhost:9999", "https://localhost:8000", "http://evil.example:8000",
                                    "null", ""])
def test_a_websocket_from_another_port_scheme_or_host_is_refused(origin: str) -> None:
    assert not _connects(origin)
