"""The leader epoch cache (KIP-101/KIP-279), checked against Kafka's LeaderEpochFileCacheTest vectors."""
from __future__ import annotations

import os

import pytest

from engine.storage.leader_epoch_cache import FILE_NAME, UNDEFINED, LeaderEpochCache


@pytest.fixture
def cache(tmp_path) -> LeaderEpochCache:
    return LeaderEpochCache(str(tmp_path), fsync=False)


def _filled(cache: LeaderEpochCache, *entries: tuple[int, int]) -> LeaderEpochCache:
    for epoch, start in entries:
        assert cache.assign(epoch, start)
    return cache


def _file_text(cache: LeaderEpochCache) -> str:
    with open(cache.path, encoding="utf-8") as f:
        return f.read()


# -- assign ------------------------------------------------------------------------------------
def test_it_starts_empty_with_an_undefined_latest_epoch(cache):
    assert cache.entries == [] and cache.latest_epoch == UNDEFINED == -1
    assert not os.path.exists(cache.path)


def test_it_records_a_new_epoch_and_its_start_offset(cache):
    assert cache.assign(2, 10) is True
    assert cache.entries == [(2, 10)] and cache.latest_epoch == 2


def test_the_latest_epoch_again_at_a_later_offset_changes_nothing(cache):
    _filled(cache, (1, 0), (3, 5))
    assert cache.assign(3, 7) is False   # same epoch again: its start offset does not move
    with pytest.raises(ValueError):
        cache.assign(-1, 9)              # undefined: Kafka throws IllegalArgumentException
    assert cache.entries == [(1, 0), (3, 5)]
    # An older epoch is not ignored (Kafka's shouldEnforceMonotonicallyIncreasingEpochs): see
    # tests/engine/kafka_parity/test_leader_epoch_file_cache.py.


def test_it_removes_entries_at_or_after_a_new_epochs_start_offset(cache):
    _filled(cache, (2, 6), (3, 8), (4, 11))
    assert cache.assign(5, 8)
    assert cache.entries == [(2, 6), (5, 8)]


def test_it_replaces_an_epoch_that_never_got_a_record(cache):
    # Kafka's shouldEnforceMonotonicallyIncreasingStartOffsets: assign(2, 9), assign(3, 9) -> [(3, 9)]
    _filled(cache, (2, 9), (3, 9))
    assert cache.entries == [(3, 9)]


def test_it_keeps_start_offsets_increasing_when_a_new_epoch_starts_lower(cache):
    # Kafka's shouldEnforceOffsetsIncreaseMonotonically: assign(2, 6), assign(3, 5) -> [(3, 5)]
    _filled(cache, (2, 6), (3, 5))
    assert cache.entries == [(3, 5)]


# -- end_offset_for (OffsetsForLeaderEpoch) ----------------------------------------------------
def test_it_answers_the_reference_kip279_example(cache):
    # Leader A = [0:e1, 1:e1, 2:e1, 3:e3, 4:e3]: follower B asks about e2, which A never saw.
    _filled(cache, (1, 0), (3, 3))
    assert cache.end_offset_for(2, log_end_offset=5) == (1, 3)


def test_it_answers_the_log_end_offset_for_the_latest_epoch(cache):
    _filled(cache, (1, 0), (3, 3))
    assert cache.end_offset_for(3, log_end_offset=5) == (3, 5)
    assert cache.end_offset_for(3, log_end_offset=9) == (3, 9)


def test_it_answers_the_start_of_the_next_epoch_for_an_older_epoch(cache):
    # Kafka's shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
    _filled(cache, (0, 10), (2, 13), (4, 17))
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)
    assert cache.end_offset_for(0, 0) == (0, 13)


def test_it_tracks_end_offsets_as_leaders_change(cache):
    # Kafka's shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes
    _filled(cache, (0, 0), (1, 0))
    assert cache.entries == [(1, 0)]  # epoch 0 never got a record
    assert cache.end_offset_for(1, 0) == (1, 0)
    assert cache.end_offset_for(1, 5) == (1, 5)
    cache.assign(2, 5)
    assert cache.end_offset_for(2, 10) == (2, 10)
    assert cache.end_offset_for(1, 10) == (1, 5)


def test_it_answers_undefined_for_an_epoch_newer_than_any_it_knows(cache):
    # Kafka's shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked
    _filled(cache, (2, 100))
    assert cache.end_offset_for(3, 100) == (UNDEFINED, UNDEFINED)


def test_it_answers_undefined_for_the_undefined_epoch(cache):
    # Kafka's shouldReturnUndefinedOffsetIfUndefinedEpochRequested: a follower with no epochs asks with -1
    _filled(cache, (2, 11), (3, 12))
    assert cache.end_offset_for(UNDEFINED, 0) == (UNDEFINED, UNDEFINED)


def test_it_answers_undefined_when_it_knows_no_epoch(cache):
    assert cache.end_offset_for(0, 0) == (UNDEFINED, UNDEFINED)
    assert cache.end_offset_for(7, 73) == (UNDEFINED, UNDEFINED)


def test_it_answers_the_first_start_offset_for_an_epoch_older_than_all_it_knows(cache):
    # Kafka's shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch (trunk): (requested, first start)
    _filled(cache, (5, 11), (6, 12), (7, 13))
    assert cache.end_offset_for(4, 0) == (4, 11)


def test_it_maps_offsets_to_the_epoch_that_wrote_them(cache):
    _filled(cache, (1, 0), (3, 3))
    assert [cache.epoch_for_offset(o) for o in range(6)] == [1, 1, 1, 3, 3, 3]


def test_it_maps_offsets_before_the_first_epoch_or_in_an_empty_cache_to_undefined(cache):
    assert cache.epoch_for_offset(0) == UNDEFINED
    _filled(cache, (2, 6))
    assert cache.epoch_for_offset(5) == UNDEFINED and cache.epoch_for_offset(6) == 2


# -- truncation --------------------------------------------------------------------------------
def test_it_drops_epochs_that_start_at_or_after_the_new_log_end(cache):
    # Kafka's shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries
    _filled(cache, (2, 6), (3, 8), (4, 11))
    cache.truncate_from_end(8)
    assert cache.entries == [(2, 6)]


def test_it_keeps_an_epoch_cut_in_the_middle_when_truncating_from_the_end(cache):
    # Kafka's shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest
    _filled(cache, (2, 6), (3, 8), (4, 11))
    cache.truncate_from_end(9)
    assert cache.entries == [(2, 6), (3, 8)] and cache.latest_epoch == 3


def test_it_changes_nothing_when_truncating_from_the_end_past_the_last_epoch_start(cache):
    _filled(cache, (2, 6), (3, 8))
    os.remove(cache.path)
    cache.truncate_from_end(20)
    assert cache.entries == [(2, 6), (3, 8)]
    assert not os.path.exists(cache.path)  # nothing changed, so nothing was written


@pytest.mark.parametrize("start, expected", [
    (1, [(2, 6), (3, 8), (4, 11)]),   # shouldNotClearAnythingIfOffsetTooEarly
    (6, [(2, 6), (3, 8), (4, 11)]),   # shouldNotClearAnythingIfOffsetIsFirstOffset
    (8, [(3, 8), (4, 11)]),           # shouldPreserveResetOffsetOnClearEarliestIfOneExists
    (9, [(3, 9), (4, 11)]),           # shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest
    (11, [(4, 11)]),                  # shouldRetainLatestEpochOnClearAllEarliest
    (15, [(4, 15)]),                  # shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset
])
def test_it_moves_the_first_epoch_start_up_to_the_new_log_start(cache, start, expected):
    _filled(cache, (2, 6), (3, 8), (4, 11))
    cache.truncate_from_start(start)
    assert cache.entries == expected


def test_it_updates_the_first_epoch_when_the_log_start_falls_inside_it(cache):
    # Kafka's shouldUpdateOffsetBetweenFirstTwoEpochBoundariesOnClearEarliest
    _filled(cache, (0, 0), (1, 7), (2, 10))
    cache.truncate_from_start(5)
    assert cache.entries == [(0, 5), (1, 7), (2, 10)]


def test_it_tolerates_truncating_an_empty_cache(cache):
    cache.truncate_from_start(7)
    cache.truncate_from_end(7)
    assert cache.entries == []


def test_it_clears_every_entry(cache):
    _filled(cache, (2, 6), (3, 8))
    cache.clear()
    assert cache.entries == [] and _file_text(cache) == "0\n0\n"


# -- the leader-epoch-checkpoint file ----------------------------------------------------------
def test_it_writes_the_checkpoint_as_version_count_and_epoch_offset_lines(tmp_path):
    cache = LeaderEpochCache(str(tmp_path))  # the default: fsynced, as Kafka writes it
    _filled(cache, (0, 0), (1, 5))
    assert cache.path == os.path.join(str(tmp_path), FILE_NAME) == str(tmp_path / "leader-epoch-checkpoint")
    assert _file_text(cache) == "0\n2\n0 0\n1 5\n"


def test_it_rewrites_the_checkpoint_on_every_change(cache):
    _filled(cache, (0, 0), (1, 5), (2, 9))
    cache.truncate_from_end(9)
    assert _file_text(cache) == "0\n2\n0 0\n1 5\n"
    cache.truncate_from_start(3)
    assert _file_text(cache) == "0\n2\n0 3\n1 5\n"
    assert os.listdir(os.path.dirname(cache.path)) == [FILE_NAME]  # no temp file left behind


def test_it_reads_the_checkpoint_back_when_reopened(tmp_path):
    _filled(LeaderEpochCache(str(tmp_path), fsync=False), (1, 0), (3, 3))
    reopened = LeaderEpochCache(str(tmp_path), fsync=False)
    assert reopened.entries == [(1, 0), (3, 3)] and reopened.latest_epoch == 3
    assert reopened.end_offset_for(2, 5) == (1, 3)


def test_it_reads_a_checkpoint_written_by_hand_in_kafkas_format(tmp_path):
    (tmp_path / FILE_NAME).write_text("0\n3\n0 0\n2 13\n4 17\n", encoding="utf-8")
    assert LeaderEpochCache(str(tmp_path)).entries == [(0, 0), (2, 13), (4, 17)]
