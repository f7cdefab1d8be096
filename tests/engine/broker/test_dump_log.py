from __future__ import annotations

import subprocess
import sys

from engine.storage.log import Log


def _log_with_records(path, clock):
    log = Log(str(path), {"index.interval.bytes": 0}, clock_ms=clock)
    log.append([(b"k1", b"hello"), (None, b"world")], leader_epoch=2)
    log.append([(b"k2", None)], leader_epoch=2)
    log.append([(b"k3", b"again")], leader_epoch=2)
    log.close()
    return log


def _run(*args):
    done = subprocess.run([sys.executable, "-m", "engine.tools.dump_log", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_it_prints_batches_and_records_like_kafkas_tool(tmp_path, clock):
    log = _log_with_records(tmp_path / "t-0", clock)
    lines = _run("--files", log.segments[0].log_path, "--print-data-log")
    assert lines[0] == f"Dumping {log.segments[0].log_path}"
    assert lines[1] == "Log starting offset: 0"
    assert lines[2].startswith("baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 "
                               "producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 2 ")
    assert "position: 0 CreateTime: " in lines[2] and lines[2].endswith("isvalid: true")
    assert lines[3].startswith("| offset: 0 CreateTime: ") and lines[3].endswith("key: k1 payload: hello")
    assert "keySize: -1 valueSize: 5" in lines[4] and lines[4].endswith("payload: world")
    assert lines[6].endswith("key: k2 payload: null")  # a tombstone
    assert len([line for line in lines if line.startswith("baseOffset")]) == 3


def test_it_prints_offset_and_time_index_entries(tmp_path, clock):
    log = _log_with_records(tmp_path / "t-0", clock)
    segment = log.segments[0]
    lines = _run("--files", segment.index_path)
    entries = segment.offset_index.all_entries()
    assert entries and lines[1:] == [f"offset: {o} position: {p}" for o, p in entries]
    lines = _run("--files", segment.time_index_path)
    assert lines[1].startswith("timestamp: ") and " offset: " in lines[1]


def test_it_reports_a_bad_crc_and_a_torn_tail(tmp_path, clock):
    log = _log_with_records(tmp_path / "t-0", clock)
    path = log.segments[0].log_path
    data = bytearray(open(path, "rb").read())
    data[-3] ^= 0xFF
    open(path, "wb").write(bytes(data) + b"\x00\x01")
    lines = _run("--files", path)
    assert lines[-2].endswith("isvalid: false")
    assert lines[-1] == "Found 2 invalid bytes at the end of 00000000000000000000.log"
