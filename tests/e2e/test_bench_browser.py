"""`python -m lab.bench_browser` runs end to end: a real Daphne, a busy session and a 9-broker one,
their pages in Debian's chromium (a one-second load and a short watch with two drift checks: this
checks that it works and reports, not how fast — except that the page must end exact)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lab.bench_browser import CHROMIUM
from tests.servers import REPO_ROOT

pytestmark = pytest.mark.e2e

KEEPS_UP = ("socket_events_per_s", "page_events_per_s", "page_frames_per_s", "frame_lag_p95_ms", "main_thread_busy",
            "main_thread_cpu", "draws_per_s", "heap_start_mb", "heap_peak_mb", "heap_end_mb", "virtual_time_behind_ms")
WATCH = ("fps_median", "fps_min", "long_task_share", "watch_draws_per_s", "watch_events_per_s",
         "watch_main_thread_busy", "watch_server_cpu")


def test_the_browser_bench_reports_every_figure_as_json() -> None:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: `make chromium` installs it")
    completed = subprocess.run([sys.executable, "-m", "lab.bench_browser", "--seconds", "1", "--watch-seconds", "4",
                                "--json"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False)

    assert completed.returncode == 0, completed.stderr
    figures = json.loads(completed.stdout)
    for name in KEEPS_UP + WATCH:
        assert isinstance(figures[name], (int, float)), name
    assert figures["page_events_per_s"] > 0 and figures["watch_events_per_s"] > 0  # the pages did take frames in
    assert isinstance(figures["keeps_up"], bool) and isinstance(figures["fast_enough"], bool)
    assert isinstance(figures["replicas_drawn_wrong"], int)
    assert figures["drift_checks"] == 2 and len(figures["watch_windows"]) == 2
    assert figures["drift_found"] == 0, figures["drift_examples"]   # the page's model, table and picture were exact
    assert figures["page_errors"] == [] and figures["watch_page_errors"] == []   # nothing uncaught under a busy stream
