"""A visitor opens a replica in the Segments panel and reads its broker's checkpoint files
(replication-offset-checkpoint, recovery-point-offset-checkpoint, log-start-offset-checkpoint)
as the broker's disk holds them, the replica's own line picked out, with when they were written."""
from __future__ import annotations

import html
import os
import re

import pytest
from django.test import Client

from tests.lab.test_explore_views import LabRun, lab_run  # noqa: F401  (the fixture: a real engine session)

pytestmark = pytest.mark.django_db

FILES = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint")


def _panel(client: Client, run: LabRun, broker: int, topic: str = "t", partition: int = 0) -> str:
    response = client.get(run.url("segments/"), {"replica": f"{broker}:{topic}:{partition}"})
    assert response.status_code == 200
    return response.content.decode()


def _file(page: str, name: str) -> dict:
    """One checkpoint file of the panel: its attributes, its lines and which of them is marked."""
    block = re.search(rf'<details class="checkpoint-file" data-checkpoint-file="{name}"([^>]*)>(.*?)</details>',
                      page, re.S)
    assert block, f"{name} is not in the panel"
    attributes = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', block.group(1)))
    lines = [(kind, html.unescape(text), bool(selected)) for kind, selected, text in re.findall(
        r'<li class="dump-line[^"]*" data-line-kind="(\w+)"( data-selected="true")?><span class="line-text">(.*?)</span>',
        block.group(2))]
    return {"attributes": attributes, "lines": lines, "html": block.group(2)}


def _on_disk(run: LabRun, broker: int, name: str) -> list[str]:
    with open(os.path.join(run.host.cluster.brokers[broker].data_dir, name), "rb") as f:
        return f.read().decode("utf-8").splitlines()


def test_it_shows_each_checkpoint_file_line_by_line_as_on_disk_with_the_replicas_line_marked(
        client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=2, replication_factor=3)
    lab_run.apply("produce", topic="t", key="k", values=[f"m{i}" for i in range(10)], acks="all", partition=0)
    lab_run.apply("produce", topic="t", key="k", values=["other"], acks="all", partition=1)
    lab_run.run(61_000)          # past one HW checkpoint (5 s) and one recovery-point checkpoint (60 s)

    page = _panel(client, lab_run, 2)

    broker = lab_run.host.cluster.brokers[2]
    for name in FILES:
        shown = _file(page, name)
        on_disk = _on_disk(lab_run, 2, name)
        assert [text for _, text, _ in shown["lines"]] == on_disk
        assert [kind for kind, _, _ in shown["lines"]] == ["version", "count"] + ["entry"] * (len(on_disk) - 2)
        assert on_disk[:2] == ["0", str(len(on_disk) - 2)]
        assert [text for _, text, selected in shown["lines"] if selected] == \
            [line for line in on_disk[2:] if line.split()[:2] == ["t", "0"]]
        assert shown["attributes"]["written-ms"] == str(broker.checkpoint_written_ms[name])
    hw = _file(page, "replication-offset-checkpoint")
    assert [text for _, text, selected in hw["lines"] if selected] == ["t 0 10"]
    assert hw["attributes"]["selected-offset"] == "10"
    assert "t 1 1" in [text for _, text, _ in hw["lines"]]
    written_s = broker.checkpoint_written_ms["replication-offset-checkpoint"] / 1000
    assert f"written at t = {written_s:.3f} s" in hw["html"]
    assert "replica.high.watermark.checkpoint.interval.ms" in hw["html"] and "every 5 s" in hw["html"]


def test_a_file_the_broker_has_not_written_yet_says_so(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=1, replication_factor=3)
    lab_run.run(1000)            # the first HW checkpoint is 5 s after the broker started

    page = _panel(client, lab_run, 1)

    recovery = _file(page, "recovery-point-offset-checkpoint")
    assert recovery["attributes"]["exists"] == "false" and recovery["lines"] == []
    assert "not written yet" in recovery["html"]
    assert not os.path.exists(os.path.join(lab_run.host.cluster.brokers[1].data_dir, "recovery-point-offset-checkpoint"))


def test_a_down_brokers_files_are_read_from_its_disk_with_the_last_write_time(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=1, replication_factor=3)
    lab_run.apply("produce", topic="t", key="k", values=["a", "b", "c"], acks="all")
    lab_run.run(6000)
    follower = next(b for b in (1, 2, 3) if b != lab_run.host.cluster.leader_of("t", 0))
    written = lab_run.host.cluster.brokers[follower].checkpoint_written_ms["replication-offset-checkpoint"]
    lab_run.apply("kill_broker", broker=follower)
    lab_run.run(7000)

    page = _panel(client, lab_run, follower)

    hw = _file(page, "replication-offset-checkpoint")
    assert [text for _, text, _ in hw["lines"]] == _on_disk(lab_run, follower, "replication-offset-checkpoint")
    assert [text for _, text, selected in hw["lines"] if selected] == ["t 0 3"]
    assert hw["attributes"]["written-ms"] == str(written)
    ago = (lab_run.host.cluster.now_ms - written) / 1000
    assert f"{ago:.3f} s ago" in hw["html"]


def test_a_file_the_broker_could_not_read_shows_its_lines_and_why(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=1, replication_factor=3)
    lab_run.run(6000)
    path = os.path.join(lab_run.host.cluster.brokers[3].data_dir, "replication-offset-checkpoint")
    with open(path, "w", encoding="utf-8") as f:
        f.write("0\n2\nt 0 0\n")               # says two entries, holds one

    page = _panel(client, lab_run, 3)

    hw = _file(page, "replication-offset-checkpoint")
    assert [text for _, text, _ in hw["lines"]] == ["0", "2", "t 0 0"]
    assert "The broker would not read this file" in hw["html"] and "says 2 entries, holds 1" in hw["html"]
