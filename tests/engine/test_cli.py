"""The notes' command-line tools against a lab cluster kept in a data dir between calls."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

from engine import cli


def run(data_dir, *argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([argv[0], "--data-dir", str(data_dir), *argv[1:]], inp=io.StringIO(stdin), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def lab(tmp_path):
    data_dir = tmp_path / "lab-cluster"
    assert run(data_dir, "init", "--brokers", "3", "--seed", "4")[0] == 0
    return data_dir


def test_topics_are_created_listed_and_described_like_kafka_topics(lab):
    code, out, _ = run(lab, "kafka-topics", "--bootstrap-server", "kafka:9092", "--create", "--topic", "mytest",
                       "--partitions", "3", "--replication-factor", "2")
    assert code == 0 and out == "Created topic mytest.\n"
    assert run(lab, "kafka-topics", "--list")[1] == "mytest\n"
    lines = run(lab, "kafka-topics", "--describe", "--topic", "mytest")[1].splitlines()
    assert lines[0].startswith("Topic: mytest\tTopicId: ") and "\tPartitionCount: 3\tReplicationFactor: 2\t" in lines[0]
    assert len(lines) == 4
    for p, line in enumerate(lines[1:]):
        fields = dict(f.split(": ") for f in line.strip().split("\t"))
        assert fields["Topic"] == "mytest" and fields["Partition"] == str(p)
        assert fields["Leader"] == fields["Replicas"].split(",")[0] and fields["Isr"] == fields["Replicas"]


def test_the_cluster_survives_between_commands_records_included(lab):
    run(lab, "kafka-topics", "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "3")
    assert run(lab, "kafka-console-producer", "--topic", "t", stdin="one\ntwo\n")[0] == 0
    assert run(lab, "kafka-console-producer", "--topic", "t", stdin="three\n")[0] == 0
    code, out, err = run(lab, "kafka-console-consumer", "--topic", "t", "--from-beginning")
    assert out.splitlines() == ["one", "two", "three"] and "Processed a total of 3 messages" in err
    assert run(lab, "GetOffsetShell", "--topic", "t", "--time", "-1")[1] == "t:0:3\n"
    assert run(lab, "GetOffsetShell", "--topic", "t", "--time", "-2")[1] == "t:0:0\n"


def test_keys_are_parsed_and_printed_with_the_separator(lab):
    run(lab, "kafka-topics", "--create", "--topic", "t")
    run(lab, "kafka-console-producer", "--topic", "t", "--property", "parse.key=true",
        "--property", "key.separator=:", stdin="user1:clicked\nuser2:left\n")
    out = run(lab, "kafka-console-consumer", "--topic", "t", "--from-beginning", "--property", "print.key=true",
              "--property", "key.separator=:")[1]
    assert out.splitlines() == ["user1:clicked", "user2:left"]


def test_without_from_beginning_a_consumer_starts_at_the_end(lab):
    run(lab, "kafka-topics", "--create", "--topic", "t")
    run(lab, "kafka-console-producer", "--topic", "t", stdin="old\n")
    assert run(lab, "kafka-console-consumer", "--topic", "t")[1] == ""


def test_errors_are_reported_like_kafka_and_change_nothing(lab):
    run(lab, "kafka-topics", "--create", "--topic", "t")
    code, _, err = run(lab, "kafka-topics", "--create", "--topic", "t")
    assert code == 1 and "Topic 't' already exists." in err
    code, _, err = run(lab, "kafka-topics", "--create", "--topic", "big", "--replication-factor", "4")
    assert code == 1 and "larger than available brokers: 3" in err
    assert run(lab, "kafka-topics", "--list")[1] == "t\n"


def test_partitions_can_be_added_with_alter(lab):
    run(lab, "kafka-topics", "--create", "--topic", "t", "--partitions", "2", "--replication-factor", "2")
    assert run(lab, "kafka-topics", "--alter", "--topic", "t", "--partitions", "4")[0] == 0
    assert "PartitionCount: 4" in run(lab, "kafka-topics", "--describe", "--topic", "t")[1]


def test_the_notes_kafka_run_class_spelling_works(tmp_path):
    done = subprocess.run([sys.executable, "-m", "engine.cli", "kafka-run-class.sh", "kafka.tools.GetOffsetShell",
                           "--data-dir", str(tmp_path / "c"), "--broker-list", "kafka:9092", "--time", "-1"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "creating one with 3 brokers" in done.stderr


def test_a_console_consumer_in_a_group_commits_and_resumes_where_it_stopped(lab):
    run(lab, "kafka-topics", "--create", "--topic", "t", "--partitions", "2", "--replication-factor", "2")
    run(lab, "kafka-console-producer", "--topic", "t", "--property", "parse.key=true", "--property",
        "key.separator=:", stdin="a:1\nb:2\nc:3\nd:4\n")
    code, out, err = run(lab, "kafka-console-consumer", "--topic", "t", "--group", "g", "--from-beginning")
    assert code == 0 and sorted(out.splitlines()) == ["1", "2", "3", "4"]
    run(lab, "kafka-console-producer", "--topic", "t", stdin="5\n")
    code, out, err = run(lab, "kafka-console-consumer", "--topic", "t", "--group", "g", "--from-beginning")
    assert out.splitlines() == ["5"]  # only what is new: the group's offsets were committed
    assert run(lab, "kafka-consumer-groups", "--list")[1].splitlines() == ["g"]
    lines = run(lab, "kafka-consumer-groups", "--describe", "--group", "g")[1].splitlines()
    assert "Consumer group 'g' has no active members." in lines
    header = next(line for line in lines if line.startswith("GROUP"))
    assert header.split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                              "CONSUMER-ID", "HOST", "CLIENT-ID"]
    rows = [line.split() for line in lines[lines.index(header) + 1:]]
    assert sum(int(r[3]) for r in rows) == 5 and all(r[5] == "0" for r in rows)
    assert run(lab, "kafka-consumer-groups", "--describe", "--group", "nope")[0] == 1


def test_get_offset_shell_answers_by_time_as_list_offsets_does(lab):
    run(lab, "kafka-topics", "--create", "--topic", "t")
    run(lab, "kafka-console-producer", "--topic", "t", stdin="a\nb\n")
    assert run(lab, "GetOffsetShell", "--topic", "t", "--time", "earliest")[1] == "t:0:0\n"
    assert run(lab, "GetOffsetShell", "--topic", "t", "--time", "-3")[1] in ("t:0:0\n", "t:0:1\n")
    assert run(lab, "GetOffsetShell", "--topic", "t", "--time", "0")[1] == "t:0:0\n"
    code, _, err = run(lab, "GetOffsetShell", "--topic", "t", "--time", "soon")
    assert code == 1 and "--time must be" in err
