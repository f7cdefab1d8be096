"""The Jepsen-style checker: the safe setting survives random faults; unsafe ones are caught.

Each schedule is replayable from its seed: `python -m engine.jepsen --schedules 1 --first-seed N`.
A longer soak: `python -m engine.jepsen --schedules 5000`.
"""
from __future__ import annotations

from engine import jepsen

CI_SCHEDULES = 300


def test_acks_all_with_min_isr_2_never_loses_or_diverges_under_random_faults():
    failures = [v.describe() for v in (jepsen.run_schedule(seed) for seed in range(CI_SCHEDULES)) if not v.ok]
    assert not failures, "\n".join(failures)


def _first_failure(setting: jepsen.Setting, limit: int = 400) -> jepsen.Verdict:
    for seed in range(limit):
        verdict = jepsen.run_schedule(seed, setting)
        if not verdict.ok:
            return verdict
    raise AssertionError(f"no schedule out of {limit} broke {setting}: the checker may be blind")


def test_the_checker_finds_acknowledged_loss_with_acks_1():
    verdict = _first_failure(jepsen.Setting(acks=1))
    assert verdict.lost and verdict.settled


def test_the_checker_finds_acknowledged_loss_with_unclean_election():
    verdict = _first_failure(jepsen.Setting(unclean=True))
    assert verdict.lost


def test_the_checker_finds_loss_or_divergence_with_high_watermark_truncation():
    verdict = _first_failure(jepsen.Setting(truncation="high-watermark"))
    assert verdict.lost or verdict.divergent


def _state(replicas: dict, leader: int, hw: int, produced: list) -> dict:
    return {"partitions": [{"leader": leader, "high_watermark": hw, "replica_states": {
        str(r): {"alive": True, "records": [{"offset": i, "value": v} for i, v in enumerate(vals)]}
        for r, vals in replicas.items()}}], "produced": produced}


def test_a_record_acknowledged_at_an_offset_that_now_holds_another_is_lost():
    produced = [{"value": "a", "offset": 0, "acked": True, "acks": -1},
                {"value": "b", "offset": 1, "acked": True, "acks": -1}]
    verdict = jepsen.check(_state({1: ["a", "c"], 2: ["a", "c"]}, 1, 2, produced), jepsen.SAFE)
    assert verdict.lost == [{"value": "b", "acked_offset": 1, "found": "c"}] and not verdict.divergent


def test_replicas_holding_different_records_are_divergent():
    verdict = jepsen.check(_state({1: ["a", "b"], 2: ["a", "c"]}, 1, 1, []), jepsen.SAFE)
    assert verdict.divergent and not verdict.ok


def test_failed_and_acks_0_records_do_not_count():
    produced = [{"value": "x", "offset": -1, "acked": False, "acks": -1},
                {"value": "y", "offset": -1, "acked": True, "acks": 0}]
    assert jepsen.check(_state({1: ["a"]}, 1, 1, produced), jepsen.SAFE).ok


# KRaft mode: three dedicated controllers, and schedules that also crash them and cut the quorum.
KRAFT = jepsen.Setting(metadata="kraft")
KRAFT_CI_SCHEDULES = 40


def test_kraft_acks_all_with_min_isr_2_never_loses_diverges_or_splits_the_metadata_log():
    verdicts = [jepsen.run_schedule(seed, KRAFT) for seed in range(KRAFT_CI_SCHEDULES)]
    failures = [v.describe() for v in verdicts if not v.ok]
    assert not failures, "\n".join(failures)
    # the schedules did exercise the quorum: controllers crashed and links to them were cut
    operations = " ".join(op for v in verdicts for op in v.operations)
    assert "crash controller" in operations and "cut 10" in operations


def test_the_checker_finds_acknowledged_loss_with_acks_1_in_kraft():
    verdict = _first_failure(jepsen.Setting(acks=1, metadata="kraft"))
    assert verdict.lost and verdict.settled


def test_the_metadata_check_fails_on_logs_that_disagree(tmp_path):
    from engine.cluster import Cluster
    cluster = Cluster(3, str(tmp_path), seed=1, config=KRAFT.config())
    cluster.create_topic("t", partitions=1, replication_factor=3)
    logs = jepsen.committed_metadata(cluster)
    assert sorted(logs) == [101, 102, 103] and all(logs.values())
    assert jepsen.disagreement(logs) == {}
    # One voter with another value at a committed offset: the prefixes no longer agree.
    offset, _ = logs[102][-1]
    logs[102][-1] = (offset, b"\x01forged")
    assert set(jepsen.disagreement(logs)) == {101, 102, 103}
