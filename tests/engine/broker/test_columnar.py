"""Record batches to Arrow columns: the C extension and the Python fallback give the same columns
as record_batch.decode_batch, and reject the same ill-formed input."""
from __future__ import annotations

import struct

import pyarrow as pa
import pytest
from batch_samples import MIXED, T0, fetches, records, with_fresh_crc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.storage import columnar
from engine.storage import record_batch as rb
from engine.storage.record_batch import CorruptRecordError, encode_batch

EVERYTHING = (columnar.INT64_MIN, columnar.INT64_MAX)

needs_extension = pytest.mark.skipif(
    not columnar.HAS_EXTENSION, reason="engine.storage._columnar is not built (run `pip install -e .`)")
DECODERS = [pytest.param(columnar.decode_columns_c, id="c", marks=needs_extension),
            pytest.param(columnar.decode_columns_python, id="python")]


def _expected(data: bytes, first: int, end: int) -> list[dict]:
    """The rows decode_batch gives, as a consumer sees them: no control records, in range only."""
    rows, position = [], 0
    while position < len(data):
        header, records = rb.decode_batch(data, position)
        position += header.size_in_bytes
        if header.is_control:
            continue
        rows += [{"key": r.key, "value": r.value, "offset": r.offset, "timestamp": r.timestamp,
                  "timestampType": header.timestamp_type,
                  "headers": [{"key": h.key, "value": h.value} for h in r.headers] if r.headers else None}
                 for r in records if first <= r.offset < end]
    return rows


def _outcome(decode, data, first: int, end: int, **options) -> pa.RecordBatch | str:
    try:
        columns = decode(data, first, end, **options)
    except CorruptRecordError:
        return "CorruptRecordError"
    columns.validate(full=True)
    return columns


def _assert_same_outcome(data, first: int = EVERYTHING[0], end: int = EVERYTHING[1],
                         **options) -> pa.RecordBatch | str:
    python = _outcome(columnar.decode_columns_python, data, first, end, **options)
    if columnar.HAS_EXTENSION:
        c = _outcome(columnar.decode_columns_c, data, first, end, **options)
        if isinstance(python, str) or isinstance(c, str):
            assert c == python
        else:
            assert c.equals(python), (c.to_pylist(), python.to_pylist())
    return python



def _recompressed(batch: bytes, codec: int, compress) -> bytes:
    """`batch` (uncompressed) with its record array compressed by `codec`, as a Java client would."""
    header = bytearray(batch[:rb.RECORDS_OFFSET])
    body = compress(batch[rb.RECORDS_OFFSET:])
    struct.pack_into(">i", header, rb.BATCH_LENGTH_OFFSET, rb.MIN_BATCH_LENGTH + len(body))
    (attributes,) = struct.unpack_from(">h", header, rb.ATTRIBUTES_OFFSET)
    struct.pack_into(">h", header, rb.ATTRIBUTES_OFFSET, attributes | codec)
    return with_fresh_crc(bytes(header) + body)




# --- what comes out -----------------------------------------------------------------------------

@pytest.mark.parametrize("decode", DECODERS)
def test_columns_hold_every_field_with_spark_s_kafka_names(decode) -> None:
    data = encode_batch(MIXED, base_offset=40, base_timestamp=T0)
    columns = decode(data)
    assert columns.schema == columnar.SCHEMA
    assert columns.to_pylist() == _expected(data, *EVERYTHING)
    assert columns.column("key").null_count == 1 and columns.column("value").null_count == 1
    assert columns.column("headers").null_count == len(MIXED) - 1   # no headers: null, as in Spark
    assert columns.column("headers")[3].as_py() == [
        {"key": "trace", "value": b"\x01"}, {"key": "émoji-🦀", "value": None}, {"key": "empty", "value": b""}]


@pytest.mark.parametrize("decode", DECODERS)
def test_a_log_append_time_batch_gives_every_record_its_max_timestamp(decode) -> None:
    data = bytearray(encode_batch(MIXED, base_offset=0, base_timestamp=T0))
    rb.set_log_append_time_in_place(data, 0, len(data), T0 + 999)
    create_time = encode_batch([(b"a", b"b", T0 + 3)], base_offset=5)
    columns = decode(bytes(data) + create_time)
    assert columns.column("timestamp").to_pylist() == [T0 + 999] * len(MIXED) + [T0 + 3]
    assert columns.column("timestampType").to_pylist() == [rb.LOG_APPEND_TIME] * len(MIXED) + [rb.CREATE_TIME]


@pytest.mark.parametrize("decode", DECODERS)
def test_only_records_in_the_asked_range_are_kept_from_the_edge_batches(decode) -> None:
    data = b"".join(encode_batch([(None, b"%d" % o) for o in range(base, base + 5)], base_offset=base,
                                 base_timestamp=T0) for base in (0, 5, 10))
    assert decode(data, 3, 12).column("offset").to_pylist() == list(range(3, 12))
    assert decode(data, 20, 30).num_rows == 0


@pytest.mark.parametrize("decode", DECODERS)
def test_control_batches_are_skipped_as_a_consumer_does(decode) -> None:
    marker = encode_batch([(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")], base_offset=2, base_timestamp=T0,
                          producer_id=7, producer_epoch=0, is_transactional=True, is_control=True)
    data = (encode_batch([(b"a", b"1"), (b"b", b"2")], base_offset=0, base_timestamp=T0, producer_id=7,
                         producer_epoch=0, is_transactional=True) + marker
            + encode_batch([(b"c", b"3")], base_offset=3, base_timestamp=T0))
    assert decode(data).column("offset").to_pylist() == [0, 1, 3]


@pytest.mark.parametrize("decode", DECODERS)
def test_an_empty_fetch_gives_empty_columns(decode) -> None:
    columns = decode(b"")
    assert columns.num_rows == 0 and columns.schema == columnar.SCHEMA


@pytest.mark.parametrize("decode", DECODERS)
def test_bytes_bytearray_and_memoryview_decode_alike(decode) -> None:
    data = encode_batch(MIXED, base_timestamp=T0)
    assert decode(bytearray(data)).equals(decode(data))
    assert decode(memoryview(data)).equals(decode(data))


@pytest.mark.parametrize("decode", DECODERS)
def test_a_gzip_batch_is_decompressed_first(decode) -> None:
    data = encode_batch(MIXED, base_offset=9, base_timestamp=T0, compression=rb.GZIP)
    assert decode(data).to_pylist() == _expected(data, *EVERYTHING)


@pytest.mark.parametrize("codec, module", [(rb.SNAPPY, "snappy"), (rb.LZ4, "lz4.frame"), (rb.ZSTD, "zstandard")])
@pytest.mark.parametrize("decode", DECODERS)
def test_snappy_lz4_and_zstd_batches_are_decompressed_first(decode, codec, module) -> None:
    library = pytest.importorskip(module)
    compress = {rb.SNAPPY: lambda b: library.compress(b), rb.LZ4: lambda b: library.compress(b),
                rb.ZSTD: lambda b: library.ZstdCompressor().compress(b)}[codec]
    data = _recompressed(encode_batch(MIXED, base_offset=3, base_timestamp=T0), codec, compress)
    assert rb.read_batch_header(data).compression == codec
    assert decode(data).to_pylist() == _expected(data, *EVERYTHING)


# --- what is rejected ---------------------------------------------------------------------------

@pytest.mark.parametrize("decode", DECODERS)
def test_a_truncated_fetch_raises_corrupt_record_error_at_every_cut(decode) -> None:
    data = encode_batch(MIXED[:3], base_timestamp=T0) + encode_batch([(b"k", b"v")], base_offset=3,
                                                                     base_timestamp=T0)
    for cut in range(1, len(data)):
        if cut == len(data) - len(encode_batch([(b"k", b"v")], base_offset=3, base_timestamp=T0)):
            continue   # a cut between two batches is a whole fetch
        with pytest.raises(CorruptRecordError):
            decode(data[:cut])


@pytest.mark.parametrize("decode", DECODERS)
def test_a_flipped_bit_fails_the_crc_unless_crcs_are_not_checked(decode) -> None:
    data = bytearray(encode_batch([(b"key", b"value")], base_timestamp=T0))
    data[-3] ^= 0x01
    with pytest.raises(CorruptRecordError, match="CRC mismatch"):
        decode(bytes(data))
    assert decode(bytes(data), verify_crc=False).column("value").to_pylist() == [b"valte"]


@pytest.mark.parametrize("decode", DECODERS)
def test_a_bad_magic_and_a_short_batch_length_are_corrupt(decode) -> None:
    data = bytearray(encode_batch([(b"k", b"v")], base_timestamp=T0))
    bad_magic = bytearray(data)
    bad_magic[rb.MAGIC_OFFSET] = 1
    with pytest.raises(CorruptRecordError, match="magic 1"):
        decode(bytes(bad_magic))
    struct.pack_into(">i", data, rb.BATCH_LENGTH_OFFSET, rb.MIN_BATCH_LENGTH - 1)
    with pytest.raises(CorruptRecordError, match="batchLength"):
        decode(bytes(data))


def _one_record_batch(record: bytes, count: int = 1) -> bytes:
    """A batch whose record array is `record` (hand-made bytes) and whose recordsCount is `count`."""
    header = bytearray(encode_batch([(b"k", b"v")], base_timestamp=T0)[:rb.RECORDS_OFFSET])
    struct.pack_into(">i", header, rb.BATCH_LENGTH_OFFSET, rb.MIN_BATCH_LENGTH + len(record))
    struct.pack_into(">i", header, rb.RECORDS_COUNT_OFFSET, count)
    return with_fresh_crc(bytes(header) + record)


def test_the_hand_made_record_below_is_valid() -> None:
    _, [record] = rb.decode_batch(_one_record_batch(bytes.fromhex("10 00 00 00 02 6b 02 76 00")))
    assert (record.key, record.value, record.headers) == (b"k", b"v", ())


@pytest.mark.parametrize("record, why", [
    (bytes.fromhex("0c 00 00 00 02 6b 02 76 00"), "length disagrees with the fields"),
    (bytes.fromhex("0e 00 00 00 05 6b 6b 02 76 00"), "key length -3"),
    (bytes.fromhex("0e 00 00 00 02 6b 02 76 01"), "header count -1"),
    (bytes.fromhex("12 00 00 00 02 6b 02 76 02 01"), "header key length -1"),
    (bytes.fromhex("16 00 00 00 02 6b 02 76 02 02 ff 01"), "header key not UTF-8"),
    (bytes.fromhex("0e 00 00 80 80 80 80 80 00 02 6b 02 76 00"), "a six-byte varint"),
    (bytes.fromhex("0e 00 00 80 80 80 80 7f 02 6b 02 76 00"), "a varint beyond int32"),
    (bytes.fromhex("16 00 ff ff ff ff ff ff ff ff ff 7f 00 02 6b 02 76 00"), "a varlong beyond int64"),
    (bytes.fromhex("10 00 00 00 02 6b 02 76 00 00"), "bytes after the last record"),
    (bytes.fromhex("0e 00 00 00 7e 6b 02 76 00"), "a key past the end"),
])
@pytest.mark.parametrize("decode", DECODERS)
def test_ill_formed_records_are_corrupt(decode, record, why) -> None:
    data = _one_record_batch(record)
    with pytest.raises(CorruptRecordError):
        rb.decode_batch(data)
    with pytest.raises(CorruptRecordError):
        decode(data)


@pytest.mark.parametrize("decode", DECODERS)
def test_a_hand_made_record_with_an_overlong_varint_is_accepted_as_kafka_does(decode) -> None:
    # offsetDelta 0 written in two bytes (80 00): not minimal, but a valid varint.
    data = _one_record_batch(bytes.fromhex("12 00 00 80 00 02 6b 02 76 00"))
    assert decode(data).to_pylist() == _expected(data, *EVERYTHING)


@pytest.mark.parametrize("decode", DECODERS)
def test_a_records_count_far_beyond_the_bytes_is_corrupt_not_a_huge_allocation(decode) -> None:
    data = _one_record_batch(bytes.fromhex("10 00 00 00 02 6b 02 76 00"), count=2**31 - 1)
    with pytest.raises(CorruptRecordError):
        decode(data)


@pytest.mark.parametrize("decode", DECODERS)
def test_an_offset_beyond_int64_is_corrupt(decode) -> None:
    data = bytearray(encode_batch([(b"k", b"v"), (b"k", b"v")], base_timestamp=T0))
    rb.set_base_offset_in_place(data, 0, columnar.INT64_MAX)
    with pytest.raises(CorruptRecordError):
        decode(bytes(data))


@pytest.mark.parametrize("decode", DECODERS)
def test_an_unknown_codec_is_corrupt(decode) -> None:
    data = bytearray(encode_batch([(b"k", b"v")], base_timestamp=T0))
    struct.pack_into(">h", data, rb.ATTRIBUTES_OFFSET, 6)
    with pytest.raises(CorruptRecordError, match="unknown compression"):
        decode(with_fresh_crc(data))


# --- properties ---------------------------------------------------------------------------------



@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fetches())
def test_both_decoders_give_what_decode_batch_gives(fetch) -> None:
    data, first, end = fetch
    columns = _assert_same_outcome(data, first, end)
    assert not isinstance(columns, str)
    assert columns.to_pylist() == _expected(data, first, end)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fetches(), st.data())
def test_both_decoders_reject_the_same_damaged_fetches(fetch, data) -> None:
    raw, first, end = fetch
    damaged = bytearray(raw[:data.draw(st.integers(0, len(raw)), label="cut")])
    if damaged:
        at = data.draw(st.integers(0, len(damaged) - 1), label="at")
        damaged[at] = data.draw(st.integers(0, 255), label="byte")
    # Without CRC checks the damage reaches the record parsers; with them, the CRC check.
    _assert_same_outcome(bytes(damaged), first, end, verify_crc=False)
    _assert_same_outcome(bytes(damaged), first, end)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records, min_size=1, max_size=5), st.data())
def test_both_decoders_agree_on_damaged_records_behind_a_good_crc(batch_records, data) -> None:
    batch = bytearray(encode_batch([(k, v, T0 + dt, h) for k, v, dt, h in batch_records], base_timestamp=T0))
    at = data.draw(st.integers(rb.RECORDS_OFFSET, len(batch) - 1), label="at")
    batch[at] = data.draw(st.integers(0, 255), label="byte")
    _assert_same_outcome(with_fresh_crc(batch))
