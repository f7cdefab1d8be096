"""Kafka's TimeIndexTest (storage/src/test/java/.../log/TimeIndexTest.java), case by case, on
engine.storage.index.TimeIndex: 30 slots, base offset 45, entries (10·i, 45 + 10·i).

The engine answers "no entry at or below" with None where Kafka returns the entry
(NO_TIMESTAMP, base offset); both send the reader to the start of the segment (index.py says so).
Not translated: testResize (the engine's index files hold exactly their entries, nothing to resize)
and testParseEntry (a private of the mmap'd form)."""
from __future__ import annotations

import pytest

from engine.storage.index import (
    TIME_ENTRY,
    TIME_ENTRY_SIZE,
    CorruptIndexError,
    IndexFullError,
    InvalidOffsetError,
    TimeIndex,
)

MAX_ENTRIES = 30
BASE_OFFSET = 45


@pytest.fixture
def idx(tmp_path):
    index = TimeIndex(str(tmp_path / "time.timeindex"), BASE_OFFSET, MAX_ENTRIES * TIME_ENTRY_SIZE)
    yield index
    index.close()


def _append_entries(index: TimeIndex, count: int) -> None:
    for i in range(1, count + 1):
        index.maybe_append(i * 10, i * 10 + BASE_OFFSET)


def test_a_lookup_finds_the_greatest_timestamp_at_or_below_the_target(idx):
    """Mirrors TimeIndexTest.testLookUp."""
    assert idx.lookup(100) is None, "an empty index: scan from the segment's start"
    _append_entries(idx, MAX_ENTRIES - 1)
    assert idx.lookup(9) is None, "below the first entry"
    assert idx.lookup(25) == (20, 65), "between two entries"
    assert idx.lookup(30) == (30, 75), "on an entry"


def test_entries_read_back_in_order(idx):
    """Mirrors TimeIndexTest.testEntry."""
    _append_entries(idx, MAX_ENTRIES - 1)
    assert idx.all_entries()[:4] == [(10, 55), (20, 65), (30, 75), (40, 85)]


def test_truncation_drops_the_entries_at_and_above_the_offset(idx):
    """Mirrors TimeIndexTest.testTruncate."""
    _append_entries(idx, MAX_ENTRIES - 1)
    idx.truncate_to(BASE_OFFSET)
    assert idx.entries == 0
    _append_entries(idx, MAX_ENTRIES - 1)
    idx.truncate_to(10 + BASE_OFFSET)
    assert idx.entries == 0


def test_the_last_slot_is_kept_for_the_roll_and_only_a_forced_append_takes_it(idx):
    """Mirrors TimeIndexTest.testAppend: TimeIndex.isFull is entries >= maxEntries - 1; then only
    maybeAppend(..., skipFullCheck = true) adds an entry, and never one for a smaller offset."""
    _append_entries(idx, MAX_ENTRIES - 1)
    with pytest.raises(IndexFullError, match="full time index"):
        idx.maybe_append(10000, 1000)
    with pytest.raises(InvalidOffsetError):
        idx.maybe_append(10000, (MAX_ENTRIES - 2) * 10, skip_full_check=True)
    idx.maybe_append(10000, 1000, skip_full_check=True)
    assert idx.entries == MAX_ENTRIES
    assert idx.last_entry() == (10000, 1000)


def test_a_time_index_is_full_one_entry_before_its_capacity(idx):
    """Mirrors TimeIndexTest.testIsFull."""
    assert not idx.is_full
    _append_entries(idx, MAX_ENTRIES - 2)
    assert not idx.is_full
    idx.maybe_append(10 * MAX_ENTRIES, 10 * MAX_ENTRIES + BASE_OFFSET)
    assert idx.is_full


def test_the_last_entry_is_the_newest(idx):
    """Mirrors TimeIndexTest.testLastEntry (an empty index: None, Kafka's (NO_TIMESTAMP, base offset))."""
    assert idx.last_entry() is None
    idx.maybe_append(1, 1 + BASE_OFFSET)
    assert idx.last_entry() == (1, BASE_OFFSET + 1)


def test_a_timestamp_not_above_the_last_entry_adds_nothing(idx):
    """Mirrors TimeIndex.maybeAppend's rule (exercised by TimeIndexTest.testAppend and by every
    segment roll): the same entry again is ignored — a segment closed twice — and a timestamp
    below the last entry's is refused (Kafka: IllegalStateException)."""
    idx.maybe_append(100, BASE_OFFSET + 3)
    idx.maybe_append(100, BASE_OFFSET + 3)
    idx.maybe_append(100, BASE_OFFSET + 5)
    assert idx.all_entries() == [(100, BASE_OFFSET + 3)]
    with pytest.raises(InvalidOffsetError, match="timestamp"):
        idx.maybe_append(99, BASE_OFFSET + 6)


def test_records_without_a_timestamp_are_never_indexed(idx):
    """Mirrors TimeIndex.maybeAppend's comment: with NO_TIMESTAMP (-1) everywhere, the time index
    stays empty (an empty index's last entry counts as NO_TIMESTAMP)."""
    idx.maybe_append(-1, BASE_OFFSET + 1)
    assert idx.entries == 0


def test_an_ill_formed_file_fails_the_sanity_check(tmp_path):
    """Mirrors TimeIndexTest.testSanityCheck: a length that is not whole entries, a timestamp
    below an earlier one, an offset below the base offset."""
    cases = {
        "length": TIME_ENTRY.pack(10, 1) + b"\x00",
        "timestamp": TIME_ENTRY.pack(20, 1) + TIME_ENTRY.pack(10, 2),
        "offset": TIME_ENTRY.pack(10, -1),
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.timeindex"
        path.write_bytes(data)
        with pytest.raises(CorruptIndexError):
            TimeIndex(str(path), BASE_OFFSET, MAX_ENTRIES * TIME_ENTRY_SIZE).load()
    good = tmp_path / "good.timeindex"
    good.write_bytes(TIME_ENTRY.pack(10, 1) + TIME_ENTRY.pack(20, 2))
    index = TimeIndex(str(good), BASE_OFFSET, MAX_ENTRIES * TIME_ENTRY_SIZE)
    index.load()
    assert index.all_entries() == [(10, BASE_OFFSET + 1), (20, BASE_OFFSET + 2)]


def test_an_entry_is_twelve_bytes():
    """Mirrors TimeIndexTest.testEntrySize."""
    assert TIME_ENTRY_SIZE == 12
