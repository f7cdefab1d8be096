from __future__ import annotations

import os

from engine.storage.log import Log


def _names(path):
    return sorted(os.listdir(path))


def test_segments_are_named_by_their_20_digit_base_offset(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"segment.bytes": 200}, clock_ms=clock)
    for _ in range(6):
        log.append([(None, b"x" * 60)])
    names = _names(log.path)
    assert "00000000000000000000.log" in names
    bases = [s.base_offset for s in log.segments]
    assert len(bases) > 1
    for base in bases:
        prefix = f"{base:020d}"
        assert {prefix + ".log", prefix + ".index", prefix + ".timeindex"} <= set(names)


def test_it_rolls_when_the_next_batch_would_pass_segment_bytes(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"segment.bytes": 300}, clock_ms=clock)
    events = []
    log._listener = events.append
    sizes = []
    for _ in range(5):
        log.append([(None, b"x" * 60)])
        sizes.append(log.active_segment.size)
    for segment in log.segments[:-1]:
        assert segment.size <= 300
    assert any(type(e).__name__ == "SegmentRolled" and e.reason == "segment.bytes" for e in events)


def test_segment_ms_uses_record_time_not_the_wall_clock(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"segment.ms": 1000}, clock_ms=clock)
    log.append([(None, b"a")], timestamp_ms=10_000)
    clock.advance(60_000)  # a long wall-clock wait changes nothing by itself...
    log.append([(None, b"b")], timestamp_ms=10_500)
    assert len(log.segments) == 1
    log.append([(None, b"c")], timestamp_ms=11_001)  # ...record time past segment.ms does
    assert len(log.segments) == 2 and log.active_segment.base_offset == 2


def test_an_idle_partition_never_rolls_however_old_its_records(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"segment.ms": 1000}, clock_ms=clock)
    log.append([(None, b"a")])
    clock.advance(10 * 24 * 3600 * 1000)
    assert len(log.segments) == 1  # the roll check runs only when an append arrives


def test_a_full_offset_index_rolls_the_segment(tmp_path, clock):
    # 3 offset index entries fit in 24 bytes; with index.interval.bytes=0 every batch after the first
    # adds one. Records without a timestamp leave the time index empty (it would be full first: 2
    # slots, the last kept for the roll — tests/engine/kafka_parity/test_log_segment.py).
    log = Log(str(tmp_path / "t-0"), {"segment.index.bytes": 24, "index.interval.bytes": 0}, clock_ms=clock)
    for i in range(6):
        log.append([(None, b"%d" % i)], timestamp_ms=-1)
    assert [s.base_offset for s in log.segments] == [0, 4]
    assert log.segments[0].offset_index.entries == 3


def test_the_index_is_sparse_one_entry_per_index_interval_bytes(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"index.interval.bytes": 4096}, clock_ms=clock)
    for _ in range(100):
        log.append([(None, b"x" * 200)])  # ~270-byte batches
    segment = log.active_segment
    entries = segment.offset_index.all_entries()
    assert 0 < len(entries) < 10
    # the first batch never gets an entry; each entry = (last offset of a batch, its start position)
    assert entries[0][0] > 0
    gaps = [b[1] - a[1] for a, b in zip(entries, entries[1:])]
    assert all(g > 4096 for g in gaps)
    segment.sync_files()  # index writes are buffered, like Kafka's mmap'd index
    assert os.path.getsize(segment.index_path) == 8 * len(entries)


def test_rolling_adds_a_final_time_index_entry_for_the_old_segment(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"segment.bytes": 200}, clock_ms=clock)
    for i in range(4):
        log.append([(None, b"x" * 60)], timestamp_ms=1000 + i)
    first = log.segments[0]
    assert first.time_index.last_entry() == (first.max_timestamp, first.offset_of_max_timestamp)
