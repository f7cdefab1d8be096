"""A replica's last log cleaning, before and after, side by side (the Segments panel's "before and
after" button; issue 15).

- *Before* is what the cleaner read, captured by the engine as it cleaned (engine/storage/cleaner.py:
  CleanerStats.batches_read, kept in LogCleanerManager.last_cleaning): every batch of the rewritten
  segments, from the first segment to the cleaning's end offset, with its records and, for each,
  whether the cleaner kept it — nothing here is reconstructed or guessed. At most
  cleaner.READ_RECORDS_MAX records are kept, keys and values cut to READ_BYTES_MAX bytes; the view
  says when it shows fewer than the cleaning read.
- *After* is the replica's log now, read from its segments below that end offset: what the
  cleaning left, unless something changed it since (a later cleaning replaces the remembered one;
  retention or truncation show as they are).
- The numbers are the cleaning's own (those of its `log_cleaned` event), and the
  `cleaner-offset-checkpoint` line of the replica as the broker's disk holds it now.

Only a running broker's cleanings are known (its cleaner starts with it); the view only reads.
"""
from __future__ import annotations

import os
from typing import Any
from uuid import UUID

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from engine.cluster import EPOCH_MS, Cluster
from engine.storage import checkpoints
from engine.storage import record_batch as rb
from engine.storage.cleaner import CLEANER_CHECKPOINT, READ_RECORDS_MAX, BatchRead
from engine.storage.segment import filename_prefix
from lab.views_explore import PanelError, _last_cleaning, _live_log, _replica_param, _session_panel, _text


def _record_row(offset: int, key: bytes | None, value: bytes | None, *, retained: bool = True,
                cut: bool = False) -> dict:
    return {"kind": "record", "offset": offset, "key": _text(key), "value": _text(value),
            "tombstone": value is None, "retained": retained, "cut": cut}


class _Side:
    """One column's rows: segment and batch boundaries, records, and a gap row wherever the
    offsets of the records jump (offsets never move in a compacted log: removed ones leave gaps)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.records = 0
        self._segment: int | None = None
        self._expected: int | None = None

    def segment(self, base_offset: int, size: int | None = None) -> None:
        if base_offset != self._segment:
            self._gap_before(base_offset)
            self._segment = base_offset
            self.rows.append({"kind": "segment", "base_offset": base_offset, "name": filename_prefix(base_offset),
                              "size": size})

    def batch(self, **fields: Any) -> None:
        self._gap_before(fields["base_offset"])
        self.rows.append({"kind": "batch", **fields})
        if not fields["records"]:        # a header alone: its offsets hold no record, and say so themselves
            self._expected = fields["last_offset"] + 1

    def record(self, row: dict) -> None:
        self._gap_before(row["offset"])
        self._expected = row["offset"] + 1
        self.rows.append(row)
        self.records += 1

    def _gap_before(self, offset: int) -> None:
        if self._expected is not None and offset > self._expected:
            self.rows.append({"kind": "gap", "first": self._expected, "last": offset - 1})
        if self._expected is None or offset > self._expected:
            self._expected = offset


def _before(segments: list[tuple[int, int]], batches: list[BatchRead]) -> _Side:
    """The segments the cleaner rewrote (an empty one too) with the batches it read of each."""
    side = _Side()
    by_segment: dict[int, list[BatchRead]] = {}
    for batch in batches:
        by_segment.setdefault(batch.segment_base_offset, []).append(batch)
    for base_offset, size in segments:
        if base_offset not in by_segment and side.records >= READ_RECORDS_MAX:
            break
        side.segment(base_offset, size)
        for batch in by_segment.get(base_offset, []):
            _before_batch(side, batch)
    return side


def _before_batch(side: _Side, batch: BatchRead) -> None:
    side.batch(base_offset=batch.base_offset, last_offset=batch.last_offset, outcome=batch.outcome,
               control=batch.is_control, records=len(batch.records))
    for r in batch.records:
        side.record(_record_row(r.offset, r.key, r.value, retained=r.retained, cut=r.cut))


def _after(log: Any, end_offset: int) -> tuple[_Side, bool]:
    """The log's batches now, from its first segment to `end_offset` (at most READ_RECORDS_MAX
    records); and whether some were left out."""
    side = _Side()
    for segment in log.segments:
        if segment.base_offset >= end_offset:
            break
        side.segment(segment.base_offset, segment.size)
        data = segment.read_bytes()
        for position, header in rb.iter_batches(data):
            if header.base_offset >= end_offset:
                break
            if side.records >= READ_RECORDS_MAX:
                return side, True
            _, records = rb.decode_batch(data, position, verify_crc=False)
            horizon = header.base_timestamp - EPOCH_MS if header.attributes & rb.DELETE_HORIZON_FLAG_MASK else None
            side.batch(base_offset=header.base_offset, last_offset=header.last_offset, control=header.is_control,
                       records=len(records), delete_horizon_s=None if horizon is None else f"{horizon / 1000:.3f}")
            for record in records[:READ_RECORDS_MAX - side.records]:
                side.record(_record_row(record.offset, record.key, record.value))
    return side, False


def _cleaner_checkpoint(cluster: Cluster, broker: int, topic: str, partition: int) -> int | None:
    """The replica's entry in the broker's cleaner-offset-checkpoint file, as on disk now."""
    path = os.path.join(cluster.brokers[broker].data_dir, CLEANER_CHECKPOINT)
    if not os.path.isfile(path):
        return None
    try:
        return checkpoints.read_offsets(path).get((topic, partition))
    except checkpoints.CheckpointError:
        return None


@_session_panel
def segment_cleaning(request: HttpRequest, cluster: Cluster, session_id: UUID) -> HttpResponse:
    """The replica's last cleaning: what the cleaner read and what it decided, beside the log now."""
    chosen = _replica_param(request, cluster)
    if chosen is None:
        raise PanelError("Choose a replica first")
    broker, topic, partition = chosen
    result = _last_cleaning(cluster, broker, topic, partition)
    log = _live_log(cluster, broker, topic, partition)
    if result is None or log is None:
        raise PanelError(f"Broker {broker} has not cleaned {topic}-{partition} since it started")
    stats = result.stats
    before = _before(stats.segments_read, stats.batches_read)
    after, after_cut = _after(log, result.end_offset)
    return render(request, "lab/partials/segment_cleaning.html", {
        "session_id": session_id, "broker": broker, "topic": topic, "partition": partition,
        "replica": f"{broker}:{topic}:{partition}", "result": result, "stats": stats,
        "dirty_ratio": f"{result.dirty_ratio:.4g}", "cleaned_s": f"{(result.cleaned_ms - EPOCH_MS) / 1000:.3f}",
        "sides": [{"name": "before", "rows": before.rows, "shown": before.records,
                   "cut": before.records < stats.records_before},
                  {"name": "after", "rows": after.rows, "shown": after.records, "cut": after_cut}],
        "removed": sum(1 for row in before.rows if row["kind"] == "record" and not row["retained"]),
        "checkpoint_now": _cleaner_checkpoint(cluster, broker, topic, partition),
        "read_max": READ_RECORDS_MAX,
    })
