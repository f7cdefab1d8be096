from __future__ import annotations

import os

from engine.storage.log import Log


def _log(path, clock):
    return Log(str(path), {"segment.bytes": 300, "index.interval.bytes": 50}, clock_ms=clock)


def _fill(log, n):
    for i in range(n):
        log.append([(None, b"v%03d" % i)])


def test_truncate_to_removes_later_segments_and_cuts_the_rest(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 30)
    assert len(log.segments) > 3
    target = log.segments[1].base_offset + 1
    event = log.truncate_to(target)
    assert log.log_end_offset == target
    assert event.from_offset == 30 and event.to_offset == target and event.records_removed == 30 - target
    assert [o for o, _, _ in event.removed] == list(range(target, 30))
    assert len(log.segments) == 2
    files = {n for n in os.listdir(log.path) if n.endswith(".log")}
    assert files == {f"{s.base_offset:020d}.log" for s in log.segments}
    # the index of the cut segment holds no entry at or past the cut
    assert all(o < target for o, _ in log.active_segment.offset_index.all_entries())
    assert [r.value for r in log.read(log.segments[1].base_offset, 1 << 20)][-1] == b"v%03d" % (target - 1)


def test_after_truncation_appends_continue_from_the_new_end(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 10)
    log.truncate_to(4)
    assert log.append([(None, b"new")]) == 4
    assert [r.value for r in log.read(3, 1 << 20)][-1] == b"v003"
    assert [r.value for r in log.read(4, 1 << 20)] == [b"new"]


def test_truncating_to_a_segment_base_offset_keeps_that_segment_empty(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 20)
    base = log.segments[2].base_offset
    log.truncate_to(base)
    assert log.active_segment.base_offset == base and log.active_segment.is_empty
    assert log.log_end_offset == base


def test_truncating_at_or_past_the_end_does_nothing(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 5)
    event = log.truncate_to(9)
    assert event.records_removed == 0 and log.log_end_offset == 5


def test_truncation_lowers_the_high_watermark_and_recovery_point(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 10)
    log.update_high_watermark(8)
    log.flush()
    log.truncate_to(6)
    assert log.high_watermark == 6 and log.recovery_point == 6


def test_truncate_fully_and_start_at_starts_an_empty_log_elsewhere(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 10)
    log.truncate_fully_and_start_at(100)
    assert log.log_start_offset == log.log_end_offset == 100
    assert os.listdir(log.path) and all(n.startswith("00000000000000000100") for n in os.listdir(log.path))
    assert log.append([(None, b"x")]) == 100


def test_a_truncated_log_reopens_to_the_same_state(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 25)
    log.truncate_to(13)
    log.close()
    again = _log(tmp_path / "t-0", clock)
    assert again.log_end_offset == 13


def test_truncating_inside_a_batch_keeps_exactly_the_records_below_the_target(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    log.append([(b"k", b"a"), (b"k", b"b"), (b"k", b"c"), (b"k", b"d")], leader_epoch=4)  # one batch
    event = log.truncate_to(2)
    assert log.log_end_offset == 2 and event.records_removed == 2
    kept = log.read(0, 1 << 20)
    assert [(r.offset, r.value) for r in kept] == [(0, b"a"), (1, b"b")]
    from engine.storage import record_batch as rb
    _, header = next(rb.iter_batches(open(log.active_segment.log_path, "rb").read()))
    assert header.partition_leader_epoch == 4 and header.last_offset == 1
