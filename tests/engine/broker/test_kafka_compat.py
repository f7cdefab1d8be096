"""Byte compatibility with an independent implementation: kafka-python's v2 builder and reader.

kafka-python's producer writes partitionLeaderEpoch 0 (Kafka's Java producer writes -1, our
default); apart from that its builder and ours pick every field the same way (baseOffset 0,
baseTimestamp = first record's timestamp, maxTimestamp = the largest), so for the same inputs the
uncompressed bytes must be identical once we pass partition_leader_epoch=0.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from engine.storage import record_batch as rb
from engine.storage.record_batch import Header, Record, decode_batch, encode_batch

T0 = 1_700_000_000_000
KAFKA_PYTHON_LEADER_EPOCH = 0

RECORDS = [
    (b"user-1", b"clicked", T0, [("trace-id", b"abc"), ("empty", None)]),
    (None, b"no key", T0 + 3, []),
    (b"user-2", None, T0 + 1, []),                      # tombstone, timestamp below the max
    (b"", b"", T0 + 250, [("\u00e9t\u00e9", b"\x00\xff")]),
    (b"user-3", b"v" * 300, T0 + 70_000, []),           # two-byte lengths, three-byte delta
]


def _kafka_python_batch(records: list, *, compression: int = rb.NONE, producer_id: int = -1,
                        producer_epoch: int = -1, base_sequence: int = -1,
                        is_transactional: bool = False) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=is_transactional,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        batch_size=1 << 30)
    for offset, (key, value, timestamp, headers) in enumerate(records):
        assert builder.append(offset, timestamp, key, value, headers) is not None
    return bytes(builder.build())


def _kafka_python_read(batch: bytes) -> tuple[DefaultRecordBatch, list]:
    reader = DefaultRecordBatch(batch)
    assert reader.validate_crc()
    return reader, [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers])
                    for r in reader]


def _compressible_records() -> list[tuple[bytes, bytes, int, list]]:
    return [(b"k%d" % i, b"the same words again " * 20, T0 + i, []) for i in range(40)]


def _as_tuples(records: list[Record]) -> list:
    return [(r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
            for r in records]


def _expected(records: list, base_offset: int = 0) -> list:
    return [(base_offset + i, t, k, v, list(h)) for i, (k, v, t, h) in enumerate(records)]


def test_we_decode_a_batch_built_by_kafka_python() -> None:
    batch = _kafka_python_batch(RECORDS, producer_id=4242, producer_epoch=7, base_sequence=99)
    header, records = decode_batch(batch)
    assert (header.magic, header.base_offset, header.producer_id, header.producer_epoch,
            header.base_sequence, header.records_count, header.last_offset_delta) == (
        2, 0, 4242, 7, 99, len(RECORDS), len(RECORDS) - 1)
    assert (header.base_timestamp, header.max_timestamp) == (T0, T0 + 70_000)
    assert rb.batch_crc_ok(batch)
    assert _as_tuples(records) == _expected(RECORDS)
    assert records[1].headers == () and records[0].headers[1] == Header("empty", None)


def test_kafka_python_reads_a_batch_we_built() -> None:
    batch = encode_batch(RECORDS, base_offset=500, producer_id=4242, producer_epoch=7,
                         base_sequence=99, partition_leader_epoch=3)
    reader, records = _kafka_python_read(batch)
    assert (reader.base_offset, reader.leader_epoch, reader.producer_id, reader.producer_epoch,
            reader.base_sequence, reader.first_timestamp, reader.max_timestamp) == (
        500, 3, 4242, 7, 99, T0, T0 + 70_000)
    assert records == _expected(RECORDS, base_offset=500)


def test_we_build_the_same_bytes_as_kafka_python() -> None:
    theirs = _kafka_python_batch(RECORDS, producer_id=4242, producer_epoch=7, base_sequence=99)
    ours = encode_batch(RECORDS, producer_id=4242, producer_epoch=7, base_sequence=99,
                        partition_leader_epoch=KAFKA_PYTHON_LEADER_EPOCH)
    assert ours == theirs


def test_transactional_flags_agree() -> None:
    theirs = _kafka_python_batch(RECORDS[:2], producer_id=1, producer_epoch=0, base_sequence=0,
                                 is_transactional=True)
    assert decode_batch(theirs)[0].is_transactional
    assert theirs == encode_batch(RECORDS[:2], producer_id=1, producer_epoch=0, base_sequence=0,
                                  is_transactional=True,
                                  partition_leader_epoch=KAFKA_PYTHON_LEADER_EPOCH)


def test_we_decode_a_gzip_batch_built_by_kafka_python() -> None:
    compressible = _compressible_records()
    batch = _kafka_python_batch(compressible, compression=rb.GZIP)
    header, records = decode_batch(batch)
    assert header.compression == rb.GZIP  # kafka-python falls back to none if gzip does not help
    assert _as_tuples(records) == _expected(compressible)


def test_kafka_python_reads_a_gzip_batch_we_built() -> None:
    batch = encode_batch(RECORDS, compression=rb.GZIP)
    reader, records = _kafka_python_read(batch)
    assert reader.compression_type == rb.GZIP
    assert records == _expected(RECORDS)


CODECS = [rb.GZIP, rb.SNAPPY, rb.LZ4, rb.ZSTD]
CODEC_IDS = [rb.COMPRESSION_NAMES[c] for c in CODECS]


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_IDS)
def test_we_decode_each_codec_built_by_kafka_python(codec: int) -> None:
    compressible = _compressible_records()
    batch = _kafka_python_batch(compressible, compression=codec)
    header, records = decode_batch(batch)
    assert header.compression == codec   # kafka-python would fall back to none had it not helped
    assert header.size_in_bytes < len(encode_batch(compressible))
    assert _as_tuples(records) == _expected(compressible)


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_IDS)
def test_kafka_python_reads_each_codec_we_built(codec: int) -> None:
    compressible = _compressible_records()
    batch = encode_batch(compressible, compression=codec, base_offset=70)
    reader, records = _kafka_python_read(batch)
    assert reader.compression_type == codec
    assert records == _expected(compressible, base_offset=70)


@pytest.mark.parametrize(("codec", "level"), [(rb.GZIP, 1), (rb.GZIP, 9), (rb.LZ4, 1), (rb.LZ4, 17),
                                              (rb.ZSTD, -5), (rb.ZSTD, 19)])
def test_kafka_python_reads_our_batches_at_any_level(codec: int, level: int) -> None:
    compressible = _compressible_records()
    batch = encode_batch(compressible, compression=codec, compression_level=level)
    assert _kafka_python_read(batch)[1] == _expected(compressible)


def test_our_gzip_and_snappy_are_kafka_pythons_bytes() -> None:
    """The same records compress to the same batch: kafka-python's gzip (level 9, its default)
    and snappy (xerial framing, 32 KiB blocks) write the stream as Kafka's Java producer does,
    except gzip's header, which kafka-python leaves to Python's gzip module (XFL and OS bytes)."""
    compressible = _compressible_records() * 3    # > 32 KiB: two xerial blocks
    theirs = _kafka_python_batch(compressible, compression=rb.SNAPPY)
    assert theirs == encode_batch(compressible, compression=rb.SNAPPY,
                                  partition_leader_epoch=KAFKA_PYTHON_LEADER_EPOCH)
    theirs = _kafka_python_batch(compressible, compression=rb.GZIP)
    ours = encode_batch(compressible, compression=rb.GZIP, compression_level=9,
                        partition_leader_epoch=KAFKA_PYTHON_LEADER_EPOCH)
    body = slice(rb.RECORDS_OFFSET + 10, None)    # after the 10-byte gzip header
    assert ours[body] == theirs[body]


nullable_bytes = st.none() | st.binary(max_size=30) | st.integers(
    min_value=60, max_value=9000).map(lambda n: b"x" * n)
headers = st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)), max_size=3)
records_strategy = st.lists(
    st.tuples(nullable_bytes, nullable_bytes, st.integers(min_value=0, max_value=2**42), headers),
    min_size=1, max_size=80)


@settings(max_examples=100, deadline=None)
@given(records=records_strategy,
       producer_id=st.integers(min_value=-1, max_value=2**63 - 1),
       producer_epoch=st.integers(min_value=-1, max_value=2**15 - 1),
       base_sequence=st.integers(min_value=-1, max_value=2**31 - 1))
def test_any_batch_is_byte_identical_to_kafka_python(records: list, producer_id: int,
                                                     producer_epoch: int,
                                                     base_sequence: int) -> None:
    theirs = _kafka_python_batch(records, producer_id=producer_id, producer_epoch=producer_epoch,
                                 base_sequence=base_sequence)
    ours = encode_batch(records, producer_id=producer_id, producer_epoch=producer_epoch,
                        base_sequence=base_sequence,
                        partition_leader_epoch=KAFKA_PYTHON_LEADER_EPOCH)
    assert ours == theirs
    assert _as_tuples(decode_batch(theirs)[1]) == _kafka_python_read(ours)[1] == _expected(records)


@settings(max_examples=60, deadline=None)
@given(records=records_strategy, codec=st.sampled_from(CODECS))
def test_any_compressed_batch_reads_the_same_both_ways(records: list, codec: int) -> None:
    ours = encode_batch(records, compression=codec)
    assert _kafka_python_read(ours)[1] == _expected(records)
    theirs = _kafka_python_batch(records, compression=codec)   # maybe uncompressed: kafka-python's choice
    assert _as_tuples(decode_batch(theirs)[1]) == _expected(records)
