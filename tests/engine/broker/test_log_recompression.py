"""A leader's append to a topic whose compression.type is not the batch's codec (LogValidator's
rebuild): what is kept, what changes, what is refused; and what a follower's append keeps."""
from __future__ import annotations

import random

import pytest

from engine.storage import record_batch as rb
from engine.storage.errors import InvalidConfigError, RecordTooLargeError
from engine.storage.log import Log
from engine.storage.log_validator import target_codec

T0 = 1_700_000_000_000
RECORDS = [(b"k%d" % i, b"the same words again " * 10, T0 + i, [("h", b"v")]) for i in range(20)]


def producer_batch(codec: int = rb.GZIP, **fields) -> bytes:
    return rb.encode_batch(RECORDS, producer_id=7, producer_epoch=2, base_sequence=40, compression=codec, **fields)


def stored(log: Log) -> list[tuple[rb.BatchHeader, list[rb.Record]]]:
    data = log.read_batches(0).records
    return [rb.decode_batch(data, pos) for pos, _ in rb.iter_batches(data)]


@pytest.mark.parametrize(("topic", "source", "expected"), [
    ("producer", rb.GZIP, rb.GZIP), ("producer", rb.NONE, rb.NONE), ("gzip", rb.GZIP, rb.GZIP),
    ("zstd", rb.GZIP, rb.ZSTD), ("uncompressed", rb.LZ4, rb.NONE), ("snappy", rb.NONE, rb.SNAPPY)])
def test_the_target_codec_is_brokercompressiontypes(topic: str, source: int, expected: int) -> None:
    assert target_codec(topic, source) == expected


def test_a_gzip_batch_on_a_zstd_topic_is_rebuilt_with_zstd_keeping_every_record_and_producer_field(tmp_path) -> None:
    log = Log(str(tmp_path / "t-0"), {"compression.type": "zstd"}, clock_ms=lambda: T0)
    log.append(RECORDS[:3], timestamp_ms=T0)                    # offsets 0..2 first
    info = log.append_batches(producer_batch(), leader_epoch=5)
    (_, _), (header, records) = stored(log)
    assert (header.compression, header.base_offset, header.last_offset, info.first_offset) == (rb.ZSTD, 3, 22, 3)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (7, 2, 40)
    assert (header.partition_leader_epoch, header.base_timestamp, header.max_timestamp) == (5, T0, T0 + 19)
    assert [(r.key, r.value, r.timestamp, [(h.key, h.value) for h in r.headers]) for r in records] == [
        (k, v, t, h) for k, v, t, h in RECORDS]
    assert [r.offset for r in records] == list(range(3, 23))


def test_the_producer_s_bytes_are_kept_when_the_topic_says_producer_or_the_same_codec(tmp_path) -> None:
    for i, config in enumerate(({}, {"compression.type": "producer"}, {"compression.type": "gzip",
                                                                       "compression.gzip.level": 1})):
        log = Log(str(tmp_path / f"t-{i}"), config, clock_ms=lambda: T0)
        batch = producer_batch()
        log.append_batches(batch, leader_epoch=0)
        data = log.read_batches(0).records
        assert data[rb.ATTRIBUTES_OFFSET:] == rb.with_partition_leader_epoch(batch, 0)[rb.ATTRIBUTES_OFFSET:]


def test_a_log_append_time_topic_stamps_the_rebuilt_batch(tmp_path) -> None:
    log = Log(str(tmp_path / "t-0"), {"compression.type": "lz4", "message.timestamp.type": "LogAppendTime"},
              clock_ms=lambda: T0 + 5000)
    log.append_batches(producer_batch(), leader_epoch=0)
    [(header, records)] = stored(log)
    assert (header.compression, header.timestamp_type, header.max_timestamp) == (rb.LZ4, rb.LOG_APPEND_TIME, T0 + 5000)
    assert {r.timestamp for r in records} == {T0 + 5000}
    assert rb.batch_crc_ok(log.read_batches(0).records)


def test_an_uncompressed_control_batch_is_not_compressed(tmp_path) -> None:
    log = Log(str(tmp_path / "t-0"), {"compression.type": "zstd"}, clock_ms=lambda: T0)
    marker = rb.encode_batch([(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00", T0)], producer_id=7,
                             producer_epoch=2, is_transactional=True, is_control=True)
    log.append_batches(marker, leader_epoch=0)
    [(header, _)] = stored(log)
    assert header.compression == rb.NONE and header.is_control


def test_a_batch_too_large_once_recompressed_is_refused_and_nothing_is_written(tmp_path) -> None:
    incompressible = [(b"k", random.Random(1).randbytes(1000), T0)]   # gzip adds its header and trailer
    batch = rb.encode_batch(incompressible, compression=rb.NONE)
    log = Log(str(tmp_path / "t-0"), {"compression.type": "gzip", "max.message.bytes": len(batch)},
              clock_ms=lambda: T0)
    with pytest.raises(RecordTooLargeError, match="once recompressed with gzip, larger than max.message.bytes"):
        log.append_batches(batch, leader_epoch=0)
    assert log.log_end_offset == 0 and log.size_in_bytes() == 0


def test_a_follower_keeps_the_leader_s_bytes_whatever_its_topic_config(tmp_path) -> None:
    leader = Log(str(tmp_path / "leader"), {"compression.type": "zstd"}, clock_ms=lambda: T0)
    leader.append_batches(producer_batch(), leader_epoch=1)
    shipped = leader.read_batches(0).records
    follower = Log(str(tmp_path / "follower"), {"compression.type": "snappy"}, clock_ms=lambda: T0)
    follower.append_batches(shipped, assign_offsets=False)
    assert follower.read_batches(0).records == shipped


@pytest.mark.parametrize("config", [{"compression.type": "none"}, {"compression.type": "LZ4"},
                                    {"compression.zstd.level": 23}, {"compression.gzip.level": 0}])
def test_a_bad_topic_compression_config_names_its_field(tmp_path, config) -> None:
    with pytest.raises(InvalidConfigError, match=f"configuration {next(iter(config))}"):
        Log(str(tmp_path / "t-0"), config, clock_ms=lambda: T0)
