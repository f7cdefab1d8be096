"""Records of whole batches as objects (Log.read's Records, a consumer's ConsumedRecords): the C
extension and the Python fallback build the same objects and reject the same ill-formed input; the
C record encoder writes the bytes the Python one writes."""
from __future__ import annotations

import gc
import struct

import pytest
from batch_samples import MIXED, T0, fetches, with_fresh_crc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.clients.consumer_state import ConsumedRecord
from engine.storage import batch_records as br
from engine.storage import record_batch as rb
from engine.storage.crc import crc32c
from engine.storage.errors import KafkaStorageError
from engine.storage.record_batch import CorruptRecordError, encode_batch

ALL = (br.INT64_MIN, br.INT64_MAX)

needs_extension = pytest.mark.skipif(
    not br.HAS_EXTENSION, reason="engine.storage._columnar is not built (run `pip install -e .`)")
DECODERS = [pytest.param(br.decode_records_c, id="c", marks=needs_extension),
            pytest.param(br.decode_records_python, id="python")]



def consumed_shape(topic: str = "t", partition: int = 3) -> br.RecordShape:
    """The shape the consumer's fetcher builds (engine.clients.consumer_fetcher._decode)."""
    return br.record_shape(ConsumedRecord, {
        "topic": br.Constant(topic), "partition": br.Constant(partition), "offset": br.OFFSET, "key": br.KEY,
        "value": br.VALUE, "timestamp": br.TIMESTAMP, "headers": br.HEADERS, "leader_epoch": br.LEADER_EPOCH})


def _log_read_records(data: bytes, first: int, end: int) -> list[rb.Record]:
    """What Log.read gave before batch_records: decode_batch per batch, every record in range."""
    out, position = [], 0
    while position < len(data):
        header, records = rb.decode_batch(data, position, verify_crc=False)
        position += header.size_in_bytes
        out += [r for r in records if first <= r.offset < end]
    return out


def _consumer_records(data: bytes, position: int, topic: str = "t", partition: int = 3) -> list[ConsumedRecord]:
    """What the consumer's fetcher built before batch_records: no control records, CRCs checked."""
    out, at = [], 0
    while at < len(data):
        header, records = rb.decode_batch(data, at)
        at += header.size_in_bytes
        if not header.is_control:
            out += [ConsumedRecord(topic, partition, r.offset, r.key, r.value, r.timestamp,
                                   tuple((h.key, h.value) for h in r.headers), header.partition_leader_epoch)
                    for r in records if r.offset >= position]
    return out


def _outcome(decode, data, first, end, shape, **options) -> list | str:
    try:
        return decode(data, first, end, shape, **options)
    except CorruptRecordError:
        return "CorruptRecordError"


def _assert_same_outcome(data, first=ALL[0], end=ALL[1], shape=br.RECORD, **options) -> list | str:
    python = _outcome(br.decode_records_python, data, first, end, shape, **options)
    if br.HAS_EXTENSION:
        assert _outcome(br.decode_records_c, data, first, end, shape, **options) == python
    return python



def _marker(base_offset: int) -> bytes:
    return encode_batch([(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")], base_offset=base_offset,
                        base_timestamp=T0, producer_id=7, producer_epoch=0, is_transactional=True,
                        is_control=True)


# --- what comes out -----------------------------------------------------------------------------

@pytest.mark.parametrize("decode", DECODERS)
def test_log_records_are_the_records_decode_batch_gives(decode) -> None:
    data = encode_batch(MIXED, base_offset=40, base_timestamp=T0)
    records = decode(data, *ALL, br.RECORD)
    assert records == _log_read_records(data, *ALL)
    assert all(type(r) is rb.Record for r in records)
    assert records[3].headers == (rb.Header("trace", b"\x01"), rb.Header("émoji-🦀", None), rb.Header("empty", b""))


@pytest.mark.parametrize("decode", DECODERS)
def test_consumer_records_carry_topic_partition_and_the_batch_leader_epoch(decode) -> None:
    batch = bytearray(encode_batch(MIXED, base_offset=40, base_timestamp=T0))
    rb.set_partition_leader_epoch_in_place(batch, 0, 6)
    records = decode(bytes(batch), 42, br.INT64_MAX, consumed_shape("orders", 5))
    assert records == _consumer_records(bytes(batch), 42, "orders", 5)
    assert [(r.topic, r.partition, r.offset, r.leader_epoch) for r in records[:2]] == [("orders", 5, 42, 6),
                                                                                        ("orders", 5, 43, 6)]
    assert records[1].headers == (("trace", b"\x01"), ("émoji-🦀", None), ("empty", b""))


@pytest.mark.parametrize("decode", DECODERS)
def test_consumer_records_are_the_objects_their_constructor_builds(decode) -> None:
    [record] = decode(encode_batch([(b"k", b"v")], base_offset=9, base_timestamp=T0), *ALL, consumed_shape())
    built = ConsumedRecord("t", 3, 9, b"k", b"v", T0, (), -1)
    assert record == built and vars(record) == vars(built) and list(vars(record)) == list(vars(built))
    assert record.to_dict() == built.to_dict() and hash(record) == hash(built)


@pytest.mark.parametrize("decode", DECODERS)
def test_a_log_keeps_control_records_and_a_consumer_drops_them(decode) -> None:
    data = (encode_batch([(b"a", b"1"), (b"b", b"2")], base_offset=0, base_timestamp=T0, producer_id=7,
                         producer_epoch=0, is_transactional=True) + _marker(2)
            + encode_batch([(b"c", b"3")], base_offset=3, base_timestamp=T0))
    assert [r.offset for r in decode(data, *ALL, br.RECORD, keep_control=True)] == [0, 1, 2, 3]
    assert [r.offset for r in decode(data, *ALL, consumed_shape())] == [0, 1, 3]


@pytest.mark.parametrize("decode", DECODERS)
def test_a_log_append_time_batch_gives_every_record_its_max_timestamp(decode) -> None:
    data = bytearray(encode_batch(MIXED, base_offset=0, base_timestamp=T0))
    rb.set_log_append_time_in_place(data, 0, len(data), T0 + 999)
    records = decode(bytes(data), *ALL, br.RECORD)
    assert [r.timestamp for r in records] == [T0 + 999] * len(MIXED)


@pytest.mark.parametrize("decode", DECODERS)
def test_only_records_in_the_asked_range_are_kept_from_the_edge_batches(decode) -> None:
    data = b"".join(encode_batch([(None, b"%d" % o) for o in range(base, base + 5)], base_offset=base,
                                 base_timestamp=T0) for base in (0, 5, 10))
    assert [r.offset for r in decode(data, 3, 12, br.RECORD)] == list(range(3, 12))
    assert decode(data, 20, 30, br.RECORD) == [] and decode(b"", *ALL, br.RECORD) == []


@pytest.mark.parametrize("decode", DECODERS)
def test_a_gzip_batch_is_decompressed_first(decode) -> None:
    data = encode_batch(MIXED, base_offset=9, base_timestamp=T0, compression=rb.GZIP)
    assert decode(data, *ALL, br.RECORD) == _log_read_records(data, *ALL)


@needs_extension
def test_records_of_atomic_values_stay_out_of_the_cyclic_gc_and_records_with_headers_do_not() -> None:
    data = encode_batch([(b"k", b"v"), (b"k", b"v", T0, [("h", b"1")])], base_timestamp=T0)
    plain, with_headers = br.decode_records_c(data, *ALL, br.RECORD)
    assert not gc.is_tracked(plain) and gc.is_tracked(with_headers)
    consumed, consumed_with_headers = br.decode_records_c(data, *ALL, consumed_shape())
    assert not gc.is_tracked(consumed) and gc.is_tracked(consumed_with_headers)


class _Slotted:
    __slots__ = ("offset", "value", "seen")


class _SlottedWithDict(_Slotted):
    pass


class _WithProperty:
    def __init__(self) -> None:
        self.seen: list = []

    @property
    def value(self) -> bytes:
        return self._value

    @value.setter
    def value(self, data: bytes) -> None:
        self._value = data.upper()


@pytest.mark.parametrize("cls", [_Slotted, _SlottedWithDict, _WithProperty])
@pytest.mark.parametrize("decode", DECODERS)
def test_any_plain_class_gets_its_attributes_as_object_setattr_sets_them(decode, cls) -> None:
    shape = br.record_shape(cls, {"offset": br.OFFSET, "value": br.VALUE, "seen": br.Constant("yes")})
    records = decode(encode_batch([(None, b"a"), (None, b"b")], base_offset=4, base_timestamp=T0), *ALL, shape)
    expected = b"AB" if cls is _WithProperty else b"ab"
    assert [(type(r), r.offset, r.value, r.seen) for r in records] == [(cls, 4, expected[:1], "yes"),
                                                                        (cls, 5, expected[1:], "yes")]


def test_a_class_with_its_own_new_cannot_be_a_record_shape() -> None:
    class Odd:
        def __new__(cls):
            return super().__new__(cls)
    with pytest.raises(TypeError):
        br.record_shape(Odd, {"offset": br.OFFSET})


# --- what is rejected ---------------------------------------------------------------------------

@pytest.mark.parametrize("decode", DECODERS)
def test_a_truncated_fetch_raises_corrupt_record_error_at_every_cut(decode) -> None:
    data = encode_batch(MIXED[:3], base_timestamp=T0)
    for cut in range(1, len(data)):
        with pytest.raises(CorruptRecordError):
            decode(data[:cut], *ALL, br.RECORD)


@pytest.mark.parametrize("decode", DECODERS)
def test_a_flipped_bit_fails_the_crc_unless_crcs_are_not_checked(decode) -> None:
    data = bytearray(encode_batch([(b"key", b"value")], base_timestamp=T0))
    data[-3] ^= 0x01
    with pytest.raises(CorruptRecordError, match="CRC mismatch"):
        decode(bytes(data), *ALL, consumed_shape())
    assert [r.value for r in decode(bytes(data), *ALL, br.RECORD, verify_crc=False)] == [b"valte"]


@pytest.mark.parametrize("decode", DECODERS)
def test_a_damaged_control_batch_is_corrupt_for_a_consumer_too(decode) -> None:
    marker = bytearray(_marker(0))
    marker[-1] = 0x7E   # the marker's headers count, now 63 headers that are not there
    with pytest.raises(CorruptRecordError):
        decode(with_fresh_crc(marker), *ALL, consumed_shape())


@pytest.mark.parametrize("decode", DECODERS)
def test_an_offset_beyond_int64_is_corrupt(decode) -> None:
    data = bytearray(encode_batch([(b"k", b"v"), (b"k", b"v")], base_timestamp=T0))
    rb.set_base_offset_in_place(data, 0, br.INT64_MAX)
    with pytest.raises(CorruptRecordError):
        decode(bytes(data), *ALL, br.RECORD)


# --- the record encoder -------------------------------------------------------------------------

@needs_extension
def test_the_c_encoder_leaves_headers_and_odd_forms_to_python() -> None:
    from engine.storage import _columnar
    assert _columnar.encode_records([(b"k", b"v", T0, [("h", b"1")])], T0) is None
    assert _columnar.encode_records([(bytearray(b"k"), b"v")], T0) is None
    assert _columnar.encode_records([rb.Record(0, T0, b"k", b"v")], T0) is None
    assert _columnar.encode_records([(b"k", b"v", 1 << 70)], T0) is None
    assert _columnar.encode_records([(b"k", b"v")], 1 << 70) is None


def test_a_batch_of_every_record_form_encodes_as_the_python_encoder_does() -> None:
    forms = [(b"k", b"v"), (None, None), (b"k", b"v", None), (b"k", b"v", T0 + 1, ()), (b"k", b"v", T0 - 2, None),
             (bytearray(b"k"), memoryview(b"v")), rb.Record(0, T0 + 3, b"k", None), (b"k", b"v", T0, [("h", None)])]
    batch = encode_batch(forms, base_timestamp=T0)
    parts, max_timestamp = rb._encode_records(forms, T0)
    assert batch[rb.RECORDS_OFFSET:] == b"".join(parts)
    assert rb.read_batch_header(batch).max_timestamp == max_timestamp == T0 + 3


# --- properties ---------------------------------------------------------------------------------



@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fetches())
def test_both_decoders_give_what_log_read_and_the_consumer_gave(fetch) -> None:
    data, first, end = fetch
    assert _assert_same_outcome(data, first, end, br.RECORD, verify_crc=False,
                                keep_control=True) == _log_read_records(data, first, end)
    assert _assert_same_outcome(data, first, br.INT64_MAX, consumed_shape()) == _consumer_records(data, first)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fetches(), st.data())
def test_both_decoders_reject_the_same_damaged_fetches(fetch, data) -> None:
    raw, first, end = fetch
    damaged = bytearray(raw[:data.draw(st.integers(0, len(raw)), label="cut")])
    if damaged:
        at = data.draw(st.integers(0, len(damaged) - 1), label="at")
        damaged[at] = data.draw(st.integers(0, 255), label="byte")
    _assert_same_outcome(bytes(damaged), first, end, br.RECORD, verify_crc=False, keep_control=True)
    _assert_same_outcome(bytes(damaged), first, end, consumed_shape())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.none() | st.binary(max_size=20), st.none() | st.binary(max_size=20_000),
                          st.none() | st.integers(-2**40, 2**40)), min_size=1, max_size=20),
       st.integers(-2**62, 2**62))
def test_the_c_encoder_writes_the_bytes_the_python_encoder_writes(batch, base_timestamp) -> None:
    forms = [(k, v) if t is None and i % 2 else (k, v, t if t is None else base_timestamp + t)
             for i, (k, v, t) in enumerate(batch)]
    parts, max_timestamp = rb._encode_records(forms, base_timestamp)
    encoded = encode_batch(forms, base_timestamp=base_timestamp)
    assert encoded[rb.RECORDS_OFFSET:] == b"".join(parts)
    assert rb.read_batch_header(encoded).max_timestamp == max_timestamp


# --- the leader's record walk (log_validator) ---------------------------------------------------

@needs_extension
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.none() | st.binary(max_size=12), st.none() | st.binary(max_size=300)), min_size=1,
                max_size=6), st.data())
def test_the_c_record_walk_passes_exactly_when_the_python_walk_does(monkeypatch, batch, data) -> None:
    from engine.storage import _columnar, log_validator
    records = bytearray(encode_batch(batch, base_timestamp=T0)[rb.RECORDS_OFFSET:])
    for _ in range(data.draw(st.integers(0, 2), label="damage")):
        if records:
            records[data.draw(st.integers(0, len(records) - 1), label="at")] = data.draw(st.integers(0, 255))
    records = records[:data.draw(st.integers(0, len(records)), label="cut")] if data.draw(st.booleans()) else records
    count = len(batch) + data.draw(st.integers(-1, 1), label="count off by")
    check_keys = data.draw(st.booleans(), label="compacted")
    monkeypatch.setattr(log_validator, "_records_fill", None)   # the Python walk alone
    try:
        log_validator._walk_records(bytes(records), count, 0, check_keys=check_keys)
        python_passes = True
    except log_validator.InvalidRecordError:
        python_passes = False
    assert _columnar.records_fill(bytes(records), count, check_keys) is python_passes


@needs_extension
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.none() | st.binary(max_size=12), st.none() | st.binary(max_size=300)), min_size=1,
                max_size=6), st.data())
def test_the_c_leader_check_passes_exactly_when_both_python_passes_accept_one_uncompressed_batch(
        monkeypatch, batch, data) -> None:
    from engine.storage import _columnar, log_validator
    buf = bytearray(encode_batch(batch, base_timestamp=T0,
                                 compression=data.draw(st.sampled_from([rb.NONE, rb.GZIP]), label="codec")))
    if data.draw(st.booleans(), label="spoilt"):
        buf = _spoilt(buf, batch, data)
    max_message_bytes = data.draw(st.sampled_from([rb.LOG_OVERHEAD, len(buf) - 1, len(buf), 1 << 20]), label="max")
    compacted = data.draw(st.booleans(), label="compacted")
    monkeypatch.setattr(log_validator, "_records_fill", None)   # the Python checks alone
    monkeypatch.setattr(log_validator, "_leader_batch_ok", None)
    try:
        headers = log_validator.validate_leader_append(bytearray(buf), max_message_bytes, compacted=compacted)
        python_accepts_one_uncompressed_batch = headers[0].compression == rb.NONE
    except KafkaStorageError:
        python_accepts_one_uncompressed_batch = False
    assert _columnar.leader_batch_ok(bytes(buf), max_message_bytes, compacted, crc32c) \
        is python_accepts_one_uncompressed_batch


def _spoilt(buf: bytearray, batch: list, data: st.DataObject) -> bytearray:
    """A second batch, damaged bytes (with the CRC maybe sealed over them, so that a damaged header field
    under the CRC — attributes, lastOffsetDelta, recordsCount — or record gets past it) and a cut, each maybe."""
    if data.draw(st.booleans(), label="a second batch"):
        buf += encode_batch(batch, base_timestamp=T0)
    for _ in range(data.draw(st.integers(0, 2), label="damage")):
        buf[data.draw(st.integers(0, len(buf) - 1), label="at")] = data.draw(st.integers(0, 255), label="byte")
    size = rb.LOG_OVERHEAD + struct.unpack_from(">i", buf, rb.BATCH_LENGTH_OFFSET)[0]
    if data.draw(st.booleans(), label="CRC sealed after the damage") and rb.ATTRIBUTES_OFFSET <= size <= len(buf):
        struct.pack_into(">I", buf, rb.CRC_OFFSET, crc32c(bytes(buf[rb.ATTRIBUTES_OFFSET:size])))
    if data.draw(st.booleans(), label="cut"):
        buf = buf[:data.draw(st.integers(0, len(buf)), label="cut at")]
    return buf
