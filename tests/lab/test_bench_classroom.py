"""`python -m lab.bench_classroom` runs end to end (tiny sizes: this checks that it works and that
its figures are there and sane, never how fast anything is)."""
from __future__ import annotations

import json
import math
import subprocess
import sys

from lab.bench_classroom_model import PageModel
from tests.servers import REPO_ROOT

FIGURES = ("watchers", "watcher_lag_p95_ms", "watcher_state_mismatches", "sessions_4_workers", "command_p95_ms",
           "sessions_1_worker", "failover_s")


def test_the_classroom_bench_reports_every_figure_as_json() -> None:
    completed = subprocess.run([sys.executable, "-m", "lab.bench_classroom", "--quick", "--json"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=600)

    assert completed.returncode == 0, completed.stderr[-4000:]
    figures = json.loads(completed.stdout)
    for name in FIGURES:
        assert isinstance(figures[name], (int, float)) and not math.isnan(figures[name]), (name, figures[name])
    # Every watcher opened, got frames and was shown the instructor's state; the Chromium page too.
    assert figures["watchers"] == 4 and figures["watchers_failed"] == 0, figures["watcher_failures"]
    assert figures["broadcast_frames"] > 0 and figures["watcher_frames_compared"] > 0
    assert figures["watcher_state_mismatches"] == 0, figures["watcher_differences"]
    assert figures["browser_watchers"] == 1 and figures["browser_watchers_wrong"] == 0
    for where in ("1_worker", "by_session"):
        assert figures[f"watchers_{where}"] == 4 and figures[f"watcher_state_mismatches_{where}"] == 0
    # The sessions' search ran on each set-up, at the same levels.
    assert (figures["sessions_by_count_1_worker"].keys() == figures["sessions_by_count_4_workers"].keys()
            == figures["sessions_by_count_1_process_sqlite"].keys())
    assert figures["command_p95_ms"] > 0
    # The killed worker's sessions came back, identical to a replay of their log, nothing acknowledged lost.
    assert figures["failover_sessions_not_back"] == 0 and figures["failover_s"] > 0
    assert figures["failover_sessions_checked"] == figures["failover_sessions_moved"], figures["failover_check_errors"]
    assert figures["failover_sessions_differing"] == 0 and figures["failover_acked_records_lost"] == 0


def test_the_report_prints_each_figure_beside_its_target() -> None:
    from lab.bench_classroom import TARGETS, report

    text = report({"watcher_lag_p95_ms": 300.0, "watcher_state_mismatches": 0, "sessions_4_workers": 60,
                   "command_p95_ms": 80.0, "failover_s": float("nan"), "sessions_1_worker": 70, "cpus": 2,
                   "load_average": 1.0})

    assert set(TARGETS) <= set(FIGURES)
    assert "watcher_lag_p95_ms" in text and "target < 250" in text
    assert "sessions_4_workers" in text and "target >= 200" in text
    assert text.count("MISSED") == 3      # the lag, the 4 workers' sessions, a failover that never ended
    assert text.count(" ok") == 2


def test_the_page_model_merges_a_replicas_records_as_the_page_does() -> None:
    model = PageModel()
    replica = {"log_start_offset": 0, "log_end_offset": 2, "records_from": 0, "records": [[0, "k", "a"], [1, "k", "b"]]}
    partition = {"topic": "t", "partition": 0, "replica_states": {"1": replica}}
    model.apply_model({"step": 1, "partitions": {"t-0": partition}}, 0)
    before = model.digest()

    # A truncation to offset 1 then a new record there: what was held from records_from on goes.
    model.apply_frame({"type": "events", "frame": 1, "step": 2, "time_ms": 5, "seq": 9, "patches": [
        {"partitions": {"t-0": {"topic": "t", "partition": 0, "replica_states": {"1": {
            "log_start_offset": 0, "log_end_offset": 2, "records_from": 1, "records": [[1, "k", "c"]]}}}}}]})

    records = model.partitions["t-0"]["replica_states"]["1"]["records"]
    assert records == {0: ["k", "a"], 1: ["k", "c"]}
    assert model.frame == 1 and model.step == 2      # the frame's own step, as session.js keeps it
    assert model.digest()["partition t-0"] != before["partition t-0"]


def test_a_watcher_shown_another_state_is_counted_once() -> None:
    from lab.bench_classroom_watch import ModelTab, _compare

    def frame(number: int, hw: int) -> bytes:
        partition = {"topic": "t", "partition": 0, "high_watermark": hw, "replica_states": {}}
        return json.dumps({"v": 2, "type": "events", "frame": number, "step": number, "time_ms": number, "seq": number,
                           "patches": [{"partitions": {"t-0": partition}}], "events": [], "coalesced": 0}).encode()
    hello = json.dumps({"v": 2, "type": "hello", "frame": 0, "model": {"step": 0, "partitions": {}}}).encode()
    teacher, faithful, misled = (ModelTab(None, "", digest_every=1) for _ in range(3))
    for tab in (teacher, faithful, misled):
        tab._received(hello)
    for number in (1, 2, 3):
        teacher._received(frame(number, number))
        faithful._received(frame(number, number))
        misled._received(frame(number, 7 if number == 2 else number))   # one patch that differs

    figures = _compare(teacher, [faithful, misled])

    assert figures["watcher_state_mismatches"] == 1
    assert figures["watcher_frames_differing"] == 1      # frame 2 only: frame 3's patch set the partition again
    assert figures["watcher_differences"] == ["frame 2: partition t-0"]
