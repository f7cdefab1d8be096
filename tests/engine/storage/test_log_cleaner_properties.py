"""Property tests of the log cleaner: random keyed writes and tombstones, cleanings at random points.

Checked against a model of Kafka's rules (engine/storage/cleaner.py's docstring): below the cleaned
point only the last record of each key stays, a tombstone stays until a cleaning at or after its
batch's delete horizon (set by the first cleaning that kept it) and goes at that one; offsets never
change; a consumer reading across cleanings ends with every key's newest value.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.storage.cleaner import LogCleanerManager
from engine.storage.log import Log

KEYS = [f"k{i}".encode() for i in range(12)]

op = st.one_of(
    st.tuples(st.just("write"), st.integers(0, len(KEYS) - 1), st.booleans(), st.integers(1, 400)),
    st.tuples(st.just("clean"), st.integers(0, 3000)),
    st.tuples(st.just("roll")),
)


class Model:
    """What the log must hold: every write, the cleaned point, and each tombstone's horizon."""

    def __init__(self, retention_ms: int) -> None:
        self.writes: dict[int, tuple[bytes, bytes | None]] = {}
        self.horizon: dict[int, int] = {}
        self.removed: set[int] = set()
        self.end = 0
        self.retention_ms = retention_ms

    def cleaned(self, end: int, now: int) -> None:
        self.end = end
        last: dict[bytes, int] = {}
        for offset, (key, _value) in sorted(self.writes.items()):
            if offset < end:
                last[key] = offset
        keep = set(last.values())
        for offset in self.writes:
            if offset < end and offset not in keep:
                self.removed.add(offset)
        for offset in keep:
            if self.writes[offset][1] is None and offset not in self.removed:
                if offset in self.horizon and now >= self.horizon[offset]:
                    self.removed.add(offset)
                elif offset not in self.horizon:
                    self.horizon[offset] = now + self.retention_ms

    def expected(self) -> list[tuple[int, bytes, bytes | None]]:
        return [(o, k, v) for o, (k, v) in sorted(self.writes.items()) if o not in self.removed]


def _open(path: str, segment_bytes: int, retention_ms: int, clock) -> Log:
    return Log(path, {"cleanup.policy": "compact", "segment.bytes": segment_bytes, "min.cleanable.dirty.ratio": 0,
                      "delete.retention.ms": retention_ms, "index.interval.bytes": 100}, clock_ms=clock, fsync=False)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, min_size=30, max_size=120), segment_bytes=st.integers(150, 500),
       retention_ms=st.integers(0, 2000))
def test_the_cleaned_log_holds_the_last_value_of_each_key_and_tombstones_until_their_horizon(
        tmp_path_factory, ops, segment_bytes, retention_ms):
    directory = str(tmp_path_factory.mktemp("clean"))
    now = [1_000]
    log = _open(directory + "/t-0", segment_bytes, retention_ms, lambda: now[0])
    manager = LogCleanerManager(directory, fsync=False)
    model = Model(retention_ms)
    for step, item in enumerate(ops):
        if item[0] == "write":
            _, key, tombstone, advance = item
            now[0] += advance
            value = None if tombstone else f"v{step}".encode()
            offset = log.append([(KEYS[key], value)], timestamp_ms=now[0])
            model.writes[offset] = (KEYS[key], value)
        elif item[0] == "roll":
            log.roll()
        else:
            now[0] += item[1]
            result = manager.clean_filthiest(directory, {("t", 0): log}, now[0])
            if result is not None:
                model.cleaned(result.end_offset, now[0])
        got = [(r.offset, r.key, r.value) for r in log.records_from(0)]
        assert got == model.expected(), f"after step {step} {item}"
        offsets = [r[0] for r in got]
        assert offsets == sorted(set(offsets))
    log.close()
    reopened = _open(directory + "/t-0", segment_bytes, retention_ms, lambda: now[0])
    assert [(r.offset, r.key, r.value) for r in reopened.records_from(0)] == model.expected()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.one_of(op, st.tuples(st.just("read"), st.integers(1, 300))), min_size=20, max_size=100),
       segment_bytes=st.integers(150, 700))
def test_a_consumer_reading_across_cleanings_sees_every_key_s_newest_value(tmp_path_factory, ops, segment_bytes):
    directory = str(tmp_path_factory.mktemp("consume"))
    now = [1_000]
    log = _open(directory + "/t-0", segment_bytes, 10**9, lambda: now[0])
    manager = LogCleanerManager(directory, fsync=False)
    latest: dict[bytes, bytes | None] = {}
    view: dict[bytes, bytes] = {}
    position, last_seen = 0, -1

    def read(max_bytes: int) -> None:
        nonlocal position, last_seen
        for record in log.read(position, max_bytes) if position < log.log_end_offset else []:
            assert record.offset > last_seen, "an offset went backwards"
            last_seen, position = record.offset, record.offset + 1
            if record.value is None:
                view.pop(record.key, None)
            else:
                view[record.key] = record.value

    for step, item in enumerate(ops):
        if item[0] == "write":
            _, key, tombstone, advance = item
            now[0] += advance
            value = None if tombstone else f"v{step}".encode()
            log.append([(KEYS[key], value)], timestamp_ms=now[0])
            latest[KEYS[key]] = value
        elif item[0] == "roll":
            log.roll()
        elif item[0] == "clean":
            now[0] += item[1]
            manager.clean_filthiest(directory, {("t", 0): log}, now[0])
        else:
            read(item[1])
    while position < log.log_end_offset:
        before = position
        read(100)
        assert position > before or position >= log.log_end_offset, "the consumer is stuck"
    assert view == {k: v for k, v in latest.items() if v is not None}
