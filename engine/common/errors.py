"""Kafka's error vocabulary: one enum of its error names, and the exception every engine error derives from.

`Errors` holds the names and numeric codes of Kafka's `org.apache.kafka.common.protocol.Errors` (the codes a
response carries on the wire), all of them, in Kafka's order. A few more names have no code on the wire, and
`code` None: exceptions Kafka's clients raise to the application (`CommitFailedException`,
`NoOffsetForPartitionException`, ...) and two of the lab's own (PRODUCER_CRASHED, UNKNOWN_SESSION).

Errors is a `StrEnum` whose value is the name, so `Errors.NONE == "NONE"` holds, a member hashes as its name
(a dict keyed by plain strings finds it), and responses, events and JSON that carry plain strings keep working
while code moves over to the enum. Only `repr()` tells a member from the plain string.

`KafkaError` is the base of the engine's exception families (`ClusterError`, the storage errors, the topic
errors, the clients' errors). Each carries `.error`, an `Errors` member, and `.kafka_name`, its name as a plain
string (the attribute the engine's callers, events and the lab read).
"""
from __future__ import annotations

from enum import StrEnum, auto


class Errors(StrEnum):
    """Kafka's error names; `code` is Kafka's error code (Errors.java), None for a name with no code on the wire."""

    code: int | None

    @staticmethod
    def _generate_next_value_(name: str, start: int, count: int, last_values: list[str]) -> str:
        return name   # the value is the name itself, as Kafka's tools print it

    def __new__(cls, value: str, code: int | None) -> Errors:
        member = str.__new__(cls, value)
        member._value_ = value
        member.code = code
        return member

    # -- Kafka's Errors.java, by code (99 is unused there) --
    UNKNOWN_SERVER_ERROR = auto(), -1
    NONE = auto(), 0
    OFFSET_OUT_OF_RANGE = auto(), 1
    CORRUPT_MESSAGE = auto(), 2
    UNKNOWN_TOPIC_OR_PARTITION = auto(), 3
    INVALID_FETCH_SIZE = auto(), 4
    LEADER_NOT_AVAILABLE = auto(), 5
    NOT_LEADER_OR_FOLLOWER = auto(), 6
    REQUEST_TIMED_OUT = auto(), 7
    BROKER_NOT_AVAILABLE = auto(), 8
    REPLICA_NOT_AVAILABLE = auto(), 9
    MESSAGE_TOO_LARGE = auto(), 10
    STALE_CONTROLLER_EPOCH = auto(), 11
    OFFSET_METADATA_TOO_LARGE = auto(), 12
    NETWORK_EXCEPTION = auto(), 13
    COORDINATOR_LOAD_IN_PROGRESS = auto(), 14
    COORDINATOR_NOT_AVAILABLE = auto(), 15
    NOT_COORDINATOR = auto(), 16
    INVALID_TOPIC_EXCEPTION = auto(), 17
    RECORD_LIST_TOO_LARGE = auto(), 18
    NOT_ENOUGH_REPLICAS = auto(), 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = auto(), 20
    INVALID_REQUIRED_ACKS = auto(), 21
    ILLEGAL_GENERATION = auto(), 22
    INCONSISTENT_GROUP_PROTOCOL = auto(), 23
    INVALID_GROUP_ID = auto(), 24
    UNKNOWN_MEMBER_ID = auto(), 25
    INVALID_SESSION_TIMEOUT = auto(), 26
    REBALANCE_IN_PROGRESS = auto(), 27
    INVALID_COMMIT_OFFSET_SIZE = auto(), 28
    TOPIC_AUTHORIZATION_FAILED = auto(), 29
    GROUP_AUTHORIZATION_FAILED = auto(), 30
    CLUSTER_AUTHORIZATION_FAILED = auto(), 31
    INVALID_TIMESTAMP = auto(), 32
    UNSUPPORTED_SASL_MECHANISM = auto(), 33
    ILLEGAL_SASL_STATE = auto(), 34
    UNSUPPORTED_VERSION = auto(), 35
    TOPIC_ALREADY_EXISTS = auto(), 36
    INVALID_PARTITIONS = auto(), 37
    INVALID_REPLICATION_FACTOR = auto(), 38
    INVALID_REPLICA_ASSIGNMENT = auto(), 39
    INVALID_CONFIG = auto(), 40
    NOT_CONTROLLER = auto(), 41
    INVALID_REQUEST = auto(), 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = auto(), 43
    POLICY_VIOLATION = auto(), 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = auto(), 45
    DUPLICATE_SEQUENCE_NUMBER = auto(), 46
    INVALID_PRODUCER_EPOCH = auto(), 47
    INVALID_TXN_STATE = auto(), 48
    INVALID_PRODUCER_ID_MAPPING = auto(), 49
    INVALID_TRANSACTION_TIMEOUT = auto(), 50
    CONCURRENT_TRANSACTIONS = auto(), 51
    TRANSACTION_COORDINATOR_FENCED = auto(), 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = auto(), 53
    SECURITY_DISABLED = auto(), 54
    OPERATION_NOT_ATTEMPTED = auto(), 55
    KAFKA_STORAGE_ERROR = auto(), 56
    LOG_DIR_NOT_FOUND = auto(), 57
    SASL_AUTHENTICATION_FAILED = auto(), 58
    UNKNOWN_PRODUCER_ID = auto(), 59
    REASSIGNMENT_IN_PROGRESS = auto(), 60
    DELEGATION_TOKEN_AUTH_DISABLED = auto(), 61
    DELEGATION_TOKEN_NOT_FOUND = auto(), 62
    DELEGATION_TOKEN_OWNER_MISMATCH = auto(), 63
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = auto(), 64
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = auto(), 65
    DELEGATION_TOKEN_EXPIRED = auto(), 66
    INVALID_PRINCIPAL_TYPE = auto(), 67
    NON_EMPTY_GROUP = auto(), 68
    GROUP_ID_NOT_FOUND = auto(), 69
    FETCH_SESSION_ID_NOT_FOUND = auto(), 70
    INVALID_FETCH_SESSION_EPOCH = auto(), 71
    LISTENER_NOT_FOUND = auto(), 72
    TOPIC_DELETION_DISABLED = auto(), 73
    FENCED_LEADER_EPOCH = auto(), 74
    UNKNOWN_LEADER_EPOCH = auto(), 75
    UNSUPPORTED_COMPRESSION_TYPE = auto(), 76
    STALE_BROKER_EPOCH = auto(), 77
    OFFSET_NOT_AVAILABLE = auto(), 78
    MEMBER_ID_REQUIRED = auto(), 79
    PREFERRED_LEADER_NOT_AVAILABLE = auto(), 80
    GROUP_MAX_SIZE_REACHED = auto(), 81
    FENCED_INSTANCE_ID = auto(), 82
    ELIGIBLE_LEADERS_NOT_AVAILABLE = auto(), 83
    ELECTION_NOT_NEEDED = auto(), 84
    NO_REASSIGNMENT_IN_PROGRESS = auto(), 85
    GROUP_SUBSCRIBED_TO_TOPIC = auto(), 86
    INVALID_RECORD = auto(), 87
    UNSTABLE_OFFSET_COMMIT = auto(), 88
    THROTTLING_QUOTA_EXCEEDED = auto(), 89
    PRODUCER_FENCED = auto(), 90
    RESOURCE_NOT_FOUND = auto(), 91
    DUPLICATE_RESOURCE = auto(), 92
    UNACCEPTABLE_CREDENTIAL = auto(), 93
    INCONSISTENT_VOTER_SET = auto(), 94
    INVALID_UPDATE_VERSION = auto(), 95
    FEATURE_UPDATE_FAILED = auto(), 96
    PRINCIPAL_DESERIALIZATION_FAILURE = auto(), 97
    SNAPSHOT_NOT_FOUND = auto(), 98
    UNKNOWN_TOPIC_ID = auto(), 100
    DUPLICATE_BROKER_REGISTRATION = auto(), 101
    BROKER_ID_NOT_REGISTERED = auto(), 102
    INCONSISTENT_TOPIC_ID = auto(), 103
    INCONSISTENT_CLUSTER_ID = auto(), 104
    TRANSACTIONAL_ID_NOT_FOUND = auto(), 105
    FETCH_SESSION_TOPIC_ID_ERROR = auto(), 106
    INELIGIBLE_REPLICA = auto(), 107
    NEW_LEADER_ELECTED = auto(), 108
    OFFSET_MOVED_TO_TIERED_STORAGE = auto(), 109
    FENCED_MEMBER_EPOCH = auto(), 110
    UNRELEASED_INSTANCE_ID = auto(), 111
    UNSUPPORTED_ASSIGNOR = auto(), 112
    STALE_MEMBER_EPOCH = auto(), 113
    MISMATCHED_ENDPOINT_TYPE = auto(), 114
    UNSUPPORTED_ENDPOINT_TYPE = auto(), 115
    UNKNOWN_CONTROLLER_ID = auto(), 116
    UNKNOWN_SUBSCRIPTION_ID = auto(), 117
    TELEMETRY_TOO_LARGE = auto(), 118
    INVALID_REGISTRATION = auto(), 119
    TRANSACTION_ABORTABLE = auto(), 120
    INVALID_RECORD_STATE = auto(), 121
    SHARE_SESSION_NOT_FOUND = auto(), 122
    INVALID_SHARE_SESSION_EPOCH = auto(), 123
    FENCED_STATE_EPOCH = auto(), 124
    INVALID_VOTER_KEY = auto(), 125
    DUPLICATE_VOTER = auto(), 126
    VOTER_NOT_FOUND = auto(), 127
    INVALID_REGULAR_EXPRESSION = auto(), 128

    # -- no code on the wire: exceptions Kafka's clients raise to the application, and the lab's own names --
    COMMIT_FAILED = auto(), None             # CommitFailedException: the group moved on before the commit
    NO_OFFSET_FOR_PARTITION = auto(), None   # NoOffsetForPartitionException: auto.offset.reset=none
    ILLEGAL_STATE = auto(), None             # IllegalStateException: a call the client's state forbids
    TIMEOUT = auto(), None                   # TimeoutException of a blocking client call (poll, commitSync)
    BUFFER_EXHAUSTED = auto(), None          # BufferExhaustedException: buffer.memory full past max.block.ms
    PRODUCER_CRASHED = auto(), None          # the lab's own: the producer's process crashed with the record unsent
    UNKNOWN_SESSION = auto(), None           # the lab's read API (read_api_server): no lab session with that id

    @classmethod
    def for_code(cls, code: int) -> Errors:
        """The error with Kafka's `code` (Errors.forCode): UNKNOWN_SERVER_ERROR for a code Kafka does not know."""
        return _BY_CODE.get(code, cls.UNKNOWN_SERVER_ERROR)

    @classmethod
    def named(cls, name: str) -> Errors:
        """The member called `name` (or `name` itself, a member); ValueError for a name Kafka does not have,
        so a typo cannot pass. (`Errors(name)` does the same at run time; this spelling type-checks.)"""
        try:
            return cls[name]
        except KeyError:
            raise ValueError(f"{name!r} is not one of Kafka's error names") from None


_BY_CODE = {error.code: error for error in Errors if error.code is not None}


class KafkaError(Exception):
    """An engine error that names Kafka's error for it.

    A family names its default once, as a class attribute `error = Errors.X` (or, as the older families did,
    `kafka_name = "X"`); an instance may name another with the constructor's `error` argument. `kafka_name` is
    always `error`'s name as a plain `str`.
    """

    error: Errors = Errors.UNKNOWN_SERVER_ERROR
    kafka_name: str = Errors.UNKNOWN_SERVER_ERROR.value

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "error" in cls.__dict__:
            cls.kafka_name = Errors.named(cls.error).value
        elif "kafka_name" in cls.__dict__:
            cls.error = Errors.named(cls.kafka_name)

    def __init__(self, *args: object, error: Errors | str | None = None) -> None:
        super().__init__(*args)
        if error is not None:
            self.error = Errors.named(error)   # ValueError for a name Kafka does not have: a typo must not pass
            self.kafka_name = self.error.value
