"""engine.common.errors: Kafka's error names with Kafka's codes, and KafkaError under every error family.

The codes are checked against kafka-python's `kafka.errors` (already the suite's oracle for the record
format), an implementation written apart from ours, rather than against a second copy of our own table.
"""
from __future__ import annotations

import json
import subprocess
import sys

import kafka.errors
import pytest

from engine.clients.consumer_state import (
    CommitFailedError,
    ConsumerTimeoutError,
    IllegalStateError,
    KafkaClientError,
    NoOffsetForPartitionError,
    RebalanceInProgressError,
)
from engine.clients.producer import ProducerConfigError, ProducerError
from engine.cluster import ClusterError
from engine.common.errors import Errors, KafkaError
from engine.common.topics import InvalidTopicError, TopicExistsError, UnknownTopicError
from engine.replication.assignment import InvalidPartitionsError, InvalidReplicationFactorError
from engine.scenarios.runner import STEP_ERRORS
from engine.scenarios.schema import StepArgumentError
from engine.storage import errors as storage_errors
from engine.storage.producer_state import ProducerStateError
from engine.storage.record_batch import CorruptRecordError, UnsupportedCompressionError

# kafka-python still spells a few errors by their names before Kafka renamed them (KIP-392 renamed
# NOT_LEADER_FOR_PARTITION to NOT_LEADER_OR_FOLLOWER, for example); Errors.java's names are ours.
KAFKA_PYTHON_NAMES = {
    "UNKNOWN_SERVER_ERROR": "UNKNOWN",
    "NONE": "NO_ERROR",
    "NOT_LEADER_OR_FOLLOWER": "NOT_LEADER_FOR_PARTITION",
    "MESSAGE_TOO_LARGE": "MESSAGE_SIZE_TOO_LARGE",
    "INVALID_TOPIC_EXCEPTION": "INVALID_TOPIC",
    "INVALID_REPLICA_ASSIGNMENT": "INVALID_REPLICATION_ASSIGNMENT",
}
NEWER_THAN_KAFKA_PYTHON = {"INVALID_REGULAR_EXPRESSION"}   # code 128 (KIP-848), after kafka-python 3.0
CLIENT_SIDE = {"COMMIT_FAILED", "NO_OFFSET_FOR_PARTITION", "ILLEGAL_STATE", "TIMEOUT", "BUFFER_EXHAUSTED",
               "PRODUCER_CRASHED", "UNKNOWN_SESSION"}

FAMILIES = [ClusterError, storage_errors.KafkaStorageError, ProducerStateError, CorruptRecordError,
            InvalidTopicError, TopicExistsError, UnknownTopicError, KafkaClientError, ProducerError,
            ProducerConfigError, StepArgumentError, InvalidReplicationFactorError, InvalidPartitionsError]


def _wire_errors() -> list[Errors]:
    return [error for error in Errors if error.code is not None]


def test_every_wire_error_has_the_code_kafka_gives_it() -> None:
    for error in _wire_errors():
        if error in NEWER_THAN_KAFKA_PYTHON:
            continue
        theirs = kafka.errors.for_code(error.code)
        assert theirs.errno == error.code
        assert theirs.message == KAFKA_PYTHON_NAMES.get(error, error.value), error


def test_the_enum_holds_all_of_kafkas_codes_from_minus_one_to_128_each_once() -> None:
    codes = [error.code for error in _wire_errors()]
    assert len(codes) == len(set(codes))
    assert set(codes) == set(range(-1, 129)) - {99}   # Errors.java leaves 99 unused


def test_the_engines_own_names_have_no_wire_code() -> None:
    assert {error.value for error in Errors if error.code is None} == CLIENT_SIDE


def test_an_error_is_its_name_as_a_string_everywhere_a_string_is_used() -> None:
    assert Errors.NONE == "NONE" and Errors("NOT_COORDINATOR") is Errors.NOT_COORDINATOR
    assert Errors.NONE.code == 0 and Errors.UNKNOWN_SERVER_ERROR.code == -1
    assert {"NONE": 1}[Errors.NONE] == 1 and {Errors.NONE: 1}["NONE"] == 1
    assert json.dumps({"error": Errors.FENCED_LEADER_EPOCH}) == '{"error": "FENCED_LEADER_EPOCH"}'
    assert f"{Errors.REBALANCE_IN_PROGRESS}" == "REBALANCE_IN_PROGRESS"


def test_an_unknown_code_reads_as_unknown_server_error_as_errors_for_code_does() -> None:
    assert Errors.for_code(6) is Errors.NOT_LEADER_OR_FOLLOWER
    assert Errors.for_code(9999) is Errors.UNKNOWN_SERVER_ERROR


def test_a_kafka_error_carries_the_error_and_its_name_as_a_plain_string() -> None:
    error = KafkaError("no coordinator here", error="NOT_COORDINATOR")
    assert error.error is Errors.NOT_COORDINATOR
    assert error.kafka_name == "NOT_COORDINATOR" and type(error.kafka_name) is str
    assert str(error) == "no coordinator here"
    assert KafkaError("plain").error is Errors.UNKNOWN_SERVER_ERROR


def test_a_misspelt_error_name_is_refused() -> None:
    with pytest.raises(ValueError):
        KafkaError("typo", error="NOT_COORDINATR")


def test_every_error_family_is_a_kafka_error() -> None:
    for family in FAMILIES:
        assert issubclass(family, KafkaError), family
        assert family.kafka_name == family.error.value, family


def test_a_family_names_its_error_once_and_both_attributes_follow() -> None:
    assert storage_errors.OffsetOutOfRangeError.error is Errors.OFFSET_OUT_OF_RANGE
    assert storage_errors.LogClosedError.kafka_name == "KAFKA_STORAGE_ERROR"
    assert InvalidTopicError.kafka_name == "INVALID_TOPIC_EXCEPTION"
    assert UnsupportedCompressionError.error is Errors.UNSUPPORTED_COMPRESSION_TYPE
    expected = {CommitFailedError: "COMMIT_FAILED", RebalanceInProgressError: "REBALANCE_IN_PROGRESS",
                NoOffsetForPartitionError: "NO_OFFSET_FOR_PARTITION", IllegalStateError: "ILLEGAL_STATE",
                ConsumerTimeoutError: "TIMEOUT"}
    for family, name in expected.items():
        assert family("m").kafka_name == name


def test_the_families_keep_their_constructors_and_base_classes() -> None:
    assert ClusterError("m").kafka_name == "INVALID_REQUEST"
    assert ClusterError("m", "LEADER_NOT_AVAILABLE").error is Errors.LEADER_NOT_AVAILABLE
    assert ProducerError("m").kafka_name == "INVALID_REQUEST"
    assert KafkaClientError("m", "GROUP_AUTHORIZATION_FAILED").kafka_name == "GROUP_AUTHORIZATION_FAILED"
    out_of_range = storage_errors.OffsetOutOfRangeError(5, 0, 3)
    assert "[0, 3)" in str(out_of_range) and out_of_range.kafka_name == "OFFSET_OUT_OF_RANGE"
    refused = ProducerStateError("INVALID_PRODUCER_EPOCH", "old epoch", producer_id=1, producer_epoch=0,
                                 base_sequence=0, expected_sequence=-1, current_epoch=1)
    assert refused.error is Errors.INVALID_PRODUCER_EPOCH and str(refused) == "old epoch"
    assert CorruptRecordError("bad crc", 12).position == 12
    step = StepArgumentError("bad", "produce", "topic", "INVALID_TOPIC_EXCEPTION")
    assert (step.command, step.field, step.kafka_name) == ("produce", "topic", "INVALID_TOPIC_EXCEPTION")
    assert issubclass(storage_errors.InvalidConfigError, ValueError)
    assert issubclass(InvalidTopicError, ValueError) and issubclass(UnknownTopicError, LookupError)


def test_a_producer_error_is_still_a_step_error_though_no_longer_a_cluster_error() -> None:
    assert not issubclass(ProducerError, ClusterError)
    assert isinstance(ProducerError("Cannot send after p1 was crashed"), STEP_ERRORS)


def test_the_producer_imports_without_the_cluster_facade() -> None:
    probe = "import sys, engine.clients.producer; print('engine.cluster' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
