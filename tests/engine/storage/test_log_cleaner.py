"""The log cleaner (engine/storage/cleaner.py) on real logs: which log it picks, what it keeps,
tombstones and their delete horizon, the cleaner checkpoint, and crashes in the middle of a swap."""
from __future__ import annotations

import os

import pytest

from engine.storage import cleaner
from engine.storage import record_batch as rb
from engine.storage.checkpoints import read_offsets
from engine.storage.log import Log

COMPACT = {"cleanup.policy": "compact", "segment.bytes": 300}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


def open_log(path, config=None, clock=None) -> Log:
    return Log(str(path), {**COMPACT, **(config or {})}, clock_ms=clock or Clock(), fsync=False)


def write(log: Log, clock: Clock, pairs) -> None:
    """One batch per record, 10 ms apart."""
    for key, value in pairs:
        clock.now += 10
        log.append([(key.encode(), None if value is None else value.encode())], timestamp_ms=clock.now)


def clean_once(tmp_path, logs, now):
    return cleaner.LogCleanerManager(str(tmp_path)).clean_filthiest(str(tmp_path), logs, now)


def view(log: Log) -> list[tuple[int, str, str | None]]:
    return [(r.offset, r.key.decode(), None if r.value is None else r.value.decode()) for r in log.records_from(0)]


def test_only_the_last_value_of_each_key_stays_below_the_cleaned_point(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock=clock)
    write(log, clock, [(f"k{i % 3}", f"v{i}") for i in range(30)])
    result = clean_once(tmp_path, {("t", 0): log}, clock.now)
    assert result is not None and result.first_dirty_offset == 0
    assert result.end_offset == log.active_segment.base_offset
    cleaned = [r for r in view(log) if r[0] < result.end_offset]
    assert cleaned == [(o, f"k{o % 3}", f"v{o}") for o in range(result.end_offset - 3, result.end_offset)]
    assert result.stats.records_before == result.end_offset and result.stats.records_after == 3


def test_the_active_segment_is_never_cleaned(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"segment.bytes": 100_000}, clock)
    write(log, clock, [("k", f"v{i}") for i in range(50)])     # one segment: the active one
    before = log.active_segment.read_bytes()
    assert clean_once(tmp_path, {("t", 0): log}, clock.now) is None
    assert log.active_segment.read_bytes() == before and len(view(log)) == 50
    assert not os.path.exists(tmp_path / cleaner.CLEANER_CHECKPOINT)     # nothing cleaned, nothing written


def test_the_dirtiest_log_above_the_ratio_is_cleaned_first(tmp_path):
    clock = Clock()
    low_ratio = {"min.cleanable.dirty.ratio": 0.1}
    a, b = open_log(tmp_path / "a-0", low_ratio, clock), open_log(tmp_path / "b-0", low_ratio, clock)
    manager = cleaner.LogCleanerManager(str(tmp_path))
    write(a, clock, [(f"k{i}", "v") for i in range(12)])
    assert manager.clean_filthiest(tmp_path, {("a", 0): a}, clock.now).key == ("a", 0)
    write(a, clock, [(f"k{i}", "w") for i in range(8)])           # a: partly dirty again
    write(b, clock, [(f"k{i}", "v") for i in range(12)])          # b: all dirty
    logs = {("a", 0): a, ("b", 0): b}
    ratio_a = cleaner.log_to_clean(("a", 0), a, manager.checkpoint[("a", 0)], clock.now)[0].cleanable_ratio
    assert 0.1 < ratio_a < 1
    first = manager.clean_filthiest(tmp_path, logs, clock.now)
    assert first.key == ("b", 0) and first.dirty_ratio == 1
    second = manager.clean_filthiest(tmp_path, logs, clock.now)
    assert second.key == ("a", 0) and second.dirty_ratio == ratio_a
    assert manager.clean_filthiest(tmp_path, logs, clock.now) is None
    assert read_offsets(os.path.join(tmp_path, cleaner.CLEANER_CHECKPOINT)) == {
        ("a", 0): a.active_segment.base_offset, ("b", 0): b.active_segment.base_offset}


def test_a_log_at_or_below_min_cleanable_dirty_ratio_is_left_alone(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"min.cleanable.dirty.ratio": "0.6"}, clock)
    write(log, clock, [(f"k{i}", "v") for i in range(16)])      # distinct keys: cleaning keeps every byte
    manager = cleaner.LogCleanerManager(str(tmp_path))
    manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)
    write(log, clock, [(f"k{i}", "w") for i in range(8)])
    ltc, _ = cleaner.log_to_clean(("t", 0), log, manager.checkpoint[("t", 0)], clock.now)
    assert 0 < ltc.cleanable_ratio <= 0.6
    assert manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now) is None
    write(log, clock, [(f"k{i}", "x") for i in range(24)])
    ltc, _ = cleaner.log_to_clean(("t", 0), log, manager.checkpoint[("t", 0)], clock.now)
    assert ltc.cleanable_ratio > 0.6 and manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now) is not None


def test_min_compaction_lag_keeps_young_segments_dirty(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"min.compaction.lag.ms": 1_000}, clock)
    write(log, clock, [("k", f"v{i}") for i in range(20)])
    manager = cleaner.LogCleanerManager(str(tmp_path))
    assert manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now) is None      # every segment younger than 1 s
    clock.now += 1_000
    result = manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)
    assert result is not None and result.end_offset == log.active_segment.base_offset


def test_max_compaction_lag_forces_a_cleaning_below_the_ratio(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"min.cleanable.dirty.ratio": 0.99, "max.compaction.lag.ms": 5_000}, clock)
    write(log, clock, [(f"k{i}", "v") for i in range(8)])
    manager = cleaner.LogCleanerManager(str(tmp_path))
    manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)        # all dirty: ratio 1 > 0.99
    write(log, clock, [(f"k{i}", "w") for i in range(3)])
    log.roll()
    assert manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now) is None
    clock.now += 5_001
    result = manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)
    assert result is not None and result.forced_by_max_lag


def test_a_tombstone_gets_a_delete_horizon_then_goes_after_delete_retention_ms(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"delete.retention.ms": 60_000, "min.cleanable.dirty.ratio": 0}, clock)
    write(log, clock, [("a", "1"), ("b", "1"), ("a", None)] + [(f"x{i}", "1") for i in range(6)])
    manager = cleaner.LogCleanerManager(str(tmp_path))
    first = manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)
    tomb = [r for r in view(log) if r[1] == "a"]
    assert tomb == [(2, "a", None)] and first.stats.delete_horizons_set == 1
    header = rb.read_batch_header(log.read_batches(2).records)
    assert header.attributes & rb.DELETE_HORIZON_FLAG_MASK and header.base_timestamp == clock.now + 60_000
    assert log.read(2, max_offset=3)[0].timestamp == 1_030                 # the record's own time is kept
    write(log, clock, [(f"y{i}", "1") for i in range(12)])
    log.roll()
    manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)
    assert [r for r in view(log) if r[1] == "a"] == tomb                  # before the horizon: kept
    clock.now += 60_000
    write(log, clock, [(f"z{i}", "1") for i in range(12)])
    log.roll()
    result = manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)
    assert result.stats.tombstones_removed == 1 and [r for r in view(log) if r[1] == "a"] == []


def test_offsets_keep_their_gaps_and_the_indexes_find_every_record(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"index.interval.bytes": 0}, clock)
    write(log, clock, [(f"k{i % 4}" if i % 2 else f"u{i}", f"v{i}") for i in range(40)])
    clean_once(tmp_path, {("t", 0): log}, clock.now)
    records = view(log)
    offsets = [r[0] for r in records]
    assert offsets == sorted(set(offsets)) and offsets != list(range(offsets[0], offsets[0] + len(offsets)))
    for offset, _key, value in records:
        assert log.read(offset, 1, max_offset=offset + 1)[0].value.decode() == value
    log.close()
    again = open_log(tmp_path / "t-0", clock=clock)          # indexes on disk load back and agree
    assert view(again) == records


@pytest.mark.parametrize("crash_at", ["swap", "deleted", "removed"])
def test_a_crash_during_the_swap_is_finished_on_load(tmp_path, crash_at):
    clock = Clock()
    path = tmp_path / "t-0"
    log = open_log(path, clock=clock)
    write(log, clock, [(f"k{i % 3}", f"v{i}") for i in range(30)])
    reference = open_log(tmp_path / "ref-0", clock=clock)
    write(reference, Clock(), [(f"k{i % 3}", f"v{i}") for i in range(30)])
    ltc, _ = cleaner.log_to_clean(("t", 0), log, None, clock.now)
    cleaner.clean(ltc, clock.now, crash_at=crash_at)            # stops after that step, the log closed
    assert any(name.endswith(".swap") for name in os.listdir(path))
    reopened = open_log(path, clock=clock)
    assert not any(name.endswith((".swap", ".cleaned", ".deleted")) for name in os.listdir(path))
    first_group = [r for r in view(reopened) if r[0] < reopened.segments[1].base_offset]
    assert first_group == []               # the first segment's records all had later values: it was cleaned
    assert view(reopened)[-3:] == view(reference)[-3:]


def test_a_crash_before_the_swap_leaves_the_old_segments(tmp_path):
    clock = Clock()
    path = tmp_path / "t-0"
    log = open_log(path, clock=clock)
    write(log, clock, [(f"k{i % 3}", f"v{i}") for i in range(30)])
    before = view(log)
    stray = log.create_cleaned_segment(0, clock.now)             # a cleaning cut short before its swap
    stray.close()
    log.close()
    reopened = open_log(path, clock=clock)
    assert view(reopened) == before and not any(n.endswith(".cleaned") for n in os.listdir(path))


def test_a_producer_s_last_batch_stays_as_an_empty_batch_and_readers_step_over_it(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock=clock)
    log.append_batches(rb.encode_batch([(b"k", b"1")], base_timestamp=clock.now, producer_id=7, producer_epoch=0,
                                       base_sequence=0))
    write(log, clock, [("k", "2"), ("j", "1")])
    log.roll()
    result = clean_once(tmp_path, {("t", 0): log}, clock.now)
    assert result.stats.empty_batches_kept == 1
    header = rb.read_batch_header(log.read_batches(0).records)
    assert (header.base_offset, header.records_count, header.producer_id, header.base_sequence) == (0, 0, 7, 0)
    assert log.read(0)[0].offset == 1                # a read at 0 steps over the emptied batch
    assert view(log) == [(1, "k", "2"), (2, "j", "1")]


def test_the_manager_remembers_what_its_last_cleaning_read_and_kept(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"delete.retention.ms": 60_000}, clock)
    write(log, clock, [("a", "1"), ("b", "1"), ("a", "2"), ("c", "1"), ("b", "2"), ("c", None), ("a", "3"), ("d", "1"),
                       ("e", "1")])
    before = view(log)
    segments = [(s.base_offset, s.size) for s in log.segments[:-1]]
    manager = cleaner.LogCleanerManager(str(tmp_path))
    result = manager.clean_filthiest(tmp_path, {("t", 0): log}, clock.now)
    assert manager.last_cleaning[("t", 0)] is result and result.cleaned_ms == clock.now
    read = [r for batch in result.stats.batches_read for r in batch.records]
    shown = [(r.offset, r.key.decode(), None if r.value is None else r.value.decode()) for r in read]
    assert shown == [r for r in before if r[0] < result.end_offset]          # every record, as the log had it
    assert [(r.offset, r.key.decode()) for r in read if r.retained] == \
        [(o, k) for o, k, _ in view(log) if o < result.end_offset]          # the kept ones are the log's now
    assert {b.outcome for b in result.stats.batches_read} == {"removed", "copied", "rewritten"}
    assert [b.segment_base_offset for b in result.stats.batches_read] == \
        [b for b in (0, 0, 0, 0, 4, 4, 4, 4) if b < result.end_offset]      # four one-record batches a segment
    assert result.stats.segments_read == segments                          # every inactive one, with its size
    manager.forget(("t", 0))
    assert ("t", 0) not in manager.last_cleaning


def test_what_a_cleaning_remembers_is_bounded(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", {"segment.bytes": 1_000_000}, clock)
    big = "v" * (cleaner.READ_BYTES_MAX + 10)
    for n in range(3):
        log.append([(f"k{i % 7}".encode(), big.encode()) for i in range(100)], timestamp_ms=clock.now + n)
    log.roll()
    result = clean_once(tmp_path, {("t", 0): log}, clock.now)
    read = [r for batch in result.stats.batches_read for r in batch.records]
    assert result.stats.records_before == 300 and len(read) == result.stats.records_read == cleaner.READ_RECORDS_MAX
    assert len(result.stats.batches_read) == 2 and [len(b.records) for b in result.stats.batches_read] == [100, 100]
    assert all(r.cut and len(r.value) == cleaner.READ_BYTES_MAX for r in read)
