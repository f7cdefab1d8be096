"""The log-compaction scenario shows what it says: a first cleaning at 15 s keeps the newest record of
each key below the active segment (offsets unchanged) and the tombstone, with a delete horizon; the
cleaning at 90 s, past that horizon, removes the tombstone."""
from __future__ import annotations

import os

import pytest

from engine import events as ev
from engine.cluster import Cluster
from engine.scenarios import load_scenario, run_scenario
from engine.storage import record_batch as rb
from engine.storage.checkpoints import read_offsets
from engine.storage.cleaner import CLEANER_CHECKPOINT


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    events: list[ev.Event] = []
    seen: dict = {}
    made: list[Cluster] = []

    def factory(*args, **kwargs) -> Cluster:
        made.append(Cluster(*args, **kwargs))
        return made[0]

    def trace(event: ev.Event) -> None:
        events.append(event)
        if isinstance(event, ev.LogCleaned) and "first" not in seen:    # the log right after the first cleaning
            log = made[0].brokers[1].partitions[("t", 0)].log
            seen["first"] = [(r.offset, r.key, r.value) for r in log.records_from(0)]
            seen["header"] = rb.read_batch_header(log.read_batches(6).records)
            seen["record_time"] = made[0].world.record_time_ms()      # the clock records are stamped with

    directory = str(tmp_path_factory.mktemp("compaction"))
    cluster, _ = run_scenario(load_scenario("log-compaction"), directory, trace=trace, cluster_factory=factory)
    log = cluster.brokers[1].partitions[("t", 0)].log
    final = [(r.offset, r.key, r.value) for r in log.records_from(0)]
    checkpoint = read_offsets(os.path.join(directory, "broker-1", CLEANER_CHECKPOINT))
    cluster.close()
    return events, seen, final, checkpoint


def test_the_first_cleaning_keeps_the_newest_record_of_each_key_and_the_tombstone(played):
    events, seen, _final, _ = played
    first = next(e for e in events if isinstance(e, ev.LogCleaned))
    assert (first.time_ms // 1000, first.first_dirty_offset, first.end_offset, first.dirty_ratio) == (15, 0, 8, 1.0)
    assert (first.records_before, first.records_after, first.delete_horizons_set) == (8, 4, 1)
    assert seen["first"] == [(4, b"b", b"b2"), (5, b"a", b"a3"), (6, b"c", None), (7, b"d", b"d1"),
                             (8, b"a", b"a4")]
    header = seen["header"]
    assert header.attributes & rb.DELETE_HORIZON_FLAG_MASK and header.base_timestamp == seen["record_time"] + 60000


def test_the_tombstone_goes_at_the_cleaning_past_its_horizon_and_offsets_keep_their_gaps(played):
    events, _seen, final, checkpoint = played
    second = [e for e in events if isinstance(e, ev.LogCleaned)][1]
    assert second.time_ms >= 75000 and second.tombstones_removed == 1 and second.end_offset == 16
    assert final == [(8, b"a", b"a4"), (11, b"e", b"e3"), (13, b"b", b"b4"), (15, b"d", b"d3"),
                     (16, b"d", b"d4"), (17, b"d", b"d5")]
    assert checkpoint == {("t", 0): 16}
