"""The seed's example: find offset 170213 in a log whose segment starts at 170210."""
from __future__ import annotations

from engine.storage.log import Log


def _seed_shaped_log(path, clock):
    # Segments 00000000000000000000, …170210 and …170220, as in the notes: the middle one
    # holds ten one-record batches, so its sparse index has entries to search.
    log = Log(path, {"index.interval.bytes": 150}, clock_ms=clock)
    for _ in range(170):
        log.append([(None, b"m")] * 1001)
    log.append([(None, b"m")] * 40)
    assert log.log_end_offset == 170210
    log.roll()
    for i in range(10):
        log.append([(b"k", b"msg-%d" % (170210 + i))])
    log.roll()
    log.append([(None, b"last")])
    return log


def test_lookup_binary_searches_segments_then_the_sparse_index_then_scans(tmp_path, clock):
    log = _seed_shaped_log(str(tmp_path / "t-0"), clock)
    assert [s.base_offset for s in log.segments] == [0, 170210, 170220]
    assert (tmp_path / "t-0" / "00000000000000170210.log").exists()

    path = log.locate(170213)

    # 1. binary search over segment base offsets lands on 00000000000000170210
    assert path.segment_probes[0] == (1, 170210)
    assert path.segment_base_offset == 170210
    # 2. the sparse index gives the greatest entry at or below the target
    segment = log.segments[1]
    entries = segment.offset_index.all_entries()
    below = [e for e in entries if e[0] <= 170213]
    assert below, "the test log must have an index entry below the target"
    assert (path.index.offset, path.index.position) == below[-1]
    assert path.index.probes  # the index was binary searched, not walked
    # 3. the forward scan starts at that position and stops at the batch holding the offset
    assert path.scan[0].position == path.index.position
    assert path.scan[-1].base_offset <= 170213 <= path.scan[-1].last_offset
    assert all(step.last_offset < 170213 for step in path.scan[:-1])
    assert path.record.offset == 170213 and path.record.value == b"msg-170213"


def test_an_offset_before_the_first_index_entry_scans_from_position_zero(tmp_path, clock):
    log = _seed_shaped_log(str(tmp_path / "t-0"), clock)
    path = log.locate(170210)
    assert path.index.slot == -1 and path.index.position == 0
    assert path.scan[0].position == 0 and path.record.value == b"msg-170210"


def test_the_last_offset_of_a_segment_is_found_in_that_segment(tmp_path, clock):
    log = _seed_shaped_log(str(tmp_path / "t-0"), clock)
    path = log.locate(170209)
    assert path.segment_base_offset == 0 and path.record.offset == 170209


def test_offset_for_timestamp_uses_the_time_index(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"index.interval.bytes": 0}, clock_ms=clock)
    for i in range(20):
        log.append([(None, b"v")], timestamp_ms=1000 + 10 * i)
    assert log.offset_for_timestamp(1000) == 0
    assert log.offset_for_timestamp(1055) == 6
    assert log.offset_for_timestamp(5000) is None
