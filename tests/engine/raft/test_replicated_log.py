"""The metadata log's Raft reads: where a fetcher's log diverges, and where a follower truncates
(ReplicatedLog.validateOffsetAndEpoch and truncateToEndOffset, without snapshots)."""
from __future__ import annotations

from engine.raft.config import QuorumConfig
from engine.raft.messages import DivergingEpoch
from engine.raft.replicated_log import MetadataLog
from engine.storage import record_batch as rb


def _log(path: str, epochs: list[tuple[int, int]]) -> MetadataLog:
    """A log holding, for each (epoch, count), `count` one-record batches written as leader of `epoch`."""
    log = MetadataLog(path, QuorumConfig(), clock_ms=lambda: 1_700_000_000_000)
    for epoch, count in epochs:
        log.initialize_leader_epoch(epoch)
        for _ in range(count):
            log.append_as_leader(rb.encode_batch([(None, b"v")], base_timestamp=0), epoch)
    return log


def test_the_last_fetched_epoch_is_the_latest_epoch_or_0_for_an_empty_log(tmp_path) -> None:
    assert _log(str(tmp_path / "a"), []).last_fetched_epoch == 0
    assert _log(str(tmp_path / "b"), [(1, 2), (3, 1)]).last_fetched_epoch == 3


def test_a_fetch_that_continues_the_log_is_valid(tmp_path) -> None:
    log = _log(str(tmp_path), [(1, 2), (3, 2)])      # epoch 1: offsets 0-1, epoch 3: 2-3

    assert log.validate_offset_and_epoch(0, 0) is None
    assert log.validate_offset_and_epoch(2, 1) is None
    assert log.validate_offset_and_epoch(3, 3) is None
    assert log.validate_offset_and_epoch(4, 3) is None


def test_a_fetch_past_its_epochs_end_or_in_an_unknown_epoch_diverges(tmp_path) -> None:
    log = _log(str(tmp_path), [(1, 2), (3, 2)])

    assert log.validate_offset_and_epoch(3, 1) == DivergingEpoch(1, 2)     # epoch 1 ends at 2 here
    assert log.validate_offset_and_epoch(3, 2) == DivergingEpoch(1, 2)     # no epoch 2: the one below it
    assert log.validate_offset_and_epoch(5, 3) == DivergingEpoch(3, 4)     # past the log end


def test_a_follower_truncates_to_the_smaller_end_of_the_diverging_epoch(tmp_path) -> None:
    follower = _log(str(tmp_path), [(1, 3), (2, 2)])   # epoch 1: 0-2, epoch 2: 3-4

    assert follower.truncate_to_end_offset(DivergingEpoch(1, 2)) == 2
    assert follower.end_offset == 2 and follower.last_fetched_epoch == 1
    assert follower.epochs.entries == [(1, 0)]


def test_a_follower_without_the_diverging_epoch_truncates_to_the_end_of_its_own_epoch_below(tmp_path) -> None:
    follower = _log(str(tmp_path), [(1, 2), (3, 2)])

    # The leader says: epoch 2 ends at 5. This log has no epoch 2; its epoch 1 ends at 2.
    assert follower.truncate_to_end_offset(DivergingEpoch(2, 5)) == 2
    assert follower.end_offset == 2


def test_a_follower_appends_the_leaders_batches_and_learns_their_epochs(tmp_path) -> None:
    leader = _log(str(tmp_path / "leader"), [(1, 1), (4, 2)])
    follower = _log(str(tmp_path / "follower"), [])

    follower.append_as_follower(leader.read(0, 1 << 20))

    assert follower.end_offset == 3 and follower.epochs.entries == [(1, 0), (4, 1)]
    assert [(b.base_offset, b.epoch) for b in follower.batches()] == [(0, 1), (1, 4), (2, 4)]


def test_only_batches_below_the_high_watermark_are_committed(tmp_path) -> None:
    log = _log(str(tmp_path), [(1, 4)])

    assert [b.base_offset for b in log.committed_batches(1, 3)] == [1, 2]
    assert log.committed_batches(3, 3) == []
