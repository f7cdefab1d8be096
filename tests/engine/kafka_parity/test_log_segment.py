"""Kafka's LogSegmentTest (storage/src/test/java/.../log/LogSegmentTest.java) and the rules of
LogSegment.java it exercises, on engine.storage.segment.LogSegment.

Kafka's tests build v0/v1 batches with `records(offset, ...)`; these use v2 batches at the same
offsets. Kafka's segment.read(offset, maxSize) is the engine's `locate` (the batch holding an
offset) plus `read_chunk`; these tests look at `locate`. Not translated: the transaction index
and epoch-cache recovery (no transactions here; the epoch cache is rebuilt by the log), file
suffix renames, preallocation and appendFromFile (the engine has none of them)."""
from __future__ import annotations

import os
import random

import pytest
from storage_parity import T0, append, batch, headers_of, new_segment

from engine.storage import record_batch as rb
from engine.storage.index import IndexFullError
from engine.storage.log_config import DEFAULT_SEGMENT_MS
from engine.storage.segment import LogSegment

NO_TIMESTAMP = rb.NO_TIMESTAMP
INT32_MAX = 2**31 - 1


def _segment(tmp_path, base_offset: int = 40, *, index_interval_bytes: int = 10, **config) -> LogSegment:
    """LogSegmentTest.createSegment: index.interval.bytes 10 unless said otherwise."""
    return new_segment(tmp_path, base_offset, index_interval_bytes=index_interval_bytes, **config)


def _batch_last_offsets(segment: LogSegment) -> list[int]:
    with open(segment.log_path, "rb") as f:
        return [h.last_offset for _, h in rb.iter_batches(f.read())]


@pytest.mark.parametrize("base_offset, largest_offset", [(0, 2**31), (1, 0), (100, 10), (2**31, 2**32)])
def test_an_offset_too_far_from_the_base_is_refused(tmp_path, base_offset, largest_offset):
    """Mirrors LogSegmentTest.testAppendForLogSegmentOffsetOverflowException: a last offset below
    the base, or more than Integer.MAX_VALUE above it, cannot be indexed."""
    segment = _segment(tmp_path, base_offset)
    data = batch(b"hello", base_offset=largest_offset)
    with pytest.raises(ValueError, match="relative to base"):
        append(segment, data)
    assert segment.size == 0 and os.path.getsize(segment.log_path) == 0


def test_a_lookup_in_an_empty_segment_finds_nothing(tmp_path):
    """Mirrors LogSegmentTest.testReadOnEmptySegment."""
    assert _segment(tmp_path).locate(40).position == -1


def test_a_lookup_before_the_first_offset_finds_the_first_batch(tmp_path):
    """Mirrors LogSegmentTest.testReadBeforeFirstOffset."""
    segment = _segment(tmp_path)
    append(segment, batch(b"hello", b"there", b"little", b"bee", base_offset=50))
    found = segment.locate(41)
    assert (found.position, found.batch_base_offset, found.batch_last_offset) == (0, 50, 53)


def test_a_lookup_after_the_last_offset_finds_nothing(tmp_path):
    """Mirrors LogSegmentTest.testReadAfterLast."""
    segment = _segment(tmp_path)
    append(segment, batch(b"hello", b"there", base_offset=50))
    assert segment.locate(52).position == -1


def test_a_lookup_in_a_gap_finds_the_next_batch(tmp_path):
    """Mirrors LogSegmentTest.testReadFromGap."""
    segment = _segment(tmp_path)
    append(segment, batch(b"hello", b"there", base_offset=50))
    append(segment, batch(b"alpha", b"beta", base_offset=60))
    assert segment.locate(55).batch_base_offset == 60


def test_truncating_the_last_batch_keeps_the_one_before(tmp_path):
    """Mirrors LogSegmentTest.testTruncate: 30 times, append two batches and cut the second."""
    segment = _segment(tmp_path)
    offset = 40
    for _ in range(30):
        append(segment, batch(b"hello", base_offset=offset))
        append(segment, batch(b"hello", base_offset=offset + 1))
        assert segment.locate(offset + 1).batch_last_offset == offset + 1
        segment.truncate_to(offset + 1)
        assert segment.next_offset == offset + 1
        assert segment.locate(offset).batch_last_offset == offset
        assert segment.locate(offset + 1).position == -1
        offset += 1


def test_an_empty_segment_truncated_is_not_rolled_for_its_index_or_its_age(tmp_path):
    """Mirrors LogSegmentTest.testTruncateEmptySegment: after a truncation an empty segment's
    indexes are not full and it does not roll on time — only when the next offset cannot be
    stored relative to its base."""
    max_segment_ms = 300_000
    segment = _segment(tmp_path, 0, segment_ms=max_segment_ms, segment_bytes=2**31 - 1)
    segment.close()
    reopened = LogSegment.open_existing(str(tmp_path), 0, segment.config, created_ms=T0)
    assert os.path.getsize(reopened.index_path) == 0 and os.path.getsize(reopened.time_index_path) == 0
    now = T0 + 500
    reopened.truncate_to(57, now)
    assert not reopened.offset_index.is_full and not reopened.time_index.is_full
    assert reopened.should_roll(1024, NO_TIMESTAMP, 100, now) is None
    now += max_segment_ms + 1
    assert reopened.should_roll(1024, NO_TIMESTAMP, 100, now) is None, "an empty segment never rolls on time"
    assert reopened.should_roll(1024, NO_TIMESTAMP, INT32_MAX + 200, now) == "relative offset overflow"


def test_truncation_reloads_the_largest_timestamp_and_the_next_offset(tmp_path):
    """Mirrors LogSegmentTest.testReloadLargestTimestampAndNextOffsetAfterTruncation: with an index
    entry every other batch, 30 batches give 14 time index entries; a cut at 41 leaves none, and
    the largest timestamp is the one batch left's."""
    one = len(batch(b"hello"))
    segment = _segment(tmp_path, index_interval_bytes=2 * one - 1)
    for offset in range(40, 70):
        append(segment, batch(b"hello", base_offset=offset, timestamp=offset * 10))
    assert segment.next_offset == 70
    assert segment.time_index.entries == 30 // 2 - 1
    segment.truncate_to(41)
    assert segment.time_index.entries == 0
    assert segment.max_timestamp == 400
    assert segment.next_offset == 41


def test_a_segment_truncated_to_empty_counts_its_age_from_the_truncation(tmp_path):
    """Mirrors LogSegmentTest.testTruncateFull: after truncateTo(0) Kafka resets the segment's
    `created` time, so segment.ms (for records without timestamps: wall clock since creation)
    counts from the truncation, not from when the segment was first made."""
    segment = _segment(tmp_path, segment_ms=1000)
    append(segment, batch(b"hello", b"there", base_offset=40, timestamp=NO_TIMESTAMP))
    now = T0 + 500
    segment.truncate_to(0, now)
    assert segment.size == 0 and segment.locate(40).position == -1
    assert not segment.time_index.is_full and not segment.offset_index.is_full
    append(segment, batch(b"hello", b"there", base_offset=40, timestamp=NO_TIMESTAMP))
    assert segment.should_roll(100, NO_TIMESTAMP, 42, T0 + 1001) is None, "500 ms old, not 1001"
    assert segment.should_roll(100, NO_TIMESTAMP, 42, now + 1001) == "segment.ms"


def test_an_offset_is_found_by_timestamp_through_the_time_index(tmp_path):
    """Mirrors LogSegmentTest.testFindOffsetByTimestamp."""
    one = len(batch(b"msg00"))
    segment = _segment(tmp_path, index_interval_bytes=2 * one - 1)
    for i in range(40, 50):
        append(segment, batch(b"msg%d" % i, base_offset=i, timestamp=i * 10))
    assert segment.max_timestamp == 490
    assert segment.find_offset_by_timestamp(420, 0) == 42, "an indexed timestamp"
    assert segment.find_offset_by_timestamp(421, 0) == 43
    assert segment.find_offset_by_timestamp(430, 0) == 43, "a timestamp the index does not hold"
    assert segment.find_offset_by_timestamp(431, 0) == 44
    assert segment.find_offset_by_timestamp(491, 0) is None, "past the last timestamp"
    assert segment.find_offset_by_timestamp(401, 0) == 41, "before the first indexed timestamp"
    assert segment.find_offset_by_timestamp(399, 0) == 40, "before the first timestamp"


def test_the_next_offset_follows_the_last_batch(tmp_path):
    """Mirrors LogSegmentTest.testNextOffsetCalculation."""
    segment = _segment(tmp_path)
    assert segment.next_offset == 40
    append(segment, batch(b"hello", b"there", b"you", base_offset=50))
    assert segment.next_offset == 53


def _write_nonsense(path: str, position: int, size: int, rng: random.Random) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        f.write(bytes(rng.randrange(255) for _ in range(size)))


def test_recovery_fixes_a_corrupt_offset_index(tmp_path):
    """Mirrors LogSegmentTest.testRecoveryFixesCorruptIndex."""
    segment = _segment(tmp_path, 0)
    for i in range(100):
        append(segment, batch(str(i).encode(), base_offset=i, timestamp=NO_TIMESTAMP))
    segment.sync_files()
    _write_nonsense(segment.index_path, 5, os.path.getsize(segment.index_path) - 5, random.Random(1))
    segment.recover(1 << 20)
    for i in range(100):
        assert segment.locate(i).batch_last_offset == i


def test_recovery_fixes_a_corrupt_time_index(tmp_path):
    """Mirrors LogSegmentTest.testRecoveryFixesCorruptTimeIndex."""
    segment = _segment(tmp_path, 0)
    for i in range(100):
        append(segment, batch(str(i).encode(), base_offset=i, timestamp=i * 10))
    segment.sync_files()
    _write_nonsense(segment.time_index_path, 5, os.path.getsize(segment.time_index_path) - 5, random.Random(2))
    segment.recover(1 << 20)
    for i in range(100):
        assert segment.find_offset_by_timestamp(i * 10, 0) == i
        if i < 99:
            assert segment.find_offset_by_timestamp(i * 10 + 1, 0) == i + 1


@pytest.mark.parametrize("seed", range(10))
def test_recovery_cuts_the_segment_at_the_first_corrupt_batch(tmp_path, seed):
    """Mirrors LogSegmentTest.testRecoveryWithCorruptMessage (ten seeded rounds, as Kafka's ten
    random ones)."""
    rng = random.Random(seed)
    segment = _segment(tmp_path, 0)
    for i in range(20):
        append(segment, batch(str(i).encode(), base_offset=i, timestamp=NO_TIMESTAMP))
    corrupt_from = rng.randrange(20)
    position = segment.locate(corrupt_from).position + rng.randrange(15)
    _write_nonsense(segment.log_path, position, os.path.getsize(segment.log_path) - position, rng)
    segment.recover(1 << 20)
    assert _batch_last_offsets(segment) == list(range(corrupt_from)), "should have truncated off bad batches"


def test_recovery_restores_the_largest_timestamp_in_the_time_index(tmp_path):
    """Mirrors LogSegment.recover's last step, `timeIndex.maybeAppend(maxTimestampSoFar,
    shallowOffsetOfMaxTimestampSoFar, skipFullCheck = true)` — "a normally closed segment always
    appends the biggest timestamp ever seen" — so a recovered segment's time index ends as a
    rolled one's does."""
    one = len(batch(b"x"))
    segment = _segment(tmp_path, 0, index_interval_bytes=2 * one - 1)
    for i in range(6):   # indexed at batches 2 and 4: the last batch's timestamp is not in the index
        append(segment, batch(b"x", base_offset=i, timestamp=1000 + i))
    assert segment.time_index.all_entries() == [(1002, 2), (1004, 4)]
    segment.on_become_inactive()
    rolled = segment.time_index.all_entries()
    assert rolled[-1] == (1005, 5)
    segment.recover(1 << 20)
    assert segment.time_index.all_entries() == rolled


def test_the_roll_time_is_the_first_batch_timestamp(tmp_path):
    """Mirrors LogSegmentTest.testGetFirstBatchTimestamp."""
    segment = _segment(tmp_path, 1)
    assert segment.rolling_based_timestamp is None
    append(segment, batch(b"one", base_offset=1, timestamp=1000))
    assert segment.rolling_based_timestamp == 1000


def test_truncating_to_an_offset_in_a_gap_removes_the_batch_after_it(tmp_path):
    """Mirrors LogSegmentTest.shouldTruncateEvenIfOffsetPointsToAGapInTheLog."""
    segment = _segment(tmp_path, cleanup_policy="compact")
    append(segment, batch(b"first message", base_offset=40, timestamp=40_000))
    append(segment, batch(b"message after gap", base_offset=43, timestamp=43_000))
    segment.truncate_to(41)
    assert _batch_last_offsets(segment) == [40]
    assert segment.next_offset == 41


def test_an_append_is_indexed_once_at_its_start_with_its_last_offset(tmp_path):
    """Mirrors LogSegment.append: `offsetIndex.append(largestOffset, physicalPosition)` once per
    append, however many batches it holds (a follower appends a fetched chunk whole)."""
    segment = _segment(tmp_path, 0, index_interval_bytes=0)
    append(segment, batch(b"a", base_offset=0, timestamp=10))
    chunk = b"".join(batch(b"b%d" % i, base_offset=1 + i, timestamp=20 + i) for i in range(3))
    position = segment.size
    append(segment, chunk)
    assert segment.offset_index.all_entries() == [(3, position)]
    assert segment.time_index.all_entries() == [(22, 3)]
    assert [segment.locate(o).batch_last_offset for o in range(4)] == [0, 1, 2, 3]


def test_an_append_the_full_index_cannot_take_leaves_the_segment_untouched(tmp_path):
    """Mirrors LogSegment.append's order of checks (ensureOffsetInRange, then the index) with
    OffsetIndex.append's "Attempt to append to a full index": the log rolls before a full index
    is asked for an entry (LogSegment.shouldRoll); appended anyway, nothing is written."""
    segment = _segment(tmp_path, 0, index_interval_bytes=0, segment_index_bytes=24)
    append(segment, batch(b"a", base_offset=0, timestamp=10))
    append(segment, batch(b"b", base_offset=1, timestamp=11))
    assert segment.time_index.is_full  # 2 slots, the last kept for the roll
    size, file_size = segment.size, os.path.getsize(segment.log_path)
    with pytest.raises(IndexFullError):
        append(segment, batch(b"c", base_offset=2, timestamp=12))
    assert (segment.size, os.path.getsize(segment.log_path), segment.next_offset) == (size, file_size, 2)
    assert segment.should_roll(100, 12, 2, T0) == "time index full"


def test_the_size_rule_rolls_when_the_next_append_would_pass_segment_bytes(tmp_path):
    """Mirrors LogSegment.shouldRoll: `size > maxSegmentBytes - messagesSize`."""
    data = batch(b"x" * 10)
    segment = _segment(tmp_path, 0, segment_bytes=2 * len(data), segment_ms=DEFAULT_SEGMENT_MS)
    assert segment.should_roll(len(data), T0, 0, T0) is None
    append(segment, data)
    assert segment.should_roll(len(data), T0, 1, T0) is None
    append(segment, batch(b"x" * 10, base_offset=1))
    assert segment.should_roll(1, T0, 2, T0) == "segment.bytes"
    assert headers_of(data)[0].size_in_bytes == len(data)
