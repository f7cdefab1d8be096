"""`python -m lab.bench_browser [--seconds N] [--panel NAME] [--json]`: does a real browser tab keep
up with a busy session's `events` stream?

It starts Daphne as `python -m lab.bench` does, makes the same busy session as its
`events_per_s` figure (clock live at 10×, two producers each sending 200 records as soon as the
last command is acknowledged, a 6-partition RF=3 topic on 3 brokers), and watches it from two
tabs at once: the bench's Autobahn socket, and the session's page (`/lab/<id>/`) in headless
Debian Chromium driven by Playwright, opened with the bench's Django session cookie so that it
is the session's owner. Both sockets get the very same frames (the server makes each frame once
for every tab), so the page can be compared with the socket frame by frame:

- page_events_per_s / page_frames_per_s: what the page ingested (session.js counts it in
  `window.kafkaLab.stats`), next to socket_events_per_s / socket_frames_per_s.
- frame_lag_p50_ms / _p95_ms / _max_ms: wall time from the socket receiving a frame to the page
  having ingested the same frame (matched by its `step` and `time_ms`); both clocks are this
  machine's.
- main_thread_busy: the share of wall time the page's main thread ran tasks (Chromium's
  `Performance.getMetrics` TaskDuration, wall time: on a crowded machine it includes waiting for
  a core), of which ingest_share went to the `events` handler; main_thread_cpu and renderer_cpu:
  the CPU time they used (ThreadTime, ProcessTime) per wall second; animation_frames_per_s: how
  often the page could draw, draws_per_s: how often it did (session.js paces its draws).
- heap_start_mb / heap_peak_mb / heap_end_mb: the JS heap after a GC before the load, its peak
  during it, and after a GC once the page has caught up; dom_nodes at the end.
- catch_up_s: how long after the producers stopped the page took to ingest the last frame the
  socket got; virtual_time_behind_ms: how far the page's clock was behind the stream then;
  replicas_drawn_wrong: once the clock is paused and the page has settled, replicas whose LEO or
  HW in the picture (data-leo, data-hw) differ from a fresh `state` snapshot — 0 when the view
  ended exact.

The page keeps up when it ingests at least 90 % of the socket's events per second, its p95 frame
lag stays under a second, and it catches up within two seconds. `--panel events` (or charts,
group, messages) opens that explorer tab first: the event log draws more than the default one.
Daphne, Chromium and this process share the machine's cores; nothing here is asserted
(tests/e2e/test_bench_browser.py runs a short smoke version).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from typing import Any

from lab.bench import Server, Tab, _open_tab, _p95, keep_busy, running_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
PANELS = ("segments", "group", "messages", "charts", "events")
SPEED = 10
SAMPLE_INTERVAL_S = 1.0
CATCH_UP_LIMIT_S = 30.0
SETTLE_S = 1.5  # for the last frame, and a `state` owed by a coalesced one (within a second)
KEEPS_UP = {"events_share": 0.9, "frame_lag_p95_ms": 1000, "catch_up_s": 2.0}
_FRAME_KEY = re.compile(rb'"step": (\d+), "time_ms": (\d+), "coalesced": \d+}\s*$')

# Counts animation frames from the page's first script on: how often the page could draw.
_COUNT_ANIMATION_FRAMES = """
window.__benchAnimationFrames = 0;
(function tick() { window.__benchAnimationFrames++; requestAnimationFrame(tick); })();
"""
_READ_REPLICAS = """() => Object.fromEntries(Array.from(document.querySelectorAll("[data-replica]"),
  (r) => [`${r.dataset.broker}:${r.dataset.topic}:${r.dataset.partition}`, [Number(r.dataset.leo), Number(r.dataset.hw)]]))"""
_READ_PAGE = """() => {
  const lab = window.kafkaLab;
  const s = lab ? lab.stats : null;
  return s ? {frames: s.frames, events: s.events, ingest_ms: s.ingestMs, draws: s.draws ?? 0, recent: s.recentFrames.slice(),
              time_ms: lab.app.view.time_ms, animation_frames: window.__benchAnimationFrames} : null;
}"""


# -- the socket's side --------------------------------------------------------------------------
class _Watch:
    """Wraps a lab.bench Tab's message handler (which parses only acks, errors and frames) to note
    when each `events` frame arrived — (step, time_ms) → wall-clock ms, the page's clock too
    (`performance.timeOrigin + performance.now()`) — and to hand over `state` messages."""

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.arrivals: dict[tuple[int, int], float] = {}
        self._state: asyncio.Future | None = None
        self._received = tab._received
        tab._received = self._noting

    def _noting(self, payload: bytes) -> None:
        head = payload[:40]
        if b'"type": "events"' in head:
            key = _FRAME_KEY.search(payload[-120:])
            if key:
                self.arrivals[(int(key.group(1)), int(key.group(2)))] = time.time() * 1000
        elif b'"type": "state"' in head and self._state is not None and not self._state.done():
            self._state.set_result(json.loads(payload)["state"])
        self._received(payload)

    async def snapshot(self) -> dict[str, Any]:
        """The session's state now (a `snapshot` answered to this tab only)."""
        self._state = asyncio.get_running_loop().create_future()
        self.tab.send(type="snapshot")
        return await asyncio.wait_for(self._state, 30)


# -- the page's side ----------------------------------------------------------------------------
async def _open_page(browser: Any, server: Server, session_id: str, panel: str) -> tuple[Any, Any, list[str]]:
    """The session's page, opened by its owner (the bench's cookies go into the browser first),
    a CDP session on it, and the list its uncaught errors go to."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    await context.add_cookies([{"name": c.name, "value": c.value, "url": server.base_url} for c in server.cookies])
    await context.add_init_script(_COUNT_ANIMATION_FRAMES)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"{server.base_url}/lab/{session_id}/")
    await page.wait_for_function("document.querySelector('[data-conn-text]')?.textContent === 'connected'"
                                 " && document.querySelectorAll('[data-partition-summary]').length === 6",
                                 timeout=30_000)
    if panel != "segments":
        await page.click(f"#tab-x-{panel}")
    cdp = await context.new_cdp_session(page)
    await cdp.send("Performance.enable")
    return page, cdp, errors


async def _metrics(cdp: Any) -> dict[str, float]:
    answer = await cdp.send("Performance.getMetrics")
    return {m["name"]: m["value"] for m in answer["metrics"]}


async def _heap_after_gc_mb(cdp: Any) -> float:
    await cdp.send("HeapProfiler.collectGarbage")
    return (await cdp.send("Runtime.getHeapUsage"))["usedSize"] / 2**20


async def _read(page: Any, cdp: Any, tab: Tab) -> dict[str, Any]:
    """One reading of both tabs, taken as close together as the page allows."""
    socket = {"events": tab.events, "frames": tab.frames, "at": time.perf_counter()}
    return {"socket": socket, "page": await page.evaluate(_READ_PAGE), "metrics": await _metrics(cdp)}


def _lags(readings: list[dict[str, Any]], arrivals: dict[tuple[int, int], float]) -> list[float]:
    done: dict[tuple[int, int], float] = {}
    for reading in readings:
        for step, time_ms, at in reading["page"]["recent"]:
            done[(step, time_ms)] = at
    return [at - arrivals[key] for key, at in done.items() if key in arrivals]


async def _replicas_drawn_wrong(page: Any, watch: _Watch) -> int:
    """Replicas whose LEO or HW, as the page draws them, differ from the session's state, once
    the paused session has sent everything (the pause's own catch-up included)."""
    await asyncio.sleep(SETTLE_S)
    state = await watch.snapshot()
    truth = {f"{broker}:{p['topic']}:{p['partition']}": [rs["log_end_offset"], rs["high_watermark"]]
             for p in state["partitions"] if not p["topic"].startswith("__")
             for broker, rs in p["replica_states"].items() if "log_end_offset" in rs}
    drawn = await page.evaluate(_READ_REPLICAS)
    return sum(drawn.get(key) != value for key, value in truth.items()) + len(drawn.keys() - truth.keys())


# -- the measurement ----------------------------------------------------------------------------
async def browser_keeps_up(server: Server, seconds: float, panel: str = "segments") -> dict[str, Any]:
    from playwright.async_api import async_playwright

    tab = await _open_tab(server, "browser", topic_partitions=6, count_events=True)
    watch = _Watch(tab)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page, cdp, errors = await _open_page(browser, server, tab.session_id, panel)
            figures = await _measure(page, cdp, watch, seconds)
            figures["page_errors"] = errors[:5]
        finally:
            await browser.close()
    await tab.close()
    return figures


async def _measure(page: Any, cdp: Any, watch: _Watch, seconds: float) -> dict[str, Any]:
    tab, arrivals = watch.tab, watch.arrivals
    heap_start = await _heap_after_gc_mb(cdp)
    tab.send(type="clock", action="play", speed=SPEED)
    await keep_busy(tab, 0.5)
    readings = [await _read(page, cdp, tab)]
    load = asyncio.ensure_future(keep_busy(tab, seconds))
    while not load.done():
        await asyncio.wait({load}, timeout=SAMPLE_INTERVAL_S)
        readings.append(await _read(page, cdp, tab))
    await load
    loaded = readings[-1]
    tab.send(type="clock", action="pause")
    catch_up_s, behind_ms = await _catch_up(page, arrivals, readings)
    figures = _figures(readings, loaded, arrivals, heap_start, await _heap_after_gc_mb(cdp), catch_up_s, behind_ms)
    figures["replicas_drawn_wrong"] = await _replicas_drawn_wrong(page, watch)
    return figures


async def _catch_up(page: Any, arrivals: dict[tuple[int, int], float],
                    readings: list[dict[str, Any]]) -> tuple[float | None, float]:
    """Seconds until the page has ingested the newest frame the socket got by the end of the
    load (None: not within CATCH_UP_LIMIT_S), and how far (virtual ms) its clock was behind that
    frame when the load ended."""
    start = time.perf_counter()
    last = max(arrivals, key=arrivals.get)
    behind_ms = float(max(0, last[1] - (readings[-1]["page"]["time_ms"] or 0)))
    while time.perf_counter() - start < CATCH_UP_LIMIT_S:
        page_now = await page.evaluate(_READ_PAGE)
        readings.append({"page": page_now})
        done = {(step, time_ms) for step, time_ms, _ in page_now["recent"]}
        if last in done or any(step > last[0] for step, _, _ in page_now["recent"]):
            return time.perf_counter() - start, behind_ms
        await asyncio.sleep(0.05)
    return None, behind_ms


def _figures(readings: list[dict[str, Any]], loaded: dict[str, Any], arrivals: dict[tuple[int, int], float],
             heap_start: float, heap_end: float, catch_up_s: float | None, behind_ms: float) -> dict[str, Any]:
    first = readings[0]
    wall = loaded["socket"]["at"] - first["socket"]["at"]

    def rate(side: str, name: str) -> float:
        return (loaded[side][name] - first[side][name]) / wall

    def share(metric: str) -> float:
        return (loaded["metrics"].get(metric, 0) - first["metrics"].get(metric, 0)) / wall
    lags = _lags(readings, arrivals)
    figures: dict[str, Any] = {
        "seconds": round(wall, 2),
        "socket_events_per_s": rate("socket", "events"), "socket_frames_per_s": rate("socket", "frames"),
        "page_events_per_s": rate("page", "events"), "page_frames_per_s": rate("page", "frames"),
        "frame_lag_p50_ms": statistics.median(lags) if lags else float("nan"),
        "frame_lag_p95_ms": _p95(lags), "frame_lag_max_ms": max(lags, default=float("nan")),
        "main_thread_busy": share("TaskDuration"), "main_thread_cpu": share("ThreadTime"),
        "renderer_cpu": share("ProcessTime"), "script_share": share("ScriptDuration"),
        "layout_and_style_share": share("LayoutDuration") + share("RecalcStyleDuration"),
        "ingest_share": rate("page", "ingest_ms") / 1000, "animation_frames_per_s": rate("page", "animation_frames"),
        "draws_per_s": rate("page", "draws"),
        "heap_start_mb": heap_start, "heap_end_mb": heap_end,
        "heap_peak_mb": max(r["metrics"]["JSHeapUsedSize"] for r in readings if "metrics" in r) / 2**20,
        "dom_nodes": int(loaded["metrics"].get("Nodes", 0)),
        "catch_up_s": catch_up_s, "virtual_time_behind_ms": behind_ms,
        "cpus": os.cpu_count(), "load_average": round(os.getloadavg()[0], 2),
    }
    figures["keeps_up"] = bool(
        figures["page_events_per_s"] >= KEEPS_UP["events_share"] * figures["socket_events_per_s"]
        and figures["frame_lag_p95_ms"] < KEEPS_UP["frame_lag_p95_ms"]
        and catch_up_s is not None and catch_up_s <= KEEPS_UP["catch_up_s"])
    return figures


# -- the report -------------------------------------------------------------------------------
def report(figures: dict[str, Any]) -> str:
    f = figures
    lines = [f"A browser tab on a busy session ({f['seconds']} s, clock live at {SPEED}×; "
             f"the page and this bench's socket share the machine)",
             f"  events/s      socket {f['socket_events_per_s']:>9.0f}   page {f['page_events_per_s']:>9.0f}",
             f"  frames/s      socket {f['socket_frames_per_s']:>9.1f}   page {f['page_frames_per_s']:>9.1f}",
             f"  frame lag     p50 {f['frame_lag_p50_ms']:.0f} ms · p95 {f['frame_lag_p95_ms']:.0f} ms · "
             f"max {f['frame_lag_max_ms']:.0f} ms (socket got it → page ingested it)",
             f"  main thread   busy {f['main_thread_busy']:.0%} (script {f['script_share']:.0%}, layout and style "
             f"{f['layout_and_style_share']:.0%}; ingesting frames {f['ingest_share']:.0%}) · "
             f"{f['animation_frames_per_s']:.0f} animation frames/s, {f['draws_per_s']:.0f} of them drew the page",
             f"  CPU           main thread {f['main_thread_cpu']:.0%} of a core, renderer {f['renderer_cpu']:.0%}",
             f"  JS heap       {f['heap_start_mb']:.1f} MB before → peak {f['heap_peak_mb']:.1f} MB → "
             f"{f['heap_end_mb']:.1f} MB after (GC'd) · {f['dom_nodes']} DOM nodes",
             f"  after the load: {_caught_up(f['catch_up_s'])}; its clock was "
             f"{f['virtual_time_behind_ms']:.0f} virtual ms behind; then "
             f"{f['replicas_drawn_wrong']} replica(s) drawn with another LEO or HW than the session's state",
             f"  {'keeps up' if f['keeps_up'] else 'FALLS BEHIND'} (page ≥ {KEEPS_UP['events_share']:.0%} of the "
             f"socket's events/s, p95 lag < {KEEPS_UP['frame_lag_p95_ms']} ms, caught up within "
             f"{KEEPS_UP['catch_up_s']} s)",
             f"  machine: {f['cpus']} CPUs, load average {f['load_average']}"]
    if f.get("page_errors"):
        lines.append(f"  page errors: {f['page_errors']}")
    return "\n".join(lines)


def _caught_up(seconds: float | None) -> str:
    return f"caught up in {seconds:.2f} s" if seconds is not None else f"not caught up within {CATCH_UP_LIMIT_S:.0f} s"


async def measure(seconds: float, panel: str) -> dict[str, Any]:
    with running_server() as server:
        return await browser_keeps_up(server, seconds, panel)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bench_browser", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the load runs (default 10)")
    parser.add_argument("--panel", choices=PANELS, default="segments",
                        help="the explorer tab open during the run (default: segments, the page's default)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.seconds, args.panel))
    print(json.dumps(figures) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
