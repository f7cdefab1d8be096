"""`python -m lab.bench_browser [--seconds N] [--watch-seconds N] [--panel NAME] [--json]`: does a
real browser tab keep up with a busy session, and is a big session fast enough to watch?

It starts Daphne as `python -m lab.bench` does and opens sessions' pages (`/lab/<id>/`) in
headless Debian Chromium driven by Playwright, with the bench's Django session cookie so that the
page is the session owner's. The bench watches the same session from its own Autobahn socket:
both get the very same frames (the server makes each frame once for every tab), so the page can
be compared with the socket frame by frame, and with a fresh model from the server.

**Keeps up** (`--seconds`, default 10): the busy session of `python -m lab.bench`'s
`events_per_s` (clock live at 10×, two producers each sending 200 records as soon as the last
command is acknowledged, a 6-partition RF=3 topic on 3 brokers), its page at 1280×800:

- page_events_per_s / page_frames_per_s: what the page ingested (session.js counts it in
  `window.kafkaLab.stats`), next to socket_events_per_s / socket_frames_per_s.
- frame_lag_p50_ms / _p95_ms / _max_ms: wall time from the socket receiving a frame to the page
  having ingested the same frame (matched by its `step` and `time_ms`, as session.js notes the
  frames it ingested); both clocks are this machine's.
- main_thread_busy: the share of wall time the page's main thread ran tasks (Chromium's
  `Performance.getMetrics` TaskDuration, wall time: on a crowded machine it includes waiting for
  a core), of which ingest_share went to the frame handler; main_thread_cpu and renderer_cpu:
  the CPU time they used (ThreadTime, ProcessTime) per wall second; animation_frames_per_s: how
  often the page could draw, draws_per_s: how often it did (session.js paces its draws).
- heap_start_mb / heap_peak_mb / heap_end_mb: the JS heap after a GC before the load, its peak
  during it, and after a GC once the page has caught up; dom_nodes at the end.
- catch_up_s: how long after the producers stopped the page took to ingest the last frame the
  socket got; virtual_time_behind_ms: how far the page's clock was behind the stream then;
  replicas_drawn_wrong: once the clock is paused and the page has settled, replicas whose LEO or
  HW in the picture (data-leo, data-hw) differ from a fresh `state` — 0 when the view ended exact.

The page keeps up when it ingests at least 90 % of the socket's events per second, its p95 frame
lag stays under a second, and it catches up within two seconds.

**Fast enough to watch** (`--watch-seconds`, default 20; 0 skips it): a 9-broker session live at
10× — three topics (26 partitions, one with a long name), a consumer group polling by itself,
producers keeping it busy (batches back to back, and a "rate" producer sending one record per
command, as the page's Produce form does with a rate: one timeline mark per record) and a fault
every window (a broker killed in either crash mode and restarted, a link cut and healed, a
follower paused, a broker slowed). Its page at 1440×900, the event log open:

- fps_median: animation frames per second the page managed (requestAnimationFrame counted in the
  page), the median over the live seconds; target ≥ FPS_TARGET.
- long_task_share: the share of live wall time the main thread spent in long tasks (> 50 ms, a
  PerformanceObserver "longtask" in the page); target ≤ LONG_TASK_TARGET.
- drift_checks / drift_found: after every live window the producers hold, the clock pauses, and
  once the session has settled the bench compares (1) the page's model (`window.kafkaLab.model()`,
  lab-state.js modelSummary) with a fresh model from the server (a `snapshot` on the bench's
  socket: leaders, epochs, ISR, replicas, HW, LEO and log start per replica, alive, controller,
  groups, step), (2) the partitions table (`[data-partition-summary]`: data-leader, -isr, -hw,
  -leader-epoch) and (3) the picture's replica rows (data-leo, -hw, -isr, -role, -alive) with that
  model. A difference still there after DRIFT_SETTLE_S is one drift found (the first few are
  listed in drift_examples); must be 0.
- watch_windows: [fps, long-task share] of each live window (each follows a fault), to see
  whether a slow stretch is a moment or the whole run.
- watch_draws_per_s, watch_events_per_s, watch_elements: how often the page was drawn and how
  many events it took in per live second, and how many elements it held at the end;
  watch_main_thread_busy: the share of live wall time its main thread ran tasks (Chromium's
  TaskDuration); watch_server_cpu: the cores the server used meanwhile (they share the machine).

`--profile FILE` writes a CPU profile of the watch's live windows (Chrome DevTools' .cpuprofile
format) and prints the functions with the most self time. `--panel events` (or charts, group,
messages) opens that explorer tab in the keeps-up part. Daphne, Chromium and this process share
the machine's cores; nothing here is asserted (tests/e2e/test_bench_browser.py runs a short smoke
version).
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
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
FPS_TARGET = 50
LONG_TASK_TARGET = 0.10
WATCH_WINDOW_S = 2.0      # live between two drift checks
DRIFT_SETTLE_S = 2.0      # how long a difference may last once the paused session has settled (the page draws at its own pace)
WATCH_VIEWPORT = {"width": 1440, "height": 900}
_FRAME_HEAD = re.compile(rb'"type": "(events|state)", "frame": (\d+), "step": (\d+), "time_ms": (\d+)')

# From the page's first script on: every animation frame's time, and every long task.
_WATCH_THE_MAIN_THREAD = """
window.__benchAnimationFrames = 0;
window.__benchFrameTimes = [];
window.__benchLongTasks = [];
(function tick(now) {
  window.__benchAnimationFrames++;
  if (window.__benchFrameTimes.length < 200000) window.__benchFrameTimes.push(now);
  requestAnimationFrame(tick);
})(performance.now());
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__benchLongTasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
} catch (error) { window.__benchLongTasks = null; }
"""
_READ_REPLICAS = """() => Object.fromEntries(Array.from(document.querySelectorAll("[data-replica]"),
  (r) => [`${r.dataset.broker}:${r.dataset.topic}:${r.dataset.partition}`, [Number(r.dataset.leo), Number(r.dataset.hw)]]))"""
_READ_PAGE = """() => {
  const lab = window.kafkaLab;
  const s = lab ? lab.stats : null;
  return s ? {frames: s.frames, events: s.events, ingest_ms: s.ingestMs, draws: s.draws ?? 0, recent: s.recentFrames.slice(),
              frame: lab.app.view.frame, time_ms: lab.app.view.time_ms, animation_frames: window.__benchAnimationFrames} : null;
}"""
# What the page shows, for the drift checks: its model, the partitions table, the picture's rows.
_READ_SHOWN = """() => {
  const lab = window.kafkaLab;
  const table = {};
  for (const row of document.querySelectorAll("[data-partition-summary]")) {
    table[row.dataset.partitionSummary] = {leader: row.dataset.leader, isr: row.dataset.isr, hw: row.dataset.hw,
                                           epoch: row.dataset.leaderEpoch};
  }
  const picture = {};
  for (const r of document.querySelectorAll("[data-replica]")) {
    picture[`${r.dataset.broker}:${r.dataset.topic}-${r.dataset.partition}`] = {leo: r.dataset.leo, hw: r.dataset.hw,
      isr: r.dataset.isr, role: r.dataset.role, alive: r.dataset.alive};
  }
  return {frame: lab.app.view.frame, model: lab.model(), table, picture};
}"""
_READ_MAIN_THREAD = """() => ({frames: window.__benchFrameTimes.splice(0), long: window.__benchLongTasks ? window.__benchLongTasks.splice(0) : null,
  draws: window.kafkaLab.stats.draws, events: window.kafkaLab.stats.events, now: performance.now()})"""


# -- the socket's side --------------------------------------------------------------------------
class _Watch:
    """Wraps a lab.bench Tab's message handler (which parses only acks, errors and frames) to note
    when each `events` frame arrived — (step, time_ms) → wall-clock ms, the page's clock too
    (`performance.timeOrigin + performance.now()`), as session.js notes the frames it ingested —
    the newest frame's number and virtual time, and to hand over `state` messages."""

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.arrivals: dict[tuple[int, int], float] = {}
        self.frame = -1
        self.time_ms = 0
        self._state: asyncio.Future | None = None
        self._received = tab._received
        tab._received = self._noting

    def _noting(self, payload: bytes) -> None:
        head = _FRAME_HEAD.search(payload[:120])
        if head:
            self.frame, self.time_ms = max(self.frame, int(head.group(2))), int(head.group(4))
        if head and head.group(1) == b"events":
            self.arrivals.setdefault((int(head.group(3)), int(head.group(4))), time.time() * 1000)
        elif head and self._state is not None and not self._state.done():
            self._state.set_result(json.loads(payload))
        self._received(payload)

    async def snapshot(self) -> dict[str, Any]:
        """The session's `state` now (a `snapshot` answered to this tab only): frame, step, model."""
        self._state = asyncio.get_running_loop().create_future()
        self.tab.send(type="snapshot")
        return await asyncio.wait_for(self._state, 30)


# -- the page's side ----------------------------------------------------------------------------
async def _open_page(browser: Any, server: Server, session_id: str, panel: str, *, viewport: dict[str, int],
                     partitions: int) -> tuple[Any, Any, list[str]]:
    """The session's page, opened by its owner (the bench's cookies go into the browser first),
    a CDP session on it, and the list its uncaught errors go to."""
    context = await browser.new_context(viewport=viewport)
    await context.add_cookies([{"name": c.name, "value": c.value, "url": server.base_url} for c in server.cookies])
    await context.add_init_script(_WATCH_THE_MAIN_THREAD)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"{server.base_url}/lab/{session_id}/")
    await page.wait_for_function("document.querySelector('[data-conn-text]')?.textContent === 'connected'"
                                 f" && document.querySelectorAll('[data-partition-summary]').length === {partitions}",
                                 timeout=30_000)
    if panel:
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


async def _read(page: Any, cdp: Any, watch: _Watch) -> dict[str, Any]:
    """One reading of both tabs, taken as close together as the page allows."""
    tab = watch.tab
    socket = {"events": tab.events, "frames": tab.frames, "at": time.perf_counter(), "time_ms": watch.time_ms}
    return {"socket": socket, "page": await page.evaluate(_READ_PAGE), "metrics": await _metrics(cdp)}


def _lags(readings: list[dict[str, Any]], arrivals: dict[tuple[int, int], float]) -> list[float]:
    done: dict[tuple[int, int], float] = {}
    for reading in readings:
        for step, time_ms, at in reading["page"]["recent"]:
            done.setdefault((step, time_ms), at)
    return [at - arrivals[key] for key, at in done.items() if key in arrivals]


async def _replicas_drawn_wrong(page: Any, watch: _Watch) -> int:
    """Replicas whose LEO or HW, as the page draws them, differ from the session's state, once
    the paused session has sent everything (the pause's own catch-up included)."""
    await asyncio.sleep(SETTLE_S)
    model = (await watch.snapshot())["model"]
    truth = {f"{broker}:{p['topic']}:{p['partition']}": [rs["log_end_offset"], rs["high_watermark"]]
             for p in model["partitions"].values() if not p["topic"].startswith("__")
             for broker, rs in p["replica_states"].items()}
    drawn = await page.evaluate(_READ_REPLICAS)
    return sum(drawn.get(key) != value for key, value in truth.items()) + len(drawn.keys() - truth.keys())


async def _launch(playwright: Any) -> Any:
    return await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


# -- keeps up -------------------------------------------------------------------------------------
async def browser_keeps_up(server: Server, seconds: float, panel: str = "segments") -> dict[str, Any]:
    from playwright.async_api import async_playwright

    tab = await _open_tab(server, "browser", topic_partitions=6, count_events=True)
    watch = _Watch(tab)
    async with async_playwright() as playwright:
        browser = await _launch(playwright)
        try:
            page, cdp, errors = await _open_page(browser, server, tab.session_id, panel, partitions=6,
                                                 viewport={"width": 1280, "height": 800})
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
    readings = [await _read(page, cdp, watch)]
    load = asyncio.ensure_future(keep_busy(tab, seconds))
    while not load.done():
        await asyncio.wait({load}, timeout=SAMPLE_INTERVAL_S)
        readings.append(await _read(page, cdp, watch))
    await load
    loaded = readings[-1]
    last_frame = watch.frame
    tab.send(type="clock", action="pause")
    catch_up_s, behind_ms = await _catch_up(page, last_frame, readings)
    figures = _figures(readings, loaded, arrivals, heap_start, await _heap_after_gc_mb(cdp), catch_up_s, behind_ms)
    figures["replicas_drawn_wrong"] = await _replicas_drawn_wrong(page, watch)
    return figures


async def _catch_up(page: Any, last: int, readings: list[dict[str, Any]]) -> tuple[float | None, float]:
    """Seconds until the page has ingested frame `last`, the newest the socket got by the end of
    the load (None: not within CATCH_UP_LIMIT_S), and how far (virtual ms) its clock was behind
    the stream when the load ended."""
    start = time.perf_counter()
    behind_ms = float(max(0, readings[-1]["socket"]["time_ms"] - (readings[-1]["page"]["time_ms"] or 0)))
    while time.perf_counter() - start < CATCH_UP_LIMIT_S:
        page_now = await page.evaluate(_READ_PAGE)
        readings.append({"page": page_now})
        if page_now["frame"] >= last:
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
    }
    figures["keeps_up"] = bool(
        figures["page_events_per_s"] >= KEEPS_UP["events_share"] * figures["socket_events_per_s"]
        and figures["frame_lag_p95_ms"] < KEEPS_UP["frame_lag_p95_ms"]
        and catch_up_s is not None and catch_up_s <= KEEPS_UP["catch_up_s"])
    return figures


# -- fast enough to watch: the session ------------------------------------------------------------
WATCH_BROKERS = 9
WATCH_TOPICS = (  # (topic, partitions, replication factor, config)
    ("orders", 12, 3, {"min.insync.replicas": "2"}),
    ("payments", 6, 3, {}),
    ("clickstream.mobile-app.page-views-v2", 8, 2, {"segment.bytes": "4096"}),
)
WATCH_PARTITIONS = sum(partitions for _, partitions, _, _ in WATCH_TOPICS)
WATCH_FAULTS = (  # one per window, in turn: (command, args)
    ("kill_broker", {"broker": 4, "mode": "process"}),
    ("slow_broker", {"broker": 6, "delay_ms": 150}),
    ("partition_network", {"a": "broker-2", "b": "broker-7"}),
    ("restart_broker", {"broker": 4}),
    ("kill_broker", {"broker": 8, "mode": "power"}),
    ("heal_network", {"a": "broker-2", "b": "broker-7"}),
    ("pause_fetcher", {"broker": 3}),
    ("restart_broker", {"broker": 8}),
    ("resume_fetcher", {"broker": 3}),
    ("slow_broker", {"broker": 6, "delay_ms": 0}),
)


class _Producers:
    """What keeps the 9-broker session busy: batch producers, each sending its next batch as soon
    as the last is acknowledged, and a rate producer (one record per command, RATE_PER_S a wall
    second). `hold()` stops them between two commands and waits for those under way."""

    BATCH = 40
    RATE_PER_S = 20

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.running = asyncio.Event()
        self.under_way = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.stopped = False
        self.commands = Counter()
        self._tasks: list[asyncio.Task] = []

    def start(self) -> None:
        self.running.set()
        specs = [("orders", "all", self.BATCH, 0.0), ("payments", 1, self.BATCH, 0.0),
                 ("clickstream.mobile-app.page-views-v2", 1, self.BATCH, 0.0),
                 ("orders", "all", 1, 1 / self.RATE_PER_S)]
        self._tasks = [asyncio.ensure_future(self._produce(*spec)) for spec in specs]

    async def _produce(self, topic: str, acks: object, batch: int, pause_s: float) -> None:
        for n in itertools.count():
            await self.running.wait()
            if self.stopped:
                return
            self.under_way += 1
            self.idle.clear()
            try:
                values = [f"{topic[:3]}-{n}-{i}" for i in range(batch)]
                args = {"values": values} if batch > 1 else {"value": values[0], "key": f"k{n % 7}"}
                answer = await self.tab.command("produce", {"topic": topic, "acks": acks, **args})
                self.commands[answer.get("type", "?")] += 1
            finally:
                self.under_way -= 1
                if self.under_way == 0:
                    self.idle.set()
            await asyncio.sleep(pause_s)

    async def hold(self) -> None:
        self.running.clear()
        await self.idle.wait()

    def go(self) -> None:
        self.running.set()

    async def stop(self) -> None:
        self.stopped = True
        self.running.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def _watch_session(server: Server) -> tuple[Tab, _Watch]:
    session_id = await asyncio.to_thread(server.new_session, "watch", WATCH_BROKERS)
    tab = Tab(server, session_id)   # (not counting events: parsing every frame would take a core's share from the page)
    await tab.open()
    for topic, partitions, rf, config in WATCH_TOPICS:
        answer = await tab.command("create_topic", {"topic": topic, "partitions": partitions,
                                                    "replication_factor": rf, "config": config})
        if answer.get("type") != "ack":
            raise RuntimeError(f"create_topic {topic}: {answer}")
    return tab, _Watch(tab)


async def _join_consumers(tab: Tab) -> None:
    """A group of two consumers on `payments`, polling (and committing) by themselves."""
    for member in ("audit-1", "audit-2"):
        answer = await tab.command("consumer_join", {"group": "audit", "member": member, "topics": ["payments"],
                                                     "poll_every_ms": 500})
        if answer.get("type") != "ack":
            raise RuntimeError(f"consumer_join {member}: {answer}")


# -- fast enough to watch: the drift checks -------------------------------------------------------
def model_summary(model: dict[str, Any]) -> dict[str, Any]:
    """A server model in the shape of the page's `window.kafkaLab.model()` (lab-state.js modelSummary)."""
    partitions = {}
    for label, p in sorted(model["partitions"].items(), key=lambda item: (item[1]["topic"], item[1]["partition"])):
        partitions[label] = {
            "leader": p["leader"], "leader_epoch": p["leader_epoch"], "isr": p["isr"], "replicas": p["replicas"],
            "high_watermark": p["high_watermark"],
            "replica_states": {b: {k: r.get(k) for k in ("alive", "log_start_offset", "log_end_offset", "high_watermark")}
                               for b, r in p["replica_states"].items()}}
    groups = [{"group": g["group"], "state": g.get("state"), "generation": g.get("generation"),
               "members": [{"member": m.get("member"), "assignment": m.get("assignment")} for m in g.get("members") or []],
               "committed": g.get("committed")} for g in model.get("groups") or []]
    return {"step": model["step"], "time_ms": model["time_ms"], "seq": model["seq"], "controller": model["controller"],
            "brokers": sorted(({"id": b["id"], "alive": b["alive"], "controller": b["controller"]}
                               for b in model["brokers"]), key=lambda b: b["id"]),
            "partitions": partitions, "metadata": model.get("metadata"),
            "metadata_records": model.get("metadata_records", []), "controller_nodes": model.get("controller_nodes", []),
            "groups": groups}


def _table_truth(model: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {label: {"leader": str(p["leader"]), "isr": ",".join(map(str, p["isr"])), "hw": str(p["high_watermark"]),
                    "epoch": str(p["leader_epoch"])}
            for label, p in model["partitions"].items() if not p["internal"]}


def _picture_truth(model: dict[str, Any]) -> dict[str, dict[str, str]]:
    alive = {b["id"]: b["alive"] for b in model["brokers"]}
    rows = {}
    for label, p in model["partitions"].items():
        if p["internal"]:
            continue
        for b in sorted({*p["replicas"], *map(int, p["replica_states"])}):
            rep = p["replica_states"].get(str(b)) or {"alive": False, "log_end_offset": 0, "high_watermark": 0}
            rows[f"{b}:{label}"] = {"leo": str(rep["log_end_offset"]), "hw": str(rep["high_watermark"]),
                                    "isr": "true" if b in p["isr"] else "false",
                                    "role": "leader" if p["leader"] == b else "follower",
                                    "alive": "true" if rep["alive"] and alive.get(b, False) else "false"}
    return rows


def _differences(what: str, shown: Any, truth: Any, path: str = "") -> list[str]:
    """Where `shown` differs from `truth`, as "what path: shown != truth" lines."""
    if isinstance(truth, dict) and isinstance(shown, dict):
        out = []
        for key in sorted(truth.keys() | shown.keys(), key=str):
            out += _differences(what, shown.get(key, "<missing>"), truth.get(key, "<missing>"), f"{path}.{key}")
        return out
    if isinstance(truth, list) and isinstance(shown, list) and len(truth) == len(shown):
        return [d for i, (s, t) in enumerate(zip(shown, truth)) for d in _differences(what, s, t, f"{path}[{i}]")]
    return [] if shown == truth else [f"{what}{path}: page {json.dumps(shown)} != server {json.dumps(truth)}"]


async def _settled_state(watch: _Watch) -> dict[str, Any]:
    """A `state` once the paused session stopped moving (two snapshots at the same step and frame)."""
    before = await watch.snapshot()
    while True:
        await asyncio.sleep(0.25)
        now = await watch.snapshot()
        if (now["step"], now["frame"]) == (before["step"], before["frame"]):
            return now
        before = now


async def drift_check(page: Any, watch: _Watch) -> list[str]:
    """Compare what the page shows with the server's model at the same step; [] when they agree.
    The page may still be taking in the last frames or drawing them: it has DRIFT_SETTLE_S."""
    state = await _settled_state(watch)
    model = state["model"]
    truth = {"model": model_summary(model), "table": _table_truth(model), "picture": _picture_truth(model)}
    deadline = time.perf_counter() + DRIFT_SETTLE_S
    while True:
        shown = await page.evaluate(_READ_SHOWN)
        found = [] if shown["frame"] >= state["frame"] else [f"frame: page at {shown['frame']}, server at {state['frame']}"]
        for part in ("model", "table", "picture"):
            found += _differences(part, json.loads(json.dumps(shown[part])), truth[part])
        if not found or time.perf_counter() > deadline:
            return found
        await asyncio.sleep(0.1)


# -- fast enough to watch: the run ----------------------------------------------------------------
async def fast_enough_to_watch(server: Server, seconds: float, profile: Path | None = None,
                               panel: str = "events") -> dict[str, Any]:
    from playwright.async_api import async_playwright

    tab, watch = await _watch_session(server)
    tab.send(type="clock", action="play", speed=SPEED)
    await _join_consumers(tab)
    async with async_playwright() as playwright:
        browser = await _launch(playwright)
        try:
            page, cdp, errors = await _open_page(browser, server, tab.session_id, panel,
                                                 viewport=WATCH_VIEWPORT, partitions=WATCH_PARTITIONS)
            figures = await _watch(page, cdp, watch, seconds, profile, server)
            figures["watch_panel"] = panel
            figures["watch_page_errors"] = errors[:5]
        finally:
            await browser.close()
    await tab.close()
    return figures


async def _watch(page: Any, cdp: Any, watch: _Watch, seconds: float, profile: Path | None,
                 server: Server) -> dict[str, Any]:
    tab = watch.tab
    producers = _Producers(tab)
    producers.start()
    await asyncio.sleep(1.0)   # warm up: the first records, the page's first draws
    await page.evaluate(_READ_MAIN_THREAD)
    windows, samples, drift, faults = [], [], [], itertools.cycle(WATCH_FAULTS)
    cpu = Counter()   # seconds, over the live windows: the page's main thread (task time) and the server
    if profile is not None:
        await cdp.send("Profiler.enable")
        await cdp.send("Profiler.start")
    checks = max(1, round(seconds / WATCH_WINDOW_S))
    for _ in range(checks):
        before, server_before = await _metrics(cdp), server.cpu_s()
        start, draws, events = await page.evaluate(
            "[performance.now(), window.kafkaLab.stats.draws, window.kafkaLab.stats.events]")
        await asyncio.sleep(WATCH_WINDOW_S)
        samples.append(await page.evaluate(_READ_MAIN_THREAD))
        samples[-1]["draws"] -= draws
        samples[-1]["events"] -= events
        windows.append((start, samples[-1]["now"]))
        after = await _metrics(cdp)
        cpu["page"] += after.get("TaskDuration", 0) - before.get("TaskDuration", 0)
        cpu["server"] += server.cpu_s() - server_before
        await producers.hold()
        tab.send(type="clock", action="pause")
        drift.append(await drift_check(page, watch))
        command, args = next(faults)
        await tab.command(command, args)
        tab.send(type="clock", action="play", speed=SPEED)
        producers.go()
        await page.evaluate(_READ_MAIN_THREAD)   # what happened while paused does not count
    if profile is not None:
        _write_profile(profile, (await cdp.send("Profiler.stop"))["profile"])
    await producers.stop()
    tab.send(type="clock", action="pause")
    elements = await page.evaluate("document.getElementsByTagName('*').length")
    figures = _watch_figures(windows, samples, drift, elements, producers.commands)
    live_s = sum(end - start for start, end in windows) / 1000
    figures["watch_main_thread_busy"] = cpu["page"] / live_s
    figures["watch_server_cpu"] = cpu["server"] / live_s
    return figures


def _watch_figures(windows: list[tuple[float, float]], samples: list[dict[str, Any]], drift: list[list[str]],
                   elements: int, commands: Counter) -> dict[str, Any]:
    per_second: list[float] = []
    by_window: list[list[float]] = []   # [fps, long-task share] of each live window (after each fault)
    long_ms = 0.0
    for (start, end), sample in zip(windows, samples):
        times = [t for t in sample["frames"] if start <= t <= end]
        for second in range(int((end - start) // 1000)):
            a = start + 1000 * second
            per_second.append(sum(a <= t < a + 1000 for t in times))
        window_long = sum(max(0.0, min(s + d, end) - max(s, start)) for s, d in sample["long"] or [])
        long_ms += window_long
        by_window.append([round(len(times) * 1000 / (end - start), 1), round(window_long / (end - start), 3)])
    live_ms = sum(end - start for start, end in windows)
    found = [d for d in drift if d]
    return {
        "watch_seconds": round(live_ms / 1000, 2), "watch_brokers": WATCH_BROKERS, "watch_partitions": WATCH_PARTITIONS,
        "fps_median": statistics.median(per_second) if per_second else float("nan"),
        "fps_min": min(per_second, default=float("nan")),
        "long_task_share": long_ms / live_ms if live_ms and samples[0]["long"] is not None else float("nan"),
        "drift_checks": len(drift), "drift_found": len(found), "drift_examples": [d[:5] for d in found[:3]],
        "watch_windows": by_window,
        "watch_draws_per_s": sum(sample["draws"] for sample in samples) * 1000 / live_ms,
        "watch_events_per_s": sum(sample["events"] for sample in samples) * 1000 / live_ms,
        "watch_elements": elements, "watch_commands": dict(commands),
        "fast_enough": bool(per_second and statistics.median(per_second) >= FPS_TARGET
                            and live_ms and long_ms / live_ms <= LONG_TASK_TARGET and not found),
    }


def _write_profile(path: Path, profile: dict[str, Any]) -> None:
    path.write_text(json.dumps(profile))
    print(_profile_top(profile), file=sys.stderr)


def _profile_top(profile: dict[str, Any], top: int = 25) -> str:
    """The functions with the most self time in a .cpuprofile (samples × their intervals)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = profile.get("timeDeltas") or []
    self_ms: Counter = Counter()
    for sample, delta in zip(profile.get("samples") or [], deltas[1:] + [0]):
        frame = nodes[sample]["callFrame"]
        where = f"{frame['functionName'] or '(anonymous)'} {frame['url'].rsplit('/', 1)[-1]}:{frame['lineNumber'] + 1}"
        self_ms[where] += delta / 1000
    total = sum(self_ms.values()) or 1
    lines = [f"CPU profile: {total:.0f} ms sampled; most self time:"]
    lines += [f"  {ms:8.1f} ms {ms / total:5.1%}  {where}" for where, ms in self_ms.most_common(top)]
    return "\n".join(lines)


# -- the report -------------------------------------------------------------------------------
def report(figures: dict[str, Any]) -> str:
    lines = []
    if "seconds" in figures:
        lines += _keeps_up_report(figures)
    if "fps_median" in figures:
        lines += _watch_report(figures)
    lines.append(f"  machine: {figures['cpus']} CPUs, load average {figures['load_average']}")
    return "\n".join(lines)


def _keeps_up_report(f: dict[str, Any]) -> list[str]:
    lines = [(f"A browser tab on a busy session ({f['seconds']} s, clock live at {SPEED}×; "
             f"the page and this bench's socket share the machine)"),
             f"  events/s      socket {f['socket_events_per_s']:>9.0f}   page {f['page_events_per_s']:>9.0f}",
             f"  frames/s      socket {f['socket_frames_per_s']:>9.1f}   page {f['page_frames_per_s']:>9.1f}",
             (f"  frame lag     p50 {f['frame_lag_p50_ms']:.0f} ms · p95 {f['frame_lag_p95_ms']:.0f} ms · "
             f"max {f['frame_lag_max_ms']:.0f} ms (socket got it → page ingested it)"),
             (f"  main thread   busy {f['main_thread_busy']:.0%} (script {f['script_share']:.0%}, layout and style "
             f"{f['layout_and_style_share']:.0%}; ingesting frames {f['ingest_share']:.0%}) · "
             f"{f['animation_frames_per_s']:.0f} animation frames/s, {f['draws_per_s']:.0f} of them drew the page"),
             f"  CPU           main thread {f['main_thread_cpu']:.0%} of a core, renderer {f['renderer_cpu']:.0%}",
             (f"  JS heap       {f['heap_start_mb']:.1f} MB before → peak {f['heap_peak_mb']:.1f} MB → "
             f"{f['heap_end_mb']:.1f} MB after (GC'd) · {f['dom_nodes']} DOM nodes"),
             (f"  after the load: {_caught_up(f['catch_up_s'])}; its clock was "
             f"{f['virtual_time_behind_ms']:.0f} virtual ms behind; then "
             f"{f['replicas_drawn_wrong']} replica(s) drawn with another LEO or HW than the session's state"),
             (f"  {'keeps up' if f['keeps_up'] else 'FALLS BEHIND'} (page ≥ {KEEPS_UP['events_share']:.0%} of the "
             f"socket's events/s, p95 lag < {KEEPS_UP['frame_lag_p95_ms']} ms, caught up within "
             f"{KEEPS_UP['catch_up_s']} s)")]
    if f.get("page_errors"):
        lines.append(f"  page errors: {f['page_errors']}")
    return lines


def _met(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def _watch_report(f: dict[str, Any]) -> list[str]:
    lines = [(f"Watching a {f['watch_brokers']}-broker session ({f['watch_partitions']} partitions, live at {SPEED}×, "
             f"producers and faults; page at {WATCH_VIEWPORT['width']}×{WATCH_VIEWPORT['height']}, "
             f"{f['watch_seconds']} live s)"),
             (f"  fps_median       {f['fps_median']:>7.1f}   target >= {FPS_TARGET:<5} {_met(f['fps_median'] >= FPS_TARGET)}"
             f"   (slowest second {f['fps_min']:.0f})"),
             (f"  long_task_share  {f['long_task_share']:>7.3f}   target <= {LONG_TASK_TARGET:<5} "
             f"{_met(f['long_task_share'] <= LONG_TASK_TARGET)}"),
             f"  drift_checks     {f['drift_checks']:>7}",
             f"  drift_found      {f['drift_found']:>7}   target == 0     {_met(f['drift_found'] == 0)}",
             (f"  the page drew {f['watch_draws_per_s']:.0f} times a second, took in {f['watch_events_per_s']:.0f} "
             f"events a second; {f['watch_elements']} elements in the page; commands {f['watch_commands']}"),
             (f"  its main thread was busy {f['watch_main_thread_busy']:.0%} of the time; the server used "
             f"{f['watch_server_cpu']:.2f} of a core")]
    for example in f["drift_examples"]:
        lines += [f"    drift: {line}" for line in example]
    if f.get("watch_page_errors"):
        lines.append(f"  page errors: {f['watch_page_errors']}")
    return lines


def _caught_up(seconds: float | None) -> str:
    return f"caught up in {seconds:.2f} s" if seconds is not None else f"not caught up within {CATCH_UP_LIMIT_S:.0f} s"


async def measure(seconds: float, panel: str, watch_seconds: float, profile: Path | None = None,
                  watch_panel: str = "events") -> dict[str, Any]:
    figures: dict[str, Any] = {}
    if seconds > 0:
        with running_server() as server:
            figures.update(await browser_keeps_up(server, seconds, panel))
    if watch_seconds > 0:
        with running_server() as server:
            figures.update(await fast_enough_to_watch(server, watch_seconds, profile, watch_panel))
    figures["cpus"] = os.cpu_count()
    figures["load_average"] = round(os.getloadavg()[0], 2)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bench_browser", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="how long the keeps-up load runs (default 10; 0 skips it)")
    parser.add_argument("--watch-seconds", type=float, default=20.0,
                        help=f"live seconds of the 9-broker watch, a drift check every {WATCH_WINDOW_S:g} s "
                             "(default 20; 0 skips it)")
    parser.add_argument("--panel", choices=PANELS, default="segments",
                        help="the explorer tab open during the keeps-up load (default: segments)")
    parser.add_argument("--watch-panel", choices=PANELS, default="events",
                        help="the explorer tab open during the watch (default: events, the page's default)")
    parser.add_argument("--profile", type=Path, help="write a CPU profile of the watch here (.cpuprofile)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.seconds, args.panel, args.watch_seconds, args.profile, args.watch_panel))
    print(json.dumps(figures) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
