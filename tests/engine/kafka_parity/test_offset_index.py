"""Kafka's OffsetIndexTest (storage/src/test/java/.../log/OffsetIndexTest.java), case by case, on
engine.storage.index.OffsetIndex. Kafka's index is an mmap'd file; the engine's keeps its entries
in memory and appends them to the file, so "reopen" is a new OffsetIndex that loads the file.
Not translated: fetchUpperBoundOffset (the engine's fetch has no use for it) and forceUnmap."""
from __future__ import annotations

import random

import pytest

from engine.storage.index import (
    OFFSET_ENTRY_SIZE,
    CorruptIndexError,
    IndexFullError,
    InvalidOffsetError,
    OffsetIndex,
)

BASE_OFFSET = 45


@pytest.fixture
def index(tmp_path):
    """OffsetIndexTest's fixture: base offset 45, room for 30 entries."""
    idx = OffsetIndex(str(tmp_path / "offset.index"), BASE_OFFSET, 30 * OFFSET_ENTRY_SIZE)
    yield idx
    idx.close()


def _lookup(index: OffsetIndex, offset: int) -> tuple[int, int]:
    hit = index.lookup(offset)
    return hit.offset, hit.position


def test_a_lookup_finds_the_greatest_entry_at_or_below_the_target(index):
    """Mirrors OffsetIndexTest.randomLookupTest (with a seeded Random, so a failure replays)."""
    assert _lookup(index, 92) == (BASE_OFFSET, 0), "nothing indexed: the start of the segment"
    rng = random.Random(14)
    offsets, positions, offset, position = [], [], BASE_OFFSET + 1, 0
    for _ in range(index.max_entries):
        offset += rng.randint(1, 15)
        position += rng.randint(1, 15)
        offsets.append(offset)
        positions.append(position)
        index.append(offset, position)
    for o, p in zip(offsets, positions):
        assert _lookup(index, o) == (o, p)
    for target in rng.sample(range(BASE_OFFSET, offsets[-1]), 30):
        below = [i for i, o in enumerate(offsets) if o <= target]
        expected = (offsets[below[-1]], positions[below[-1]]) if below else (BASE_OFFSET, 0)
        assert _lookup(index, target) == expected


def test_lookups_at_the_first_and_the_last_entry(index):
    """Mirrors OffsetIndexTest.lookupExtremeCases."""
    assert _lookup(index, BASE_OFFSET) == (BASE_OFFSET, 0), "lookup on an empty index"
    for i in range(index.max_entries):
        index.append(BASE_OFFSET + i + 1, i + 1)
    assert _lookup(index, BASE_OFFSET) == (BASE_OFFSET, 0)
    last = BASE_OFFSET + index.max_entries
    assert _lookup(index, last) == (last, index.max_entries)


def test_entries_read_back_by_slot(index):
    """Mirrors OffsetIndexTest.testEntry."""
    for i in range(index.max_entries):
        index.append(BASE_OFFSET + i, i + 1)
    assert [index.entry(i) for i in range(index.max_entries)] == \
        [(BASE_OFFSET + i, i + 1) for i in range(index.max_entries)]


def test_an_entry_past_the_last_one_is_refused(index):
    """Mirrors OffsetIndexTest.testEntryOverflow (Kafka: IllegalArgumentException)."""
    with pytest.raises(IndexError):
        index.entry(0)


def test_a_full_offset_index_refuses_an_append(index):
    """Mirrors OffsetIndexTest.appendTooMany: OffsetIndex.append throws IllegalArgumentException
    "Attempt to append to a full index" once entries reach maxEntries."""
    for i in range(index.max_entries):
        index.append(BASE_OFFSET + i + 1, i + 1)
    assert index.is_full
    with pytest.raises(IndexFullError, match="Attempt to append to a full index"):
        index.append(BASE_OFFSET + index.max_entries + 1, index.max_entries + 1)
    assert index.entries == index.max_entries


def test_an_offset_that_does_not_increase_is_refused(index):
    """Mirrors OffsetIndexTest.appendOutOfOrder (Kafka: InvalidOffsetException)."""
    index.append(51, 1)
    with pytest.raises(InvalidOffsetError, match="no larger than the last offset appended"):
        index.append(50, 2)
    with pytest.raises(InvalidOffsetError):
        index.append(51, 2)


def test_a_reopened_index_holds_the_same_entries(index, tmp_path):
    """Mirrors OffsetIndexTest.testReopen (the read-only half has no counterpart: the engine
    opens every index writable)."""
    index.append(51, 1)
    index.append(52, 2)
    index.close()
    reopened = OffsetIndex(index.path, BASE_OFFSET, 30 * OFFSET_ENTRY_SIZE)
    reopened.load()
    assert _lookup(reopened, 51) == (51, 1)
    assert _lookup(reopened, 52) == (52, 2)
    assert reopened.last_offset == 52
    assert reopened.entries == 2


def test_truncation_drops_the_entries_at_and_above_the_offset(tmp_path):
    """Mirrors OffsetIndexTest.truncate."""
    idx = OffsetIndex(str(tmp_path / "t.index"), 0, 10 * OFFSET_ENTRY_SIZE)
    for i in range(1, 10):
        idx.append(i, i)

    idx.truncate_to(12)
    assert _lookup(idx, 10) == (9, 9), "a truncation past the end changes nothing"
    assert idx.last_offset == 9

    idx.append(10, 10)
    idx.truncate_to(10)
    assert _lookup(idx, 10) == (9, 9), "truncating at the last entry drops it"
    assert idx.last_offset == 9
    idx.append(10, 10)

    idx.truncate_to(9)
    assert _lookup(idx, 10) == (8, 8)
    assert idx.last_offset == 8
    idx.append(9, 9)

    idx.truncate_to(5)
    assert _lookup(idx, 10) == (4, 4)
    assert idx.last_offset == 4
    idx.append(5, 5)

    idx.truncate_to(0)
    assert idx.entries == 0, "a full truncation leaves no entries"
    idx.sync()
    assert (tmp_path / "t.index").stat().st_size == 0


def test_an_entry_at_the_base_offset_is_a_sane_index(tmp_path):
    """Mirrors OffsetIndexTest.testSanityLastOffsetEqualToBaseOffset."""
    idx = OffsetIndex(str(tmp_path / "s.index"), 20, 10 * OFFSET_ENTRY_SIZE)
    idx.append(20, 1)
    idx.close()
    idx.load()
    assert idx.entries == 1 and idx.last_offset == 20


def test_a_file_that_is_not_whole_entries_is_corrupt(tmp_path):
    """Mirrors OffsetIndex.sanityCheck ("found N bytes which is neither positive nor a multiple of 8"):
    the segment then rebuilds the index from its log."""
    path = tmp_path / "c.index"
    path.write_bytes(b"\x00" * (OFFSET_ENTRY_SIZE + 3))
    with pytest.raises(CorruptIndexError, match="not a multiple of 8"):
        OffsetIndex(str(path), 0, 1024).load()


def test_the_capacity_is_rounded_down_to_whole_entries(tmp_path):
    """Mirrors AbstractIndex's roundDownToExactMultiple(maxIndexSize, entrySize): 20 bytes hold 2 entries."""
    idx = OffsetIndex(str(tmp_path / "r.index"), 0, 20)
    assert idx.max_entries == 2
    idx.append(1, 1)
    idx.append(2, 2)
    assert idx.is_full
