"""`python -m lab.bench_browser` runs end to end: a real Daphne, a busy session, its page in
Debian's chromium (a one-second load: this checks that it works and reports, not how fast)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lab.bench_browser import CHROMIUM
from tests.servers import REPO_ROOT

pytestmark = pytest.mark.e2e

FIGURES = ("socket_events_per_s", "page_events_per_s", "page_frames_per_s", "frame_lag_p95_ms", "main_thread_busy",
           "main_thread_cpu", "draws_per_s", "heap_start_mb", "heap_peak_mb", "heap_end_mb", "virtual_time_behind_ms")


def test_the_browser_bench_reports_every_figure_as_json() -> None:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: `make chromium` installs it")
    completed = subprocess.run([sys.executable, "-m", "lab.bench_browser", "--seconds", "1", "--json"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=300)

    assert completed.returncode == 0, completed.stderr
    figures = json.loads(completed.stdout)
    for name in FIGURES:
        assert isinstance(figures[name], (int, float)), name
    assert figures["page_events_per_s"] > 0  # the page did take frames in
    assert isinstance(figures["keeps_up"], bool)
    assert isinstance(figures["replicas_drawn_wrong"], int)
    assert figures["page_errors"] == []  # nothing uncaught in the page under a busy stream
