"""KRaft metadata and control records, byte for byte.

Each expected byte string is written by hand from the record's JSON schema in apache/kafka
(metadata/src/main/resources/common/metadata/*.json, clients/…/common/message/*.json), field by
field in schema order, with the frame of AbstractApiMessageSerde in front of metadata records:
01 (frame version), apiKey, version — all unsigned varints.
"""
from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.metadata import records as r
from engine.metadata.message_codec import FIXED, Field, fields_of
from engine.metadata.zk import new_topic_id

ID = "AAECAwQFBgcICQoLDA0ODw"          # Uuid of the bytes 00 01 02 … 0f
ID_HEX = "000102030405060708090a0b0c0d0e0f"
ID2 = "EBESExQVFhcYGRobHB0eHw"         # Uuid of the bytes 10 11 … 1f
ID2_HEX = "101112131415161718191a1b1c1d1e1f"
ZERO_HEX = "00" * 16


def hx(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts).replace(" ", ""))


def text(value: str) -> str:
    """A COMPACT_STRING's hex: unsigned varint (length + 1), then UTF-8 (all test strings are short)."""
    data = value.encode()
    return f"{len(data) + 1:02x}" + data.hex()


# -- hand-checked vectors, one per record type -----------------------------------------------------
REGISTER_BROKER = r.RegisterBrokerRecord(
    broker_id=1, incarnation_id=ID, broker_epoch=10,
    end_points=[r.BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9092, security_protocol=0)],
    features=[r.BrokerFeature(name="metadata.version", min_supported_version=1, max_supported_version=25)],
    rack=None, fenced=True, log_dirs=[ID2])
REGISTER_BROKER_BYTES = hx(
    "01 00 03",                          # frame 1, apiKey 0, version 3
    "00000001",                          # BrokerId int32
    "00",                                # IsMigratingZkBroker bool (2+), false
    ID_HEX,                              # IncarnationId uuid
    "000000000000000a",                  # BrokerEpoch int64
    "02",                                # EndPoints: 1 element (+1)
    text("PLAINTEXT"), text("localhost"), "2384", "0000", "00",   # Name, Host, Port uint16 9092, SecurityProtocol, tags
    "02",                                # Features: 1 element
    text("metadata.version"), "0001", "0019", "00",               # Name, Min, Max, tags
    "00",                                # Rack: null
    "01",                                # Fenced: true
    "00",                                # InControlledShutdown (1+): false
    "01",                                # tagged fields: 1
    "00", "11", "02", ID2_HEX,           # tag 0 LogDirs, size 17: 1 element + 16 bytes
)

VECTORS: list[tuple[Any, bytes]] = [
    (REGISTER_BROKER, REGISTER_BROKER_BYTES),
    (r.UnregisterBrokerRecord(broker_id=2, broker_epoch=5),
     hx("01 01 00", "00000002", "0000000000000005", "00")),          # BrokerId, BrokerEpoch, no tags
    (r.TopicRecord(name="foo", topic_id=ID),
     hx("01 02 00", text("foo"), ID_HEX, "00")),                     # Name, TopicId
    (r.PartitionRecord(partition_id=0, topic_id=ID, replicas=[1, 2, 3], isr=[1, 2], leader=1, leader_epoch=0,
                       partition_epoch=0, directories=[r.DIRECTORY_UNASSIGNED] * 3),
     hx("01 03 02",
        "00000000", ID_HEX,                                          # PartitionId, TopicId
        "04 00000001 00000002 00000003",                             # Replicas
        "03 00000001 00000002",                                      # Isr
        "01", "01",                                                  # RemovingReplicas, AddingReplicas: empty
        "00000001",                                                  # Leader
        "00000000", "00000000",                                      # LeaderEpoch, PartitionEpoch
        "04", ZERO_HEX * 3,                                          # Directories (1+): 3 × UNASSIGNED
        "00")),                                                      # no tags: recovery 0, ELRs null
    (r.ConfigRecord(resource_type=2, resource_name="foo", name="cleanup.policy", value="compact"),
     hx("01 04 00", "02", text("foo"), text("cleanup.policy"), text("compact"), "00")),
    (r.PartitionChangeRecord(partition_id=0, topic_id=ID, isr=[1], leader=1, eligible_leader_replicas=[2]),
     hx("01 05 02", "00000000", ID_HEX,
        "03",                                                        # 3 tagged fields, ascending tags
        "00 05 02 00000001",                                         # tag 0 Isr [1], 5 bytes
        "01 04 00000001",                                            # tag 1 Leader 1
        "06 05 02 00000002")),                                       # tag 6 EligibleLeaderReplicas [2]
    (r.FenceBrokerRecord(id=1, epoch=3), hx("01 07 00", "00000001", "0000000000000003", "00")),
    (r.UnfenceBrokerRecord(id=1, epoch=3), hx("01 08 00", "00000001", "0000000000000003", "00")),
    (r.RemoveTopicRecord(topic_id=ID), hx("01 09 00", ID_HEX, "00")),
    (r.FeatureLevelRecord(name="metadata.version", feature_level=25),
     hx("01 0c 00", text("metadata.version"), "0019", "00")),         # apiKey 12
    (r.ProducerIdsRecord(broker_id=1, broker_epoch=5, next_producer_id=1000),
     hx("01 0f 00", "00000001", "0000000000000005", "00000000000003e8", "00")),
    (r.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=-1),
     hx("01 11 02", "00000001", "000000000000000a",
        "01", "00 01 ff")),                                          # tag 0 Fenced -1; 1 and 2 default
    (r.NoOpRecord(), hx("01 14 00", "00")),                          # apiKey 20, no fields
]


@pytest.mark.parametrize(("record", "expected"), VECTORS, ids=[type(v[0]).__name__ for v in VECTORS])
def test_each_record_type_encodes_to_the_bytes_its_schema_gives(record, expected):
    assert r.encode(record) == expected
    assert r.decode(expected) == record


def test_every_record_type_has_a_vector_and_its_kafka_api_key():
    assert {type(record) for record, _ in VECTORS} == set(r.RECORD_TYPES.values())
    assert {name: cls.API_KEY for cls in r.RECORD_TYPES.values() for name in [cls.__name__]} == {
        "RegisterBrokerRecord": 0, "UnregisterBrokerRecord": 1, "TopicRecord": 2, "PartitionRecord": 3,
        "ConfigRecord": 4, "PartitionChangeRecord": 5, "FenceBrokerRecord": 7, "UnfenceBrokerRecord": 8,
        "RemoveTopicRecord": 9, "FeatureLevelRecord": 12, "ProducerIdsRecord": 15,
        "BrokerRegistrationChangeRecord": 17, "NoOpRecord": 20}


def test_a_tagged_field_is_written_only_when_it_is_not_its_default():
    base = r.PartitionRecord(partition_id=0, topic_id=ID, replicas=[1], isr=[1], leader=1)
    tagged = dataclasses.replace(base, leader_recovery_state=1, eligible_leader_replicas=[], last_known_elr=[3])
    plain, with_tags = r.encode(base), r.encode(tagged)
    assert plain.endswith(hx("00"))                                  # no tagged fields
    assert with_tags[:len(plain) - 1] == plain[:-1]                  # the same fields before the section
    assert with_tags[len(plain) - 1:] == hx("03",                    # 3 tagged fields
                                            "00 01 01",              # tag 0 LeaderRecoveryState 1
                                            "01 01 01",              # tag 1 ELR [] (not null: written)
                                            "02 05 02 00000003")     # tag 2 LastKnownElr [3]
    assert r.decode(with_tags) == tagged
    unchanged = r.PartitionChangeRecord(partition_id=4, topic_id=ID)   # Leader -2, everything null
    assert r.encode(unchanged) == hx("01 05 02", "00000004", ID_HEX, "00")


def test_fields_of_other_versions_are_left_out_and_refused_when_not_default():
    v0 = dataclasses.replace(REGISTER_BROKER, log_dirs=[], version=0)
    assert r.encode(v0) == hx(
        "01 00 00", "00000001", ID_HEX, "000000000000000a",          # no IsMigratingZkBroker before v2
        "02", text("PLAINTEXT"), text("localhost"), "2384", "0000", "00",
        "02", text("metadata.version"), "0001", "0019", "00",
        "00", "01",                                                  # Rack null, Fenced; no InControlledShutdown
        "00")                                                        # no LogDirs before v3
    assert r.decode(r.encode(v0)) == v0
    with pytest.raises(ValueError, match=r"RegisterBrokerRecord\.log_dirs: a non-default value .* version 0"):
        r.encode(dataclasses.replace(REGISTER_BROKER, version=0))
    partition_v0 = r.PartitionRecord(partition_id=0, topic_id=ID, directories=[ID2], version=0)
    with pytest.raises(ValueError, match=r"PartitionRecord\.directories: .*exists from version 1"):
        r.encode(partition_v0)


def test_an_unknown_tagged_field_is_skipped():
    # TopicRecord with a tag 9 it does not know (Kafka keeps it as an unknown tagged field)
    data = hx("01 02 00", text("foo"), ID_HEX, "01", "09 02 abcd")
    assert r.decode(data) == r.TopicRecord(name="foo", topic_id=ID)


# -- control records ---------------------------------------------------------------------------------
CONTROL_VECTORS: list[tuple[Any, bytes, bytes]] = [
    (r.LeaderChangeMessage(leader_id=1, voters=[r.LeaderChangeVoter(voter_id=i) for i in (1, 2, 3)],
                           granting_voters=[r.LeaderChangeVoter(voter_id=i) for i in (1, 2)]),
     hx("0000 0002"),                                                # key: version 0, LEADER_CHANGE
     hx("0000",                                                      # Version int16
        "00000001",                                                  # LeaderId
        "04 00000001 00 00000002 00 00000003 00",                    # Voters: VoterId + empty tags each
        "03 00000001 00 00000002 00",                                # GrantingVoters
        "00")),
    (r.SnapshotHeaderRecord(last_contained_log_timestamp=1000), hx("0000 0003"), hx("0000", "00000000000003e8", "00")),
    (r.SnapshotFooterRecord(), hx("0000 0004"), hx("0000", "00")),
    (r.KRaftVersionRecord(kraft_version=1), hx("0000 0005"), hx("0000", "0001", "00")),
    (r.VotersRecord(voters=[r.Voter(voter_id=1, voter_directory_id=ID,
                                    endpoints=[r.VoterEndpoint(name="CONTROLLER", host="c1", port=9093)],
                                    kraft_version_feature=r.KRaftVersionFeature(max_supported_version=1))]),
     hx("0000 0006"),
     hx("0000", "02",                                                # Version, Voters: 1 element
        "00000001", ID_HEX,                                          # VoterId, VoterDirectoryId
        "02", text("CONTROLLER"), text("c1"), "2385", "00",          # Endpoints[0]: Name, Host, Port, tags
        "0000 0001 00",                                              # KRaftVersionFeature struct + its tags
        "00",                                                        # the voter's tags
        "00")),
]


@pytest.mark.parametrize(("record", "key", "value"), CONTROL_VECTORS,
                         ids=[type(v[0]).__name__ for v in CONTROL_VECTORS])
def test_each_control_record_encodes_to_its_key_and_value(record, key, value):
    assert r.encode_control(record) == (key, value)
    assert r.decode_control(key, value) == record
    assert r.parse_control_type(key) == record.CONTROL_TYPE


def test_control_keys_refuse_short_or_corrupt_keys_and_non_kraft_types():
    with pytest.raises(ValueError, match="needs at least 4 bytes, got 2"):
        r.parse_control_type(b"\x00\x00")
    with pytest.raises(ValueError, match="invalid version -1"):
        r.parse_control_type(hx("ffff 0002"))
    with pytest.raises(ValueError, match=r"COMMIT\(1\) is not a KRaft control record"):
        r.decode_control(r.control_key(1), hx("0000 00000000"))
    assert r.parse_control_type(hx("0001 0002 ff")) == 2          # a newer key version is read as v0
    with pytest.raises(ValueError, match=r"LeaderChangeMessage\.leader_id at offset 2: truncated"):
        r.decode_control(r.control_key(2), hx("0000 0000"))


# -- JSON as kafka-dump-log --cluster-metadata-decoder prints it ------------------------------------
def test_describe_gives_the_json_of_kafkas_metadata_decoder():
    partition = VECTORS[3][0]
    assert r.describe(partition) == {"type": "PARTITION_RECORD", "version": 2, "data": {
        "partitionId": 0, "topicId": ID, "replicas": [1, 2, 3], "isr": [1, 2], "removingReplicas": [],
        "addingReplicas": [], "leader": 1, "leaderEpoch": 0, "partitionEpoch": 0,   # tagged recovery 0: left out
        "directories": [r.DIRECTORY_UNASSIGNED] * 3}}                                   # ELRs null: left out
    assert r.describe_json(r.TopicRecord(name="主题", topic_id=ID)) == (
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"主题","topicId":"AAECAwQFBgcICQoLDA0ODw"}}')
    register = r.describe(dataclasses.replace(REGISTER_BROKER, log_dirs=[]))
    assert register["type"] == "REGISTER_BROKER_RECORD"
    assert list(register["data"]) == ["brokerId", "isMigratingZkBroker", "incarnationId", "brokerEpoch", "endPoints",
                                      "features", "rack", "fenced", "inControlledShutdown"]
    assert register["data"]["rack"] is None and register["data"]["endPoints"][0]["securityProtocol"] == 0
    change = r.describe(r.PartitionChangeRecord(partition_id=1, topic_id=ID, leader=-1))
    assert change == {"type": "PARTITION_CHANGE_RECORD", "version": 2,
                      "data": {"partitionId": 1, "topicId": ID, "leader": -1}}
    assert r.describe(r.NoOpRecord())["type"] == "NO_OP_RECORD"


def test_control_json_is_what_dump_log_prints_after_the_label():
    voters = CONTROL_VECTORS[4][0]
    assert r.control_json(voters) == {"version": 0, "voters": [{
        "voterId": 1, "voterDirectoryId": ID, "endpoints": [{"name": "CONTROLLER", "host": "c1", "port": 9093}],
        "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]}
    assert r.describe_control(CONTROL_VECTORS[0][0])["type"] == "LEADER_CHANGE"
    assert r.LeaderChangeMessage.LABEL == "LeaderChange:" and r.VotersRecord.LABEL == "KRaftVoters"


# -- errors on bad input (several translated from Kafka's MetadataRecordSerdeTest) -------------------
def test_kafkas_unhandled_frame_version():                 # testDeserializeWithUnhandledFrameVersion
    with pytest.raises(ValueError, match="unknown frame version 15"):
        r.decode(hx("0f") + bytes(15))
    with pytest.raises(ValueError, match="frame version 0"):
        r.decode(hx("00 02 00"))


# MetadataRecordSerdeTest: testParsingMalformedFrameVersionVarint, …MalformedMessageTypeVarint,
# …MalformedMessageVersionVarint, testParsingVersionTooLarge, testParsingUnsupportedApiKey,
# testParsingMalformedMessage (Kafka's buffers are 64 bytes, zero-padded)
@pytest.mark.parametrize(("data", "message"), [
    (hx("80 80 80 80 80 80") + bytes(58), "frame version at offset 0: an unsigned varint longer"),
    (hx("01 80 80 80 80 80 80") + bytes(57), "type at offset 1: an unsigned varint longer"),
    (hx("01 08 80 80 80 80 80") + bytes(57), "version at offset 2: an unsigned varint longer"),
    (hx("01 08 ff ff ff 7f 80") + bytes(57), "version at offset 2: value 268435455 is too large"),
    (hx("01 ff 7f 00 80") + bytes(59), "unknown metadata record type"),
    (hx("01 00 00 80"), r"RegisterBrokerRecord\.broker_id at offset 3: truncated"),
])
def test_kafkas_malformed_frames(data, message):
    with pytest.raises(ValueError, match=message):
        r.decode(data)


def test_kafkas_garbage_at_the_end():                      # testParsingRecordWithGarbageAtEnd
    data = r.encode(r.RegisterBrokerRecord(broker_id=1, broker_epoch=2, version=0))
    with pytest.raises(ValueError, match=r"found 1 byte\(s\) of garbage after RegisterBrokerRecord"):
        r.decode(data + b"\x00")


def test_truncated_input_names_the_field_and_offset():
    data = VECTORS[3][1]                                     # the PartitionRecord
    with pytest.raises(ValueError, match=r"PartitionRecord\.replicas\[1\] at offset 28: truncated, needs 4"):
        r.decode(data[:30])
    with pytest.raises(ValueError, match=r"PartitionRecord\.replicas at offset 23: 3 elements, but only 2 byte"):
        r.decode(data[:26])
    with pytest.raises(ValueError, match=r"PartitionRecord\.topic_id at offset 7: truncated"):
        r.decode(data[:10])
    with pytest.raises(ValueError, match="PartitionRecord: can't read version 3"):
        r.decode(hx("01 03 03") + data[3:])
    with pytest.raises(ValueError, match=r"TopicRecord\.name at offset 3: null, but the field is not nullable"):
        r.decode(hx("01 02 00 00") + bytes(17))
    with pytest.raises(ValueError, match=r"TopicRecord tag 9 \(2 bytes\) at offset 26: truncated"):
        r.decode(hx("01 02 00", text("foo"), ID_HEX, "01", "09 02 ab"))


def test_encode_refuses_values_its_types_cannot_hold():
    with pytest.raises(ValueError, match=r"PartitionRecord\.replicas\[1\]: expected an int32"):
        r.encode(r.PartitionRecord(replicas=[1, 2**31]))
    with pytest.raises(ValueError, match=r"TopicRecord\.topic_id: a uuid is 22 characters"):
        r.encode(r.TopicRecord(name="t", topic_id="not-a-uuid"))
    with pytest.raises(ValueError, match=r"TopicRecord\.name: null is not allowed"):
        r.encode(r.TopicRecord(name=None))                   # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"TopicRecord\.name: 32768 bytes of UTF-8"):
        r.encode(r.TopicRecord(name="x" * 32768))
    with pytest.raises(ValueError, match=r"BrokerEndpoint|end_points\[0\]\.port: expected an uint16"):
        r.encode(r.RegisterBrokerRecord(end_points=[r.BrokerEndpoint(port=70000)]))
    with pytest.raises(ValueError, match=r"PartitionRecord\.version: 5 is not a valid version \(0\.\.2\)"):
        r.encode(r.PartitionRecord(version=5))
    with pytest.raises(ValueError, match="not a metadata record"):
        r.encode(r.SnapshotFooterRecord())                   # type: ignore[arg-type]


# -- uuids -------------------------------------------------------------------------------------------
def test_uuids_convert_between_kafkas_16_bytes_and_the_labs_topic_ids():
    topic_id = new_topic_id(random.Random(7))
    assert len(r.uuid_to_bytes(topic_id)) == 16
    assert r.uuid_from_bytes(r.uuid_to_bytes(topic_id)) == topic_id
    assert r.uuid_from_bytes(bytes(range(16))) == ID
    assert (r.DIRECTORY_LOST, r.DIRECTORY_MIGRATING) == (r.uuid_from_bytes(bytes(15) + b"\x01"),
                                                         r.uuid_from_bytes(bytes(15) + b"\x02"))
    with pytest.raises(ValueError, match="not the canonical text"):
        r.uuid_to_bytes("AAECAwQFBgcICQoLDA0ODx")         # the same 16 bytes, other unused bits
    with pytest.raises(ValueError, match="URL-safe base64"):
        r.uuid_to_bytes("AAECAwQFBgcICQoLDA0OD!")


# -- the dataclasses follow their schemas ---------------------------------------------------------------
ALL_TYPES = [*r.RECORD_TYPES.values(), *r.CONTROL_TYPES.values(), r.BrokerEndpoint, r.BrokerFeature,
             r.LeaderChangeVoter, r.Voter, r.VoterEndpoint, r.KRaftVersionFeature]


@pytest.mark.parametrize("cls", ALL_TYPES, ids=[cls.__name__ for cls in ALL_TYPES])
def test_each_dataclass_has_its_schemas_fields_in_order_with_kafkas_defaults(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    expected = [f.attr for f in fields_of(cls)]
    assert names == (expected + ["version"] if cls in r.RECORD_TYPES.values() else expected)
    blank = cls()
    for spec in fields_of(cls):
        assert spec.is_default(getattr(blank, spec.attr)), spec.name
    if cls in r.RECORD_TYPES.values():
        assert blank.version == cls.WRITE_VERSION == cls.VERSIONS[1]


# -- round trips -----------------------------------------------------------------------------------------
def _values(spec: Field, version: int) -> st.SearchStrategy[Any]:
    if version < spec.since:
        return st.just(spec.default_value() if not spec.array else [] if not spec.nullable else None)
    one = _one(spec.kind, version)
    many: st.SearchStrategy[Any] = st.lists(one, max_size=4) if spec.array else one
    return (st.none() | many) if spec.nullable else many


def _one(kind: str | type, version: int) -> st.SearchStrategy[Any]:
    if isinstance(kind, type):
        return _instances(kind, version)
    if kind in FIXED:
        _, lowest, highest = FIXED[kind]
        return st.integers(lowest, highest)
    if kind == "bool":
        return st.booleans()
    if kind == "uuid":
        return st.binary(min_size=16, max_size=16).map(r.uuid_from_bytes)
    return st.text(max_size=12)


def _instances(cls: type, version: int) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({spec.attr: _values(spec, version) for spec in fields_of(cls)}).map(
        lambda values: cls(**values))


@st.composite
def metadata_records(draw: st.DrawFn) -> Any:
    cls = draw(st.sampled_from(sorted(r.RECORD_TYPES.values(), key=lambda c: c.API_KEY)))
    version = draw(st.integers(*cls.VERSIONS))
    record = draw(_instances(cls, version))
    record.version = version
    return record


@settings(max_examples=300, deadline=None)
@given(metadata_records())
def test_every_metadata_record_round_trips_and_every_cut_is_refused(record):
    data = r.encode(record)
    assert r.decode(data) == record
    assert r.encode(r.decode(data)) == data
    for cut in range(len(data)):
        with pytest.raises(ValueError):
            r.decode(data[:cut])


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(r.CONTROL_TYPES.values(), key=lambda c: c.CONTROL_TYPE)).flatmap(
    lambda cls: _instances(cls, r.CONTROL_SCHEMA_VERSION)))
def test_every_control_record_round_trips(record):
    key, value = r.encode_control(record)
    assert r.decode_control(key, value) == record
    for cut in range(len(value)):
        with pytest.raises(ValueError):
            r.decode_control(key, value[:cut])
