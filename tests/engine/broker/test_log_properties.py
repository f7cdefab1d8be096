"""Property tests: random appends, rolls, truncations, retention runs, reopens and crashes.

After every step, reading the whole log returns exactly the records the model says survive.
"""
from __future__ import annotations

import shutil
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from engine.storage.log import Log

DAY = 24 * 3600 * 1000
CONFIG = {"segment.bytes": 512, "index.interval.bytes": 128, "retention.bytes": 2048,
          "retention.ms": 3 * DAY, "segment.index.bytes": 96}

values = st.one_of(st.none(), st.binary(max_size=120))
keys = st.one_of(st.none(), st.binary(max_size=8))


def read_all(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    out, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        chunk = log.read(offset, 700)
        if not chunk:
            raise AssertionError(f"read({offset}) returned nothing below the log end {log.log_end_offset}")
        out += [(r.offset, r.key, r.value) for r in chunk]
        offset = chunk[-1].offset + 1
    return out


class LogMachine(RuleBasedStateMachine):
    @initialize()
    def open_log(self):
        self.dir = tempfile.mkdtemp(prefix="logprop-")
        self.now = 1_000 * DAY
        self.log = Log(self.dir, CONFIG, clock_ms=lambda: self.now, fsync=False)
        self.model: list[tuple[int, bytes | None, bytes | None]] = []

    def teardown(self):
        try:
            self.log.close()
        except Exception:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(records=st.lists(st.tuples(keys, values), min_size=1, max_size=6))
    def append(self, records):
        first = self.log.append(records, timestamp_ms=self.now)
        assert first == (self.model[-1][0] + 1 if self.model else self.log.log_start_offset)
        self.model += [(first + i, k, v) for i, (k, v) in enumerate(records)]

    @rule()
    def roll(self):
        self.log.roll()

    @rule(data=st.data())
    def truncate(self, data):
        target = data.draw(st.integers(self.log.log_start_offset, self.log.log_end_offset + 2))
        self.log.truncate_to(target)
        self.model = [r for r in self.model if r[0] < target]

    @rule(hw_fraction=st.floats(0, 1), days=st.integers(0, 4))
    def retention(self, hw_fraction, days):
        self.now += days * DAY
        start, end = self.log.log_start_offset, self.log.log_end_offset
        self.log.update_high_watermark(start + int((end - start) * hw_fraction))
        self.log.delete_old_segments()
        assert self.log.log_start_offset <= self.log.high_watermark
        self.model = [r for r in self.model if r[0] >= self.log.log_start_offset]

    @rule()
    def reopen_clean(self):
        start = self.log.log_start_offset
        self.log.close()
        self.log = Log(self.dir, CONFIG, clock_ms=lambda: self.now, fsync=False,
                       recovery_point=self.log.log_end_offset, log_start_offset=start)

    @rule()
    def reopen_after_process_crash(self):
        start = self.log.log_start_offset
        self.log.close_after_crash(lose_unflushed=False)
        self.log = Log(self.dir, CONFIG, clock_ms=lambda: self.now, fsync=False, log_start_offset=start)

    @precondition(lambda self: self.log.recovery_point > self.log.log_start_offset)
    @rule()
    def reopen_after_power_loss(self):
        start, point = self.log.log_start_offset, self.log.recovery_point
        self.log.close_after_crash(lose_unflushed=True)
        self.log = Log(self.dir, CONFIG, clock_ms=lambda: self.now, fsync=False,
                       recovery_point=point, log_start_offset=start)
        self.model = [r for r in self.model if r[0] < point]

    @rule()
    def flush(self):
        self.log.flush()

    @invariant()
    def reads_return_exactly_the_surviving_records(self):
        assert read_all(self.log) == self.model
        expected_end = self.model[-1][0] + 1 if self.model else self.log.log_end_offset
        assert self.log.log_end_offset == expected_end
        assert self.log.log_start_offset <= self.log.high_watermark <= self.log.log_end_offset
        assert self.log.recovery_point <= self.log.log_end_offset


LogMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None,
                                        suppress_health_check=[HealthCheck.too_slow])
TestLogProperties = LogMachine.TestCase
