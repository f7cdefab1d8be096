"""Issue 15: the time machine works for a KRaft session. Rewinds — from engine checkpoints or by a
replay from the start — land on the same state, the same bytes on disk (the controllers'
`__cluster_metadata` logs and quorum-state files too) and the same events afterwards; the model
after a rewind equals a fresh snapshot, metadata section included; and the lab's KRaft fault
commands (kill/restart a dedicated controller node, a link cut to one) work, logged and replayed
like any other."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from lab.host import HostError, SessionHost, Shape
from lab.model import ModelTracker
from tests.lab.test_host_time import digest, steps
from tests.lab.test_model import apply_patch, normalised

KRAFT = Shape(3, 5, "leader-epoch", {"metadata": "kraft", "controller.mode": "dedicated"})


def controller_story(host: SessionHost) -> list[str]:
    """A topic and records; the active controller killed; a link between a broker and a controller
    cut and healed; the dead controller node restarted; more records."""
    texts: list[str] = []

    def run(n: int) -> None:
        for _ in range(n):
            texts.extend(host.step().texts)
    texts += host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3}).texts
    texts += host.apply("produce", {"topic": "t", "values": ["a", "b", "c"], "acks": "all"}).texts
    run(200)
    texts += host.apply("kill_controller", {}).texts
    run(600)
    texts += host.apply("partition_network", {"a": 1, "b": "controller-102"}).texts
    run(300)
    texts += host.apply("heal_network", {"a": 1, "b": "controller-102"}).texts
    down = next(n for n, s in host.cluster.controller_nodes.items() if not s.alive)
    texts += host.apply("restart_controller_node", {"node": down}).texts
    run(400)
    texts += host.apply("produce", {"topic": "t", "values": ["d", "e"], "acks": "all"}).texts
    run(400)
    return texts


def fresh_equals_page(host: SessionHost) -> None:
    page = host.model(baseline=True)
    for _ in range(60):
        patch = host.step().patch
        if patch:
            apply_patch(page, patch)
        page.update(host.tracker.position())
    fresh = normalised(ModelTracker(host.cluster).full())
    mine = normalised(page)
    for key in fresh:
        assert mine[key] == fresh[key], f"at step {host.steps}: the page's {key} differs from a fresh snapshot"


def test_a_kraft_session_rewinds_from_checkpoints_as_a_replay_from_the_start_does(tmp_path: Path) -> None:
    with_checkpoints = SessionHost(str(tmp_path / "fast"), KRAFT)
    story = controller_story(with_checkpoints)
    assert with_checkpoints.checkpoints.taken >= 1
    from_start = SessionHost(str(tmp_path / "slow"), KRAFT, checkpoints=False)
    assert controller_story(from_start) == story
    rng = random.Random(15)
    try:
        for target in sorted(rng.sample(range(30, with_checkpoints.steps - 80), 5), reverse=True):
            with_checkpoints.rewind(target)
            from_start.rewind(target)
            assert with_checkpoints.snapshot() == from_start.snapshot()
            assert with_checkpoints.model() == from_start.model(), f"the models differ at step {target}"
            assert digest(with_checkpoints.run_dir) == digest(from_start.run_dir)
            assert any("__cluster_metadata-0" in name for name in digest(with_checkpoints.run_dir))
            assert steps(with_checkpoints, 40) == steps(from_start, 40), f"events after step {target} differ"
    finally:
        with_checkpoints.close()
        from_start.close()


def test_the_model_after_a_rewind_equals_a_fresh_snapshot(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path / "h"), KRAFT)
    try:
        controller_story(host)
        end = host.steps
        before_kill = next(r.at_step for r in host.log if r.command == "kill_controller")
        host.rewind(before_kill + 100)
        model = host.model()
        assert model["metadata"]["mode"] == "kraft"
        assert model == ModelTracker(host.cluster).full() | {"truncations": model["truncations"]}
        fresh_equals_page(host)
        host.rewind(end)
        fresh_equals_page(host)
    finally:
        host.close()


def test_controller_node_commands_are_checked_at_the_edge(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path / "h"), KRAFT)
    try:
        with pytest.raises(HostError, match="kill_controller_node.node"):
            host.apply("kill_controller_node", {"node": 7})
        with pytest.raises(HostError, match="kill_controller_node.node is required"):
            host.apply("kill_controller_node", {})
        assert not host.log   # nothing applied, nothing logged
        host.apply("kill_controller_node", {"node": 101})
        assert not host.cluster.controller_nodes[101].alive
        with pytest.raises(HostError, match="Controller 101 is already down"):
            host.apply("kill_controller_node", {"node": 101})
        host.apply("restart_controller_node", {"node": 101})
        assert host.cluster.controller_nodes[101].alive
    finally:
        host.close()

    combined = SessionHost(str(tmp_path / "c"), Shape(3, 5, config={"metadata": "kraft"}))
    try:
        with pytest.raises(HostError, match="There is no controller node 101"):
            combined.apply("kill_controller_node", {"node": 101})
    finally:
        combined.close()
