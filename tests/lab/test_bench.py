"""`python -m lab.bench` runs end to end (tiny numbers: this checks that it works, not how fast)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.servers import REPO_ROOT

FIGURES = ("events_per_s", "step_latency_p95_ms", "idle_session_rss_mb", "active_sessions_p95_under_100ms",
           "rewind_p95_ms", "hostile_neighbour_p95_ms", "lesson_beat_p95_ms", "lesson_open_p95_ms")


def test_the_bench_reports_every_figure_as_json() -> None:
    completed = subprocess.run([sys.executable, "-m", "lab.bench", "--quick", "--json"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=300)

    assert completed.returncode == 0, completed.stderr
    figures = json.loads(completed.stdout)
    for name in FIGURES:
        assert isinstance(figures[name], (int, float)), name
    assert figures["events_per_s"] > 0  # frames did reach the client
    assert figures["active_sessions_by_count"]
    assert figures["rewind_session_steps"] > 0 and figures["rewind_from_start_ms"] > 0
    # Two hostile sessions (each with a tab that reads nothing) and the other visitor's commands.
    assert figures["hostile_sessions"] == 2 and figures["hostile_commands_per_s"] > 0
    assert figures["hostile_neighbour_p50_ms"] > 0
    # Every lesson opened once and one beat of each answered.
    assert figures["lesson_open_samples"] == figures["lesson_beat_samples"] == figures["lesson_count"] > 0


def test_the_bench_prints_figures_next_to_their_targets() -> None:
    from lab.bench import TARGETS, report

    figures = {"events_per_s": 25_000.0, "step_latency_p95_ms": 60.0, "idle_session_rss_mb": 1.5,
               "active_sessions_p95_under_100ms": 50, "events_covered_per_s": 30_000.0, "frames_per_s": 20.0,
               "step_latency_p50_ms": 5.0, "clock_step_latency_p95_ms": 9.0, "server_rss_mb": 90.0,
               "server_cpu_ms_per_active_session_s": 8.0,
               "active_sessions_by_count": {10: {"p95_ms": 20.0, "server_cpu": 0.1, "client_cpu": 0.1}},
               "rewind_p95_ms": 120.0, "rewind_p50_ms": 60.0, "rewind_max_ms": 150.0, "rewind_session_steps": 10_000,
               "rewind_session_virtual_s": 600, "rewind_session_wall_minutes_at_10x": 1.0,
               "rewind_session_build_s": 9.0, "rewind_from_start_ms": 900.0, "rewind_speedup": 7.5,
               "rewind_checkpoints": 30, "rewind_checkpoints_disk_mb": 4.0,
               "hostile_neighbour_p95_ms": 40.0, "hostile_neighbour_p50_ms": 10.0, "hostile_sessions": 20,
               "hostile_commands_per_s": 49.5, "hostile_server_cpu": 1.2,
               "lesson_beat_p95_ms": 30.0, "lesson_beat_p50_ms": 10.0, "lesson_open_p95_ms": 1500.0,
               "lesson_open_p50_ms": 600.0, "lab_open_p95_ms": 200.0, "lesson_open_vs_lab_open": 7.5,
               "lesson_open_samples": 19, "lesson_beat_samples": 19, "lesson_count": 19,
               "cpus": 2, "load_average": 0.5}

    text = report(figures)

    assert set(TARGETS) == set(FIGURES)
    assert "events_per_s" in text and "target >= 20000" in text
    assert "step_latency_p95_ms" in text and "MISSED" in text  # 60 ms is over the 50 ms target
    assert text.count(" ok") == 6                            # a 1.5 s lesson open is over its 1 s target
    assert "lesson_open_p95_ms" in text and "target < 1000" in text and "(×7.5)" in text
    assert "rewind_p95_ms" in text and "10,000 steps" in text
    assert "hostile_neighbour_p95_ms" in text and "target < 100" in text and "20 sessions live" in text


def test_the_bench_measures_the_hostile_neighbour_alone() -> None:
    from lab.bench import report

    text = report({"hostile_neighbour_p95_ms": 150.0, "hostile_neighbour_p50_ms": 20.0, "hostile_sessions": 20,
                   "hostile_commands_per_s": 50.0, "hostile_server_cpu": 1.5, "cpus": 2, "load_average": 1.0})

    assert "hostile_neighbour_p95_ms" in text and "MISSED" in text and "events_per_s" not in text
