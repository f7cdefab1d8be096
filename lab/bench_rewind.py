"""How fast a rewind is on a long live session: part of `python -m lab.bench` (`rewind_*` figures).

A session is played the way a learner plays one, live at 10× for `minutes` of wall time (one
hour by default — ten virtual hours), fed by the host's clock in 100 ms ticks as the live clock
does: a topic of 3 partitions (RF 3), a consumer group of two members polling by themselves, a
producer sending a record every wall second, and now and then a fault (a follower's fetcher
paused and resumed, a broker killed and restarted, a link cut and healed). Then it rewinds to
random steps of that line of time and times each rewind — the host restores the nearest engine
checkpoint and replays from there (lab/checkpoints.py) — beside the baseline, the same rewinds
replayed from step 0 (checkpoints off), measured in the same run.

Runs in this process, on the host (no server): a rewind's cost is the host's; the protocol adds
one `state` message on top.
"""
from __future__ import annotations

import random
import shutil
import statistics
import tempfile
import time
from typing import Any

from lab.host import SessionHost, Shape
from lab.host_types import CallBudgets
from lab.limits import Limits

TICK_MS = 100.0
SPEED = 10.0


def play_learner_session(host: SessionHost, minutes: float, seed: int = 1) -> None:
    rng = random.Random(seed)
    host.apply("create_topic", {"topic": "t", "partitions": 3, "replication_factor": 3})
    for name in ("c1", "c2"):
        host.apply("consumer_join", {"member": name, "group": "g", "topics": ["t"], "poll_every_ms": 500})
    host.play(SPEED)
    down: list[int] = []
    for second in range(int(minutes * 60)):
        for _ in range(int(1000 / TICK_MS)):
            host.tick(TICK_MS)
        host.apply("produce", {"topic": "t", "values": [f"r{second}"], "acks": "all"})
        if second % 97 == 50:
            _fault(host, rng, down)


def _fault(host: SessionHost, rng: random.Random, down: list[int]) -> None:
    """A learner's fault, undone later (so the session keeps working)."""
    if down:
        host.apply("restart_broker", {"broker": down.pop()})
        return
    roll = rng.random()
    broker = rng.randint(1, 3)
    if roll < 0.4:
        host.apply("kill_broker", {"broker": broker, "mode": rng.choice(["process", "power"])})
        down.append(broker)
    elif roll < 0.7:
        host.apply("pause_fetcher", {"broker": broker})
        host.apply("resume_fetcher", {"broker": broker})  # a short stall: resumed at once
    else:
        other = rng.choice([b for b in (1, 2, 3) if b != broker])
        host.apply("partition_network", {"a": broker, "b": other})
        host.apply("heal_network", {"a": broker, "b": other})


def _timed_rewinds(host: SessionHost, targets: list[int]) -> list[float]:
    out = []
    for target in targets:
        started = time.perf_counter()
        host.rewind(target)
        out.append((time.perf_counter() - started) * 1000)
        if host.steps != target:
            raise AssertionError(f"a rewind to step {target} landed at {host.steps}")
    return out


def rewind_figures(minutes: float = 60.0, samples: int = 40, baseline_samples: int = 3) -> dict[str, Any]:
    root = tempfile.mkdtemp(prefix="lab-bench-rewind-")
    try:
        host = SessionHost(f"{root}/fast", Shape(3, 1, "leader-epoch", {}), history=False)
        started = time.perf_counter()
        play_learner_session(host, minutes)
        host.pause()
        build_s = time.perf_counter() - started
        steps, virtual_ms = host.steps, host.now_ms
        rng = random.Random(7)
        targets = [rng.randrange(steps) for _ in range(samples)]
        timings = sorted(_timed_rewinds(host, targets))
        disk = _tree_bytes(f"{root}/fast/checkpoints")
        figures = {
            "rewind_session_steps": steps, "rewind_session_virtual_s": round(virtual_ms / 1000),
            "rewind_session_wall_minutes_at_10x": minutes, "rewind_session_build_s": round(build_s, 1),
            "rewind_p50_ms": statistics.median(timings), "rewind_p95_ms": _p95(timings), "rewind_max_ms": timings[-1],
            "rewind_checkpoints": len(host.checkpoints.entries), "rewind_checkpoints_taken": host.checkpoints.taken,
            "rewind_checkpoint_take_ms_total": round(host.checkpoints.take_ms_total),
            "rewind_checkpoints_disk_mb": round(disk / 2**20, 1)}
        log, shape = list(host.log), host.shape
        host.close()
        # The baseline: the same log, checkpoints off, every rewind replayed from step 0 — with
        # no call budget (a replay of a long session from step 0 is exactly what the budgets stop).
        # A host resumed at step 0 knows its line of time up to its last command, so the baseline
        # rewinds there (a learner's session has commands to its end).
        slow = SessionHost(f"{root}/slow", shape, log=log, position=(0, 0), checkpoints=False, history=False,
                           limits=Limits(max_actions_per_call=10**12),
                           budgets=CallBudgets(wall_ms=float("inf"), virtual_ms=10**15))
        last = log[-1].at_step if log else 0
        baseline = _timed_rewinds(slow, [max(0, last - i) for i in range(baseline_samples)])
        slow.close()
        figures["rewind_from_start_ms"] = statistics.median(baseline)
        figures["rewind_speedup"] = figures["rewind_from_start_ms"] / max(figures["rewind_p95_ms"], 1e-9)
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _tree_bytes(path: str) -> int:
    import os
    seen, total = set(), 0
    for folder, _, files in os.walk(path):
        for name in files:
            info = os.stat(os.path.join(folder, name))
            if info.st_ino not in seen:   # hard links: each inode once (as du counts)
                seen.add(info.st_ino)
                total += info.st_blocks * 512
    return total
