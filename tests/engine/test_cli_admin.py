"""kafka-topics --delete, kafka-reassign-partitions and kafka-leader-election against a lab cluster in a data dir."""
from __future__ import annotations

import io
import json
import os

import pytest

from engine import cli


def run(data_dir, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([argv[0], "--data-dir", str(data_dir), *argv[1:]], inp=io.StringIO(""), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def lab(tmp_path):
    data_dir = tmp_path / "lab-cluster"
    assert run(data_dir, "init", "--brokers", "4", "--seed", "3")[0] == 0
    assert run(data_dir, "kafka-topics", "--create", "--topic", "t", "--partitions", "2",
               "--replica-assignment", "1:2:3,2:3:1")[0] == 0
    return data_dir


def write_plan(tmp_path, plan) -> str:
    path = tmp_path / "plan.json"
    path.write_text(plan if isinstance(plan, str) else json.dumps(plan))
    return str(path)


def test_kafka_topics_delete_removes_the_topic(lab):
    code, out, _ = run(lab, "kafka-topics", "--delete", "--topic", "t")
    assert code == 0 and out == "Topic t is marked for deletion.\n"
    assert run(lab, "kafka-topics", "--list")[1] == ""
    assert not any(os.path.isdir(lab / f"broker-{b}" / "t-0") for b in range(1, 5))
    assert any(n.startswith("t-0.") and n.endswith("-delete") for n in os.listdir(lab / "broker-1"))


def test_kafka_topics_delete_refuses_an_internal_topic(lab):
    from engine import persistence
    cluster = persistence.open_cluster(str(lab))
    cluster.ensure_offsets_topic()
    cluster.run_until_idle()
    persistence.close(cluster)
    code, _, err = run(lab, "kafka-topics", "--delete", "--topic", "__consumer_offsets")
    assert code == 1 and "__consumer_offsets is a kafka internal topic" in err
    assert "__consumer_offsets" in run(lab, "kafka-topics", "--list")[1]


def test_reassign_execute_then_verify(lab, tmp_path):
    plan = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [4, 2, 3]}]}
    code, out, err = run(lab, "kafka-reassign-partitions", "--execute", "--reassignment-json-file",
                         write_plan(tmp_path, plan))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert json.loads(lines[2]) == {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2, 3], "log_dirs": ["any", "any", "any"]}]}
    assert lines[-1] == "Successfully started partition reassignments for t-0"
    code, out, _ = run(lab, "kafka-reassign-partitions", "--verify", "--reassignment-json-file",
                       write_plan(tmp_path, plan))
    assert code == 0 and out == "Status of partition reassignment:\nReassignment of partition t-0 is completed.\n"
    assert "\tReplicas: 4,2,3\t" in run(lab, "kafka-topics", "--describe", "--topic", "t")[1]


def test_reassign_a_bad_plan_names_the_field(lab, tmp_path):
    plan = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}
    code, _, err = run(lab, "kafka-reassign-partitions", "--execute", "--reassignment-json-file",
                       write_plan(tmp_path, plan))
    assert code == 1 and "partitions[0].replicas" in err
    code, _, err = run(lab, "kafka-reassign-partitions", "--execute", "--reassignment-json-file",
                       write_plan(tmp_path, "{oops"))
    assert code == 1 and "not valid JSON" in err
    assert "\tReplicas: 1,2,3\t" in run(lab, "kafka-topics", "--describe", "--topic", "t")[1]


def test_leader_election_preferred(lab):
    code, out, _ = run(lab, "kafka-leader-election", "--election-type", "preferred", "--topic", "t",
                       "--partition", "0")
    assert code == 0 and out == "Valid replica already elected for partitions t-0\n"
    code, _, err = run(lab, "kafka-leader-election", "--election-type", "preferred", "--topic", "t")
    assert code == 1 and "--partition" in err
    code, out, _ = run(lab, "kafka-leader-election", "--election-type", "preferred", "--all-topic-partitions")
    assert code == 0 and out == ""
