"""KRaft's `__cluster_metadata` records and the Raft layer's control records, byte for byte as Kafka writes them.

A metadata record is the *value* of a record in a record batch of `__cluster_metadata-0` (its key is
null). Kafka frames it with AbstractApiMessageSerde (server-common; MetadataRecordSerde picks the
message class by apiKey):

    frame version   unsigned varint   always 1 (0 was KRaft's 2.8 preview, refused)
    apiKey          unsigned varint   which record (MetadataRecordType: TOPIC_RECORD is 2, …)
    version         unsigned varint   the record's schema version
    message         the record's fields, in Kafka's flexible-version format (message_codec.py)

Nothing may follow the message ("Found N byte(s) of garbage after …").

A control record (a record of a control batch, written by the Raft layer) has a key of its own,
ControlRecordType's v0 key schema, and a value that is the bare message with no frame:

    key     version int16 (0), type int16 (2 LEADER_CHANGE, 3 SNAPSHOT_HEADER, 4 SNAPSHOT_FOOTER,
            5 KRAFT_VERSION, 6 KRAFT_VOTERS)
    value   the message at schema version 0: ControlRecordUtils reads every one of them at its
            *_CURRENT_VERSION, which is 0, and MemoryRecordsBuilder writes them at it

The schemas are apache/kafka metadata/src/main/resources/common/metadata/*.json and
clients/src/main/resources/common/message/{LeaderChangeMessage,SnapshotHeaderRecord,
SnapshotFooterRecord,KRaftVersionRecord,VotersRecord}.json (read at trunk 1eb7644, October 2024, the
schemas Kafka 4.0 ships). Each dataclass below carries Kafka's fields in schema order, named in
snake_case (MessageGenerator.toSnakeCase), with Kafka's defaults; FIELDS is the schema. A metadata
record also has `version`, the schema version it is written at, by default the newest (WRITE_VERSION).

`describe` gives the JSON that `kafka-dump-log --cluster-metadata-decoder` prints as a record's payload
(DumpLogSegments' ClusterMetadataLogMessageParser): {"type": "PARTITION_RECORD", "version": 2,
"data": {…}}, the data being the generated JsonConverter's output. `control_json` gives what it prints
for a control record ("LeaderChange: {…}", "SnapshotHeader {…}", …).
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any, ClassVar

from engine.metadata.message_codec import (
    ZERO_UUID,
    Field,
    Reader,
    encode_unsigned_varint,
    fields_of,
    json_of,
    read_struct,
    snake_case,
    write_struct,
)

# Re-exported: topic ids and directory ids convert between Kafka's 16 bytes and their text here.
from engine.metadata.message_codec import uuid_from_bytes as uuid_from_bytes
from engine.metadata.message_codec import uuid_to_bytes as uuid_to_bytes

FRAME_VERSION = 1                       # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION
CONTROL_KEY = struct.Struct(">hh")      # ControlRecordType's key schema v0: version, type
CONTROL_KEY_VERSION = 0                 # ControlRecordType.CURRENT_CONTROL_RECORD_KEY_VERSION
CONTROL_SCHEMA_VERSION = 0              # ControlRecordUtils.*_CURRENT_VERSION
INT16_MAX = (1 << 15) - 1

# DirectoryId's reserved ids (KIP-858): a replica's directory when none is assigned yet, lost, or migrating.
DIRECTORY_UNASSIGNED = ZERO_UUID                  # Uuid(0, 0)
DIRECTORY_LOST = "AAAAAAAAAAAAAAAAAAAAAQ"         # Uuid(0, 1)
DIRECTORY_MIGRATING = "AAAAAAAAAAAAAAAAAAAAAg"    # Uuid(0, 2)


# -- structs inside records -------------------------------------------------------------------------
@dataclass(kw_only=True)
class BrokerEndpoint:
    """RegisterBrokerRecord.EndPoints[]: a listener of the broker."""
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("Name", "string"), Field("Host", "string"), Field("Port", "uint16"),
        Field("SecurityProtocol", "int16"))
    name: str = ""
    host: str = ""
    port: int = 0
    security_protocol: int = 0          # SecurityProtocol id: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL


@dataclass(kw_only=True)
class BrokerFeature:
    """RegisterBrokerRecord.Features[]: a feature range the broker supports."""
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("Name", "string"), Field("MinSupportedVersion", "int16"), Field("MaxSupportedVersion", "int16"))
    name: str = ""
    min_supported_version: int = 0
    max_supported_version: int = 0


@dataclass(kw_only=True)
class LeaderChangeVoter:
    """LeaderChangeMessage's common struct Voter. Its VoterDirectoryId (version 1+, KIP-853) is left
    out: Kafka writes and reads this message at version 0 (ControlRecordUtils.LEADER_CHANGE_CURRENT_VERSION)."""
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("VoterId", "int32"),)
    voter_id: int = 0


@dataclass(kw_only=True)
class VoterEndpoint:
    """VotersRecord.Voters[].Endpoints[]."""
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Name", "string"), Field("Host", "string"), Field("Port", "uint16"))
    name: str = ""
    host: str = ""
    port: int = 0


@dataclass(kw_only=True)
class KRaftVersionFeature:
    """VotersRecord.Voters[].KRaftVersionFeature: the kraft.version range the voter supports."""
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("MinSupportedVersion", "int16"), Field("MaxSupportedVersion", "int16"))
    min_supported_version: int = 0
    max_supported_version: int = 0


@dataclass(kw_only=True)
class Voter:
    """VotersRecord.Voters[]: one voter of the quorum (KIP-853)."""
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("VoterId", "int32"), Field("VoterDirectoryId", "uuid"),
        Field("Endpoints", VoterEndpoint, array=True), Field("KRaftVersionFeature", KRaftVersionFeature))
    voter_id: int = 0
    voter_directory_id: str = ZERO_UUID
    endpoints: list[VoterEndpoint] = field(default_factory=list)
    kraft_version_feature: KRaftVersionFeature = field(default_factory=KRaftVersionFeature)


# -- metadata records -------------------------------------------------------------------------------
@dataclass(kw_only=True)
class RegisterBrokerRecord:
    """A broker registered (BrokerRegistrationRequest accepted). v1 adds InControlledShutdown, v2
    IsMigratingZkBroker, v3 LogDirs (tagged 0, KIP-858)."""
    API_KEY: ClassVar[int] = 0
    VERSIONS: ClassVar[tuple[int, int]] = (0, 3)
    WRITE_VERSION: ClassVar[int] = 3
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("BrokerId", "int32"),
        Field("IsMigratingZkBroker", "bool", since=2),
        Field("IncarnationId", "uuid"),
        Field("BrokerEpoch", "int64"),
        Field("EndPoints", BrokerEndpoint, array=True),
        Field("Features", BrokerFeature, array=True),
        Field("Rack", "string", nullable=True),
        Field("Fenced", "bool", default=True),
        Field("InControlledShutdown", "bool", since=1),
        Field("LogDirs", "uuid", since=3, array=True, tag=0),
    )
    broker_id: int = 0
    is_migrating_zk_broker: bool = False
    incarnation_id: str = ZERO_UUID
    broker_epoch: int = 0
    end_points: list[BrokerEndpoint] = field(default_factory=list)
    features: list[BrokerFeature] = field(default_factory=list)
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    log_dirs: list[str] = field(default_factory=list)
    version: int = 3


@dataclass(kw_only=True)
class UnregisterBrokerRecord:
    """A broker's registration removed (UnregisterBrokerRequest, or a newer registration of its id)."""
    API_KEY: ClassVar[int] = 1
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("BrokerId", "int32"), Field("BrokerEpoch", "int64"))
    broker_id: int = 0
    broker_epoch: int = 0
    version: int = 0


@dataclass(kw_only=True)
class TopicRecord:
    """A topic created: its name and id (its partitions follow as PartitionRecords)."""
    API_KEY: ClassVar[int] = 2
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Name", "string"), Field("TopicId", "uuid"))
    name: str = ""
    topic_id: str = ZERO_UUID
    version: int = 0


@dataclass(kw_only=True)
class PartitionRecord:
    """A partition's whole state. v1 adds Directories (KIP-858: one directory id per replica, in
    Replicas' order; DIRECTORY_UNASSIGNED when the lab has one log dir), v2 the eligible leader
    replicas (KIP-966, tagged 1 and 2)."""
    API_KEY: ClassVar[int] = 3
    VERSIONS: ClassVar[tuple[int, int]] = (0, 2)
    WRITE_VERSION: ClassVar[int] = 2
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("PartitionId", "int32", default=-1),
        Field("TopicId", "uuid"),
        Field("Replicas", "int32", array=True),
        Field("Isr", "int32", array=True),
        Field("RemovingReplicas", "int32", array=True),
        Field("AddingReplicas", "int32", array=True),
        Field("Leader", "int32", default=-1),
        Field("LeaderRecoveryState", "int8", tag=0),
        Field("LeaderEpoch", "int32", default=-1),
        Field("PartitionEpoch", "int32", default=-1),
        Field("Directories", "uuid", since=1, array=True),
        Field("EligibleLeaderReplicas", "int32", since=2, array=True, nullable=True, tag=1),
        Field("LastKnownElr", "int32", since=2, array=True, nullable=True, tag=2),
    )
    partition_id: int = -1
    topic_id: str = ZERO_UUID
    replicas: list[int] = field(default_factory=list)
    isr: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)
    adding_replicas: list[int] = field(default_factory=list)
    leader: int = -1
    leader_recovery_state: int = 0      # 1 while recovering from an unclean election (KIP-704)
    leader_epoch: int = -1
    partition_epoch: int = -1
    directories: list[str] = field(default_factory=list)
    eligible_leader_replicas: list[int] | None = None
    last_known_elr: list[int] | None = None
    version: int = 2


@dataclass(kw_only=True)
class ConfigRecord:
    """A config set (or, with value None, deleted). resource_type is ConfigResource.Type's id:
    2 TOPIC, 4 BROKER, 8 BROKER_LOGGER, 16 CLIENT_METRICS, 32 GROUP."""
    API_KEY: ClassVar[int] = 4
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("ResourceType", "int8"), Field("ResourceName", "string"), Field("Name", "string"),
        Field("Value", "string", nullable=True))
    resource_type: int = 0
    resource_name: str = ""
    name: str = ""
    value: str | None = None
    version: int = 0


@dataclass(kw_only=True)
class PartitionChangeRecord:
    """What changed in a partition (all but its id are tagged; a default means "unchanged"):
    Leader -2 unchanged, -1 none; LeaderRecoveryState -1 unchanged. v1 adds Directories (tag 8),
    v2 the eligible leader replicas (tags 6, 7)."""
    API_KEY: ClassVar[int] = 5
    VERSIONS: ClassVar[tuple[int, int]] = (0, 2)
    WRITE_VERSION: ClassVar[int] = 2
    NO_LEADER_CHANGE: ClassVar[int] = -2
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("PartitionId", "int32", default=-1),
        Field("TopicId", "uuid"),
        Field("Isr", "int32", array=True, nullable=True, tag=0),
        Field("Leader", "int32", default=-2, tag=1),
        Field("Replicas", "int32", array=True, nullable=True, tag=2),
        Field("RemovingReplicas", "int32", array=True, nullable=True, tag=3),
        Field("AddingReplicas", "int32", array=True, nullable=True, tag=4),
        Field("LeaderRecoveryState", "int8", default=-1, tag=5),
        Field("Directories", "uuid", since=1, array=True, nullable=True, tag=8),
        Field("EligibleLeaderReplicas", "int32", since=2, array=True, nullable=True, tag=6),
        Field("LastKnownElr", "int32", since=2, array=True, nullable=True, tag=7),
    )
    partition_id: int = -1
    topic_id: str = ZERO_UUID
    isr: list[int] | None = None
    leader: int = -2
    replicas: list[int] | None = None
    removing_replicas: list[int] | None = None
    adding_replicas: list[int] | None = None
    leader_recovery_state: int = -1
    directories: list[str] | None = None
    eligible_leader_replicas: list[int] | None = None
    last_known_elr: list[int] | None = None
    version: int = 2


@dataclass(kw_only=True)
class FenceBrokerRecord:
    """A broker fenced (its session expired); it leaves every ISR. Newer controllers write
    BrokerRegistrationChangeRecord(fenced=1) instead; both are read."""
    API_KEY: ClassVar[int] = 7
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Id", "int32"), Field("Epoch", "int64"))
    id: int = 0
    epoch: int = 0
    version: int = 0


@dataclass(kw_only=True)
class UnfenceBrokerRecord:
    """A broker unfenced (it caught up with the metadata log)."""
    API_KEY: ClassVar[int] = 8
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Id", "int32"), Field("Epoch", "int64"))
    id: int = 0
    epoch: int = 0
    version: int = 0


@dataclass(kw_only=True)
class RemoveTopicRecord:
    """A topic deleted, with all its partitions."""
    API_KEY: ClassVar[int] = 9
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("TopicId", "uuid"),)
    topic_id: str = ZERO_UUID
    version: int = 0


@dataclass(kw_only=True)
class FeatureLevelRecord:
    """A finalized feature level ("metadata.version" first in every new log; its version stays 0)."""
    API_KEY: ClassVar[int] = 12
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Name", "string"), Field("FeatureLevel", "int16"))
    name: str = ""
    feature_level: int = 0
    version: int = 0


@dataclass(kw_only=True)
class ProducerIdsRecord:
    """A block of producer ids handed out (AllocateProducerIds): next_producer_id is the next block's first."""
    API_KEY: ClassVar[int] = 15
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("BrokerId", "int32"), Field("BrokerEpoch", "int64", default=-1), Field("NextProducerId", "int64"))
    broker_id: int = 0
    broker_epoch: int = -1
    next_producer_id: int = 0
    version: int = 0


@dataclass(kw_only=True)
class BrokerRegistrationChangeRecord:
    """A change to a registration, all tagged: fenced -1 unfenced, 0 no change, 1 fenced;
    in_controlled_shutdown (v1+) 0 no change, 1 shutting down; log_dirs (v2+)."""
    API_KEY: ClassVar[int] = 17
    VERSIONS: ClassVar[tuple[int, int]] = (0, 2)
    WRITE_VERSION: ClassVar[int] = 2
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("BrokerId", "int32"),
        Field("BrokerEpoch", "int64"),
        Field("Fenced", "int8", tag=0),
        Field("InControlledShutdown", "int8", since=1, tag=1),
        Field("LogDirs", "uuid", since=2, array=True, tag=2),
    )
    broker_id: int = 0
    broker_epoch: int = 0
    fenced: int = 0
    in_controlled_shutdown: int = 0
    log_dirs: list[str] = field(default_factory=list)
    version: int = 2


@dataclass(kw_only=True)
class NoOpRecord:
    """Written by the active controller now and then (metadata.max.idle.interval.ms) so the high
    watermark moves and brokers see the log is alive (KIP-835)."""
    API_KEY: ClassVar[int] = 20
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    WRITE_VERSION: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    version: int = 0


MetadataRecord = (RegisterBrokerRecord | UnregisterBrokerRecord | TopicRecord | PartitionRecord | ConfigRecord
                  | PartitionChangeRecord | FenceBrokerRecord | UnfenceBrokerRecord | RemoveTopicRecord
                  | FeatureLevelRecord | ProducerIdsRecord | BrokerRegistrationChangeRecord | NoOpRecord)

RECORD_TYPES: dict[int, type] = {cls.API_KEY: cls for cls in (
    RegisterBrokerRecord, UnregisterBrokerRecord, TopicRecord, PartitionRecord, ConfigRecord,
    PartitionChangeRecord, FenceBrokerRecord, UnfenceBrokerRecord, RemoveTopicRecord, FeatureLevelRecord,
    ProducerIdsRecord, BrokerRegistrationChangeRecord, NoOpRecord)}


# -- control records --------------------------------------------------------------------------------
@dataclass(kw_only=True)
class LeaderChangeMessage:
    """Written first by a newly elected Raft leader in its epoch (LeaderState.appendLeaderChangeMessage):
    who leads, the voters, and who voted for it. `version` is Kafka's Version field (0)."""
    CONTROL_TYPE: ClassVar[int] = 2
    LABEL: ClassVar[str] = "LeaderChange:"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("Version", "int16"), Field("LeaderId", "int32"),
        Field("Voters", LeaderChangeVoter, array=True), Field("GrantingVoters", LeaderChangeVoter, array=True))
    version: int = 0
    leader_id: int = 0
    voters: list[LeaderChangeVoter] = field(default_factory=list)
    granting_voters: list[LeaderChangeVoter] = field(default_factory=list)


@dataclass(kw_only=True)
class SnapshotHeaderRecord:
    """The first record of a snapshot."""
    CONTROL_TYPE: ClassVar[int] = 3
    LABEL: ClassVar[str] = "SnapshotHeader"
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Version", "int16"), Field("LastContainedLogTimestamp", "int64"))
    version: int = 0
    last_contained_log_timestamp: int = 0


@dataclass(kw_only=True)
class SnapshotFooterRecord:
    """The last record of a snapshot."""
    CONTROL_TYPE: ClassVar[int] = 4
    LABEL: ClassVar[str] = "SnapshotFooter"
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Version", "int16"),)
    version: int = 0


@dataclass(kw_only=True)
class KRaftVersionRecord:
    """The finalized kraft.version (KIP-853: 1 allows changing the voters)."""
    CONTROL_TYPE: ClassVar[int] = 5
    LABEL: ClassVar[str] = "KRaftVersion"
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Version", "int16"), Field("KRaftVersion", "int16"))
    version: int = 0
    kraft_version: int = 0


@dataclass(kw_only=True)
class VotersRecord:
    """The set of voters (KIP-853), written when kraft.version is 1."""
    CONTROL_TYPE: ClassVar[int] = 6
    LABEL: ClassVar[str] = "KRaftVoters"
    FIELDS: ClassVar[tuple[Field, ...]] = (Field("Version", "int16"), Field("Voters", Voter, array=True))
    version: int = 0
    voters: list[Voter] = field(default_factory=list)


ControlRecord = LeaderChangeMessage | SnapshotHeaderRecord | SnapshotFooterRecord | KRaftVersionRecord | VotersRecord

CONTROL_TYPES: dict[int, type] = {cls.CONTROL_TYPE: cls for cls in (
    LeaderChangeMessage, SnapshotHeaderRecord, SnapshotFooterRecord, KRaftVersionRecord, VotersRecord)}
CONTROL_TYPE_NAMES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                      5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}


# -- metadata records: the frame --------------------------------------------------------------------
def encode(record: MetadataRecord) -> bytes:
    """The record value Kafka's MetadataRecordSerde writes: frame version, apiKey, version, message."""
    cls = type(record)
    if RECORD_TYPES.get(getattr(cls, "API_KEY", -1)) is not cls:
        raise ValueError(f"not a metadata record: {record!r}")
    lowest, highest = record.VERSIONS
    version = record.version
    if isinstance(version, bool) or not isinstance(version, int) or not lowest <= version <= highest:
        raise ValueError(f"{cls.__name__}.version: {version!r} is not a valid version ({lowest}..{highest})")
    return (encode_unsigned_varint(FRAME_VERSION) + encode_unsigned_varint(record.API_KEY)
            + encode_unsigned_varint(version) + write_struct(record, version, cls.__name__))


def decode(data: bytes | bytearray | memoryview) -> MetadataRecord:
    """Read one record value; ValueError naming the field and byte offset when it is not one."""
    reader = Reader(data)
    frame_version = _short(reader, "frame version")
    if frame_version == 0:
        raise ValueError("frame version 0 (KRaft's 2.8 preview) is not supported")
    if frame_version != FRAME_VERSION:
        raise ValueError(f"unknown frame version {frame_version} (only frame version {FRAME_VERSION} is supported)")
    api_key = _short(reader, "type")
    version = _short(reader, "version")
    cls = RECORD_TYPES.get(api_key)
    if cls is None:
        raise ValueError(f"unknown metadata record type (apiKey) {api_key}")
    lowest, highest = cls.VERSIONS  # type: ignore[attr-defined]
    if not lowest <= version <= highest:
        raise ValueError(f"{cls.__name__}: can't read version {version} (valid {lowest}..{highest})")
    record = read_struct(cls, reader, version, cls.__name__)
    record.version = version
    _no_garbage(reader, cls)
    return record


def _no_garbage(reader: Reader, cls: type) -> None:
    if reader.remaining:
        raise ValueError(f"found {reader.remaining} byte(s) of garbage after {cls.__name__} "
                         f"at offset {reader.position}")


def _short(reader: Reader, what: str) -> int:
    """AbstractApiMessageSerde.unsignedIntToShort: an unsigned varint that must fit an int16."""
    start = reader.position
    value = reader.unsigned_varint(what)
    if value > INT16_MAX:
        raise ValueError(f"{what} at offset {start}: value {value} is too large (at most {INT16_MAX})")
    return value


def record_type_name(cls: type) -> str:
    """MetadataRecordType's constant: "PartitionRecord" -> "PARTITION_RECORD"."""
    return snake_case(cls.__name__).upper()


def describe(record: MetadataRecord) -> dict[str, Any]:
    """What kafka-dump-log --cluster-metadata-decoder prints as the record's payload, as a dict."""
    return {"type": record_type_name(type(record)), "version": record.version,
            "data": json_of(record, record.version)}


def describe_json(record: MetadataRecord) -> str:
    """describe() as Jackson's ObjectNode.toString writes it (compact, non-ASCII kept)."""
    return json.dumps(describe(record), separators=(",", ":"), ensure_ascii=False)


# -- control records --------------------------------------------------------------------------------
def control_key(control_type: int) -> bytes:
    """ControlRecordType.recordKey: version 0, then the type."""
    return CONTROL_KEY.pack(CONTROL_KEY_VERSION, control_type)


def parse_control_type(key: bytes | bytearray | memoryview | None) -> int:
    """ControlRecordType.parseTypeId: the type of a control record's key (a newer key version is read as v0)."""
    if key is None or len(key) < CONTROL_KEY.size:
        raise ValueError(f"control record key: needs at least {CONTROL_KEY.size} bytes, "
                         f"got {0 if key is None else len(key)}")
    version, control_type = CONTROL_KEY.unpack_from(bytes(key[:CONTROL_KEY.size]))
    if version < 0:
        raise ValueError(f"control record key: invalid version {version} (data corruption?)")
    return int(control_type)


def encode_control(record: ControlRecord) -> tuple[bytes, bytes]:
    """(key, value) of the control record carrying `record`, as MemoryRecordsBuilder.appendControlRecord writes it."""
    cls = type(record)
    if CONTROL_TYPES.get(getattr(cls, "CONTROL_TYPE", -1)) is not cls:
        raise ValueError(f"not a control record: {record!r}")
    return control_key(record.CONTROL_TYPE), write_struct(record, CONTROL_SCHEMA_VERSION, cls.__name__)


def decode_control(key: bytes | bytearray | memoryview | None,
                   value: bytes | bytearray | memoryview | None) -> ControlRecord:
    """The control record of a control batch's record (ControlRecordUtils.deserialize…)."""
    control_type = parse_control_type(key)
    cls = CONTROL_TYPES.get(control_type)
    if cls is None:
        raise ValueError(f"control record type {CONTROL_TYPE_NAMES.get(control_type, 'UNKNOWN')}({control_type}) "
                         "is not a KRaft control record")
    if value is None:
        raise ValueError(f"{cls.__name__}: the control record has no value")
    reader = Reader(value)
    record = read_struct(cls, reader, CONTROL_SCHEMA_VERSION, cls.__name__)
    _no_garbage(reader, cls)
    return record


def control_json(record: ControlRecord) -> dict[str, Any]:
    """The control record's JsonConverter output (DumpLogSegments writes it at the record's Version)."""
    return json_of(record, record.version)


def describe_control(record: ControlRecord) -> dict[str, Any]:
    """A control record in describe()'s shape: {"type": "LEADER_CHANGE", "version": 0, "data": {…}}."""
    return {"type": CONTROL_TYPE_NAMES[record.CONTROL_TYPE], "version": record.version, "data": control_json(record)}


def field_names(cls: type) -> list[str]:
    """The dataclass attribute of each schema field, in schema order (tests check they match)."""
    return [f.attr for f in fields_of(cls)]
