"""The charts' series (lab/series.py): what a page opened later draws for the whole session."""
from __future__ import annotations

from pathlib import Path

from lab.host import SessionHost, Shape
from lab.series import MAX_BUCKETS, MAX_POINTS, Series


def test_the_series_count_what_the_engine_did(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path), Shape(3, 2, "leader-epoch", {}))
    host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "values": [f"v{i}" for i in range(30)], "acks": "all"})
    host.apply("consumer_join", {"member": "c1", "group": "g", "topics": ["t"], "poll_every_ms": 100,
                                 "config": {"auto.offset.reset": "earliest"}})
    host.play(5)
    for _ in range(100):
        host.tick(100)
    host.pause()
    host.apply("kill_broker", {"broker": 2})
    host.step_until("isr_shrunk")

    series = host.series.to_dict()

    produced = sum(rate * series["bucket_ms"] / 1000 for _, rate in series["produced"])
    consumed = sum(rate * series["bucket_ms"] / 1000 for _, rate in series["consumed"])
    assert produced == 30 and consumed == 30
    assert any(points[-1][1] == 2 for points in series["isr"].values())      # broker 2 left an ISR
    assert {name.split()[0] for name in series["lag"]} == {"g"}
    assert all(points[-1][1] == 0 for points in series["lag"].values())       # everything consumed, committed
    assert Series.load(host.series.snapshot()).to_dict() == series


def test_the_series_stay_bounded_however_long_the_session() -> None:
    series = Series()

    class E:
        def __init__(self, **fields):
            self.__dict__.update(fields)
    for second in range(5 * MAX_BUCKETS):
        series.on_event(E(kind="records_appended", role="leader", topic="t", partition=0, time_ms=second * 1000,
                          records_count=2))
        series.on_event(E(kind="isr_shrunk", topic="t", partition=0, time_ms=second * 1000, isr=[1, 2, 3][: 1 + second % 3]))

    out = series.to_dict()
    assert len(out["produced"]) <= MAX_BUCKETS and out["bucket_ms"] > 1000
    assert sum(rate * out["bucket_ms"] / 1000 for _, rate in out["produced"]) == 2 * 5 * MAX_BUCKETS
    assert len(out["isr"]["t-0"]) <= MAX_POINTS
