"""Kafka's LeaderEpochFileCacheTest (core/src/test/scala/unit/kafka/server/epoch), case by case,
against engine.storage.leader_epoch_cache with a real checkpoint file in a temp dir.

Left out: testFindPreviousEpoch, testFindPreviousEntry, testFindNextEpoch, testGetEpochEntry
(tiered-storage look-ups the engine does not have); testPreviousEpoch is checked through the
entries it leaves.
"""
from __future__ import annotations

import pytest

from engine.storage import checkpoints
from engine.storage.leader_epoch_cache import FILE_NAME, UNDEFINED, LeaderEpochCache

UNDEFINED_PAIR = (UNDEFINED, UNDEFINED)


@pytest.fixture
def cache(tmp_path) -> LeaderEpochCache:
    return LeaderEpochCache(str(tmp_path), fsync=False)


def _assigned(cache: LeaderEpochCache, *entries: tuple[int, int]) -> LeaderEpochCache:
    for epoch, start in entries:
        cache.assign(epoch, start)
    return cache


def _six_eight_eleven(cache: LeaderEpochCache) -> LeaderEpochCache:
    return _assigned(cache, (2, 6), (3, 8), (4, 11))


# -- assign -------------------------------------------------------------------------------------
def test_a_new_epoch_and_its_start_offset_are_recorded(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldAddEpochAndMessageOffsetToCache"""
    cache.assign(2, 10)
    assert cache.latest_epoch == 2 and cache.entries == [(2, 10)]
    assert cache.end_offset_for(2, 11) == (2, 11)


def test_an_epoch_once_assigned_keeps_its_first_start_offset(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned"""
    cache.assign(2, 9)
    assert cache.assign(2, 10) is False
    assert cache.entries == [(2, 9)]


def test_a_later_assignment_of_the_same_epoch_at_a_greater_offset_is_ignored(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned"""
    _assigned(cache, (2, 6), (2, 10))
    assert cache.entries[0][1] == 6


def test_an_unchanged_epoch_adds_no_entry(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldNotUpdateEpochAndStartOffsetIfItDidNotChange"""
    _assigned(cache, (2, 6), (2, 7))
    assert cache.entries == [(2, 6)]


def test_a_new_epoch_at_the_same_offset_replaces_the_one_that_never_got_a_record(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingStartOffsets"""
    _assigned(cache, (2, 9), (3, 9))
    assert cache.entries == [(3, 9)]


def test_a_new_epoch_at_a_lower_offset_removes_the_conflicting_entry(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldEnforceOffsetsIncreaseMonotonically"""
    _assigned(cache, (2, 6), (3, 5))
    assert cache.entries == [(3, 5)]


def test_an_earlier_epoch_assigned_later_removes_the_epochs_after_it_and_is_kept(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs"""
    _assigned(cache, (1, 5), (2, 6))
    assert cache.assign(1, 7) is True
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1, 8) == (1, 8)
    assert cache.end_offset_for(2, 8) == UNDEFINED_PAIR
    assert cache.entries == [(1, 7)]


def test_the_latest_epoch_at_an_earlier_offset_moves_its_start_down(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldTruncateIfMatchingEpochButEarlierStartingOffset"""
    _assigned(cache, (5, 11), (6, 12), (7, 13))
    assert cache.assign(7, 12) is True
    assert cache.entries == [(5, 11), (7, 12)]
    assert cache.end_offset_for(5, 0) == (5, 12)
    assert cache.end_offset_for(6, 0) == (5, 12)


def test_an_earlier_epoch_keeps_the_entries_before_it(cache):
    """Mirrors LeaderEpochFileCache.maybeTruncateNonMonotonicEntries: only the entries whose epoch
    or start offset is not below the new one's go, from the end."""
    _six_eight_eleven(cache)
    assert cache.assign(3, 10) is True
    assert cache.entries == [(2, 6), (3, 10)]
    assert cache.assign(1, 2) is True
    assert cache.entries == [(1, 2)]


def test_a_negative_epoch_or_start_offset_is_refused(cache):
    """Mirrors LeaderEpochFileCache.assign: an invalid entry throws IllegalArgumentException."""
    with pytest.raises(ValueError):
        cache.assign(UNDEFINED, 3)
    with pytest.raises(ValueError):
        cache.assign(3, UNDEFINED)
    assert cache.entries == []


def test_epochs_go_up_as_leaders_change_many_times(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes"""
    _assigned(cache, (0, 0), (1, 0))
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1, 0) == (1, 0)
    assert cache.end_offset_for(0, 0) == (0, 0)
    assert cache.end_offset_for(1, 5) == (1, 5)
    assert cache.end_offset_for(0, 5) == (0, 0)
    cache.assign(2, 5)
    assert cache.end_offset_for(2, 10) == (2, 10)
    assert cache.end_offset_for(1, 10) == (1, 5)
    assert cache.end_offset_for(0, 10) == (0, 0)


def test_a_follower_appending_many_batches_keeps_one_entry_per_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages"""
    _assigned(cache, (0, 0), (0, 1), (0, 2))
    assert cache.latest_epoch == 0 and cache.end_offset_for(0, 3) == (0, 3)
    _assigned(cache, (1, 3), (1, 4), (1, 5))
    assert cache.latest_epoch == 1 and cache.end_offset_for(1, 6) == (1, 6)
    _assigned(cache, (2, 6), (2, 7), (2, 8))
    assert cache.latest_epoch == 2 and cache.end_offset_for(2, 9) == (2, 9)
    assert cache.end_offset_for(0, 9) == (0, 3)
    assert cache.end_offset_for(1, 9) == (1, 6)
    assert cache.entries == [(0, 0), (1, 3), (2, 6)]


# -- end_offset_for (OffsetsForLeaderEpoch) -----------------------------------------------------
def test_the_latest_epoch_ends_at_the_log_end(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldReturnLogEndOffsetIfLatestEpochRequested"""
    _assigned(cache, (2, 11), (2, 12))
    assert cache.end_offset_for(2, 14) == (2, 14)


def test_the_undefined_epoch_gets_undefined(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldReturnUndefinedOffsetIfUndefinedEpochRequested"""
    _assigned(cache, (2, 11), (3, 12))
    assert cache.end_offset_for(UNDEFINED, 0) == UNDEFINED_PAIR


def test_an_empty_cache_answers_undefined(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldReturnUnsupportedIfNoEpochRecorded"""
    assert cache.end_offset_for(0, 0) == UNDEFINED_PAIR


def test_an_empty_cache_answers_undefined_for_the_undefined_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested"""
    assert cache.end_offset_for(UNDEFINED, 73) == UNDEFINED_PAIR


def test_an_empty_cache_has_no_latest_epoch_and_no_end_offset(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldFetchLatestEpochOfEmptyCache and shouldFetchEndOffsetOfEmptyCache"""
    assert cache.latest_epoch == UNDEFINED
    assert cache.end_offset_for(7, 0) == UNDEFINED_PAIR


def test_an_epoch_older_than_all_gets_the_first_start_offset(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch"""
    _assigned(cache, (5, 11), (6, 12), (7, 13))
    assert cache.end_offset_for(4, 0) == (4, 11)


def test_an_older_epoch_ends_where_the_next_one_starts(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch"""
    _assigned(cache, (1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16))
    assert cache.end_offset_for(2, 17) == (2, 15)


def test_an_epoch_the_replica_never_saw_answers_with_the_one_below_it(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested"""
    _assigned(cache, (0, 10), (2, 13), (4, 17))
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)


def test_an_epoch_newer_than_the_latest_gets_undefined(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked"""
    cache.assign(2, 100)
    assert cache.end_offset_for(3, 100) == UNDEFINED_PAIR


def test_epochs_need_not_start_from_zero(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldSupportEpochsThatDoNotStartFromZero"""
    cache.assign(2, 6)
    assert cache.end_offset_for(2, 7) == (2, 7)
    assert cache.entries == [(2, 6)]


def test_each_offset_maps_to_the_epoch_that_wrote_it(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldFetchEpochForGivenOffset"""
    _assigned(cache, (0, 10), (1, 20), (5, 30))
    assert cache.epoch_for_offset(25) == 1
    assert cache.epoch_for_offset(20) == 1
    assert cache.epoch_for_offset(30) == 5
    assert cache.epoch_for_offset(50) == 5
    assert cache.epoch_for_offset(5) == UNDEFINED


# -- truncate_from_end ---------------------------------------------------------------------------
def test_truncating_the_end_on_an_epoch_boundary_drops_that_epoch_and_later_ones(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries"""
    _six_eight_eleven(cache).truncate_from_end(8)
    assert cache.entries == [(2, 6)]


def test_truncating_the_end_inside_an_epoch_keeps_that_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest"""
    _six_eight_eleven(cache).truncate_from_end(9)
    assert cache.latest_epoch == 3
    assert cache.entries == [(2, 6), (3, 8)]


def test_truncating_the_end_at_an_undefined_offset_changes_nothing(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldNotResetEpochHistoryTailIfUndefinedPassed"""
    _six_eight_eleven(cache).truncate_from_end(UNDEFINED)
    assert cache.entries == [(2, 6), (3, 8), (4, 11)]
    assert checkpoints.read_epochs(cache.path) == [(2, 6), (3, 8), (4, 11)]


def test_truncating_the_end_leaves_the_epochs_before_it(cache):
    """Mirrors LeaderEpochFileCacheTest.testPreviousEpoch (the entries truncateFromEnd(18) leaves)"""
    _assigned(cache, (2, 10), (4, 15), (10, 20))
    cache.truncate_from_end(18)
    assert cache.entries == [(2, 10), (4, 15)]


def test_truncating_the_end_of_an_empty_cache_is_harmless(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldClearLatestOnEmptyCache"""
    cache.truncate_from_end(7)
    assert cache.entries == []


# -- truncate_from_start -------------------------------------------------------------------------
@pytest.mark.parametrize("start, expected, kafka_case", [
    (8, [(3, 8), (4, 11)], "shouldPreserveResetOffsetOnClearEarliestIfOneExists"),
    (9, [(3, 9), (4, 11)], "shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs"),
    (1, [(2, 6), (3, 8), (4, 11)], "shouldNotClearAnythingIfOffsetToEarly"),
    (6, [(2, 6), (3, 8), (4, 11)], "shouldNotClearAnythingIfOffsetToFirstOffset"),
    (11, [(4, 11)], "shouldRetainLatestEpochOnClearAllEarliest"),
    (15, [(4, 15)], "shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset"),
    (UNDEFINED, [(2, 6), (3, 8), (4, 11)], "shouldNotResetEpochHistoryHeadIfUndefinedPassed"),
])
def test_truncating_the_start_moves_the_first_epoch_up_to_the_new_log_start(cache, start, expected, kafka_case):
    """Mirrors LeaderEpochFileCacheTest.<kafka_case> (and shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest)"""
    _six_eight_eleven(cache).truncate_from_start(start)
    assert cache.entries == expected


def test_truncating_the_start_inside_the_first_epoch_keeps_it_from_there(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2"""
    _assigned(cache, (0, 0), (1, 7), (2, 10)).truncate_from_start(5)
    assert cache.entries == [(0, 5), (1, 7), (2, 10)]


def test_truncating_the_start_of_an_empty_cache_is_harmless(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldClearEarliestOnEmptyCache"""
    cache.truncate_from_start(7)
    assert cache.entries == []


def test_clearing_removes_every_entry_and_writes_an_empty_checkpoint(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldClearAllEntries"""
    _six_eight_eleven(cache).clear()
    assert cache.entries == [] and checkpoints.read_epochs(cache.path) == []


# -- the checkpoint file: persistence and reload -------------------------------------------------
def test_the_epochs_survive_a_new_instance_on_the_same_file(tmp_path):
    """Mirrors LeaderEpochFileCacheTest.shouldPersistEpochsBetweenInstances"""
    LeaderEpochCache(str(tmp_path), fsync=False).assign(2, 6)
    reopened = LeaderEpochCache(str(tmp_path), fsync=False)
    assert reopened.entries == [(2, 6)]


def test_truncations_are_written_to_the_checkpoint(cache):
    """Mirrors LeaderEpochFileCacheTest.shouldWriteCheckpointOnTruncation"""
    _six_eight_eleven(cache)
    cache.truncate_from_end(11)
    cache.truncate_from_start(8)
    assert checkpoints.read_epochs(cache.path) == [(3, 8)]


def test_an_earlier_epoch_assigned_later_is_what_a_reopened_cache_reads(tmp_path):
    """Mirrors LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs, then
    shouldPersistEpochsBetweenInstances: assign writes the truncated cache synchronously."""
    _assigned(LeaderEpochCache(str(tmp_path), fsync=False), (1, 5), (2, 6), (1, 7))
    assert LeaderEpochCache(str(tmp_path), fsync=False).entries == [(1, 7)]


def test_a_checkpoint_out_of_order_is_read_back_through_assign(tmp_path):
    """Mirrors LeaderEpochFileCache's constructor (checkpoint.read().forEach(this::assign)): a file
    whose entries break monotonicity loads as the cache those assignments make, and is not rewritten."""
    text = "0\n4\n1 0\n3 10\n2 12\n4 11\n"
    (tmp_path / FILE_NAME).write_text(text, encoding="utf-8")
    cache = LeaderEpochCache(str(tmp_path), fsync=False)
    # (2, 12) removes (3, 10); (4, 11) then removes (2, 12), whose start is not below 11.
    assert cache.entries == [(1, 0), (4, 11)]
    assert (tmp_path / FILE_NAME).read_text(encoding="utf-8") == text
