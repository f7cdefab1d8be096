"""The study notes' command-line tools, against a lab cluster kept in a data dir.

    python -m engine.cli init --brokers 3 [--seed 7] [--truncation leader-epoch]
    python -m engine.cli kafka-topics --create --topic t --partitions 3 --replication-factor 2
    python -m engine.cli kafka-topics --list | --describe [--topic t] | --alter --topic t --partitions 6
    python -m engine.cli kafka-topics --delete --topic t
    python -m engine.cli kafka-reassign-partitions --execute | --verify --reassignment-json-file plan.json
    python -m engine.cli kafka-leader-election --election-type preferred --all-topic-partitions
    python -m engine.cli kafka-leader-election --election-type preferred --topic t --partition 0
    python -m engine.cli kafka-console-producer --topic t [--property parse.key=true --property key.separator=:]
    python -m engine.cli kafka-console-consumer --topic t --from-beginning [--group g] [--max-messages N]
    python -m engine.cli kafka-consumer-groups --list | --describe --group g
    python -m engine.cli GetOffsetShell --topic t --time -1|-2
    python -m engine.cli kafka-dump-log.sh --files <data-dir>/broker-1/t-0/00000000000000000000.log --print-data-log
    python -m engine.cli init --metadata kraft            # a KRaft cluster (the default: ZooKeeper mode)
    python -m engine.cli kafka-metadata-quorum describe --status | --replication

Each call opens the cluster from `--data-dir` (default ./lab-cluster, or $KAFKA_LAB_CLUSTER_DIR):
its brokers start on their data dirs and recover their logs, a controller is elected; the tool
does its work; the brokers shut down cleanly and the metadata is saved. The output is formatted
like Kafka's own tools, so the notes' examples read the same. `--bootstrap-server`,
`--broker-list` and `--zookeeper` are accepted and ignored: the data dir names the cluster.
The notes' `bin/kafka-run-class.sh kafka.tools.GetOffsetShell …` and `… kafka.tools.DumpLogSegments …`
spellings run the same tools. DumpLogSegments (engine.tools.dump_log) reads files only: it
never opens the cluster, so it also reads the files of a running lab session's data dir.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import TextIO

from engine import persistence
from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors, KafkaError

DEFAULT_DIR = "lab-cluster"
INTERNAL_TOPICS = ("__consumer_offsets",)


def _cluster_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", default=os.environ.get("KAFKA_LAB_CLUSTER_DIR", DEFAULT_DIR),
                        help="where the lab cluster lives (default ./lab-cluster or $KAFKA_LAB_CLUSTER_DIR)")
    for ignored in ("--bootstrap-server", "--broker-list", "--zookeeper"):
        parser.add_argument(ignored, help=argparse.SUPPRESS)


def _open(data_dir: str, err: TextIO) -> Cluster:
    if not persistence.exists(data_dir):
        print(f"(no lab cluster in {data_dir}: creating one with 3 brokers; "
              f"`python -m engine.cli init` chooses the shape)", file=err)
        cluster = persistence.create(data_dir, brokers=3)
    else:
        cluster = persistence.open_cluster(data_dir)
    cluster.run_until_idle()
    return cluster


# -- init -----------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    config = dict(_parse_properties(args.config or []))
    if args.metadata:
        config["metadata"] = args.metadata
    cluster = persistence.create(args.data_dir, brokers=args.brokers, seed=args.seed, config=config,
                                 truncation=args.truncation)
    mode = "KRaft" if cluster.kraft else "ZooKeeper mode"
    print(f"Created a lab cluster of {args.brokers} brokers in {cluster.data_dir} "
          f"(seed {args.seed}, {args.truncation} truncation, {mode}).", file=out)
    persistence.close(cluster)
    return 0


# -- kafka-topics ---------------------------------------------------------------------------
def cmd_topics(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    actions = [a for a in ("create", "list", "describe", "alter", "delete") if getattr(args, a)]
    if len(actions) != 1:
        print("Command must include exactly one action: --list, --describe, --create, --alter or --delete", file=err)
        return 1
    cluster = _open(args.data_dir, err)
    try:
        if args.create:
            if not args.topic:
                print("Missing required argument \"[topic]\"", file=err)
                return 1
            config = dict(_parse_properties(args.config or []))
            assignment = _parse_assignment(args.replica_assignment) if args.replica_assignment else None
            info = cluster.create_topic(args.topic, args.partitions or 1, args.replication_factor or 1,
                                        config=config, replica_assignment=assignment)
            if "." in args.topic or "_" in args.topic:
                print("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore "
                      "('_') could collide. To avoid issues it is best to use either, but not both.", file=out)
            print(f"Created topic {info['topic']}.", file=out)
        elif args.list:
            for topic in cluster.list_topics():
                if not (args.exclude_internal and topic in INTERNAL_TOPICS):
                    marked = cluster.deletion_status(topic).get("marked_for_deletion")
                    print(f"{topic} - marked for deletion" if marked else topic, file=out)
        elif args.describe:
            topics = [args.topic] if args.topic else [t for t in cluster.list_topics()
                                                      if not (args.exclude_internal and t in INTERNAL_TOPICS)]
            for topic in topics:
                _describe_topic(cluster, topic, out)
        elif args.alter:
            if not args.topic or not args.partitions:
                print("--alter needs --topic and --partitions", file=err)
                return 1
            cluster.add_partitions(args.topic, args.partitions)
        elif args.delete:
            if not args.topic:
                print("Missing required argument \"[topic]\"", file=err)
                return 1
            status = cluster.delete_topic(args.topic)
            print(f"Topic {args.topic} is marked for deletion.", file=out)
            if not status["deleted"]:
                print(f"Its deletion waits for broker(s) {', '.join(map(str, status['waiting_for_brokers']))} "
                      f"to come back.", file=out)
        cluster.run_until_idle()
        return 0
    except ClusterError as error:
        print(f"Error while executing topic command : {error}", file=err)
        return 1
    finally:
        persistence.close(cluster)


def _describe_topic(cluster: Cluster, topic: str, out: TextIO) -> None:
    info = cluster.topics[topic]
    described = cluster.describe_topic(topic)
    configs = ",".join(f"{k}={v}" for k, v in sorted(described["config"].items()))
    print(f"Topic: {topic}\tTopicId: {info.topic_id}\tPartitionCount: {info.partitions}\t"
          f"ReplicationFactor: {info.replication_factor}\tConfigs: {configs}", file=out)
    for p in described["partitions"]:
        leader = p["leader"] if p["leader"] >= 0 else "none"
        print(f"\tTopic: {topic}\tPartition: {p['partition']}\tLeader: {leader}\t"
              f"Replicas: {','.join(map(str, p['replicas']))}\tIsr: {','.join(map(str, p['isr']))}", file=out)


# -- kafka-reassign-partitions and kafka-leader-election ----------------------------------------
def cmd_reassign_partitions(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """ReassignPartitionsCommand's --execute and --verify with a JSON plan file (no --generate:
    write the plan by hand, {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]})."""
    if [args.execute, args.verify].count(True) != 1:
        print("Command must include exactly one action: --execute or --verify", file=err)
        return 1
    if not args.reassignment_json_file:
        print("Missing required argument \"--reassignment-json-file\"", file=err)
        return 1
    try:
        with open(args.reassignment_json_file, encoding="utf-8") as f:
            plan = f.read()
    except OSError as error:
        print(f"Error: cannot read {args.reassignment_json_file}: {error.strerror}", file=err)
        return 1
    cluster = _open(args.data_dir, err)
    try:
        if args.execute:
            started = cluster.reassign_partitions(plan)
            print("Current partition replica assignment\n", file=out)
            print(json.dumps(started["current"], separators=(",", ":")), file=out)
            print("\nSave this to use as the --reassignment-json-file option during rollback", file=out)
            print(f"Successfully started partition reassignments for {','.join(started['started'])}", file=out)
            cluster.run_until_idle()
        else:
            print("Status of partition reassignment:", file=out)
            for line in cluster.verify_reassignment(plan):
                print(line["message"], file=out)
        return 0
    except ClusterError as error:
        print(f"Error: {error}", file=err)
        return 1
    finally:
        persistence.close(cluster)


def cmd_leader_election(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """LeaderElectionCommand: --election-type preferred with --all-topic-partitions, or --topic and --partition."""
    if args.all_topic_partitions == bool(args.topic) or bool(args.topic) != (args.partition is not None):
        print("One and only one of the following options is required: --all-topic-partitions, or --topic with "
              "--partition", file=err)
        return 1
    cluster = _open(args.data_dir, err)
    try:
        partitions = None if args.all_topic_partitions else [(args.topic, args.partition)]
        results = cluster.elect_leaders(args.election_type.lower(), partitions)
        cluster.run_until_idle()
        done = [tp for tp, e in results.items() if e == Errors.NONE]
        noop = [tp for tp, e in results.items() if e == Errors.ELECTION_NOT_NEEDED]
        failed = {tp: e for tp, e in results.items() if tp not in done and tp not in noop}
        if done:
            print(f"Successfully completed leader election (PREFERRED) for partitions {', '.join(done)}", file=out)
        if noop:
            print(f"Valid replica already elected for partitions {', '.join(noop)}", file=out)
        for tp, error in failed.items():
            print(f"Error completing leader election (PREFERRED) for partition: {tp}: {error}", file=out)
        if failed:
            print(f"Error: {len(failed)} replica(s) could not be elected", file=err)
            return 1
        return 0
    except ClusterError as error:
        print(f"Error: {error}", file=err)
        return 1
    finally:
        persistence.close(cluster)


# -- kafka-console-producer -----------------------------------------------------------------
def cmd_console_producer(args: argparse.Namespace, inp: TextIO, out: TextIO, err: TextIO) -> int:
    properties = dict(_parse_properties(args.property or []))
    parse_key = properties.get("parse.key", "false").lower() == "true"
    separator = properties.get("key.separator", "\t")
    cluster = _open(args.data_dir, err)
    try:
        if args.topic not in cluster.topics:
            print(f"ERROR: topic {args.topic} does not exist (the lab does not auto-create topics)", file=err)
            return 1
        # The real console producer is a KafkaProducer: sticky partitioning for lines without a
        # key, batching, retries. So is this one.
        producer = cluster.producer("console-producer", {"acks": args.request_required_acks})
        sent = []
        for line in inp.read().splitlines():
            key, value = (line.split(separator, 1) if parse_key and separator in line else (None, line))
            sent.append(producer.send(args.topic, key, value))
        producer.flush()
        producer.close()
        cluster.run_until_idle()
        failed = [r for r in sent if not r.acked]
        for record in failed:
            print(f"ERROR when sending message to topic {args.topic} with key: {record.key!r}, value: "
                  f"{record.value!r}: {record.error}", file=err)
        return 1 if failed else 0
    finally:
        persistence.close(cluster)


# -- kafka-console-consumer (without a group: reads committed records from the leaders) ---------
def cmd_console_consumer(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    properties = dict(_parse_properties(args.property or []))
    print_key = properties.get("print.key", "false").lower() == "true"
    separator = properties.get("key.separator", "\t")
    cluster = _open(args.data_dir, err)
    try:
        if args.group:
            from engine.cli_groups import consume_with_group
            records = consume_with_group(cluster, args)
        else:
            records = _consume_without_group(cluster, args)
        for record in records[:args.max_messages] if args.max_messages else records:
            value = "null" if record.value is None else record.value.decode("utf-8", "replace")
            if print_key:
                key = "null" if record.key is None else record.key.decode("utf-8", "replace")
                print(f"{key}{separator}{value}", file=out)
            else:
                print(value, file=out)
        shown = min(len(records), args.max_messages) if args.max_messages else len(records)
        print(f"Processed a total of {shown} messages", file=err)
        return 0
    except ClusterError as error:
        print(f"ERROR: {error}", file=err)
        return 1
    finally:
        persistence.close(cluster)


def _consume_without_group(cluster: Cluster, args: argparse.Namespace) -> list:
    info = cluster.topics.get(args.topic)
    if info is None:
        raise ClusterError(f"Topic {args.topic} does not exist", Errors.UNKNOWN_TOPIC_OR_PARTITION)
    partitions = [args.partition] if args.partition is not None else range(info.partitions)
    records = []
    for p in partitions:
        leader = cluster.brokers[cluster.leader_of(args.topic, p)].partitions[(args.topic, p)]
        if args.offset is not None and args.partition is not None:
            start = leader.log.log_start_offset if args.offset == "earliest" else \
                leader.high_watermark if args.offset == "latest" else int(args.offset)
        else:
            start = leader.log.log_start_offset if args.from_beginning else leader.high_watermark
        records += [(r.timestamp, p, r) for r in cluster.read(args.topic, p, start, max_records=10**9)]
    # One consumer over several partitions sees them interleaved; order within a partition holds.
    return [r for _, _, r in sorted(records, key=lambda t: (t[0], t[1], t[2].offset))]


# -- GetOffsetShell -------------------------------------------------------------------------
def cmd_get_offsets(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    cluster = _open(args.data_dir, err)
    try:
        topics = [args.topic] if args.topic else cluster.list_topics()
        for topic in topics:
            if topic not in cluster.topics:
                print(f"Error: topic {topic} does not exist", file=err)
                return 1
            for p in range(cluster.topics[topic].partitions):
                leader_id = cluster.leader_of(topic, p)
                if leader_id < 0:
                    continue  # Kafka's tool skips partitions without a leader
                part = cluster.brokers[leader_id].partitions[(topic, p)]
                print(f"{topic}:{p}:{_offset_for_time(part, args.time)}", file=out)
        return 0
    finally:
        persistence.close(cluster)


def _offset_for_time(partition, time_arg: str) -> int:
    """What ListOffsets answers a consumer (read_uncommitted): -1/latest the HW, -2/earliest the
    log start, -3/max-timestamp the record with the largest timestamp, else a timestamp."""
    from engine.broker.list_offsets import offset_for
    from engine.groups.protocol import ListOffsetsPartition
    timestamp = TIME_NAMES.get(time_arg)
    if timestamp is None:
        try:
            timestamp = int(time_arg)
        except ValueError:
            raise ClusterError(f"--time must be -1/latest, -2/earliest, -3/max-timestamp or a timestamp in ms, "
                               f"not {time_arg!r}", Errors.INVALID_REQUEST) from None
    answer = offset_for(partition, ListOffsetsPartition(partition.topic, partition.partition, timestamp), -1)
    if answer.error != Errors.NONE:
        raise ClusterError(f"ListOffsets failed: {answer.error}", answer.error)
    return answer.offset


TIME_NAMES = {"latest": -1, "earliest": -2, "max-timestamp": -3}


# -- DumpLogSegments ------------------------------------------------------------------------
def cmd_dump_log(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from engine.tools import dump_log
    return dump_log.run(args, out, err, missing_hint=lambda path: _lab_path_hint(args.data_dir, path))


def _lab_path_hint(data_dir: str, path: str) -> str:
    """For a path from the notes (/tmp/kafka-logs/test-0/…): where the lab's brokers keep that file."""
    partition_dir, name = os.path.basename(os.path.dirname(path)), os.path.basename(path)
    if not os.path.isdir(data_dir) or not partition_dir:
        return ""
    found = sorted(os.path.join(data_dir, broker, partition_dir, name) for broker in os.listdir(data_dir)
                   if os.path.isfile(os.path.join(data_dir, broker, partition_dir, name)))
    if not found:
        return f" (the lab's brokers keep their logs in {data_dir}/broker-<id>/<topic>-<partition>/)"
    return " (in the lab: " + ", ".join(found) + ")"


# -- helpers --------------------------------------------------------------------------------
def _parse_properties(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        if "=" not in item:
            raise SystemExit(f"Invalid property {item!r}: expected key=value")
        key, value = item.split("=", 1)
        out.append((key.strip(), value.strip()))
    return out


def _parse_assignment(text: str) -> list[list[int]]:
    """kafka-topics' --replica-assignment: "1:2,2:3,3:1" — partitions by comma, replicas by colon."""
    if not re.fullmatch(r"\d+(:\d+)*(,\d+(:\d+)*)*", text):
        raise ClusterError(f"Invalid --replica-assignment {text!r} (expected e.g. 1:2,2:3)",
                           Errors.INVALID_REPLICA_ASSIGNMENT)
    return [[int(b) for b in part.split(":")] for part in text.split(",")]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m engine.cli", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="tool", required=True)

    init = sub.add_parser("init", help="create a lab cluster in the data dir")
    _cluster_args(init)
    init.add_argument("--brokers", type=int, default=3)
    init.add_argument("--seed", type=int, default=0)
    init.add_argument("--truncation", default="leader-epoch", choices=["leader-epoch", "high-watermark"])
    init.add_argument("--config", action="append", help="cluster config key=value (repeatable)")
    init.add_argument("--metadata", choices=["zookeeper", "kraft"], help="where the metadata lives (default zookeeper)")

    quorum = sub.add_parser("kafka-metadata-quorum", aliases=["kafka-metadata-quorum.sh"],
                            help="describe the KRaft metadata quorum")
    _cluster_args(quorum)
    quorum.add_argument("action", choices=["describe"])
    quorum.add_argument("--status", action="store_true")
    quorum.add_argument("--replication", action="store_true")

    topics = sub.add_parser("kafka-topics", aliases=["kafka-topics.sh"], help="create, list, describe topics")
    _cluster_args(topics)
    for flag in ("--create", "--list", "--describe", "--alter", "--delete", "--exclude-internal"):
        topics.add_argument(flag, action="store_true")
    topics.add_argument("--topic")
    topics.add_argument("--partitions", type=int)
    topics.add_argument("--replication-factor", type=int)
    topics.add_argument("--replica-assignment")
    topics.add_argument("--config", action="append", help="topic config key=value (repeatable)")

    reassign = sub.add_parser("kafka-reassign-partitions", aliases=["kafka-reassign-partitions.sh"],
                              help="move partitions' replicas with a JSON plan")
    _cluster_args(reassign)
    reassign.add_argument("--execute", action="store_true")
    reassign.add_argument("--verify", action="store_true")
    reassign.add_argument("--reassignment-json-file")

    election = sub.add_parser("kafka-leader-election", aliases=["kafka-leader-election.sh"],
                              help="move leadership back to the preferred replicas")
    _cluster_args(election)
    election.add_argument("--election-type", required=True, choices=["preferred", "PREFERRED"])
    election.add_argument("--all-topic-partitions", action="store_true")
    election.add_argument("--topic")
    election.add_argument("--partition", type=int)

    producer = sub.add_parser("kafka-console-producer", aliases=["kafka-console-producer.sh"],
                              help="send stdin lines as records")
    _cluster_args(producer)
    producer.add_argument("--topic", required=True)
    producer.add_argument("--property", action="append")
    producer.add_argument("--request-required-acks", default="-1")

    consumer = sub.add_parser("kafka-console-consumer", aliases=["kafka-console-consumer.sh"],
                              help="print a topic's committed records")
    _cluster_args(consumer)
    consumer.add_argument("--topic", required=True)
    consumer.add_argument("--from-beginning", action="store_true")
    consumer.add_argument("--group")
    consumer.add_argument("--partition", type=int)
    consumer.add_argument("--offset")
    consumer.add_argument("--max-messages", type=int)
    consumer.add_argument("--property", action="append")
    consumer.add_argument("--timeout-ms", type=int, default=10000)

    groups = sub.add_parser("kafka-consumer-groups", aliases=["kafka-consumer-groups.sh"],
                            help="list and describe consumer groups")
    _cluster_args(groups)
    groups.add_argument("--list", action="store_true")
    groups.add_argument("--describe", action="store_true")
    groups.add_argument("--group")

    offsets = sub.add_parser("GetOffsetShell", aliases=["kafka-get-offsets", "kafka-get-offsets.sh",
                                                         "kafka.tools.GetOffsetShell"],
                             help="a partition's earliest/latest offsets")
    _cluster_args(offsets)
    offsets.add_argument("--topic")
    offsets.add_argument("-topic", dest="topic", help=argparse.SUPPRESS)  # the notes spell it with one dash
    offsets.add_argument("--time", default="-1")

    from engine.tools import dump_log
    dump = sub.add_parser("kafka-dump-log", aliases=["kafka-dump-log.sh", "DumpLogSegments",
                                                     "kafka.tools.DumpLogSegments"],
                          help="print a segment's batches and records, or an index's entries")
    _cluster_args(dump)
    dump_log.add_arguments(dump)
    return parser


def main(argv: list[str] | None = None, *, inp: TextIO | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    inp, out, err = inp or sys.stdin, out or sys.stdout, err or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv:
        argv[0] = os.path.basename(argv[0])   # the notes write bin/kafka-run-class.sh
    if argv[:1] in (["kafka-run-class"], ["kafka-run-class.sh"]) and len(argv) > 1:
        argv = argv[1:]  # the notes' `kafka-run-class.sh kafka.tools.GetOffsetShell …`, `… DumpLogSegments …`
    args = build_parser().parse_args(argv)
    tool = args.tool.removesuffix(".sh")
    try:
        if tool == "init":
            return cmd_init(args, out, err)
        if tool == "kafka-topics":
            return cmd_topics(args, out, err)
        if tool == "kafka-console-producer":
            return cmd_console_producer(args, inp, out, err)
        if tool == "kafka-reassign-partitions":
            return cmd_reassign_partitions(args, out, err)
        if tool == "kafka-leader-election":
            return cmd_leader_election(args, out, err)
        if tool == "kafka-console-consumer":
            return cmd_console_consumer(args, out, err)
        if tool == "kafka-consumer-groups":
            from engine.cli_groups import cmd_consumer_groups
            return cmd_consumer_groups(args, out, err)
        if tool in ("kafka-dump-log", "DumpLogSegments", "kafka.tools.DumpLogSegments"):
            return cmd_dump_log(args, out, err)
        if tool == "kafka-metadata-quorum":
            from engine.cli_quorum import cmd_metadata_quorum
            cluster = _open(args.data_dir, err)
            try:
                return cmd_metadata_quorum(args, cluster, out, err)
            finally:
                persistence.close(cluster)
        return cmd_get_offsets(args, out, err)
    except KafkaError as error:   # ClusterError, and the console producer's ProducerError
        print(f"Error: {error}", file=err)
        return 1


if __name__ == "__main__":
    sys.exit(main())
