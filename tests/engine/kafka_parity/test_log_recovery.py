"""Kafka's LogLoaderTest (core/src/test/scala/unit/kafka/log/LogLoaderTest.scala): a log reopened
after a clean or an unclean shutdown, with indexes missing, corrupt or bogus and a log tail torn,
on engine.storage.log.Log.

Kafka decides "unclean" from the missing .kafka_cleanshutdown marker; the engine's Log recovers
from its `recovery_point` (None: no checkpoint, every segment is validated), which is what an
unclean open with that recovery point does in Kafka. Not translated: producer-state snapshots,
transaction indexes, segment splitting (offset overflow of pre-0.11 logs), remote storage.
LogRecoveryTest (core/.../server/LogRecoveryTest.scala) checks the high-watermark checkpoint of
a replicated partition, a broker-level file: tests/engine/test_checkpoint.py and the replication
tests hold the engine's counterparts."""
from __future__ import annotations

import os
import random

from storage_parity import T0, batch

from engine.storage import record_batch as rb
from engine.storage.log import Log


def _open(path, config: dict, **kw) -> Log:
    return Log(str(path), config, clock_ms=lambda: T0, **kw)


def _append(log: Log, value: bytes, timestamp: int = T0) -> None:
    log.append_batches(batch(value, timestamp=timestamp), leader_epoch=0)


def test_a_reopened_log_recovers_to_the_same_offsets_and_index_entries(tmp_path):
    """Mirrors LogLoaderTest.testLogRecoversToCorrectOffset: with or without recovering the active
    segment, the reopened log has the same log end, offset index entries and time index — its
    last entry (largest timestamp, its offset) included, which LogSegment.recover restores with
    timeIndex.maybeAppend(..., skipFullCheck = true)."""
    rng = random.Random(807)
    config = {"segment.bytes": 7 * 100, "index.interval.bytes": 3 * 100, "segment.index.bytes": 4096}
    log = _open(tmp_path, config)
    for i in range(100):
        _append(log, rng.randbytes(100), T0 + i * 10)
    assert log.log_end_offset == 100
    active = log.active_segment
    offset_entries = active.offset_index.all_entries()
    log.close()   # a clean close appends (largest timestamp, its offset) to the time index, as a roll does
    time_entries = _open(tmp_path, config, recovery_point=100).active_segment.time_index.all_entries()
    assert time_entries[-1] == (active.max_timestamp, 99)

    def verify(reopened: Log, expected_recovery_point: int) -> None:
        assert reopened.recovery_point == expected_recovery_point
        assert reopened.log_end_offset == 100
        assert reopened.active_segment.offset_index.all_entries() == offset_entries
        assert reopened.active_segment.time_index.all_entries() == time_entries

    verify(_open(tmp_path, config, recovery_point=100), 100)        # nothing recovered
    recovered = _open(tmp_path, config, recovery_point=10)           # the active segment recovered
    verify(recovered, 10)
    recovered.flush()
    verify(recovered, 100)


REBUILD_CONFIG = {"segment.bytes": 200, "index.interval.bytes": 1}


def _closed_log_of_200_records(path) -> list[str]:
    """A closed log of 200 small records over many segments; the paths of all its index files."""
    log = _open(path, REBUILD_CONFIG)
    for i in range(200):
        _append(log, bytes(10), T0 + i * 10)
    paths = [p for s in log.segments for p in (s.index_path, s.time_index_path)]
    log.close()
    return paths


def test_deleted_indexes_are_rebuilt_on_open(tmp_path):
    """Mirrors LogLoaderTest.testIndexRebuild."""
    config = REBUILD_CONFIG
    for path in _closed_log_of_200_records(tmp_path):
        os.remove(path)
    log = _open(tmp_path, config)
    assert log.log_end_offset == 200
    assert log.segments[0].offset_index.entries > 0 and log.segments[0].time_index.entries > 0
    _check_every_offset_and_timestamp(log, 200)


def test_corrupt_indexes_are_rebuilt_on_open(tmp_path):
    """Mirrors LogLoaderTest.testCorruptIndexRebuild: each index file holds two spaces."""
    config = REBUILD_CONFIG
    for path in _closed_log_of_200_records(tmp_path):
        with open(path, "wb") as f:
            f.write(b"  ")
    log = _open(tmp_path, config)
    assert log.log_end_offset == 200
    _check_every_offset_and_timestamp(log, 200)


def _check_every_offset_and_timestamp(log: Log, count: int) -> None:
    for i in range(count):
        assert rb.read_batch_header(log.read_batches(i, 100).records).last_offset == i
        assert log.offset_for_timestamp(T0 + i * 10) == i


def test_index_files_without_a_log_are_removed_on_open(tmp_path):
    """Mirrors LogLoaderTest.testBogusIndexSegmentsAreRemoved."""
    os.makedirs(tmp_path / "t-0")
    for name in ("00000000000000000005.index", "00000000000000000005.timeindex"):
        (tmp_path / "t-0" / name).write_bytes(b"")
    size = len(batch(b"test"))
    log = _open(tmp_path / "t-0", {"segment.bytes": size * 5, "segment.index.bytes": 1000, "index.interval.bytes": 1})
    assert not (tmp_path / "t-0" / "00000000000000000005.index").exists()
    assert not (tmp_path / "t-0" / "00000000000000000005.timeindex").exists()
    for _ in range(10):
        _append(log, b"test")
    assert log.log_end_offset == 10


def test_a_reopened_log_truncates_across_its_segments(tmp_path):
    """Mirrors LogLoaderTest.testReopenThenTruncate."""
    config = {"segment.bytes": len(batch(b"test")) * 5, "segment.index.bytes": 1000, "index.interval.bytes": 10000}
    log = _open(tmp_path, config)
    for _ in range(100):
        _append(log, b"test")
    log.close()
    log = _open(tmp_path, config)
    log.truncate_to(3)
    assert len(log.segments) == 1 and log.log_end_offset == 3


def test_leftover_deleted_files_are_removed_on_open(tmp_path):
    """Mirrors LogLoaderTest.testOpenDeletesObsoleteFiles (the engine deletes a segment at once; a
    `.deleted` file left by a crash is removed when the log opens)."""
    config = {"segment.bytes": len(batch(b"test")) * 5, "segment.index.bytes": 1000, "retention.ms": 999}
    log = _open(tmp_path, config)
    for _ in range(100):
        _append(log, b"test", T0 - 1000)
    log.update_high_watermark(log.log_end_offset)
    log.delete_old_segments()
    log.close()
    (tmp_path / "00000000000000000000.log.deleted").write_bytes(b"left by a crash")
    log = _open(tmp_path, config)
    assert len(log.segments) == 1
    assert not (tmp_path / "00000000000000000000.log.deleted").exists()


def test_garbage_after_the_last_batch_is_cut_on_recovery(tmp_path):
    """Mirrors LogLoaderTest.testCorruptLog (ten seeded rounds): nonsense appended to the active
    segment's log and index is cut away; every record written before is there, unchanged."""
    config = {"segment.bytes": 1000, "index.interval.bytes": 1, "max.message.bytes": 64 * 1024}
    for round_ in range(10):
        rng = random.Random(round_)
        path = tmp_path / f"round-{round_}"
        log = _open(path, config)
        count = 50 + rng.randrange(50)
        for _ in range(count):
            _append(log, b"test")
        before = log.records_from(0)
        active = log.active_segment
        log.close()
        for file in (active.index_path, active.log_path):
            with open(file, "ab") as f:
                f.write(rng.randbytes(rng.randrange(1024) + 1))
        log = _open(path, config, recovery_point=50)
        assert log.log_end_offset == count
        assert [(r.offset, r.key, r.value, r.timestamp) for r in log.records_from(0)] == \
            [(r.offset, r.key, r.value, r.timestamp) for r in before]


def test_a_log_that_ends_below_its_start_offset_starts_again_empty_at_it(tmp_path):
    """Mirrors LogLoaderTest.testLogEndLessThanStartAfterReopen: recovery cuts a segment below the
    checkpointed log start offset and drops the later ones; LogLoader's
    deleteSegmentsIfLogStartGreaterThanLogEnd then deletes every segment and opens one at the log
    start offset."""
    log = _open(tmp_path, {})
    for i in range(5):
        _append(log, str(i).encode())
        log.roll()
    assert len(log.segments) == 6
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(4)
    assert log.log_end_offset > log.log_start_offset == 4
    with open(log.segments[1].log_path, "w") as f:
        f.write("corruptRecord")
    log.close()
    log = _open(tmp_path, {}, log_start_offset=4)
    assert [s.base_offset for s in log.segments] == [4]
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (4, 4, 4)
    assert all(os.path.exists(p) for p in (log.active_segment.log_path, log.active_segment.index_path,
                                            log.active_segment.time_index_path))


def test_an_empty_active_segment_reopens_with_an_empty_time_index(tmp_path):
    """Mirrors LogLoaderTest.testRecoverWithEmptyActiveSegment."""
    config = {"segment.bytes": 700, "index.interval.bytes": 300, "segment.index.bytes": 4096}
    rng = random.Random(1747)
    log = _open(tmp_path, config)
    for i in range(100):
        _append(log, rng.randbytes(100), T0 + i * 10)
    log.roll()
    log.flush()
    end = log.log_end_offset
    log.close_after_crash(lose_unflushed=False)
    log = _open(tmp_path, config, recovery_point=end)
    assert (log.recovery_point, log.log_end_offset) == (end, 100)
    assert log.active_segment.size == 0 and log.active_segment.time_index.entries == 0
    for i in range(100):
        _append(log, rng.randbytes(100), T0 + i * 10)
    assert log.log_end_offset == 200


def test_a_time_index_entry_past_the_log_end_is_rebuilt_when_the_segment_is_loaded(tmp_path):
    """Mirrors LogLoaderTest.testBogusIndexSegmentsAreRemoved / TimeIndex.sanityCheck: a power loss
    cut the .log back to nothing, but the .timeindex still holds an entry for an offset the log no
    longer has. Loading trusts a segment below the recovery point only if its indexes fit it; this
    one is recovered (the indexes rebuilt), so the next appends index from a clean slate instead
    of failing on an entry 'larger than the new one' (found by tests/lab/test_model.py, seed 0)."""
    config = {"index.interval.bytes": 0}
    log = _open(tmp_path, config)
    for i in range(4):
        _append(log, b"v%d" % i, T0 + i)
    log.close()
    segment_log = os.path.join(tmp_path, "00000000000000000000.log")
    os.truncate(segment_log, 0)                        # the power loss: the log's bytes gone
    reopened = _open(tmp_path, config, recovery_point=0)
    assert reopened.log_end_offset == 0
    assert reopened.active_segment.time_index.all_entries() == []
    for i in range(3):
        _append(reopened, b"w%d" % i, T0 + 100 + i)
    reopened.close()                                   # the roll's last entry goes in without complaint
    assert _open(tmp_path, config, recovery_point=3).active_segment.time_index.all_entries()[-1] == (T0 + 102, 2)
