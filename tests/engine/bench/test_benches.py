"""The benchmark runs and reports its figures (its speed is never asserted: machines are shared)."""
from __future__ import annotations

import json
import subprocess
import sys


def test_log_bench_prints_one_json_object_with_its_rates():
    done = subprocess.run([sys.executable, "-m", "engine.bench", "log", "--records", "3000", "--json"],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    for key in ("encode_rps", "append_rps", "raw_write_rps", "read_rps", "raw_read_rps"):
        assert result[key] > 0
    assert result["records"] == 3000


def test_log_bench_prints_a_readable_report():
    done = subprocess.run([sys.executable, "-m", "engine.bench", "log", "--records", "1000"],
                          capture_output=True, text=True, check=True)
    assert "append/raw =" in done.stdout and "records/s" in done.stdout


def test_cluster_bench_prints_one_json_object_with_its_rates():
    done = subprocess.run([sys.executable, "-m", "engine.bench", "cluster", "--records", "2000",
                           "--latency-samples", "20", "--json"], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    for key in ("rf1_acks1_rps", "rf3_acks1_rps", "rf3_acksall_rps", "log_only_rps", "e2e_p50_ms", "e2e_p99_ms"):
        assert result[key] > 0
    assert result["e2e_p50_ms"] <= result["e2e_p99_ms"]


def test_clients_bench_prints_one_json_object_with_its_rates():
    done = subprocess.run([sys.executable, "-m", "engine.bench", "clients", "--records", "3000", "--json"],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    for key in ("produce_rps", "produce_batch_rps", "consume_rps", "group3_consume_rps", "log_only_rps"):
        assert result[key] > 0


def test_checkpoint_bench_prints_one_json_object_with_its_figures():
    done = subprocess.run([sys.executable, "-m", "engine.bench", "checkpoint", "--records", "12000",
                           "--segment-bytes", "1024", "--json"], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    for case in ("small", "big"):
        for key in ("take_ms", "restore_ms", "replay_ms", "state_bytes", "linked_files"):
            assert result[case][key] > 0


def test_compression_bench_measures_each_codec_against_none_in_the_same_run():
    done = subprocess.run([sys.executable, "-m", "engine.bench", "compression", "--records", "2000", "--rounds", "1",
                           "--json"], capture_output=True, text=True, check=True)
    codecs = json.loads(done.stdout)["codecs"]
    assert set(codecs) == {"none", "gzip", "snappy", "lz4", "zstd", "gzip->zstd"}
    assert all(c["rps"] > 0 for c in codecs.values())
    assert all(codecs[c]["wire_bytes"] < codecs["none"]["wire_bytes"] for c in codecs if c != "none")


def test_cluster_bench_with_kraft_prints_both_modes_and_their_failover_times():
    done = subprocess.run([sys.executable, "-m", "engine.bench", "cluster", "--records", "2000",
                           "--latency-samples", "5", "--failovers", "2", "--metadata", "kraft", "--json"],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    for key in ("rf3_acks1_rps", "kraft_rf3_acks1_rps", "kraft_rf3_acksall_rps", "failover_wall_ms",
                "kraft_failover_wall_ms"):
        assert result[key] > 0
    # ZooKeeper mode waits out zookeeper.session.timeout.ms (18 s); KRaft fences after at most
    # broker.session.timeout.ms (9 s) from the last heartbeat.
    assert 18_000 <= result["failover_virtual_ms"] < 20_000
    assert 7_000 <= result["kraft_failover_virtual_ms"] < 10_000
