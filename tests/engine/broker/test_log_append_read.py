from __future__ import annotations

import pytest

from engine.storage import record_batch as rb
from engine.storage.errors import (
    CorruptRecordAppendError,
    InvalidConfigError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
)
from engine.storage.log import Log


def _values(records):
    return [r.value for r in records]


def test_it_assigns_consecutive_offsets_from_zero(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    assert log.append([(b"k", b"m1"), (b"k", b"m2")]) == 0
    assert log.append([(None, b"m3")]) == 2
    assert log.log_start_offset == 0 and log.log_end_offset == 3
    records = log.read(0, 1 << 20)
    assert [(r.offset, r.key, r.value) for r in records] == [(0, b"k", b"m1"), (1, b"k", b"m2"), (2, None, b"m3")]


def test_it_keeps_null_keys_tombstones_headers_and_timestamps(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    log.append([(b"user-1", None, 1234, [("trace", b"abc"), ("empty", None)]), (b"", b"", 1235)])
    first, second = log.read(0, 1 << 20)
    assert first.value is None and first.is_tombstone and first.timestamp == 1234
    assert [(h.key, h.value) for h in first.headers] == [("trace", b"abc"), ("empty", None)]
    assert second.key == b"" and second.value == b"" and second.timestamp == 1235


def test_a_read_from_the_middle_of_a_batch_drops_the_records_before_it(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    log.append([(None, b"v%d" % i) for i in range(10)])  # one batch
    assert [r.offset for r in log.read(7, 1 << 20)] == [7, 8, 9]


def test_reading_at_the_log_end_returns_nothing_and_past_it_fails(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    log.append([(None, b"x")])
    assert log.read(1, 100) == []
    with pytest.raises(OffsetOutOfRangeError) as exc:
        log.read(2, 100)
    assert "[0, 1)" in str(exc.value) and exc.value.kafka_name == "OFFSET_OUT_OF_RANGE"


def test_max_bytes_is_soft_one_whole_batch_always_comes_back(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    log.append([(None, b"a" * 500)])
    log.append([(None, b"b" * 500)])
    assert [r.offset for r in log.read(0, 10)] == [0]          # KIP-74: at least one batch
    assert [r.offset for r in log.read(0, 10_000)] == [0, 1]


def test_max_offset_hides_records_at_and_above_it(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    for i in range(5):
        log.append([(None, b"%d" % i)])
    assert [r.offset for r in log.read(0, 1 << 20, max_offset=3)] == [0, 1, 2]


def test_a_large_record_list_is_split_into_producer_sized_batches(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    log.append([(None, b"x" * 100) for _ in range(1000)])
    sizes = [h.size_in_bytes for _, h in rb.iter_batches(open(log.active_segment.log_path, "rb").read())]
    assert len(sizes) > 1 and max(sizes) <= 16384 + 200
    assert log.log_end_offset == 1000 and len(log.read(0, 1 << 30)) == 1000


def test_it_refuses_a_batch_over_max_message_bytes_and_keeps_the_log_intact(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"max.message.bytes": 1000}, clock_ms=clock)
    log.append([(None, b"ok")])
    with pytest.raises(RecordTooLargeError, match="max.message.bytes=1000"):
        log.append([(None, b"x" * 2000)])
    assert log.log_end_offset == 1 and _values(log.read(0, 1 << 20)) == [b"ok"]


def test_the_broker_rewrites_base_offset_and_epoch_without_touching_records_or_crc(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    log.append([(None, b"first")])
    produced = rb.encode_batch([(b"k", b"v1"), (b"k", b"v2")], base_timestamp=clock())
    info = log.append_batches(produced, leader_epoch=7)
    assert (info.first_offset, info.last_offset) == (1, 2)
    on_disk = open(log.active_segment.log_path, "rb").read()
    _, header = list(rb.iter_batches(on_disk))[-1]
    assert header.base_offset == 1 and header.partition_leader_epoch == 7
    stored = on_disk[-header.size_in_bytes:]
    assert stored[rb.CRC_OFFSET:] == produced[rb.CRC_OFFSET:]  # CRC and everything it covers unchanged


def test_a_batch_with_a_bad_crc_is_refused(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    batch = bytearray(rb.encode_batch([(None, b"value")], base_timestamp=clock()))
    batch[-1] ^= 0xFF
    with pytest.raises(CorruptRecordAppendError, match="CRC"):
        log.append_batches(bytes(batch))
    assert log.log_end_offset == 0


def test_a_follower_append_keeps_the_leaders_offsets(tmp_path, clock):
    leader = Log(str(tmp_path / "leader"), clock_ms=clock)
    follower = Log(str(tmp_path / "follower"), clock_ms=clock)
    leader.append([(None, b"a"), (None, b"b")], leader_epoch=3)
    fetched = leader.read_batches(0, 1 << 20)
    follower.append_batches(fetched.records, assign_offsets=False)
    assert open(follower.active_segment.log_path, "rb").read() == open(leader.active_segment.log_path, "rb").read()
    with pytest.raises(Exception, match="below the log end"):
        follower.append_batches(fetched.records, assign_offsets=False)


def test_unknown_or_bad_config_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidConfigError, match="segmnt.bytes"):
        Log(str(tmp_path / "a"), {"segmnt.bytes": 10})
    with pytest.raises(InvalidConfigError, match="integer"):
        Log(str(tmp_path / "b"), {"segment.bytes": "lots"})
    log = Log(str(tmp_path / "c"), {"segment.bytes": "4096", "min.insync.replicas": 2})
    assert log.config.segment_bytes == 4096


def test_log_append_time_stamps_the_broker_clock(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"message.timestamp.type": "LogAppendTime"}, clock_ms=clock)
    log.append([(None, b"x")], timestamp_ms=5)
    record, = log.read(0, 100)
    assert record.timestamp == clock()


def test_text_keys_and_values_are_stored_as_utf8(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock)
    log.append([("键", "值"), (None, "plain")])
    assert [(r.key, r.value) for r in log.read(0, 1 << 20)] == [("键".encode(), "值".encode()), (None, b"plain")]


def test_a_segment_the_size_of_one_batch_holds_one_batch_each(tmp_path, clock):
    # A batch larger than segment.bytes is refused (RECORD_LIST_TOO_LARGE, tests/engine/kafka_parity).
    one_batch = len(rb.encode_batch([(None, b"0")], base_timestamp=clock()))
    log = Log(str(tmp_path / "t-0"), {"segment.bytes": one_batch}, clock_ms=clock)
    for i in range(3):
        log.append([(None, b"%d" % i)])
    assert [s.base_offset for s in log.segments] == [0, 1, 2]
    assert [r.value for r in log.read(1, 100)] == [b"1"]
