"""Errors of the broker's storage layer, named as Kafka names them.

Each is a KafkaError carrying `error` (an `Errors` member) and `kafka_name`, the error code name a Kafka
client would see (`OFFSET_OUT_OF_RANGE`, ...), so the layers above can report Kafka's words without a mapping
table of their own.
"""
from __future__ import annotations

from engine.common.errors import Errors, KafkaError


class KafkaStorageError(KafkaError):
    error = Errors.UNKNOWN_SERVER_ERROR


class OffsetOutOfRangeError(KafkaStorageError):
    error = Errors.OFFSET_OUT_OF_RANGE

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset
        super().__init__(
            f"Offset {offset} is out of range: the log holds offsets "
            f"[{log_start_offset}, {log_end_offset})")


class RecordTooLargeError(KafkaStorageError):
    error = Errors.MESSAGE_TOO_LARGE


class RecordBatchTooLargeError(KafkaStorageError):
    """An append larger than segment.bytes: no segment could hold it (Kafka's RecordBatchTooLargeException)."""
    error = Errors.RECORD_LIST_TOO_LARGE


class InvalidRecordError(KafkaStorageError):
    error = Errors.INVALID_RECORD


class CorruptRecordAppendError(KafkaStorageError):
    """A batch offered to append failed its CRC or structure check (Kafka: CORRUPT_MESSAGE)."""
    error = Errors.CORRUPT_MESSAGE


class InvalidConfigError(KafkaStorageError, ValueError):
    error = Errors.INVALID_CONFIG


class LogClosedError(KafkaStorageError):
    error = Errors.KAFKA_STORAGE_ERROR
