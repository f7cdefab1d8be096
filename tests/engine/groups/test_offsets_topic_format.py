"""__consumer_offsets records byte for byte (Kafka's OffsetCommitKey/Value, GroupMetadataKey/Value)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.groups import offsets_topic as ot
from engine.groups.assignors import TopicPartition
from engine.groups.consumer_protocol import (
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
)


def test_an_offset_commit_key_is_version_1_then_group_topic_partition():
    key = ot.encode_key(ot.OffsetCommitKey("g", "t", 0))
    assert key == bytes.fromhex("0001" "0001" "67" "0001" "74" "00000000")
    assert ot.decode_key(key) == ot.OffsetCommitKey("g", "t", 0)


def test_an_offset_commit_value_is_version_3_offset_epoch_metadata_timestamp():
    value = ot.encode_value(ot.OffsetCommitValue(offset=5, leader_epoch=0, metadata="", commit_timestamp=1700000000000))
    assert value == bytes.fromhex("0003" "0000000000000005" "00000000" "0000" "0000018bcfe56800")
    assert ot.decode_value(ot.OffsetCommitKey("g", "t", 0), value) == ot.OffsetCommitValue(5, 0, "", 1700000000000)


def test_older_offset_commit_values_still_read():
    key = ot.OffsetCommitKey("g", "t", 0)
    v1 = bytes.fromhex("0001" "000000000000000a" "0002" "6869" "0000000000000064" "00000000000000c8")
    assert ot.decode_value(key, v1) == ot.OffsetCommitValue(10, -1, "hi", 100, 200)
    v0_key = bytes.fromhex("0000" "0001" "67" "0001" "74" "00000003")
    assert ot.decode_key(v0_key) == ot.OffsetCommitKey("g", "t", 3)


def test_a_group_metadata_key_is_version_2_then_the_group():
    assert ot.encode_key(ot.GroupMetadataKey("g")) == bytes.fromhex("0002" "0001" "67")
    assert ot.decode_key(bytes.fromhex("000200016a")) == ot.GroupMetadataKey("j")


def test_a_group_metadata_value_round_trips_and_starts_with_version_3():
    member = ot.MemberMetadata("c1-x", "c1", "/consumer-c1", 300000, 45000, b"\x00\x02sub", b"\x00\x02asg", None)
    value = ot.GroupMetadataValue("consumer", 3, "range", "c1-x", 1700000000000, [member])
    data = ot.encode_value(value)
    assert data[:2] == b"\x00\x03"
    assert data[2:12] == b"\x00\x08consumer" and data[12:16] == b"\x00\x00\x00\x03"
    assert ot.decode_value(ot.GroupMetadataKey("g"), data) == value


def test_an_empty_group_has_null_protocol_and_leader():
    data = ot.encode_value(ot.GroupMetadataValue("consumer", 4, None, None, -1, []))
    assert data == bytes.fromhex("0003" "0008" + b"consumer".hex() + "00000004" "ffff" "ffff"
                                 "ffffffffffffffff" "00000000")


def test_a_tombstone_is_a_null_value():
    key, value = ot.offset_tombstone("g", "t", 1)
    assert value is None and ot.decode_value(ot.decode_key(key), None) is None
    assert ot.describe_record(*ot.group_record("g", None)) == {"type": "group_metadata", "group": "g",
                                                               "tombstone": True}


def test_describe_record_names_the_fields():
    key, value = ot.offset_commit_record("g", "t", 2, 7, commit_timestamp=1)
    assert ot.describe_record(key, value) == {"type": "offset_commit", "group": "g", "topic": "t", "partition": 2,
                                              "offset": 7, "leader_epoch": -1, "metadata": "", "commit_timestamp": 1,
                                              "tombstone": False}


def test_a_truncated_record_is_an_error_not_a_crash():
    with pytest.raises(ValueError, match="truncated"):
        ot.decode_key(bytes.fromhex("000100016700"))
    with pytest.raises(ValueError, match="unknown"):
        ot.decode_key(bytes.fromhex("0009000167"))


names = st.text(alphabet="abcxyz-_.0123456789", min_size=1, max_size=12)


@settings(max_examples=50, deadline=None)
@given(group=names, topic=names, partition=st.integers(0, 2**31 - 1), offset=st.integers(-1, 2**62),
       epoch=st.integers(-1, 2**31 - 1), metadata=st.text(max_size=20), ts=st.integers(0, 2**62))
def test_offset_commit_records_round_trip(group, topic, partition, offset, epoch, metadata, ts):
    key, value = ot.offset_commit_record(group, topic, partition, offset, leader_epoch=epoch, metadata=metadata,
                                         commit_timestamp=ts)
    decoded_key = ot.decode_key(key)
    assert decoded_key == ot.OffsetCommitKey(group, topic, partition)
    assert ot.decode_value(decoded_key, value) == ot.OffsetCommitValue(offset, epoch, metadata, ts)


def test_consumer_protocol_subscription_bytes():
    data = encode_subscription(["t"], [TopicPartition("t", 1)], 4)
    assert data == bytes.fromhex("0002" "00000001" "000174" "ffffffff" "00000001" "000174" "00000001" "00000001"
                                 "00000004")
    decoded = decode_subscription(data)
    assert decoded.topics == ["t"] and decoded.owned_partitions == [TopicPartition("t", 1)] and decoded.generation == 4


def test_consumer_protocol_assignment_groups_partitions_by_topic():
    tps = [TopicPartition("a", 0), TopicPartition("a", 2), TopicPartition("b", 1)]
    data = encode_assignment(tps)
    assert data == bytes.fromhex("0002" "00000002" "000161" "00000002" "00000000" "00000002"
                                 "000162" "00000001" "00000001" "ffffffff")
    assert decode_assignment(data) == tps
    assert decode_assignment(b"") == []       # what the coordinator gives a member left out


def test_the_sticky_assignor_reads_ownership_from_user_data():
    user_data = encode_sticky_user_data([TopicPartition("t", 0)], 7)
    assert decode_sticky_user_data(user_data) == ([TopicPartition("t", 0)], 7)
    subscription = decode_subscription(encode_subscription(["t"], [], 7, user_data))
    seen = subscription.for_assignor("sticky")
    assert seen.owned_partitions == [TopicPartition("t", 0)] and seen.generation == 7
    assert subscription.for_assignor("range").owned_partitions == []
