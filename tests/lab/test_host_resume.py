"""After a server restart, a lab session is rebuilt from its command log in the database."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from pytest_django.fixtures import Settings

from lab.host import HostError, Shape
from lab.models import LabCommand, LabSession
from lab.registry import build_host, save_position, session_dir

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def lab_data_dir(settings: Settings, tmp_path: Path) -> Path:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    return settings.KAFKA_LAB_DATA_DIR


def digest(run_dir: str) -> dict[str, str]:
    out = {}
    for folder, _, files in os.walk(run_dir):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                out[os.path.relpath(os.path.join(folder, name), run_dir)] = hashlib.sha256(f.read()).hexdigest()
    return out


def test_a_restarted_server_rebuilds_the_same_cluster_from_the_log() -> None:
    session = LabSession.objects.create(owner="visitor", name="s", brokers=3, seed=11, truncation="high-watermark")
    host, info = build_host(session.id)
    host.apply("create_topic", {"topic": "t", "partitions": 3, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "key": "k", "values": ["a", "b", "c"], "acks": "all"})
    host.step_until("high_watermark_advanced")
    host.apply("pause_fetcher", {"broker": 3})
    with pytest.raises(HostError):
        host.apply("restart_broker", {"broker": 1})  # a failed command is logged too
    host.play(speed=3)
    host.tick(5000.0)
    save_position(session.id, *host.position())
    state, position, files = host.snapshot(), host.position(), digest(host.run_dir)
    host.close()                                       # the process ends; the run dir goes with it

    resumed, _ = build_host(session.id)

    assert info["seed"] == 11 and info["truncation"] == "high-watermark"
    assert resumed.snapshot() == state
    assert resumed.position() == position
    assert digest(resumed.run_dir) == files
    assert sorted(os.listdir(session_dir(session.id))) == ["checkpoints", "history", "run-1"]
    assert list(LabCommand.objects.values_list("command", "error")) == [
        ("create_topic", ""), ("produce", ""), ("pause_fetcher", ""),
        ("restart_broker", "Broker 1 is already running")]


def test_a_resumed_session_keeps_the_future_of_a_rewind() -> None:
    session = LabSession.objects.create(owner="visitor", name="s", brokers=3, seed=2)
    host, _ = build_host(session.id)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    for _ in range(20):
        host.step()
    host.apply("kill_broker", {"broker": 2})
    host.rewind(15)
    save_position(session.id, *host.position())
    state = host.snapshot()
    host.close()

    resumed, _ = build_host(session.id)

    assert resumed.snapshot() == state
    assert [m["command"] for m in resumed.timeline()["marks"]][-1] == {"kill_broker": {"broker": 2}}
    resumed.apply("produce", {"topic": "t", "value": "v"}, discard_future=True)  # cuts the future
    assert list(LabCommand.objects.values_list("command", flat=True)) == ["create_topic", "produce"]


def test_a_reset_keeps_the_old_log_as_history() -> None:
    session = LabSession.objects.create(owner="visitor", name="s", brokers=3, seed=2)
    host, _ = build_host(session.id)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})

    host.reset(Shape(2, 5, "leader-epoch", {}))
    host.apply("create_topic", {"topic": "u", "partitions": 1, "replication_factor": 2})
    host.close()
    session.refresh_from_db()
    resumed, info = build_host(session.id)

    assert (session.generation, session.brokers, session.seed) == (2, 2, 5)
    assert session.history == [{"generation": 1, "brokers": 3, "seed": 2, "truncation": "leader-epoch", "config": {}}]
    assert list(LabCommand.objects.values_list("generation", "command", "args__topic")) == [
        (1, "create_topic", "t"), (2, "create_topic", "u")]
    assert [t["topic"] for t in resumed.snapshot()["topics"]] == ["u"]
    assert info["generation"] == 2
