from __future__ import annotations

import pytest

from engine.storage.errors import OffsetOutOfRangeError
from engine.storage.log import Log

DAY = 24 * 3600 * 1000


def _log(path, clock, **config):
    cfg = {"segment.bytes": 300}
    cfg.update({k.replace("_", "."): v for k, v in config.items()})
    return Log(str(path), cfg, clock_ms=clock)


def _fill(log, clock, n, *, size=60):
    for _ in range(n):
        log.append([(None, b"x" * size)], timestamp_ms=clock())


def test_retention_ms_deletes_whole_old_segments_by_their_largest_timestamp(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock, retention_ms=DAY)
    _fill(log, clock, 8)
    old_segments = len(log.segments)
    clock.advance(2 * DAY)
    _fill(log, clock, 1)
    deleted = log.delete_old_segments()
    assert deleted and all(d.reason == "retention.ms" for d in deleted)
    assert len(log.segments) < old_segments
    assert log.log_start_offset == log.segments[0].base_offset == deleted[-1].next_offset
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 100)
    assert [r.offset for r in log.read(log.log_start_offset, 1 << 20)]


def test_retention_bytes_deletes_oldest_segments_while_the_log_stays_over_the_limit(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock, retention_bytes=600)
    _fill(log, clock, 20)
    log.delete_old_segments()
    total = log.size_in_bytes()
    assert total >= 600                          # never below the limit...
    assert total - log.segments[0].size < 600    # ...and one more deletion would go below it


def test_retention_never_deletes_past_the_high_watermark(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock, retention_ms=1)
    _fill(log, clock, 10)
    log.update_high_watermark(0)
    clock.advance(DAY)
    assert log.delete_old_segments() == []
    log.update_high_watermark(log.segments[1].base_offset)
    deleted = log.delete_old_segments()
    assert [d.base_offset for d in deleted] == [0]


def test_a_breached_active_segment_goes_only_after_an_empty_one_is_rolled(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock, retention_ms=DAY, segment_bytes=1 << 20)
    _fill(log, clock, 3)
    assert len(log.segments) == 1
    clock.advance(2 * DAY)
    deleted = log.delete_old_segments()
    assert [d.base_offset for d in deleted] == [0]
    assert len(log.segments) == 1 and log.active_segment.is_empty
    assert log.active_segment.base_offset == 3 == log.log_start_offset == log.log_end_offset
    # an empty last segment is never deleted, however long it sits
    clock.advance(10 * DAY)
    assert log.delete_old_segments() == []


def test_a_trickle_of_traffic_keeps_old_records_long_past_retention(tmp_path, clock):
    # The seed's remark: only whole, closed segments are deleted, and a segment closes only when an
    # append arrives and finds it full (segment.bytes) or old (segment.ms, by record time). One
    # record a day into a 1 GiB segment: retention.ms is 7 days, yet day 0's record lives on
    # until the segment rolls on day 8 and its *newest* record is 7 days old: day 15.
    log = _log(tmp_path / "t-0", clock, retention_ms=7 * DAY, segment_bytes=1 << 30)
    day0 = clock()
    for day in range(20):
        log.append([(None, b"day-%d" % day)], timestamp_ms=clock())
        log.delete_old_segments()
        if day == 14:
            assert log.read(0, 100)[0].value == b"day-0"  # 14 days old, retention 7 days
        clock.advance(DAY)
    assert log.log_start_offset == 8 and clock() - day0 == 20 * DAY


def test_without_time_rolls_a_quiet_partition_keeps_everything(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock, retention_ms=7 * DAY, segment_bytes=1 << 30,
               segment_ms=10 * 365 * DAY)
    for _ in range(30):
        log.append([(None, b"daily")], timestamp_ms=clock())
        clock.advance(DAY)
        assert log.delete_old_segments() == []
    assert log.log_start_offset == 0 and len(log.read(0, 1 << 20)) == 30


def test_retention_disabled_with_minus_one_keeps_everything(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock, retention_ms=-1, retention_bytes=-1)
    _fill(log, clock, 10)
    clock.advance(1000 * DAY)
    assert log.delete_old_segments() == []


def test_deleted_segments_leave_no_files_behind(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock, retention_bytes=300)
    _fill(log, clock, 12)
    deleted = log.delete_old_segments()
    names = set(__import__("os").listdir(log.path))
    for d in deleted:
        assert not any(n.startswith(f"{d.base_offset:020d}") for n in names)
