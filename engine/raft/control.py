"""The control record a new Raft leader writes first in its epoch: LeaderChangeMessage.

KafkaRaftClient.onBecomeLeader has LeaderState.appendStartOfEpochControlRecords write one control
batch at the leader's log end: a high watermark may only move once an entry of the leader's own
epoch is committed (LeaderState.maybeUpdateHighWatermark), so the leader writes one at once.

The bytes are Kafka's (MemoryRecords.withLeaderChangeMessage, ControlRecordUtils):
    key   = ControlRecordType key: version int16 (0), type int16 (LEADER_CHANGE = 2)
    value = LeaderChangeMessage v0, a flexible message (LeaderChangeMessage.json):
              Version        int16
              LeaderId       int32
              Voters         compact array of Voter { VoterId int32, tagged fields }
              GrantingVoters compact array of Voter
              tagged fields
A compact array's length is an unsigned varint of n + 1; an empty tagged-field section is one 0 byte.

(engine/metadata/records.py, written beside this module, may come to hold every control record's
encoding; until then this is the raft layer's own, behind `leader_change_record`.)
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

LEADER_CHANGE = 2                 # ControlRecordType.LEADER_CHANGE
CONTROL_KEY_VERSION = 0           # ControlRecordType.CURRENT_CONTROL_RECORD_KEY_VERSION
LEADER_CHANGE_VERSION = 0         # ControlRecordUtils.LEADER_CHANGE_CURRENT_VERSION

_KEY = struct.Struct(">hh")       # version, type
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
NO_TAGGED_FIELDS = b"\x00"


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """A decoded LeaderChangeMessage."""
    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]


def leader_change_record(leader_id: int, voters: list[int], granting_voters: list[int]) -> tuple[bytes, bytes]:
    """(key, value) of the LeaderChangeMessage control record."""
    key = _KEY.pack(CONTROL_KEY_VERSION, LEADER_CHANGE)
    value = b"".join((_INT16.pack(LEADER_CHANGE_VERSION), _INT32.pack(leader_id),
                      _voter_array(voters), _voter_array(granting_voters), NO_TAGGED_FIELDS))
    return key, value


def control_record_type(key: bytes) -> int:
    """The ControlRecordType of a control record's key (ControlRecordType.parseTypeId)."""
    if len(key) < _KEY.size:
        raise ValueError(f"a control record key has {_KEY.size} bytes, this one {len(key)}")
    return _KEY.unpack_from(key)[1]


def decode_leader_change(value: bytes) -> LeaderChange:
    """A LeaderChangeMessage value back as a LeaderChange (ValueError when malformed)."""
    try:
        version = _INT16.unpack_from(value, 0)[0]
        if version != LEADER_CHANGE_VERSION:
            raise ValueError(f"LeaderChangeMessage version {version} is not {LEADER_CHANGE_VERSION}")
        leader_id = _INT32.unpack_from(value, 2)[0]
        voters, position = _read_voter_array(value, 6)
        granting, position = _read_voter_array(value, position)
    except struct.error as e:
        raise ValueError(f"truncated LeaderChangeMessage: {e}") from None
    if value[position:] != NO_TAGGED_FIELDS:
        raise ValueError("LeaderChangeMessage: unexpected bytes after GrantingVoters")
    return LeaderChange(leader_id, voters, granting)


def _voter_array(ids: list[int]) -> bytes:
    parts = [_unsigned_varint(len(ids) + 1)]
    for voter_id in ids:
        parts.append(_INT32.pack(voter_id) + NO_TAGGED_FIELDS)
    return b"".join(parts)


def _read_voter_array(data: bytes, position: int) -> tuple[tuple[int, ...], int]:
    length, position = _read_unsigned_varint(data, position)
    ids = []
    for _ in range(length - 1):
        ids.append(_INT32.unpack_from(data, position)[0])
        position += _INT32.size
        if data[position:position + 1] != NO_TAGGED_FIELDS:
            raise ValueError("LeaderChangeMessage: a Voter with tagged fields")
        position += 1
    return tuple(ids), position


def _unsigned_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_unsigned_varint(data: bytes, position: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if position >= len(data):
            raise ValueError("truncated varint in LeaderChangeMessage")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7
        if shift > 28:
            raise ValueError("varint too long in LeaderChangeMessage")
