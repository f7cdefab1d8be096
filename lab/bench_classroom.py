"""`python -m lab.bench_classroom [--json] [--quick]`: the classroom's figures (issue 13), measured
through real Daphne workers over a real PostgreSQL and Redis on loopback.

It starts what it needs — a fresh PostgreSQL database and a Redis database (lab.local_services:
the machine's servers, or private ones), migrated once, then Daphne workers with DATABASE_URL and
REDIS_URL (placement on: docs/placement.md) — and stops it all at the end. Sockets are spread
over the workers' ports round robin, as a front proxy would.

- One broadcast (lab/bench_classroom_watch.py): an instructor's session live at 1×, a record every
  200 ms, a broker killed and restarted; `watchers` watchers on `ws/watch/<token>/` (a few of them
  real Chromium pages on `/watch/<token>/`), spread round robin — most of them tunnelled to the
  session's worker. The same broadcast is measured again on one worker (`…_1_worker`) and on the
  four balanced by session as deploy/nginx.conf does (`…_by_session`: all on one worker).
  `watcher_lag_p95_ms`: a frame's arrival at a watcher minus its arrival at the instructor's tab;
  `watcher_state_mismatches`: watchers whose model (kept as the page keeps it) differed from the
  instructor's at the same frame, ever; `watcher_rss_mb`: the workers' RSS growth per watcher.
- Sessions (lab/bench_classroom_scale.py): `sessions_1_worker` and `sessions_4_workers`, the most
  sessions live at 1× with a record every 200 ms each whose command → ack p95 stays under 100 ms,
  searched the same way (the same levels, the same database and Redis kinds) on one worker and on
  four; `command_p95_ms` is the p95 at the four workers' figure. `sessions_1_process_sqlite` is
  lab.bench's own one-process set-up (SQLite, no Redis, no placement) searched the same way.
- Failover: four workers, sessions producing, one worker `kill -9`ed: `failover_s`, until every
  session it held answered a command again through another worker; each checked identical to a
  replay of its database log at the same step, with every acknowledged record in that log.

The workers and this client share the machine's cores (`cpus` says how many): on two cores, four
workers have no more CPU than one, and the figures say so. Timings are never asserted
(tests/lab/test_bench_classroom.py runs a tiny smoke version).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Any

from lab.bench import running_server
from lab.bench_classroom_scale import SESSION_LEVELS, active_sessions_on, failover_figures
from lab.bench_classroom_servers import fresh_database, instructor_cookies, redis_url, running_workers
from lab.bench_classroom_watch import broadcast_figures

TARGETS = {"watcher_lag_p95_ms": ("<", 250), "watcher_state_mismatches": ("==", 0),
           "sessions_4_workers": (">=", 200), "command_p95_ms": ("<", 100), "failover_s": ("<=", 5)}
WORKERS = 4
SESSION_SETS = {"1_process_sqlite": "1 process as lab.bench runs it (SQLite, no Redis, no placement)",
                "1_worker": "1 worker", "4_workers": "4 workers"}
BY_SESSION_WORKER = 2   # where a hash of the session id would send its sockets (any one worker will do)
# The broadcast measured on one worker too, and on four balanced by session (no tunnel between a
# watcher and the session's engine in either).
ONE_WORKER_BROADCAST = ("watchers", "watcher_lag_p95_ms", "watcher_state_mismatches", "watcher_rss_mb",
                        "watchers_failed")


@dataclass(frozen=True)
class Sizes:
    watchers: int
    browsers: int
    broadcast_s: float
    levels: tuple[int, ...]
    level_s: float
    failover_sessions: int


FULL = Sizes(watchers=200, browsers=2, broadcast_s=20.0, levels=SESSION_LEVELS, level_s=4.0, failover_sessions=40)
QUICK = Sizes(watchers=4, browsers=1, broadcast_s=3.0, levels=(2,), level_s=1.0, failover_sessions=4)


async def measure(sizes: Sizes) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    redis = redis_url()
    with fresh_database() as database, running_workers(1, database_url=database, redis=redis) as one:
        jar, _ = await asyncio.to_thread(instructor_cookies, one)
        alone = await broadcast_figures(one, one.visitor(jar), one.visitor(), sizes.watchers, sizes.broadcast_s, 0)
        figures.update({f"{key}_1_worker": alone[key] for key in ONE_WORKER_BROADCAST})
        found = await active_sessions_on(one.cpu_s, one.visitor(), sizes.levels, sizes.level_s)
        figures.update(sessions_1_worker=found["sessions"], sessions_by_count_1_worker=found["by_count"])
    with fresh_database() as database, running_workers(WORKERS, database_url=database, redis=redis_url()) as four:
        jar, _ = await asyncio.to_thread(instructor_cookies, four)
        figures.update(await broadcast_figures(four, four.visitor(jar), four.visitor(), sizes.watchers,
                                               sizes.broadcast_s, sizes.browsers))
        # As deploy/nginx.conf balances (hash of ?session=): every socket of the session on one worker.
        home = BY_SESSION_WORKER
        hashed = await broadcast_figures(four, four.visitor(jar)[home:home + 1], four.visitor()[home:home + 1],
                                         sizes.watchers, sizes.broadcast_s, 0)
        figures.update({f"{key}_by_session": hashed[key] for key in ONE_WORKER_BROADCAST})
        found = await active_sessions_on(four.cpu_s, four.visitor(), sizes.levels, sizes.level_s)
        figures.update(sessions_4_workers=found["sessions"], sessions_by_count_4_workers=found["by_count"])
        at = found["sessions"] or min(found["by_count"])
        figures["command_p95_ms"] = found["by_count"][at]["p95_ms"]
        figures.update(await failover_figures(four, four.visitor(), database, sizes.failover_sessions))
    # lab.bench's own one-process figure, searched the same way: SQLite, the in-memory layer, no placement.
    with running_server() as server:
        found = await active_sessions_on(server.cpu_s, [server], sizes.levels, sizes.level_s)
        figures.update(sessions_1_process_sqlite=found["sessions"],
                       sessions_by_count_1_process_sqlite=found["by_count"])
    figures.update(workers=WORKERS, redis=redis.rsplit("/", 1)[0], postgresql=database.rsplit("/", 1)[0],
                   cpus=os.cpu_count(), load_average=round(os.getloadavg()[0], 2))
    return figures


def _met(value: Any, op: str, target: float) -> bool:
    if not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
        return False
    return {"<": value < target, "<=": value <= target, ">=": value >= target, "==": value == target}[op]


def report(figures: dict[str, Any]) -> str:
    lines = [f"Kafka Lab classroom figures ({figures.get('workers', WORKERS)} workers, PostgreSQL and Redis on "
             f"loopback; workers and client share {figures.get('cpus')} CPUs)"]
    for key, (op, target) in TARGETS.items():
        if key in figures:
            lines.append(f"  {key:28} {figures[key]:>10}   target {op} {target:<5} "
                         f"{'ok' if _met(figures[key], op, target) else 'MISSED'}")
    if "watchers" in figures:
        lines.append(f"  broadcast: {figures['watchers']} watchers ({figures['browser_watchers']} Chromium pages, "
                     f"{figures['browser_watchers_wrong']} not at the instructor's step at the end), "
                     f"{figures['broadcast_frames']} frames in {figures['broadcast_seconds']:g} s; lag p50 "
                     f"{figures['watcher_lag_p50_ms']} ms, max {figures['watcher_lag_max_ms']} ms "
                     f"(p95 on the session's worker {figures.get('watcher_lag_p95_ms_on_owner')} ms, tunnelled from "
                     f"the others {figures.get('watcher_lag_p95_ms_tunnelled')} ms); "
                     f"{figures['watcher_frames_compared']} frames compared, {figures['watcher_frames_differing']} "
                     f"differing; {figures['watcher_rss_mb']} MB of server memory per watcher; server "
                     f"{figures['broadcast_server_cpu']} CPU, this client {figures['broadcast_client_cpu']} CPU")
        if figures.get("watchers_failed") or figures.get("watchers_behind_at_end"):
            lines.append(f"    {figures['watchers_failed']} watchers could not open "
                         f"({', '.join(figures['watcher_failures'])}), "
                         f"{figures['watchers_behind_at_end']} were behind at the end, closed: "
                         f"{figures['watcher_close_codes']}")
    if "watchers_by_session" in figures:
        lines.append(f"  the same broadcast on 4 workers balanced by session (deploy/nginx.conf): "
                     f"{figures['watchers_by_session']} watchers ({figures['watchers_failed_by_session']} could not "
                     f"open), lag p95 {figures['watcher_lag_p95_ms_by_session']} ms, "
                     f"{figures['watcher_state_mismatches_by_session']} shown another state, "
                     f"{figures['watcher_rss_mb_by_session']} MB per watcher")
    if "watchers_1_worker" in figures:
        lines.append(f"  the same broadcast on 1 worker: {figures['watchers_1_worker']} watchers "
                     f"({figures['watchers_failed_1_worker']} could not open), lag p95 "
                     f"{figures['watcher_lag_p95_ms_1_worker']} ms, {figures['watcher_state_mismatches_1_worker']} "
                     f"shown another state, {figures['watcher_rss_mb_1_worker']} MB per watcher")
    for workers, label in SESSION_SETS.items():
        if f"sessions_by_count_{workers}" in figures:
            lines.append(f"  sessions on {label}: {figures[f'sessions_{workers}']} "
                         "under 100 ms p95 (p95 command latency, CPU shares):")
            for count, row in figures[f"sessions_by_count_{workers}"].items():
                lines.append(f"    {count:>4}: {row['p95_ms']:>7.1f} ms  servers {row['server_cpu']:.2f} CPU, "
                             f"this client {row['client_cpu']:.2f} CPU")
    if "failover_sessions" in figures:
        lines.append(f"  failover: {figures['failover_sessions_moved']} of {figures['failover_sessions']} sessions "
                     f"on the killed worker, back in {figures['failover_s']} s (the others answered within "
                     f"{figures['failover_others_s']} s); {figures['failover_sessions_checked']} checked, "
                     f"{figures['failover_sessions_differing']} differing from a replay of their log, "
                     f"{figures['failover_acked_records_lost']} acknowledged records missing from the log")
    lines.append(f"  services: {figures.get('postgresql')} (a fresh database each), {figures.get('redis')}; machine: "
                 f"{figures.get('cpus')} CPUs, load average {figures.get('load_average')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bench_classroom", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that it runs, measures nothing")
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(QUICK if args.quick else FULL))
    print(json.dumps(figures) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
