"""Crash tests: cut or damage segment files at random bytes, reopen.

What is read afterwards is always a prefix of what was appended, and nothing after a corrupt
batch is ever served.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.storage.log import Log
from tests.engine.broker.test_log_properties import read_all

CONFIG = {"segment.bytes": 600, "index.interval.bytes": 100}
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _build(path, batches):
    log = Log(str(path), CONFIG, clock_ms=lambda: 1_700_000_000_000, fsync=False)
    appended = []
    for batch in batches:
        first = log.append(batch)
        appended += [(first + i, k, v) for i, (k, v) in enumerate(batch)]
    files = [s.log_path for s in log.segments]
    log.close_after_crash(lose_unflushed=False)
    return appended, files


batches_strategy = st.lists(
    st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=6)), st.binary(min_size=1, max_size=90)),
             min_size=1, max_size=4),
    min_size=1, max_size=25)


@SETTINGS
@given(batches=batches_strategy, data=st.data())
def test_a_file_cut_at_any_byte_leaves_a_readable_prefix(tmp_path_factory, batches, data):
    path = tmp_path_factory.mktemp("cut")
    appended, files = _build(path, batches)
    victim = data.draw(st.sampled_from(files))
    size = os.path.getsize(victim)
    os.truncate(victim, data.draw(st.integers(0, size)))
    survived = read_all(Log(str(path), CONFIG, fsync=False))
    assert survived == appended[:len(survived)]


@SETTINGS
@given(batches=batches_strategy, data=st.data())
def test_a_damaged_byte_is_never_served_nor_anything_after_it(tmp_path_factory, batches, data):
    path = tmp_path_factory.mktemp("flip")
    appended, files = _build(path, batches)
    victim = data.draw(st.sampled_from(files))
    size = os.path.getsize(victim)
    if size == 0:
        return
    at = data.draw(st.integers(0, size - 1))
    flip = data.draw(st.integers(1, 255))
    with open(victim, "r+b") as f:
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ flip]))
    survived = read_all(Log(str(path), CONFIG, fsync=False))
    assert survived == appended[:len(survived)]
    # Every record that survived lies in a batch before the damaged one; a flip in the
    # partitionLeaderEpoch field (not under the CRC, not used for reads) is harmless.
    segment_base = int(os.path.basename(victim)[:20])
    lost = [r for r in appended if r not in survived]
    if lost:
        assert lost[0][0] >= segment_base
