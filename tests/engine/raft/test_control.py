"""The LeaderChangeMessage control record, in Kafka's bytes."""
from __future__ import annotations

import pytest

from engine.raft.control import LEADER_CHANGE, control_record_type, decode_leader_change, leader_change_record


def test_a_leader_change_record_is_kafkas_layout_and_reads_back() -> None:
    key, value = leader_change_record(2, [1, 2, 3], [2, 3])

    assert key == b"\x00\x00\x00\x02"     # version 0, ControlRecordType.LEADER_CHANGE
    assert control_record_type(key) == LEADER_CHANGE
    # Version, LeaderId, Voters (compact array: n + 1, each VoterId + no tagged fields), GrantingVoters, tags.
    assert value == (b"\x00\x00" + b"\x00\x00\x00\x02"
                     + b"\x04" + b"\x00\x00\x00\x01\x00" + b"\x00\x00\x00\x02\x00" + b"\x00\x00\x00\x03\x00"
                     + b"\x03" + b"\x00\x00\x00\x02\x00" + b"\x00\x00\x00\x03\x00" + b"\x00")
    message = decode_leader_change(value)
    assert (message.leader_id, message.voters, message.granting_voters) == (2, (1, 2, 3), (2, 3))


@pytest.mark.parametrize("value", [b"", b"\x00\x01\x00\x00\x00\x02\x01\x01\x00", b"\x00\x00\x00\x00\x00\x02\x02",
                                   b"\x00\x00\x00\x00\x00\x02\x01\x01\x00\xff"])
def test_a_malformed_value_is_refused(value: bytes) -> None:
    with pytest.raises(ValueError):
        decode_leader_change(value)
