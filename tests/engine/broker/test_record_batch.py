"""Record batch v2: layout, round trips, corruption and truncation detection, in-place patches."""
from __future__ import annotations

import gzip
import struct
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.storage import record_batch as rb
from engine.storage.crc import crc32c
from engine.storage.record_batch import (
    CorruptRecordError,
    Header,
    Record,
    decode_batch,
    encode_batch,
    read_batch_header,
)

T0 = 1_700_000_000_000  # a fixed "now" in milliseconds


def _records(n: int, value_size: int = 100) -> list[tuple[bytes, bytes, int]]:
    return [(b"key-%d" % i, bytes([i % 256]) * value_size, T0 + i) for i in range(n)]


def _with_fresh_crc(batch: bytes | bytearray) -> bytes:
    """Recompute the CRC, so a test can reach the structural checks behind it."""
    out = bytearray(batch)
    struct.pack_into(">I", out, rb.CRC_OFFSET, crc32c(bytes(out[rb.ATTRIBUTES_OFFSET:])))
    return bytes(out)


# --- layout ------------------------------------------------------------------------------------

def test_the_header_layout_matches_kafka() -> None:
    assert rb.HEADER_STRUCT.format == ">qiibIhiqqqhii"
    assert rb.RECORD_BATCH_OVERHEAD == 61
    assert rb.LOG_OVERHEAD == 12
    assert (rb.BASE_OFFSET_OFFSET, rb.BATCH_LENGTH_OFFSET, rb.PARTITION_LEADER_EPOCH_OFFSET,
            rb.MAGIC_OFFSET, rb.CRC_OFFSET, rb.ATTRIBUTES_OFFSET, rb.LAST_OFFSET_DELTA_OFFSET,
            rb.BASE_TIMESTAMP_OFFSET, rb.MAX_TIMESTAMP_OFFSET, rb.PRODUCER_ID_OFFSET,
            rb.PRODUCER_EPOCH_OFFSET, rb.BASE_SEQUENCE_OFFSET, rb.RECORDS_COUNT_OFFSET,
            rb.RECORDS_OFFSET) == (0, 8, 12, 16, 17, 21, 23, 27, 35, 43, 51, 53, 57, 61)
    assert (rb.COMPRESSION_CODEC_MASK, rb.TIMESTAMP_TYPE_MASK, rb.TRANSACTIONAL_FLAG_MASK,
            rb.CONTROL_FLAG_MASK, rb.DELETE_HORIZON_FLAG_MASK) == (0x07, 0x08, 0x10, 0x20, 0x40)
    assert (rb.NONE, rb.GZIP, rb.SNAPPY, rb.LZ4, rb.ZSTD) == (0, 1, 2, 3, 4)


def test_a_one_record_batch_has_the_exact_bytes_worked_out_by_hand() -> None:
    batch = encode_batch([(b"k", b"v", 5)], base_offset=7, partition_leader_epoch=3)
    record = bytes.fromhex(
        "10"    # length 8 (zigzag 16)
        "00"    # attributes
        "00"    # timestampDelta 0
        "00"    # offsetDelta 0
        "02" "6b"  # keyLength 1, "k"
        "02" "76"  # valueLength 1, "v"
        "00")   # headersCount 0
    after_crc = struct.pack(">hiqqqhii", 0, 0, 5, 5, -1, -1, -1, 1) + record
    expected = (struct.pack(">qiib", 7, 49 + len(record), 3, 2)
                + struct.pack(">I", crc32c(after_crc)) + after_crc)
    assert batch == expected


def test_the_header_fields_are_what_was_asked() -> None:
    batch = encode_batch(_records(3), base_offset=100, partition_leader_epoch=4, producer_id=9,
                         producer_epoch=2, base_sequence=30, is_transactional=True)
    header = read_batch_header(batch)
    assert header == rb.BatchHeader(
        base_offset=100, batch_length=len(batch) - 12, partition_leader_epoch=4, magic=2,
        crc=header.crc, attributes=rb.TRANSACTIONAL_FLAG_MASK, last_offset_delta=2,
        base_timestamp=T0, max_timestamp=T0 + 2, producer_id=9, producer_epoch=2,
        base_sequence=30, records_count=3)
    assert header.size_in_bytes == len(batch)
    assert (header.last_offset, header.next_offset) == (102, 103)
    assert header.is_transactional and not header.is_control
    assert (header.compression, header.timestamp_type) == (rb.NONE, rb.CREATE_TIME)
    assert rb.batch_crc_ok(batch)


def test_the_defaults_are_kafkas_none_sentinels() -> None:
    header = read_batch_header(encode_batch([(b"k", b"v")], base_timestamp=T0))
    assert (header.base_offset, header.partition_leader_epoch, header.producer_id,
            header.producer_epoch, header.base_sequence) == (0, -1, -1, -1, -1)


# --- round trips -------------------------------------------------------------------------------

def test_records_round_trip_with_absolute_offsets_and_timestamps() -> None:
    batch = encode_batch(_records(5), base_offset=1000)
    header, records = decode_batch(batch)
    assert header.records_count == 5
    assert records == [Record(1000 + i, T0 + i, b"key-%d" % i, bytes([i]) * 100) for i in range(5)]


def test_a_null_value_is_a_tombstone_and_differs_from_an_empty_value() -> None:
    _, records = decode_batch(encode_batch([(b"k", None), (b"k", b"")], base_timestamp=T0))
    assert records[0].value is None and records[0].is_tombstone
    assert records[1].value == b"" and not records[1].is_tombstone


def test_a_null_key_differs_from_an_empty_key() -> None:
    _, records = decode_batch(encode_batch([(None, b"v"), (b"", b"v")], base_timestamp=T0))
    assert records[0].key is None
    assert records[1].key == b""


def test_headers_round_trip_including_null_values_and_unicode_keys() -> None:
    headers = [Header("trace", b"\x01\x02"), ("émoji-🦀", None), ("empty", b"")]
    _, [record] = decode_batch(encode_batch([(b"k", b"v", T0, headers)]))
    assert record.headers == (Header("trace", b"\x01\x02"), Header("émoji-🦀", None),
                              Header("empty", b""))


def test_every_record_form_is_accepted() -> None:
    forms = [
        (b"a", b"1"),
        (b"b", b"2", T0 + 5),
        (b"c", b"3", None),
        (b"d", b"4", T0 + 7, [("h", b"x")]),
        Record(offset=999, timestamp=T0 + 9, key=b"e", value=b"5"),
    ]
    _, records = decode_batch(encode_batch(iter(forms), base_timestamp=T0))
    assert [(r.offset, r.timestamp, r.key) for r in records] == [
        (0, T0, b"a"), (1, T0 + 5, b"b"), (2, T0, b"c"), (3, T0 + 7, b"d"), (4, T0 + 9, b"e")]
    assert records[3].headers == (Header("h", b"x"),)


def test_the_base_timestamp_defaults_to_the_first_record_timestamp() -> None:
    header, records = decode_batch(encode_batch([(b"a", b"1"), (b"b", b"2", T0), (b"c", b"3")]))
    assert header.base_timestamp == T0
    assert [r.timestamp for r in records] == [T0, T0, T0]


def test_timestamps_below_the_base_give_negative_deltas_and_max_is_the_largest() -> None:
    header, records = decode_batch(
        encode_batch([(b"a", b"", T0), (b"b", b"", T0 - 10), (b"c", b"", T0 + 3)]))
    assert [r.timestamp for r in records] == [T0, T0 - 10, T0 + 3]
    assert header.max_timestamp == T0 + 3


def test_log_append_time_gives_every_record_the_max_timestamp() -> None:
    batch = encode_batch(_records(3), timestamp_type=rb.LOG_APPEND_TIME)
    header, records = decode_batch(batch)
    assert header.timestamp_type == rb.LOG_APPEND_TIME
    assert [r.timestamp for r in records] == [T0 + 2] * 3


def test_large_values_deltas_and_counts_take_the_general_path() -> None:
    records_in = [(b"k" * 9000, b"v" * 70_000, T0), (None, b"x", T0 + 10**12),
                  (b"k", None, T0 - 10**9)] + [(None, b"", T0)] * 9000
    header, records = decode_batch(encode_batch(records_in, base_offset=5))
    assert header.records_count == len(records_in)
    assert [(r.key, r.value, r.timestamp) for r in records] == [
        (k, v, t) for k, v, t in records_in]
    assert records[-1].offset == 5 + len(records_in) - 1


def test_control_batches_carry_the_control_flag() -> None:
    control_key = struct.pack(">hh", 0, 1)  # version 0, COMMIT
    batch = encode_batch([(control_key, b"\x00\x00\x00\x00\x00\x00")], base_timestamp=T0,
                         producer_id=1, producer_epoch=0, is_transactional=True, is_control=True)
    header, [record] = decode_batch(batch)
    assert header.is_control and header.is_transactional
    assert record.key == control_key


def test_gzip_batches_round_trip_and_encode_deterministically() -> None:
    batch = encode_batch(_records(50), compression=rb.GZIP)
    assert batch == encode_batch(_records(50), compression=rb.GZIP)
    assert len(batch) < len(encode_batch(_records(50)))
    header, records = decode_batch(batch)
    assert header.compression == rb.GZIP
    assert records == decode_batch(encode_batch(_records(50)))[1]


def test_it_decodes_from_a_position_inside_a_memoryview_or_bytearray() -> None:
    batch = encode_batch(_records(2))
    buf = b"junk" + batch + b"more"
    expected = decode_batch(batch)
    assert decode_batch(memoryview(buf), 4) == expected
    assert decode_batch(bytearray(buf), 4) == expected


def test_records_compare_by_value_and_have_a_readable_repr() -> None:
    record = Record(3, T0, b"k", None, [("h", b"v")])
    assert record == Record(3, T0, b"k", None, (Header("h", b"v"),))
    assert record != Record(4, T0, b"k", None, (Header("h", b"v"),))
    assert repr(record) == (f"Record(offset=3, timestamp={T0}, key=b'k', value=None, "
                            "headers=(Header(key='h', value=b'v'),))")


# --- what encode refuses -----------------------------------------------------------------------

def test_an_empty_batch_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one record"):
        encode_batch([], base_timestamp=T0)


def test_a_batch_without_any_timestamp_is_refused() -> None:
    with pytest.raises(ValueError, match="no timestamp"):
        encode_batch([(b"k", b"v")])


@pytest.mark.parametrize("codec", [5, 7, -1])
def test_encoding_with_an_unknown_codec_id_is_refused(codec: int) -> None:
    with pytest.raises(ValueError, match=f"unsupported compression for encoding: id {codec}"):
        encode_batch([(b"k", b"v")], base_timestamp=T0, compression=codec)


def test_a_transactional_batch_needs_a_producer_id() -> None:
    with pytest.raises(ValueError, match="producer id"):
        encode_batch([(b"k", b"v")], base_timestamp=T0, is_transactional=True)


@pytest.mark.parametrize("record", [("text key", b"v"), (b"k", 12), (b"k", b"v", 1.5),
                                    (b"k", b"v", T0, [(b"bytes key", b"v")]), (b"k",)])
def test_ill_typed_records_are_refused_with_a_type_error(record: tuple) -> None:
    with pytest.raises(TypeError):
        encode_batch([record], base_timestamp=T0)


FLOAT_TIMESTAMPS = [[(b"k", b"v", 1.5)], [Record(0, 2.5, b"k", b"v")]]  # type: ignore[arg-type]


@pytest.mark.parametrize("records", FLOAT_TIMESTAMPS)
def test_a_timestamp_that_is_not_an_int_is_refused(records: list) -> None:
    with pytest.raises(TypeError, match="timestamp"):
        encode_batch(records)
    with pytest.raises(TypeError, match="timestamp"):
        encode_batch(records, base_timestamp=T0)


def test_header_fields_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="out of range"):
        encode_batch([(b"k", b"v")], base_timestamp=T0, producer_epoch=1 << 15)


# --- corruption and truncation -----------------------------------------------------------------

def test_flipping_any_byte_under_the_crc_is_detected() -> None:
    batch = encode_batch([(b"k", b"v", T0, [("h", None)]), (None, b"value")],
                         producer_id=1, producer_epoch=1, base_sequence=1)
    for position in range(rb.ATTRIBUTES_OFFSET, len(batch)):
        corrupt = bytearray(batch)
        corrupt[position] ^= 0x01
        assert not rb.batch_crc_ok(corrupt), position
        with pytest.raises(CorruptRecordError, match="CRC mismatch"):
            decode_batch(corrupt)


def test_flipping_base_offset_or_partition_leader_epoch_keeps_the_batch_valid() -> None:
    batch = encode_batch(_records(3))
    outside_crc = range(rb.BASE_OFFSET_OFFSET, rb.BATCH_LENGTH_OFFSET), range(
        rb.PARTITION_LEADER_EPOCH_OFFSET, rb.MAGIC_OFFSET)
    for field in outside_crc:
        for position in field:
            changed = bytearray(batch)
            changed[position] ^= 0x40
            assert rb.batch_crc_ok(changed)
            assert [r.key for r in decode_batch(changed)[1]] == [b"key-0", b"key-1", b"key-2"]


def test_a_bad_magic_is_detected() -> None:
    batch = bytearray(encode_batch(_records(1)))
    batch[rb.MAGIC_OFFSET] = 1
    with pytest.raises(CorruptRecordError, match="magic 1"):
        decode_batch(batch)


def test_a_wrong_batch_length_is_detected() -> None:
    batch = encode_batch(_records(2))
    for length in (len(batch) - 12 - 1, len(batch) - 12 + 1, 10):
        changed = bytearray(batch)
        struct.pack_into(">i", changed, rb.BATCH_LENGTH_OFFSET, length)
        with pytest.raises(CorruptRecordError):
            decode_batch(changed)


def test_every_truncation_is_detected() -> None:
    batch = encode_batch(_records(3))
    for size in range(len(batch)):
        with pytest.raises(CorruptRecordError):
            decode_batch(batch[:size])


def test_a_record_count_that_disagrees_with_the_records_is_detected() -> None:
    batch = encode_batch(_records(3))
    for count in (2, 4, 1000, -1):
        changed = bytearray(batch)
        struct.pack_into(">i", changed, rb.RECORDS_COUNT_OFFSET, count)
        with pytest.raises(CorruptRecordError, match="batch at position 0"):
            decode_batch(_with_fresh_crc(changed))


def test_a_record_length_that_disagrees_with_its_fields_is_detected() -> None:
    batch = bytearray(encode_batch([(b"k", b"v")], base_timestamp=T0))
    batch[rb.RECORDS_OFFSET] += 2  # record length 8 -> 9
    batch += b"\x00"
    struct.pack_into(">i", batch, rb.BATCH_LENGTH_OFFSET, len(batch) - 12)
    with pytest.raises(CorruptRecordError, match="record 0 declares 9 bytes"):
        decode_batch(_with_fresh_crc(batch))


def test_an_invalid_null_length_is_detected() -> None:
    batch = bytearray(encode_batch([(b"k", b"v")], base_timestamp=T0))
    batch[rb.RECORDS_OFFSET + 4] = 0x03  # keyLength -2
    with pytest.raises(CorruptRecordError, match="invalid key length -2"):
        decode_batch(_with_fresh_crc(batch))


def test_garbage_gzip_is_a_corrupt_record() -> None:
    batch = bytearray(encode_batch(_records(2)))
    struct.pack_into(">h", batch, rb.ATTRIBUTES_OFFSET, rb.GZIP)
    with pytest.raises(CorruptRecordError, match="gzip data does not decompress"):
        decode_batch(_with_fresh_crc(batch))


def test_an_unknown_codec_is_a_corrupt_record() -> None:
    batch = bytearray(encode_batch(_records(2)))
    struct.pack_into(">h", batch, rb.ATTRIBUTES_OFFSET, 6)
    with pytest.raises(CorruptRecordError, match="unknown compression codec id 6"):
        decode_batch(_with_fresh_crc(batch))


@pytest.mark.parametrize(("codec", "module"), [(rb.SNAPPY, "snappy"), (rb.LZ4, "lz4.frame"),
                                               (rb.ZSTD, "zstandard")])
def test_a_codec_without_its_package_is_reported_as_unsupported(codec: int, module: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    batch = bytearray(encode_batch(_records(2)))
    struct.pack_into(">h", batch, rb.ATTRIBUTES_OFFSET, codec)
    with pytest.raises(rb.UnsupportedCompressionError, match="unsupported compression"):
        decode_batch(_with_fresh_crc(batch))


def test_verify_crc_false_skips_the_crc_check() -> None:
    batch = bytearray(encode_batch(_records(2)))
    batch[rb.CRC_OFFSET] ^= 0xFF
    assert len(decode_batch(batch, verify_crc=False)[1]) == 2


def test_read_batch_header_needs_the_whole_header_only() -> None:
    batch = encode_batch(_records(3))
    assert read_batch_header(batch[:61]).records_count == 3
    with pytest.raises(CorruptRecordError, match="fewer than the 61-byte batch header"):
        read_batch_header(batch[:60])
    short = bytearray(batch)
    struct.pack_into(">i", short, rb.BATCH_LENGTH_OFFSET, 48)
    with pytest.raises(CorruptRecordError, match="batchLength 48"):
        read_batch_header(short)


def test_batch_crc_ok_is_false_for_a_truncated_batch() -> None:
    batch = encode_batch(_records(3))
    assert rb.batch_crc_ok(batch)
    assert not rb.batch_crc_ok(batch[:-1])


# --- walking a log -----------------------------------------------------------------------------

def _log_of(*sizes: int) -> tuple[bytes, list[int]]:
    batches, positions, next_offset, position = [], [], 0, 0
    for n in sizes:
        batch = encode_batch(_records(n), base_offset=next_offset)
        batches.append(batch)
        positions.append(position)
        next_offset += n
        position += len(batch)
    return b"".join(batches), positions


def test_iter_batches_walks_whole_batches() -> None:
    log, positions = _log_of(3, 1, 5)
    walked = list(rb.iter_batches(log))
    assert [p for p, _ in walked] == positions
    assert [(h.base_offset, h.last_offset) for _, h in walked] == [(0, 2), (3, 3), (4, 8)]
    assert list(rb.iter_batches(b"")) == []


def test_iter_batches_respects_start_and_end() -> None:
    log, positions = _log_of(3, 1, 5)
    assert [p for p, _ in rb.iter_batches(log, positions[1], positions[2])] == [positions[1]]


def test_iter_batches_raises_at_a_partial_tail_after_the_whole_batches() -> None:
    log, positions = _log_of(3, 1, 5)
    for cut in (positions[2] + 10, positions[2] + 61, len(log) - 1):
        walked = []
        with pytest.raises(CorruptRecordError, match="partial batch") as raised:
            for position, _ in rb.iter_batches(log[:cut]):
                walked.append(position)
        assert walked == positions[:2]
        assert raised.value.position == positions[2]


# --- patching what the CRC does not cover ------------------------------------------------------

def test_with_base_offset_rewrites_only_the_base_offset() -> None:
    batch = encode_batch(_records(3))
    moved = rb.with_base_offset(batch, 5000)
    assert moved[8:] == batch[8:]
    header, records = decode_batch(moved)
    assert header.base_offset == 5000
    assert [r.offset for r in records] == [5000, 5001, 5002]


def test_set_base_offset_in_place_patches_a_batch_inside_a_buffer() -> None:
    log, positions = _log_of(2, 2)
    buf = bytearray(log)
    rb.set_base_offset_in_place(buf, positions[1], 77)
    assert [h.base_offset for _, h in rb.iter_batches(buf)] == [0, 77]
    assert all(rb.batch_crc_ok(buf, p) for p in positions)


def test_with_partition_leader_epoch_rewrites_only_the_epoch() -> None:
    batch = encode_batch(_records(3))
    stamped = rb.with_partition_leader_epoch(batch, 12)
    assert stamped[:12] == batch[:12] and stamped[16:] == batch[16:]
    assert decode_batch(stamped)[0].partition_leader_epoch == 12
    buf = bytearray(batch)
    rb.set_partition_leader_epoch_in_place(buf, 0, 13)
    assert read_batch_header(buf).partition_leader_epoch == 13 and rb.batch_crc_ok(buf)


def test_patching_a_buffer_too_short_for_a_header_is_refused() -> None:
    with pytest.raises(CorruptRecordError):
        rb.set_base_offset_in_place(bytearray(20), 0, 1)


# --- sizes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("key", "value", "headers"), [
    (b"k", b"v", ()), (None, None, ()), (b"k" * 100, b"v" * 20_000, ()),
    (b"", b"v", [("a", b"b"), Header("c", None)])])
def test_record_size_is_the_encoded_size(key: bytes | None, value: bytes | None,
                                         headers: list) -> None:
    batch = encode_batch([(key, value, T0, headers)])
    assert rb.record_size(key, value, headers) == len(batch) - rb.RECORD_BATCH_OVERHEAD


def test_record_size_counts_the_deltas() -> None:
    batch = encode_batch([(b"a", b"b", T0)] * 100 + [(b"k", b"v", T0 + 100_000)])
    sizes = [rb.record_size(b"a", b"b", offset_delta=i) for i in range(100)]
    sizes.append(rb.record_size(b"k", b"v", offset_delta=100, timestamp_delta=100_000))
    assert len(batch) - rb.RECORD_BATCH_OVERHEAD == sum(sizes)
    assert sizes[63] + 1 == sizes[64]  # offset delta 64 is the first to take two bytes


# --- properties --------------------------------------------------------------------------------

# Lengths around 8192 cross from the two-byte varint table to the general path.
long_bytes = st.integers(min_value=8185, max_value=8200).map(lambda n: b"x" * n)
nullable_bytes = st.none() | st.binary(max_size=40) | long_bytes
headers = st.lists(st.tuples(st.text(max_size=10), st.none() | st.binary(max_size=10)),
                   max_size=3)
records_strategy = st.lists(
    st.tuples(nullable_bytes, nullable_bytes, st.integers(min_value=-1, max_value=2**45),
              headers),
    min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(records=records_strategy,
       base_offset=st.integers(min_value=0, max_value=2**62),
       producer_id=st.integers(min_value=-1, max_value=2**63 - 1),
       producer_epoch=st.integers(min_value=-1, max_value=2**15 - 1),
       base_sequence=st.integers(min_value=-1, max_value=2**31 - 1),
       epoch=st.integers(min_value=-1, max_value=2**31 - 1),
       compression=st.sampled_from([rb.NONE, rb.GZIP, rb.SNAPPY, rb.LZ4, rb.ZSTD]))
def test_any_batch_round_trips(records: list, base_offset: int, producer_id: int,
                               producer_epoch: int, base_sequence: int, epoch: int,
                               compression: int) -> None:
    batch = encode_batch(records, base_offset=base_offset, producer_id=producer_id,
                         producer_epoch=producer_epoch, base_sequence=base_sequence,
                         partition_leader_epoch=epoch, compression=compression)
    header, decoded = decode_batch(batch)
    assert (header.producer_id, header.producer_epoch, header.base_sequence,
            header.partition_leader_epoch, header.compression) == (
        producer_id, producer_epoch, base_sequence, epoch, compression)
    assert header.max_timestamp == max(t for _, _, t, _ in records)
    assert header.size_in_bytes == len(batch) and header.last_offset_delta == len(records) - 1
    assert decoded == [Record(base_offset + i, t, k, v, h)
                       for i, (k, v, t, h) in enumerate(records)]
    if compression == rb.NONE:
        assert len(batch) - rb.RECORD_BATCH_OVERHEAD == sum(
            rb.record_size(k, v, h, i, t - records[0][2]) for i, (k, v, t, h) in enumerate(records))


@settings(max_examples=50, deadline=None)
@given(records=records_strategy, cut=st.integers(min_value=0))
def test_any_truncated_batch_is_detected(records: list, cut: int) -> None:
    batch = encode_batch(records)
    with pytest.raises(CorruptRecordError):
        decode_batch(batch[:cut % len(batch)])


def test_gzip_output_is_standard_gzip() -> None:
    batch = encode_batch(_records(5), compression=rb.GZIP)
    raw = encode_batch(_records(5))
    assert gzip.decompress(batch[rb.RECORDS_OFFSET:]) == raw[rb.RECORDS_OFFSET:]
