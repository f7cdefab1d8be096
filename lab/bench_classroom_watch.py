"""One broadcast, many watchers: how far behind the instructor they are, what each costs the
server, and whether any was ever shown another state than the instructor's at the same frame.

The instructor (a user with classroom.broadcast_session) makes a lab session through the form,
broadcasts it through /broadcasts/ (link open), and keeps it busy the way a demo does: the clock live at 1×, a record
produced every 200 ms, a broker killed a third of the way through and restarted at two thirds.
Watchers open `ws/watch/<token>/` spread over the workers round robin (most before the load, the
last tenth during it: a watcher joining mid-stream starts from a `hello` taken while frames
flow), and a few real Chromium pages open `/watch/<token>/` among them.

- lag: for every frame (frames are numbered per session, the same numbers on every socket), its
  arrival at a watcher minus its arrival at the instructor's tab, both on this host's clock.
- mismatches: every client keeps the model the way the page does (lab.bench_classroom_model:
  `hello`/`state` whole, `events` patches in order); at every DIGEST_EVERY-th frame a watcher's
  model digest is compared with the instructor's at the same frame (the instructor digests every
  frame), and once more at the end, the clock paused. A watcher counts once however many frames
  differ. The Chromium pages are checked at the end: the page's step and frame (its
  `window.kafkaLab`) against the instructor's.
- memory: the workers' RSS growth (VmRSS) from before the watchers opened to after the load,
  divided by the watchers.
"""
from __future__ import annotations

import asyncio
import json
import re
import statistics
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from lab.bench import Server, Tab, _p95
from lab.bench_classroom_model import PageModel
from lab.bench_classroom_servers import Workers

DIGEST_EVERY = 5
LATE_SHARE = 0.1          # the share of watchers that join while the load runs
OPEN_AT_ONCE = 20         # watcher sockets opened concurrently
SETTLE_S = 1.5
CATCH_UP_LIMIT_S = 20.0
WATCH_PATH = "/ws/watch/{token}/"
PAGE_PATH = "/watch/{token}/"
_READ_PAGE = """() => {
  const lab = window.kafkaLab;
  const view = lab && lab.app ? lab.app.view : null;
  return view ? {frame: view.frame, step: view.step, time_ms: view.time_ms} : null;
}"""


@dataclass
class ModelTab(Tab):
    """A tab that keeps the page's model and notes when each frame came."""
    digest_every: int = DIGEST_EVERY
    model: PageModel = field(default_factory=PageModel)
    arrivals: dict[int, float] = field(default_factory=dict)     # frame -> perf_counter
    digests: dict[int, dict[str, str]] = field(default_factory=dict)   # frame -> model digest after it
    base_frame: int = -1
    gaps: int = 0
    close_code: int | None = None
    close_codes: list = field(default_factory=list)               # every close, for the figures
    _state_waiter: asyncio.Future | None = None

    def _received(self, payload: bytes) -> None:
        now = time.perf_counter()
        message = json.loads(payload)
        kind = message.get("type")
        if kind in ("hello", "state"):
            if kind == "hello":
                self.model.apply_model(message["model"], message["frame"])
            else:
                self.model.apply_frame(message)
            self.base_frame = message["frame"]
            if kind == "hello" and self._ready is not None and not self._ready.done():
                self._ready.set_result(None)
            if self._state_waiter is not None and not self._state_waiter.done():
                self._state_waiter.set_result(message)
        elif kind == "events":
            frame = message["frame"]
            if frame <= self.model.frame:
                return                       # sealed before the model it has (lab.send_queue)
            if frame != self.model.frame + 1:
                self.gaps += 1               # as the page does: apply nothing, ask for a state
                self.send(type="snapshot")
                self.model.frame = 1 << 62
                return
            self.model.apply_frame(message)
            self.arrivals[frame] = now
            if frame % self.digest_every == 0:
                self.digests[frame] = self.model.digest()
        elif kind in ("ack", "error"):
            waiter = self._waiters.pop(message.get("id"), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(message)

    def _closed(self, code: int | None) -> None:
        self.close_code = code
        self.close_codes.append(code)
        super()._closed(code)

    def send(self, **message: object) -> None:
        if self.close_code is None:
            super().send(**message)
        elif message.get("type") == "command":
            raise ConnectionError(f"socket closed ({self.close_code})")

    async def reopen(self) -> None:
        """A new socket to the same place, as the page reconnects: it starts from a `hello`."""
        self.close_code, self._waiters = None, {}
        await self.open()

    async def snapshot(self, timeout: float = 30) -> dict[str, Any]:
        """A `state` for this tab alone (the page's resync)."""
        self._state_waiter = asyncio.get_running_loop().create_future()
        self.send(type="snapshot")
        return await asyncio.wait_for(self._state_waiter, timeout)


def start_broadcast(server: Server, session_id: str) -> str:
    """The instructor starts broadcasting a session through the form of /broadcasts/ (link open);
    returns the watch link's token (sync)."""
    page = server.opener.open(server.base_url + "/broadcasts/").read().decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode({"csrfmiddlewaretoken": csrf, "session": session_id, "link": "on"}).encode()
    try:
        server.opener.open(urllib.request.Request(server.base_url + "/broadcasts/", data,
                                                  headers={"Referer": server.base_url + "/broadcasts/"}))
    except urllib.error.HTTPError as redirect:   # 302 to /watch/<token>/ (not followed)
        if redirect.code == 302:
            return redirect.headers["Location"].rstrip("/").rsplit("/", 1)[1]
        raise
    raise RuntimeError("starting a broadcast did not redirect to its watch page")


async def broadcast_figures(workers: Workers, instructor: list[Server], watcher_servers: list[Server],
                            watchers: int, seconds: float, browsers: int) -> dict[str, Any]:
    teacher = ModelTab(instructor[0], await asyncio.to_thread(instructor[0].new_session, "broadcast"), digest_every=1)
    await teacher.open()
    await teacher.command("create_topic", {"topic": "t", "partitions": 3, "replication_factor": 3})
    token = await asyncio.to_thread(start_broadcast, instructor[0], teacher.session_id)
    teacher.send(type="clock", action="play", speed=1)
    await asyncio.sleep(1.0)
    rss_before = workers.rss_mb()
    headless = watchers - browsers
    early = headless - int(headless * LATE_SHARE)
    failed: list[str] = []
    clients = await _open_watchers(watcher_servers, token, 0, early, failed)
    pages = await _open_pages(watcher_servers, token, browsers)
    cpu_before, client_before, wall_before = workers.cpu_s(), time.process_time(), time.perf_counter()
    load = asyncio.ensure_future(_demo(teacher, seconds))
    await asyncio.sleep(seconds / 4)
    clients += await _open_watchers(watcher_servers, token, early, headless - early, failed)
    await load
    wall = time.perf_counter() - wall_before
    server_cpu, client_cpu = (workers.cpu_s() - cpu_before) / wall, (time.process_time() - client_before) / wall
    if teacher.close_code is not None:
        await teacher.reopen()
    teacher.send(type="clock", action="pause")
    await asyncio.sleep(SETTLE_S)
    rss_after = workers.rss_mb()
    caught_up = await _catch_up(teacher, clients)
    owner = (await asyncio.to_thread(workers.placement, [teacher.session_id])).get(teacher.session_id)
    figures = _compare(teacher, clients)
    if owner is not None and len(workers.workers) > 1:   # the lag of watchers on the session's worker, and the others'
        home = workers.workers[owner].base_url
        direct = _compare(teacher, [c for c in clients if c.server.base_url == home])
        tunnelled = _compare(teacher, [c for c in clients if c.server.base_url != home])
        figures.update(watcher_lag_p95_ms_on_owner=direct["watcher_lag_p95_ms"],
                       watcher_lag_p95_ms_tunnelled=tunnelled["watcher_lag_p95_ms"])
    figures.update(await _check_pages(pages, teacher))
    opened = len(clients) + (len(pages["pages"]) if pages else 0)
    figures.update(watchers=opened, watchers_failed=len(failed), watcher_failures=sorted(set(failed))[:4],
                   watcher_rss_mb=round((rss_after - rss_before) / max(1, opened), 3),
                   broadcast_frames=len(teacher.arrivals), broadcast_server_cpu=round(server_cpu, 2),
                   broadcast_client_cpu=round(client_cpu, 2), broadcast_seconds=seconds,
                   broadcast_workers=len(workers.alive()),
                   instructor_socket_closes=[c for c in teacher.close_codes], watchers_catch_up_s=caught_up)
    for client in [teacher, *clients]:
        await client.close()
    await _close_pages(pages)
    return figures


async def _open_watchers(servers: list[Server], token: str, first: int, count: int,
                         failed: list[str]) -> list[ModelTab]:
    """Watchers `first`… on the workers round robin; one that gets no `hello` is noted in `failed`
    (its worker and close code), not counted among the watchers."""
    opened: list[ModelTab] = []

    async def one(n: int) -> None:
        tab = ModelTab(servers[n % len(servers)], "", path=WATCH_PATH.format(token=token))
        try:
            await tab.open()
        except (TimeoutError, ConnectionError, OSError) as error:
            failed.append(f"worker {n % len(servers)}: {str(error) or type(error).__name__}")
            await tab.close()
            return
        opened.append(tab)
    for start in range(first, first + count, OPEN_AT_ONCE):
        await asyncio.gather(*(one(n) for n in range(start, min(first + count, start + OPEN_AT_ONCE))))
    return opened


async def _demo(teacher: ModelTab, seconds: float) -> None:
    """A record every 200 ms; broker 2 killed at a third of the time, restarted at two thirds."""
    start = time.perf_counter()
    faults = [(seconds / 3, "kill_broker", {"broker": 2}), (2 * seconds / 3, "restart_broker", {"broker": 2})]
    i = 0
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        try:
            if teacher.close_code is not None:
                await teacher.reopen()
            if faults and began - start >= faults[0][0]:
                await teacher.command(*faults[0][1:])
                faults.pop(0)
            await teacher.command("produce", {"topic": "t", "value": f"r{i}", "acks": 1})
        except (TimeoutError, ConnectionError):
            await asyncio.sleep(0.2)   # reconnect on the next round
            continue
        i += 1
        await asyncio.sleep(max(0.0, 0.2 - (time.perf_counter() - began)))


async def _catch_up(teacher: ModelTab, clients: list[ModelTab]) -> float | None:
    """Seconds until every open watcher has the instructor's last frame (None: not within
    CATCH_UP_LIMIT_S): a late frame's lag counts too, and the last frames are compared."""
    start = time.perf_counter()
    while time.perf_counter() - start < CATCH_UP_LIMIT_S:
        if all(c.model.frame >= teacher.model.frame for c in clients if c.close_code is None):
            return round(time.perf_counter() - start, 2)
        await asyncio.sleep(0.1)
    return None


def _compare(teacher: ModelTab, clients: list[ModelTab]) -> dict[str, Any]:
    lags: list[float] = []
    wrong_watchers = frames_compared = frames_wrong = behind = 0
    examples: list[str] = []
    final = teacher.model.digest()

    def differ(frame: int, digest: dict[str, str], reference: dict[str, str]) -> bool:
        if digest == reference:
            return False
        if len(examples) < 3:
            keys = sorted(k for k in digest.keys() | reference.keys() if digest.get(k) != reference.get(k))
            examples.append(f"frame {frame}: {', '.join(keys)}")
        return True
    for client in clients:
        for frame, at in client.arrivals.items():
            if frame in teacher.arrivals:
                lags.append((at - teacher.arrivals[frame]) * 1000)
        wrong = 0
        for frame, digest in client.digests.items():
            if frame > client.base_frame and frame in teacher.digests:
                frames_compared += 1
                wrong += differ(frame, digest, teacher.digests[frame])
        if client.model.frame == teacher.model.frame:
            frames_compared += 1
            wrong += differ(client.model.frame, client.model.digest(), final)
        else:
            behind += 1
        frames_wrong += wrong
        wrong_watchers += wrong > 0
    return {"watcher_lag_p95_ms": round(_p95(lags), 1) if lags else float("nan"),
            "watcher_lag_p50_ms": round(statistics.median(lags), 1) if lags else float("nan"),
            "watcher_lag_max_ms": round(max(lags), 1) if lags else float("nan"),
            "watcher_state_mismatches": wrong_watchers, "watcher_frames_compared": frames_compared,
            "watcher_frames_differing": frames_wrong, "watcher_differences": examples,
            "watchers_behind_at_end": behind,
            "watcher_gaps": sum(c.gaps for c in clients),
            "watchers_closed": sum(c.close_code is not None for c in clients),
            "watcher_close_codes": dict(Counter(str(c.close_code) for c in clients if c.close_code is not None))}


# -- real Chromium pages -------------------------------------------------------------------------
async def _open_pages(servers: list[Server], token: str, count: int) -> dict[str, Any] | None:
    if count <= 0:
        return None
    from playwright.async_api import async_playwright

    from lab.bench_browser import _launch
    playwright = await async_playwright().start()
    browser = await _launch(playwright)
    pages, errors = [], []
    for n in range(count):
        server = servers[n % len(servers)]
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        await page.goto(server.base_url + PAGE_PATH.format(token=token))
        pages.append(page)
    for page in pages:
        await page.wait_for_function("() => window.kafkaLab && window.kafkaLab.app"
                                     " && window.kafkaLab.app.view.frame >= 0",
                                     timeout=30_000)
    return {"playwright": playwright, "browser": browser, "pages": pages, "errors": errors}


async def _check_pages(pages: dict[str, Any] | None, teacher: ModelTab) -> dict[str, Any]:
    """Each page at the instructor's frame and step once the paused clock has settled (pages draw at
    their own pace: a few seconds' grace)."""
    if pages is None:
        return {"browser_watchers": 0, "browser_watchers_wrong": 0}
    wrong, shown = 0, []
    for page in pages["pages"]:
        reading = None
        for _ in range(50):
            reading = await page.evaluate(_READ_PAGE)
            if reading and reading["frame"] >= teacher.model.frame:
                break
            await asyncio.sleep(0.1)
        shown.append(reading)
        wrong += not reading or reading["frame"] != teacher.model.frame or reading["step"] != teacher.model.step
    return {"browser_watchers": len(pages["pages"]), "browser_watchers_wrong": wrong,
            "browser_page_errors": pages["errors"][:3]}


async def _close_pages(pages: dict[str, Any] | None) -> None:
    if pages is not None:
        await pages["browser"].close()
        await pages["playwright"].stop()
