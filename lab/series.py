"""What the charts draw over virtual time, kept by the server: a page opened later (a reload, a
second tab) draws the whole session, not just what it saw since it opened.

Three families, folded from the engine's events as they are published (muted replays too, so a
rebuilt host has them):
- records produced and consumed per time bucket (user topics only: `__consumer_offsets` is
  bookkeeping, not traffic);
- each partition's ISR size, as change points (leader elections and ISR changes carry the ISR);
- each group's lag per partition, as change points: the leader's high watermark minus the
  group's committed offset (kafka-consumer-groups' LAG), from `high_watermark_advanced` (leader)
  and `offsets_committed`.

Bounded whatever the session's length: past MAX_BUCKETS the buckets double in width (pairs are
merged), past MAX_POINTS a line keeps every other one of its older half. A rewind goes back to
what the series held at the checkpoint it restores (`snapshot`/`load`, stored with the checkpoint)
and the replay folds the rest in again.
"""
from __future__ import annotations

import copy
import json
from typing import Any

from engine import events as ev

BUCKET_MS = 1000
MAX_BUCKETS = 1500
MAX_POINTS = 2000


class Series:
    def __init__(self) -> None:
        self.bucket_ms = BUCKET_MS
        self.produced: dict[int, int] = {}
        self.consumed: dict[int, int] = {}
        self.isr: dict[str, list[list]] = {}       # "t-0" -> [[time_s, size], ...]
        self.lag: dict[str, list[list]] = {}       # "g t-0" -> [[time_s, lag], ...]
        self._high_watermarks: dict[str, int] = {}
        self._committed: dict[tuple[str, str], int] = {}

    # -- folding ------------------------------------------------------------------------------
    def on_event(self, e: ev.Event) -> None:
        kind = e.kind
        topic = getattr(e, "topic", None)
        if isinstance(topic, str) and topic.startswith("__"):
            return
        if kind == "records_appended":
            if e.role == "leader":
                self._count(self.produced, e.time_ms, e.records_count)
        elif kind == "records_consumed":
            self._count(self.consumed, e.time_ms, len(e.records))
        elif kind in ("leader_elected", "isr_shrunk", "isr_expanded", "partition_offline"):
            self._point(self.isr, f"{e.topic}-{e.partition}", e.time_ms, len(e.isr))
        elif kind == "high_watermark_advanced" and e.role == "leader":
            tp = f"{e.topic}-{e.partition}"
            self._high_watermarks[tp] = e.new
            for (group, committed_tp), offset in self._committed.items():
                if committed_tp == tp:
                    self._point(self.lag, f"{group} {tp}", e.time_ms, max(0, e.new - offset))
        elif kind == "offsets_committed":
            for tp, offset in (e.offsets or {}).items():
                if tp.startswith("__"):
                    continue
                self._committed[(e.group, tp)] = offset
                if tp in self._high_watermarks:
                    self._point(self.lag, f"{e.group} {tp}", e.time_ms, max(0, self._high_watermarks[tp] - offset))

    def _count(self, buckets: dict[int, int], time_ms: int, n: int) -> None:
        if not n:
            return
        bucket = time_ms // self.bucket_ms
        buckets[bucket] = buckets.get(bucket, 0) + n
        if len(buckets) > MAX_BUCKETS:
            self._coarsen()

    def _coarsen(self) -> None:
        self.bucket_ms *= 2
        for name in ("produced", "consumed"):
            merged: dict[int, int] = {}
            for bucket, n in getattr(self, name).items():
                merged[bucket // 2] = merged.get(bucket // 2, 0) + n
            setattr(self, name, merged)

    @staticmethod
    def _point(lines: dict[str, list[list]], name: str, time_ms: int, value: int) -> None:
        points = lines.setdefault(name, [])
        t = time_ms / 1000
        if points and points[-1][1] == value:
            return
        if points and points[-1][0] == t:
            points[-1][1] = value
        else:
            points.append([t, value])
        if len(points) > MAX_POINTS:
            half = len(points) // 2
            points[:half] = points[:half:2]

    # -- reading and keeping --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """For the page: buckets as [[start_s, records per second], ...]."""
        def rates(buckets: dict[int, int]) -> list[list]:
            return [[b * self.bucket_ms / 1000, n * 1000 / self.bucket_ms] for b, n in sorted(buckets.items())]
        return {"bucket_ms": self.bucket_ms, "produced": rates(self.produced), "consumed": rates(self.consumed),
                "isr": self.isr, "lag": self.lag}

    def snapshot(self) -> str:
        """Everything, as JSON (kept with an engine checkpoint)."""
        return json.dumps({"bucket_ms": self.bucket_ms, "produced": list(self.produced.items()),
                           "consumed": list(self.consumed.items()), "isr": self.isr, "lag": self.lag,
                           "hw": self._high_watermarks,
                           "committed": [[g, tp, o] for (g, tp), o in self._committed.items()]})

    @classmethod
    def load(cls, text: str) -> Series:
        data = json.loads(text)
        series = cls()
        series.bucket_ms = data["bucket_ms"]
        series.produced = {int(b): n for b, n in data["produced"]}
        series.consumed = {int(b): n for b, n in data["consumed"]}
        series.isr, series.lag = copy.deepcopy(data["isr"]), copy.deepcopy(data["lag"])
        series._high_watermarks = dict(data["hw"])
        series._committed = {(g, tp): o for g, tp, o in data["committed"]}
        return series
