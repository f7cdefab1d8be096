"""Errors of the broker's storage layer, named as Kafka names them.

Each carries `kafka_name`, the error code name a Kafka client would see (`OFFSET_OUT_OF_RANGE`, ...),
so the layers above can report Kafka's words without a mapping table of their own.
"""
from __future__ import annotations


class KafkaStorageError(Exception):
    kafka_name = "UNKNOWN_SERVER_ERROR"


class OffsetOutOfRangeError(KafkaStorageError):
    kafka_name = "OFFSET_OUT_OF_RANGE"

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset
        super().__init__(
            f"Offset {offset} is out of range: the log holds offsets "
            f"[{log_start_offset}, {log_end_offset})")


class RecordTooLargeError(KafkaStorageError):
    kafka_name = "MESSAGE_TOO_LARGE"


class InvalidRecordError(KafkaStorageError):
    kafka_name = "INVALID_RECORD"


class CorruptRecordAppendError(KafkaStorageError):
    """A batch offered to append failed its CRC or structure check (Kafka: CORRUPT_MESSAGE)."""
    kafka_name = "CORRUPT_MESSAGE"


class InvalidConfigError(KafkaStorageError, ValueError):
    kafka_name = "INVALID_CONFIG"


class LogClosedError(KafkaStorageError):
    kafka_name = "KAFKA_STORAGE_ERROR"
