from __future__ import annotations

import os

from engine.storage.log import Log


def _log(path, clock, **kw):
    return Log(str(path), {"segment.bytes": 400, "index.interval.bytes": 100}, clock_ms=clock, **kw)


def _fill(log, n):
    for i in range(n):
        log.append([(b"k%d" % i, b"value-%d" % i)])


def _all(log):
    out, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        chunk = log.read(offset, 1 << 20)
        out += chunk
        offset = chunk[-1].offset + 1
    return [(r.offset, r.value) for r in out]


def test_reopening_a_cleanly_closed_log_gives_back_the_same_records(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 30)
    before = _all(log)
    log.close()
    again = _log(tmp_path / "t-0", clock)
    assert _all(again) == before and again.log_end_offset == 30
    again.append([(None, b"more")])
    assert again.log_end_offset == 31


def test_a_torn_tail_is_cut_and_the_rest_survives(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 10)
    active = log.active_segment
    expected = _all(log)
    log.close_after_crash(lose_unflushed=False)
    size = os.path.getsize(active.log_path)
    os.truncate(active.log_path, size - 5)  # the last batch was half written
    events = []
    again = _log(tmp_path / "t-0", clock, listener=events.append)
    assert _all(again) == expected[:-1]
    recovered = [e for e in events if type(e).__name__ == "LogRecovered"]
    assert recovered and recovered[0].bytes_truncated > 0


def test_a_corrupt_batch_in_an_old_segment_drops_it_and_everything_after(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 30)
    expected = _all(log)
    second = log.segments[1]
    log.close_after_crash(lose_unflushed=False)
    with open(second.log_path, "r+b") as f:
        f.seek(70)
        byte = f.read(1)
        f.seek(70)
        f.write(bytes([byte[0] ^ 0x55]))
    again = _log(tmp_path / "t-0", clock)  # no recovery point: validate everything
    survived = _all(again)
    assert survived == expected[:len(survived)]
    assert again.log_end_offset < second.next_offset
    assert all(s.base_offset <= second.base_offset for s in again.segments)


def test_a_missing_index_is_rebuilt_identically(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 30)
    log.close()
    first = log.segments[0]
    original = open(first.index_path, "rb").read()
    assert original
    os.remove(first.index_path)
    again = _log(tmp_path / "t-0", clock, recovery_point=30)
    assert open(first.index_path, "rb").read() == original
    assert _all(again)[0] == (0, b"value-0")


def test_a_corrupt_index_is_rebuilt(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 30)
    log.close()
    first = log.segments[0]
    original = open(first.index_path, "rb").read()
    with open(first.index_path, "ab") as f:
        f.write(b"\x00\x00\x00")  # not a whole entry
    again = _log(tmp_path / "t-0", clock, recovery_point=30)
    assert open(first.index_path, "rb").read() == original
    assert len(_all(again)) == 30


def test_a_power_loss_loses_what_was_not_flushed_and_nothing_else(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 5)
    log.flush()
    assert log.recovery_point == 5
    _fill(log, 3)
    log.close_after_crash(lose_unflushed=True)
    again = _log(tmp_path / "t-0", clock)
    assert again.log_end_offset == 5
    assert [v for _, v in _all(again)] == [b"value-%d" % i for i in range(5)]


def test_a_process_crash_keeps_written_but_unflushed_data(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 8)
    log.close_after_crash(lose_unflushed=False)
    assert _log(tmp_path / "t-0", clock).log_end_offset == 8


def test_the_recovery_point_tracks_flushes_and_rolls_separately_from_appends(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    log.append([(None, b"x")])
    assert log.recovery_point == 0 and log.log_end_offset == 1
    _fill(log, 20)  # rolls flush the segments they close
    assert log.recovery_point == log.active_segment.base_offset > 0
    log.flush()
    assert log.recovery_point == log.log_end_offset


def test_flush_messages_flushes_every_n_records(tmp_path, clock):
    log = Log(str(tmp_path / "t-0"), {"flush.messages": 3}, clock_ms=clock)
    for _ in range(7):
        log.append([(None, b"x")])
    assert log.recovery_point == 6


def test_stray_files_from_an_interrupted_delete_are_removed_on_open(tmp_path, clock):
    log = _log(tmp_path / "t-0", clock)
    _fill(log, 3)
    log.close()
    stray = tmp_path / "t-0" / "00000000000000000099.log.deleted"
    stray.write_bytes(b"junk")
    _log(tmp_path / "t-0", clock)
    assert not stray.exists()
