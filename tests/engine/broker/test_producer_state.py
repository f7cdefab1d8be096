"""The broker's memory of idempotent producers: duplicates, sequence and epoch checks, rebuild."""
from __future__ import annotations

import pytest

from engine.storage import record_batch as rb
from engine.storage.log import Log
from engine.storage.producer_state import (
    INVALID_PRODUCER_EPOCH,
    NUM_BATCHES_TO_RETAIN,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    ProducerStateError,
    ProducerStateManager,
    batch_headers,
    increment_sequence,
    last_sequence_of,
)

T0 = 1_700_000_000_000


def batch(seq: int, count: int = 1, *, pid: int = 7, epoch: int = 0) -> bytes:
    return rb.encode_batch([(b"k", f"v{seq + i}".encode()) for i in range(count)], base_timestamp=T0,
                           producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def append(state: ProducerStateManager, data: bytes, first_offset: int):
    """What Partition.append_as_leader does around the log append."""
    headers = batch_headers(data)
    duplicate = state.check_client_append(headers)
    if duplicate is None:
        state.update(headers, first_offset)
    return duplicate


def test_it_accepts_a_producers_batches_in_sequence():
    state = ProducerStateManager()
    assert append(state, batch(0, 3), 0) is None
    assert append(state, batch(3, 2), 3) is None
    entry = state.entry(7)
    assert entry.producer_epoch == 0 and entry.last_sequence == 4
    assert [(b.first_sequence, b.last_sequence, b.first_offset, b.last_offset) for b in entry.batches] == \
        [(0, 2, 0, 2), (3, 4, 3, 4)]


def test_a_retried_batch_is_a_duplicate_with_its_original_offsets():
    state = ProducerStateManager()
    append(state, batch(0, 2), 10)
    append(state, batch(2, 1), 12)
    duplicate = append(state, batch(0, 2), 99)
    assert (duplicate.first_offset, duplicate.last_offset) == (10, 11)
    assert state.entry(7).last_sequence == 2          # nothing recorded for the duplicate


def test_a_gap_in_sequences_is_out_of_order():
    state = ProducerStateManager()
    append(state, batch(0), 0)
    with pytest.raises(ProducerStateError) as caught:
        append(state, batch(2), 1)
    assert caught.value.kafka_name == OUT_OF_ORDER_SEQUENCE_NUMBER
    assert caught.value.expected_sequence == 1 and caught.value.base_sequence == 2


def test_only_the_last_five_batches_are_remembered():
    state = ProducerStateManager()
    for seq in range(NUM_BATCHES_TO_RETAIN + 1):
        append(state, batch(seq), seq)
    assert append(state, batch(1), 50).first_offset == 1     # still retained
    with pytest.raises(ProducerStateError) as caught:          # forgotten: just out of order now
        append(state, batch(0), 50)
    assert caught.value.kafka_name == OUT_OF_ORDER_SEQUENCE_NUMBER


def test_an_unknown_producer_may_start_at_any_sequence():
    state = ProducerStateManager()
    assert append(state, batch(41), 0) is None
    assert state.entry(7).last_sequence == 41


def test_a_new_epoch_must_start_at_zero_and_forgets_the_old_batches():
    state = ProducerStateManager()
    append(state, batch(0, 3), 0)
    with pytest.raises(ProducerStateError) as caught:
        append(state, batch(3, epoch=1), 3)
    assert caught.value.kafka_name == OUT_OF_ORDER_SEQUENCE_NUMBER and caught.value.expected_sequence == 0
    assert append(state, batch(0, epoch=1), 3) is None
    assert state.entry(7).producer_epoch == 1 and len(state.entry(7).batches) == 1


def test_an_older_epoch_is_fenced():
    state = ProducerStateManager()
    append(state, batch(0, epoch=2), 0)
    with pytest.raises(ProducerStateError) as caught:
        append(state, batch(1, epoch=1), 1)
    assert caught.value.kafka_name == INVALID_PRODUCER_EPOCH


def test_several_batches_of_one_producer_in_one_append_are_checked_in_turn():
    state = ProducerStateManager()
    append(state, batch(0), 0)
    assert append(state, batch(1) + batch(2, 2), 1) is None
    assert [(b.first_offset, b.last_offset) for b in state.entry(7).batches] == [(0, 0), (1, 1), (2, 3)]
    with pytest.raises(ProducerStateError):
        append(state, batch(4) + batch(6), 4)
    assert state.entry(7).last_sequence == 3                  # a refused append changes nothing


def test_batches_without_a_producer_id_play_no_part():
    state = ProducerStateManager()
    plain = rb.encode_batch([(b"k", b"v")], base_timestamp=T0)
    assert append(state, plain + batch(0), 0) is None
    assert list(state.producers) == [7] and state.entry(7).batches[0].first_offset == 1


def test_producers_are_kept_apart():
    state = ProducerStateManager()
    append(state, batch(0, pid=1), 0)
    append(state, batch(0, pid=2), 1)
    assert append(state, batch(0, pid=1), 2).first_offset == 0
    assert append(state, batch(1, pid=2), 2) is None


def test_sequences_wrap_past_the_largest_int():
    top = (1 << 31) - 1
    assert increment_sequence(top, 1) == 0 and increment_sequence(top - 1, 3) == 1
    header = batch_headers(batch(top - 1, 3))[0]
    assert last_sequence_of(header) == 0      # top-1, top, 0
    state = ProducerStateManager()
    append(state, batch(top - 1, 2), 0)
    assert append(state, batch(0), 2) is None


def test_the_state_is_rebuilt_from_the_logs_batch_headers(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), clock_ms=clock, fsync=False)
    for data in (batch(0, 2), rb.encode_batch([(None, b"plain")], base_timestamp=T0), batch(2), batch(0, pid=9)):
        log.append_batches(data, leader_epoch=0)
    rebuilt = ProducerStateManager.from_log(log)
    assert rebuilt.to_dict() == {
        "7": {"producer_id": 7, "producer_epoch": 0, "batches": [
            {"first_sequence": 0, "last_sequence": 1, "first_offset": 0, "last_offset": 1},
            {"first_sequence": 2, "last_sequence": 2, "first_offset": 3, "last_offset": 3}]},
        "9": {"producer_id": 9, "producer_epoch": 0, "batches": [
            {"first_sequence": 0, "last_sequence": 0, "first_offset": 4, "last_offset": 4}]}}
    assert rebuilt.check_client_append(batch_headers(batch(2))).first_offset == 3
    log.close()
