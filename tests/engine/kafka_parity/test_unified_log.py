"""Kafka's UnifiedLogTest (core/src/test/scala/unit/kafka/log/UnifiedLogTest.scala) — append,
roll, read, truncate, retention — and the LogValidator rules a leader's append goes through, on
engine.storage.log.Log; the error names are checked end to end where a producer would see them.

Kafka's `appendAsLeader` is `append_batches(data, leader_epoch=0)`, `appendAsFollower` is
`append_batches(data, assign_offsets=False)`. Differences kept on purpose (engine/storage/log.py
says why): a Log used alone lets its high watermark follow the log end until
`update_high_watermark` is first called; `maybe_increment_log_start_offset` stops at the high
watermark instead of throwing; segment.jitter.ms is the jitter itself, not a random draw below it.
Not translated: producer state, transactions, remote storage, topic ids, metrics, async deletion."""
from __future__ import annotations

import pytest
from storage_parity import T0, batch, keyed_batch, with_header

from engine import Cluster
from engine.storage import record_batch as rb
from engine.storage.errors import (
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
)
from engine.storage.log import Log

NO_TIMESTAMP = rb.NO_TIMESTAMP


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _log(tmp_path, clock, config: dict | None = None, name: str = "t-0", **kw) -> Log:
    return Log(str(tmp_path / name), config or {}, clock_ms=clock, **kw)


def _values(log: Log, offset: int = 0) -> list[bytes | None]:
    return [r.value for r in log.read(offset, 1 << 20)]


# -- append: what a leader refuses -------------------------------------------------------------------
def test_an_append_larger_than_a_segment_is_refused(tmp_path, clock):
    """Mirrors UnifiedLogTest.testMessageSetSizeCheck: UnifiedLog.append throws
    RecordBatchTooLargeException (RECORD_LIST_TOO_LARGE) when validRecords.sizeInBytes > segment.bytes,
    before any roll — no segment could hold it."""
    data = batch(b"You", b"bethe")
    log = _log(tmp_path, clock, {"segment.bytes": len(data) - 1})
    with pytest.raises(RecordBatchTooLargeError, match="exceeds the maximum configured segment size") as refused:
        log.append_batches(data, leader_epoch=0)
    assert refused.value.kafka_name == "RECORD_LIST_TOO_LARGE"
    assert (log.log_end_offset, log.size_in_bytes(), len(log.segments)) == (0, 0, 1)
    follower = _log(tmp_path, clock, {"segment.bytes": len(data) - 1}, name="follower")
    with pytest.raises(RecordBatchTooLargeError):
        follower.append_batches(data, assign_offsets=False)


def test_a_producer_is_told_record_list_too_large(tmp_path):
    """Mirrors UnifiedLogTest.testMessageSetSizeCheck end to end: the error the log raises is the
    one the producer's future fails with (Errors.RECORD_LIST_TOO_LARGE, not retriable)."""
    cluster = Cluster(1, str(tmp_path / "lab"), seed=1)
    cluster.create_topic("small", 1, 1, config={"segment.bytes": 100})
    refused = cluster.produce("small", None, "x" * 200, acks=1)
    fits = cluster.produce("small", None, "ok", acks=1)
    producer = cluster.producer("p", {"acks": "1", "linger.ms": 0})
    sent = producer.send("small", None, "y" * 200)
    producer.flush()
    cluster.run_until_idle()
    assert refused.error == "RECORD_LIST_TOO_LARGE" and not refused.acked
    assert sent.error == "RECORD_LIST_TOO_LARGE" and sent.attempts == 1
    assert fits.acked and [r.value for r in cluster.read("small", 0)] == [b"ok"]
    cluster.close()


def test_a_compacted_topic_refuses_records_without_a_key(tmp_path, clock):
    """Mirrors UnifiedLogTest.testCompactedTopicConstraints: LogValidator.validateKey, "Compacted
    topic cannot accept message without key" (INVALID_RECORD), compressed or not, first record or not."""
    log = _log(tmp_path, clock, {"cleanup.policy": "compact"})
    keyed = (b"and here it is", b"this message has a key")
    another = (b"another key", b"this message also has a key")
    unkeyed = (None, b"this message does not have a key")
    for refused in (keyed_batch(unkeyed, keyed), keyed_batch(unkeyed),
                    keyed_batch(keyed, unkeyed, compression=rb.GZIP)):
        with pytest.raises(InvalidRecordError, match="Compacted topic cannot accept message without key") as error:
            log.append_batches(refused, leader_epoch=0)
        assert error.value.kafka_name == "INVALID_RECORD"
    assert log.log_end_offset == 0
    log.append_batches(keyed_batch(keyed), leader_epoch=0)
    log.append_batches(keyed_batch(keyed, another), leader_epoch=0)
    log.append_batches(keyed_batch(keyed, compression=rb.GZIP), leader_epoch=0)
    assert log.log_end_offset == 4
    assert [r.key for r in log.read(0)] == [keyed[0], keyed[0], another[0], keyed[0]]


def test_a_producer_to_a_compacted_topic_is_told_invalid_record(tmp_path):
    """Mirrors UnifiedLogTest.testCompactedTopicConstraints end to end: a keyless record sent to a
    compacted topic fails with INVALID_RECORD; a keyed one is written."""
    cluster = Cluster(1, str(tmp_path / "lab"), seed=1)
    cluster.create_topic("table", 1, 1, config={"cleanup.policy": "compact"})
    keyless = cluster.produce("table", None, "v", partition=0, acks=1)
    keyed = cluster.produce("table", "k", "v", partition=0, acks=1)
    cluster.run_until_idle()
    assert keyless.error == "INVALID_RECORD"
    assert keyed.acked and [r.key for r in cluster.read("table", 0)] == [b"k"]
    cluster.close()


@pytest.mark.parametrize("compression", [rb.NONE, rb.GZIP], ids=["uncompressed", "gzip"])
@pytest.mark.parametrize("records_count, last_offset_delta, rule", [
    (4, 3, "premature EOF"),                      # the header says 4 records, the batch holds 3
    (2, 1, "records still remaining"),            # it says 2, there are 3
    (2, 2, "Inconsistent batch offset range|offset delta says"),  # the count and the offset range disagree
    (0, 2, "Invalid reported count|offset delta says"),
])
def test_a_batch_whose_count_disagrees_with_its_records_is_refused(tmp_path, clock, compression, records_count,
                                                                   last_offset_delta, rule):
    """Mirrors LogValidator.validateBatch ("Inconsistent batch offset range ... and count of
    records", "Invalid reported count") and DefaultRecordBatch's record iterator ("Incorrect
    declared batch size, premature EOF reached" / "records still remaining in file"), both
    InvalidRecordException: a leader decompresses a batch to check it before the batch is written,
    so a lying header (CRC valid) cannot poison every later read."""
    log = _log(tmp_path, clock)
    log.append_batches(batch(b"before"), leader_epoch=0)
    lying = with_header(batch(b"a", b"b", b"c", compression=compression),
                        records_count=records_count, last_offset_delta=last_offset_delta)
    assert rb.batch_crc_ok(lying)
    with pytest.raises(InvalidRecordError, match=rule) as refused:
        log.append_batches(lying, leader_epoch=0)
    assert refused.value.kafka_name == "INVALID_RECORD"
    log.append_batches(batch(b"after"), leader_epoch=0)
    assert _values(log) == [b"before", b"after"]


@pytest.mark.parametrize("compression", [rb.NONE, rb.GZIP], ids=["uncompressed", "gzip"])
def test_a_leader_takes_one_batch_per_append(tmp_path, clock, compression):
    """Mirrors LogValidatorTest.checkOnlyOneBatch: getFirstBatchAndMaybeValidateNoMoreBatches
    refuses a second v2 batch in one append (InvalidRecordException "Compressed outer record has
    more than one batch"), compressed or not; a follower copies many at once."""
    two = batch(b"a", compression=compression) + batch(b"b", compression=compression)
    log = _log(tmp_path, clock)
    with pytest.raises(InvalidRecordError, match="more than one batch") as refused:
        log.append_batches(two, leader_epoch=0)
    assert refused.value.kafka_name == "INVALID_RECORD" and log.log_end_offset == 0
    follower = _log(tmp_path, clock, name="follower")
    follower.append_batches(batch(b"a", compression=compression) +
                            batch(b"b", base_offset=1, compression=compression), assign_offsets=False)
    assert follower.log_end_offset == 2


def test_a_batch_too_large_for_max_message_bytes_is_refused(tmp_path, clock):
    """Mirrors UnifiedLogTest.testMessageSizeCheck (MESSAGE_TOO_LARGE)."""
    first = batch(b"You", b"bethe")
    second = batch(b"change (I need more bytes)... blah blah blah.", b"More padding boo hoo")
    log = _log(tmp_path, clock, {"max.message.bytes": len(second) - 1})
    log.append_batches(first, leader_epoch=0)
    with pytest.raises(RecordTooLargeError) as refused:
        log.append_batches(second, leader_epoch=0)
    assert refused.value.kafka_name == "MESSAGE_TOO_LARGE"


def test_a_follower_copies_a_batch_larger_than_max_message_bytes(tmp_path, clock):
    """Mirrors UnifiedLogTest.testMessageSizeCheckInAppendAsFollower: appendAsFollower passes
    ignoreRecordSize = true — the leader accepted it, whatever the limit is now."""
    first = batch(b"You", b"bethe", base_offset=0)
    second = batch(b"change (I need more bytes)... blah blah blah.", b"More padding boo hoo", base_offset=5)
    log = _log(tmp_path, clock, {"max.message.bytes": len(second) - 1, "cleanup.policy": "compact"})
    log.append_batches(first, assign_offsets=False)
    log.append_batches(second, assign_offsets=False)
    assert log.log_end_offset == 7


def test_a_follower_append_must_have_increasing_offsets(tmp_path, clock):
    """Mirrors UnifiedLogTest.testAppendWithOutOfOrderOffsetsThrowsException (OffsetsOutOfOrderException)."""
    log = _log(tmp_path, clock)
    chunk = b"".join(batch(b"value", base_offset=o) for o in (0, 1, 3, 2, 4))
    with pytest.raises(InvalidRecordError, match="increasing offsets"):
        log.append_batches(chunk, assign_offsets=False)
    assert log.log_end_offset == 0


def test_a_follower_append_below_the_log_end_is_refused(tmp_path, clock):
    """Mirrors UnifiedLogTest.testAppendBelowExpectedOffsetThrowsException (UnexpectedAppendOffsetException)."""
    log = _log(tmp_path, clock)
    for value in (b"0", b"1"):
        log.append_batches(batch(value), leader_epoch=0)
    for compression in (rb.NONE, rb.GZIP):
        with pytest.raises(InvalidRecordError, match="below the log end"):
            log.append_batches(batch(b"1", base_offset=1, compression=compression), assign_offsets=False)


def test_records_without_a_timestamp_or_a_value_are_appended(tmp_path, clock):
    """Mirrors UnifiedLogTest.testAppendWithNoTimestamp and testAppendMessageWithNullPayload."""
    log = _log(tmp_path, clock)
    log.append_batches(batch(b"value", key=b"key", timestamp=NO_TIMESTAMP), leader_epoch=0)
    log.append_batches(batch(None), leader_epoch=0)
    records = log.read(0)
    assert records[0].timestamp == NO_TIMESTAMP
    assert records[1].offset == 1 and records[1].value is None


# -- roll ----------------------------------------------------------------------------------------
def test_the_log_rolls_when_the_next_batch_would_pass_segment_bytes(tmp_path, clock):
    """Mirrors UnifiedLogTest.testSizeBasedLogRoll: ten batches to a segment."""
    size = len(batch(b"test"))
    log = _log(tmp_path, clock, {"segment.bytes": 10 * (size - 1)})
    for _ in range(10 + 1):
        log.append_batches(batch(b"test"), leader_epoch=0)
    assert len(log.segments) == 2


def test_the_log_rolls_on_wall_clock_time_for_records_without_timestamps_then_on_record_time(tmp_path, clock):
    """Mirrors UnifiedLogTest.testTimeBasedLogRollDuringAppend."""
    segment_ms = 60 * 60
    log = _log(tmp_path, clock, {"segment.ms": segment_ms})

    def append(timestamp: int = NO_TIMESTAMP) -> None:
        log.append_batches(batch(b"test", timestamp=timestamp), leader_epoch=0)

    clock.now += segment_ms + 1
    append()
    assert len(log.segments) == 1, "no roll that would leave an empty segment"
    append()
    assert len(log.segments) == 2, "the first segment was created more than segment.ms ago"
    for expected in (3, 4):
        clock.now += segment_ms + 1
        append()
        assert len(log.segments) == expected
    timestamp = clock.now + segment_ms + 1
    append(timestamp)
    assert len(log.segments) == 4, "the segment's first record had no timestamp: wall clock decides"
    clock.now += segment_ms + 1
    append(timestamp)
    assert len(log.segments) == 5
    clock.now += segment_ms + 1
    append(timestamp)
    assert len(log.segments) == 5, "record time decides: the first record's timestamp"
    append(clock.now)
    assert len(log.segments) == 6, "a record timestamp past segment.ms rolls"


def test_the_jitter_brings_a_time_roll_forward(tmp_path, clock):
    """Mirrors UnifiedLogTest.testTimeBasedLogRollJitter; the engine takes segment.jitter.ms as
    the jitter itself (Kafka draws it below that bound), so the roll time is repeatable."""
    segment_ms, jitter = 60 * 60 * 1000, 20 * 60 * 1000
    log = _log(tmp_path, clock, {"segment.ms": segment_ms, "segment.jitter.ms": jitter})
    log.append_batches(batch(b"test", timestamp=clock.now), leader_epoch=0)
    clock.now += segment_ms - jitter
    log.append_batches(batch(b"test", timestamp=clock.now), leader_epoch=0)
    assert len(log.segments) == 1
    clock.now += 1
    log.append_batches(batch(b"test", timestamp=clock.now), leader_epoch=0)
    assert len(log.segments) == 2


def test_six_one_record_appends_roll_at_0_2_4_with_a_24_byte_index(tmp_path, clock):
    """Mirrors UnifiedLog.maybeRoll / LogSegment.shouldRoll with TimeIndex.isFull (entries >=
    maxEntries - 1): segment.index.bytes 24 is 2 time index slots, one of them kept for the roll,
    so with index.interval.bytes 0 a segment takes two appends (the first is never indexed)."""
    log = _log(tmp_path, clock, {"segment.index.bytes": 24, "index.interval.bytes": 0})
    for i in range(6):
        log.append_batches(batch(b"%d" % i, timestamp=T0 + i), leader_epoch=0)
    assert [s.base_offset for s in log.segments] == [0, 2, 4]
    assert [s.time_index.all_entries() for s in log.segments[:2]] == [[(T0 + 1, 1)], [(T0 + 3, 3)]]


def test_a_follower_chunk_near_a_full_time_index_rolls_first_and_leaves_no_half_append(tmp_path, clock):
    """Mirrors UnifiedLog.append's order — maybeRoll (LogSegment.shouldRoll: timeIndex.isFull)
    before LogSegment.append, which indexes a chunk once — so a multi-batch follower append never
    finds the index full after its bytes are written, and the next append works."""
    leader = _log(tmp_path, clock, {"segment.index.bytes": 36, "index.interval.bytes": 0}, name="leader")
    follower = _log(tmp_path, clock, {"segment.index.bytes": 36, "index.interval.bytes": 0}, name="follower")
    for i in range(8):
        leader.append_batches(batch(b"%d" % i, timestamp=T0 + i), leader_epoch=0)
    assert [s.base_offset for s in leader.segments] == [0, 3, 6]   # 3 slots: 2 entries, one kept for the roll
    follower.append_batches(leader.read_batches(0, 1).records, assign_offsets=False)   # one batch, then
    while follower.log_end_offset < leader.log_end_offset:             # the rest of a leader segment at a time
        follower.append_batches(leader.read_batches(follower.log_end_offset, 1 << 20).records, assign_offsets=False)
    assert follower.log_end_offset == 8
    assert [r.value for r in follower.records_from(0)] == [b"%d" % i for i in range(8)]
    for segment in follower.segments:
        assert segment.time_index.entries <= segment.time_index.max_entries
        assert segment.offset_index.entries <= segment.offset_index.max_entries


def test_rolling_an_empty_segment_onto_its_own_offset_keeps_it(tmp_path, clock):
    """Mirrors UnifiedLogTest.testRollSegmentThatAlreadyExists."""
    log = _log(tmp_path, clock, {"segment.ms": 60 * 60})
    log.roll()
    assert len(log.segments) == 1
    log.append_batches(keyed_batch((b"k1", b"v1")), assign_offsets=False)
    log.append_batches(rb.encode_batch([(b"k2", b"v2", T0 + 10)], base_offset=1), assign_offsets=False)
    assert (len(log.segments), log.active_segment.base_offset, log.log_end_offset) == (1, 0, 2)
    log.roll()
    assert (log.active_segment.base_offset, len(log.segments)) == (2, 2)
    log.append_batches(rb.encode_batch([(b"k3", b"v3", T0 + 12)], base_offset=2), assign_offsets=False)
    assert [r.offset for r in log.read(2)] == [2] and len(log.segments) == 2


# -- read ----------------------------------------------------------------------------------------
def test_every_offset_reads_back_in_order_across_segments(tmp_path, clock):
    """Mirrors UnifiedLogTest.testAppendAndReadWithSequentialOffsets and testLogRolls."""
    log = _log(tmp_path, clock, {"segment.bytes": 100})
    values = [str(i).encode() for i in range(0, 100, 2)]
    for value in values:
        log.append_batches(batch(value), leader_epoch=0)
    assert len(log.segments) == len(values)
    for i, value in enumerate(values):
        first = log.read(i, 1)[0]
        assert (first.offset, first.key, first.value) == (i, None, value)
    assert log.read(len(values), 100) == [], "reading at the log end returns nothing"


def test_a_read_in_an_offset_gap_returns_the_next_record(tmp_path, clock):
    """Mirrors UnifiedLogTest.testAppendAndReadWithNonSequentialOffsets and testReadWithMinMessage
    (a compacted leader's offsets, copied by a follower)."""
    log = _log(tmp_path, clock, {"segment.bytes": 72, "cleanup.policy": "compact"})
    ids = list(range(50)) + list(range(50, 200, 7))
    for i in ids:
        log.append_batches(batch(str(i).encode(), base_offset=i), assign_offsets=False)
    for offset in range(50, max(ids)):
        expected = next(i for i in ids if i >= offset)
        for max_bytes in (1, 100, 100_000):
            first = log.read(offset, max_bytes)[0]
            assert (first.offset, first.value) == (expected, str(expected).encode())


def test_reads_outside_the_log_are_out_of_range(tmp_path, clock):
    """Mirrors UnifiedLogTest.testReadOutOfRange."""
    log = _log(tmp_path, clock, {"segment.bytes": 1024}, log_start_offset=1024)
    log.append_batches(batch(b"42"), leader_epoch=0)
    assert log.read_batches(1025, 1000).records == b"", "at the log end: nothing"
    for offset in (0, 1026):
        with pytest.raises(OffsetOutOfRangeError) as error:
            log.read_batches(offset, 1000)
        assert error.value.kafka_name == "OFFSET_OUT_OF_RANGE"


def test_a_read_inside_a_compressed_batch_returns_the_whole_batch(tmp_path, clock):
    """Mirrors UnifiedLogTest.testCompressedMessages."""
    log = _log(tmp_path, clock, {"segment.bytes": 110})
    log.append_batches(batch(b"hello", b"there", compression=rb.GZIP), leader_epoch=0)
    log.append_batches(batch(b"alpha", b"beta", compression=rb.GZIP), leader_epoch=0)
    firsts = [rb.read_batch_header(log.read_batches(o, 4096).records).base_offset for o in range(4)]
    assert firsts == [0, 0, 2, 2]


def test_a_read_stops_at_the_high_watermark(tmp_path, clock):
    """Mirrors UnifiedLogTest.testFetchUpToHighWatermark."""
    log = _log(tmp_path, clock, {"segment.bytes": 1024 * 1024})
    log.append_batches(batch(b"0", b"1", b"2"), leader_epoch=0)
    log.append_batches(batch(b"3", b"4"), leader_epoch=0)
    for hw in (0, 3, 5):
        log.update_high_watermark(hw)
        for offset in range(log.log_start_offset, log.log_end_offset + 1):
            records = log.read(offset, 1 << 20, max_offset=log.high_watermark)
            assert all(r.offset < hw for r in records)
            assert bool(records) == (offset < hw)


# -- high watermark, truncation, log start -----------------------------------------------------------
def test_the_high_watermark_stays_between_the_log_start_and_the_log_end(tmp_path, clock):
    """Mirrors UnifiedLogTest.testHighWatermarkMaintenance (once the replication layer owns the
    high watermark: a Log on its own lets it follow the log end)."""
    log = _log(tmp_path, clock, {"segment.bytes": 1024 * 1024})
    records = [(b"a", b"value", T0), (b"b", b"value", T0), (b"c", b"value", T0)]
    log.update_high_watermark(0)
    log.append_batches(rb.encode_batch(records), leader_epoch=0)
    assert log.high_watermark == 0, "an append does not move it"
    assert log.update_high_watermark(1) == 1
    assert log.update_high_watermark(5) == 3, "not past the log end"
    log.append_batches(rb.encode_batch(records, base_offset=3), assign_offsets=False)
    assert log.update_high_watermark(6) == 6
    log.truncate_to(3)
    assert log.high_watermark == 3, "a truncation pulls it back"
    log.append_batches(rb.encode_batch(records), leader_epoch=0)
    assert (log.high_watermark, log.log_end_offset, log.log_start_offset) == (3, 6, 0)
    log.truncate_fully_and_start_at(4)
    assert (log.log_end_offset, log.log_start_offset, log.high_watermark) == (4, 4, 4)


def test_truncation_to_any_offset_and_full_truncation(tmp_path, clock):
    """Mirrors UnifiedLogTest.testTruncateTo."""
    size = len(batch(b"test"))
    log = _log(tmp_path, clock, {"segment.bytes": 10 * size})

    def append_ten() -> None:
        for _ in range(10):
            log.append_batches(batch(b"test", timestamp=clock.now), leader_epoch=0)

    append_ten()
    assert (len(log.segments), log.log_end_offset) == (1, 10)
    end, total = log.log_end_offset, log.size_in_bytes()
    for offset in (end, end + 1):
        log.truncate_to(offset)
        assert (log.log_end_offset, log.size_in_bytes()) == (end, total), "nothing to cut"
    log.truncate_to(5)
    assert log.log_end_offset == 5 and log.size_in_bytes() < total
    log.truncate_to(0)
    assert (log.log_end_offset, log.size_in_bytes()) == (0, 0)
    append_ten()
    assert (log.log_end_offset, log.size_in_bytes()) == (end, total), "back where it was"
    log.truncate_fully_and_start_at(log.log_end_offset - 9)
    assert (log.log_end_offset, log.size_in_bytes()) == (1, 0)
    append_ten()
    assert log.log_end_offset > 10 and log.size_in_bytes() == total
    log.truncate_to(0)
    assert (log.log_end_offset, log.size_in_bytes()) == (0, 0), "below the first offset: all of it"


def test_after_a_truncation_the_indexes_have_room_again(tmp_path, clock):
    """Mirrors UnifiedLogTest.testIndexResizingAtTruncation: the active segment after truncateTo
    takes a segment's worth of appends without rolling for a full index."""
    size = len(batch(b"test"))
    log = _log(tmp_path, clock, {"segment.bytes": 10 * size, "index.interval.bytes": size - 1})
    for i in range(1, 21):
        log.append_batches(batch(b"test", timestamp=T0 + i), leader_epoch=0)
    assert len(log.segments) == 2
    assert log.segments[0].offset_index.entries == 9
    log.truncate_to(0)
    assert len(log.segments) == 1
    assert not log.active_segment.offset_index.is_full and not log.active_segment.time_index.is_full
    for i in range(1, 11):
        log.append_batches(batch(b"test", timestamp=T0 + 100 + i), leader_epoch=0)
    assert len(log.segments) == 1


def test_a_follower_builds_a_time_index_from_the_leaders_batches(tmp_path, clock):
    """Mirrors UnifiedLogTest.testBuildTimeIndexWhenNotAssigningOffsets."""
    log = _log(tmp_path, clock, {"segment.bytes": 10000, "index.interval.bytes": 1})
    for i in range(100):
        log.append_batches(batch(str(i).encode(), base_offset=100 + i, timestamp=T0 + i), assign_offsets=False)
    assert sum(s.time_index.entries for s in log.segments) == 100 - 1
    assert log.active_segment.time_index.last_entry()[0] == T0 + 100 - 1


def test_retention_never_deletes_at_or_above_the_high_watermark(tmp_path, clock):
    """Mirrors UnifiedLogTest.testCannotDeleteSegmentsAtOrAboveHighWatermark."""
    log = _log(tmp_path, clock, {"segment.bytes": 512, "segment.index.bytes": 1000, "retention.ms": 999})
    expired = clock.now - 1000
    for i in range(100):
        log.append_batches(batch(b"test%d" % i, timestamp=expired), leader_epoch=0)
    log.update_high_watermark(0)
    assert len(log.segments) > 5
    assert (log.high_watermark, log.log_start_offset, log.log_end_offset) == (0, 0, 100)
    for hw in range(101):
        assert log.update_high_watermark(hw) == hw
        log.delete_old_segments()
        assert log.log_start_offset <= hw
        first, *rest = log.segments
        assert log.log_start_offset <= first.base_offset <= hw
        assert all(s.base_offset > hw for s in rest)
    assert (log.log_start_offset, len(log.segments), log.active_segment.size) == (100, 1, 0)


def test_deleting_old_segments_keeps_the_log_end(tmp_path, clock):
    """Mirrors UnifiedLogTest.testThatGarbageCollectingSegmentsDoesntChangeOffset."""
    for count in (0, 1, 25):
        log = _log(tmp_path, clock, {"segment.bytes": 100, "retention.ms": 0}, name=f"t-{count}")
        for i in range(count):
            log.append_batches(batch(str(i).encode(), timestamp=clock.now - 10), leader_epoch=0)
        log.update_high_watermark(count)
        log.delete_old_segments()
        assert log.log_end_offset == count and len(log.segments) == 1
        assert log.delete_old_segments() == []
        assert log.append_batches(batch(b"hello", timestamp=clock.now), leader_epoch=0).first_offset == count


def test_the_log_start_offset_stops_at_the_high_watermark(tmp_path, clock):
    """Mirrors UnifiedLogTest.testCannotIncrementLogStartOffsetPastHighWatermark: Kafka throws
    OffsetOutOfRangeException; the engine moves the log start as far as the high watermark."""
    log = _log(tmp_path, clock, {"segment.bytes": 512})
    for i in range(100):
        log.append_batches(batch(b"test%d" % i), leader_epoch=0)
    log.update_high_watermark(25)
    log.maybe_increment_log_start_offset(26)
    assert log.log_start_offset == 25
