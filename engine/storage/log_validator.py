"""What a log checks in an append before a byte of it is written.

Two passes, as Kafka makes them:
- `analyze_and_validate_records` (UnifiedLog.analyzeAndValidateRecords), leader and follower
  alike, from the batch headers only: each batch whole, its CRC-32C right (CORRUPT_MESSAGE); a
  leader's within `max.message.bytes` (MESSAGE_TOO_LARGE — a follower copies what its leader
  accepted, whatever the limit is now: appendAsFollower's ignoreRecordSize); a follower's batches
  in increasing offsets. An uncompressed batch's recordsCount must also match its lastOffsetDelta here (the
  engine's own check, older than the record pass below; it answers INVALID_RECORD as Kafka's
  LogValidator does).
- `validate_records` (LogValidator.validateMessagesAndAssignOffsets), on the leader only: one
  batch per append (getFirstBatchAndMaybeValidateNoMoreBatches), then record by record — a
  compressed batch decompressed first: recordsCount must be positive and equal the
  batch's offset range (`validateBatch`), the records must fill the batch exactly (DefaultRecordBatch's
  iterator: "premature EOF" / "records still remaining"), and a compacted topic refuses a record
  without a key (`validateKey`). Each refusal is Kafka's InvalidRecordException: INVALID_RECORD.

A follower trusts what its leader validated (Kafka's follower append does not decompress either).

`recompress_for_topic` (validateMessagesAndAssignOffsetsCompressed's rebuild, leader only): the
topic's `compression.type` names the codec its batches are stored with. `producer` (the default)
or the batch's own codec keeps the producer's bytes, as does an uncompressed control batch ("do
not compress control records unless they are written compressed"); any other codec makes the
leader decode the records and build the batch again with the topic's codec and level — same
records, timestamps, producer id, epoch, sequence and transactional flag, a new CRC — before
offsets are assigned as for any batch. A rebuilt batch is checked against `max.message.bytes`
again (UnifiedLog.append: messageSizeMaybeChanged). Followers copy the leader's bytes.

What Kafka's LogValidator also does and the engine does not: it rewrites a batch whose inner
offsets are not 0..n-1; the engine's producer always numbers records 0..n-1, and it does not read
the offset deltas. Timestamp bounds (`message.timestamp.*.max.ms`),
the client-only rules (no control batches, a sequence with a producer id) and the producer-id/
sequence checks live elsewhere (engine.storage.producer_state) or are not modelled.

`validate_leader_append` is the leader's entry: both passes. When engine.storage._columnar is
built, a single uncompressed batch — what a producer sends — is checked by one C call first
(`leader_batch_ok`: every check of both passes, True exactly when they pass), and otherwise the
record walk runs in C (`records_fill`, True exactly when the Python walk passes); the Python code
then only runs to name a refusal (or, for a compressed batch, to decompress it).
"""
from __future__ import annotations

from collections.abc import Callable

from engine.storage import compression
from engine.storage import record_batch as rb
from engine.storage.crc import crc32c
from engine.storage.errors import CorruptRecordAppendError, InvalidRecordError, RecordTooLargeError
from engine.storage.varint import decode_varint, decode_varlong

try:   # the checks below in C (True exactly when the Python checks pass); None without the extension
    from engine.storage._columnar import leader_batch_ok as _leader_batch_ok
    from engine.storage._columnar import records_fill as _records_fill
except ImportError:
    _leader_batch_ok = _records_fill = None


def validate_leader_append(buf: bytearray, max_message_bytes: int, *, compacted: bool) -> list[rb.BatchHeader]:
    """A leader's append checked by both passes (analyze_and_validate_records, then validate_records);
    the headers of its batches (one, as validate_records requires)."""
    if _leader_batch_ok is not None and _leader_batch_ok(buf, max_message_bytes, compacted, crc32c):
        return [rb.read_batch_header(buf)]   # the C call made every check below
    headers = analyze_and_validate_records(buf, max_message_bytes, increasing_offsets=False)
    validate_records(buf, headers, compacted=compacted)
    return headers


def analyze_and_validate_records(buf: bytearray, max_message_bytes: int | None, *,
                                 increasing_offsets: bool) -> list[rb.BatchHeader]:
    """The headers of the batches in `buf`, each checked whole (UnifiedLog.analyzeAndValidateRecords).

    `max_message_bytes` None: sizes are not checked (a follower's append)."""
    headers: list[rb.BatchHeader] = []
    position, end = 0, len(buf)
    if end == 0:
        raise InvalidRecordError("an append needs at least one record batch")
    while position < end:
        try:
            header = rb.read_batch_header(buf, position)
        except rb.CorruptRecordError as exc:
            raise CorruptRecordAppendError(f"batch at byte {position}: {exc}") from None
        size = header.size_in_bytes
        if max_message_bytes is not None and size > max_message_bytes:
            raise RecordTooLargeError(
                f"The record batch is {size} bytes, larger than max.message.bytes={max_message_bytes}")
        if size > end - position:
            raise CorruptRecordAppendError(f"batch at byte {position} is truncated")
        if not rb.batch_crc_ok(buf, position, header):
            raise CorruptRecordAppendError(f"batch at byte {position} fails its CRC-32C check")
        # A leader's check (LogValidator.validateBatch); a follower copies the leader's batches, and a
        # compacted leader's batches have gaps (engine.storage.cleaner), so it checks no count.
        if max_message_bytes is not None and header.compression == rb.NONE \
                and header.records_count != header.last_offset_delta + 1:
            raise InvalidRecordError(
                f"batch at byte {position} holds {header.records_count} records "
                f"but its offset delta says {header.last_offset_delta + 1}")
        if increasing_offsets and headers and header.base_offset <= headers[-1].last_offset:
            raise InvalidRecordError("batches in one append must have increasing offsets")
        headers.append(header)
        position += size
    return headers


def validate_records(buf: bytearray, headers: list[rb.BatchHeader], *, compacted: bool) -> None:
    """The leader's record-level checks (LogValidator), for every batch of the append."""
    if len(headers) > 1:
        # getFirstBatchAndMaybeValidateNoMoreBatches: a producer sends one v2 batch per partition.
        raise InvalidRecordError(f"An append to a leader holds one record batch, not {len(headers)} "
                                 f"(Kafka: \"Compressed outer record has more than one batch\")")
    position = 0
    for header in headers:
        _validate_batch(header, position)
        with memoryview(buf) as view:   # the records in place: an uncompressed batch is walked without a copy
            data: bytes | memoryview = view[position + rb.RECORDS_OFFSET:position + header.size_in_bytes]
            if header.compression != rb.NONE:
                try:
                    data = rb.decompress(header.compression, bytes(data), position)
                except rb.CorruptRecordError as exc:
                    raise CorruptRecordAppendError(str(exc)) from None
            _walk_records(data, header.records_count, position, check_keys=compacted)
        position += header.size_in_bytes


def _validate_batch(header: rb.BatchHeader, position: int) -> None:
    """LogValidator.validateBatch: the count is positive and agrees with the offset range."""
    count_from_offsets = header.last_offset_delta + 1
    if count_from_offsets <= 0:
        raise InvalidRecordError(f"Batch at byte {position} has an invalid offset range: "
                                 f"last offset delta {header.last_offset_delta}")
    if header.records_count <= 0:
        raise InvalidRecordError(f"Invalid reported count for record batch: {header.records_count}")
    if header.records_count != count_from_offsets:
        raise InvalidRecordError(
            f"Inconsistent batch offset range [0, {header.last_offset_delta}] and count of records "
            f"{header.records_count} in the batch at byte {position}")


def _walk_records(data: bytes | memoryview, count: int, position: int, *, check_keys: bool) -> None:
    """Step over `count` records by their length prefixes; they must fill `data` exactly.

    With `check_keys`, each record's keyLength is read as well (after attributes, timestampDelta
    and offsetDelta): -1, a null key, is refused on a compacted topic."""
    if _records_fill is not None and _records_fill(data, count, check_keys):
        return   # the C walk passed; on False the Python walk below finds and names the error
    data = bytes(data)
    pos, end = 0, len(data)
    try:
        for index in range(count):
            if pos >= end:
                raise InvalidRecordError(f"batch at byte {position}: Incorrect declared batch size, premature "
                                         f"EOF reached (record {index} of {count} is missing)")
            length, start = decode_varint(data, pos)
            pos = start + length
            if length <= 0 or pos > end:
                raise InvalidRecordError(f"batch at byte {position}: Incorrect declared batch size, premature "
                                         f"EOF reached (record {index} declares {length} bytes)")
            if check_keys and _key_length(data, start) < 0:
                raise InvalidRecordError(f"batch at byte {position}, record {index}: Compacted topic cannot "
                                         f"accept message without key")
    except (IndexError, ValueError) as exc:   # a varint running off the end or too long
        raise InvalidRecordError(f"batch at byte {position}: a record does not parse ({exc})") from None
    if pos != end:
        raise InvalidRecordError(f"batch at byte {position}: Incorrect declared batch size, records still "
                                 f"remaining in file ({end - pos} bytes after {count} records)")


def _key_length(data: bytes, start: int) -> int:
    """keyLength of the record whose fields start at `start` (after its length varint)."""
    _, pos = decode_varlong(data, start + 1)    # attributes (int8), then timestampDelta
    _, pos = decode_varint(data, pos)           # offsetDelta
    key_length, _ = decode_varint(data, pos)
    return key_length


def target_codec(topic_compression: str, source: int) -> int:
    """BrokerCompressionType.targetCompression: the codec a topic stores a batch of `source` with."""
    if topic_compression == compression.TOPIC_PRODUCER:
        return source
    if topic_compression == compression.TOPIC_UNCOMPRESSED:
        return rb.NONE
    return compression.CODEC_IDS[topic_compression]


def recompress_for_topic(buf: bytearray, headers: list[rb.BatchHeader], topic_compression: str,
                         level_of: Callable[[int], int | None],
                         max_message_bytes: int) -> tuple[bytearray, list[rb.BatchHeader]]:
    """A leader's validated append (one batch), rebuilt with the topic's codec when it differs
    from the batch's (see the module docstring); `level_of(codec)` is the topic's level for it.
    Returns the bytes to append and their headers: the same objects when nothing changes."""
    header = headers[0]
    target = target_codec(topic_compression, header.compression)
    if target == header.compression or (header.compression == rb.NONE and header.is_control):
        return buf, headers
    try:
        _, records = rb.decode_batch(buf, verify_crc=False)   # its CRC was checked a moment ago
    except rb.CorruptRecordError as exc:
        raise CorruptRecordAppendError(str(exc)) from None
    rebuilt = bytearray(rb.encode_batch(
        records, base_offset=header.base_offset, producer_id=header.producer_id,
        producer_epoch=header.producer_epoch, base_sequence=header.base_sequence,
        is_transactional=header.is_transactional, is_control=header.is_control,
        compression=target, compression_level=level_of(target)))
    if len(rebuilt) > max_message_bytes:
        raise RecordTooLargeError(f"The record batch is {len(rebuilt)} bytes once recompressed with "
                                  f"{compression.CODEC_NAMES[target]}, larger than "
                                  f"max.message.bytes={max_message_bytes}")
    return rebuilt, [rb.read_batch_header(rebuilt)]
