"""The consumer-group side of the command-line tools (see engine/cli.py).

`kafka-console-consumer --group g` runs a real group member: it finds the coordinator, joins,
gets its partitions, reads from the committed offsets (or, with none, from the beginning with
--from-beginning, else from the end), commits what it printed and leaves the group. A second
run of the same command therefore prints only what is new, as with Kafka.
`kafka-consumer-groups --describe --group g` prints Kafka's table.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from engine import persistence
from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors
from engine.inspect.groups import describe_group, group_ids

if TYPE_CHECKING:
    from engine.clients.consumer_state import ConsumedRecord

IDLE_POLLS = 3


def consume_with_group(cluster: Cluster, args: argparse.Namespace) -> list[ConsumedRecord]:
    if args.topic not in cluster.topics:
        raise ClusterError(f"Topic {args.topic} does not exist", Errors.UNKNOWN_TOPIC_OR_PARTITION)
    consumer = cluster.consumer("console-consumer", {
        "group.id": args.group, "client.id": "console-consumer",
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
        "enable.auto.commit": "false"})
    consumer.subscribe([args.topic])
    records: list[ConsumedRecord] = []
    idle = 0
    deadline = cluster.now_ms + args.timeout_ms
    while idle < IDLE_POLLS and cluster.now_ms < deadline:
        batch = consumer.poll(timeout_ms=500)
        if args.max_messages and len(records) + len(batch) >= args.max_messages:
            batch = batch[:args.max_messages - len(records)]
            consumer.seek(_tp(batch[-1]), batch[-1].offset + 1) if batch else None
            records += batch
            break
        records += batch
        idle = idle + 1 if not batch and consumer.assignment() else 0
    if records:
        consumer.commit_sync()
    consumer.close()
    return records


def _tp(record):
    from engine.groups.assignors import TopicPartition
    return TopicPartition(record.topic, record.partition)


def cmd_consumer_groups(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.list == args.describe:
        print("Command must include exactly one action: --list or --describe", file=err)
        return 1
    if not persistence.exists(args.data_dir):
        print(f"Error: no lab cluster in {args.data_dir}", file=err)
        return 1
    cluster = persistence.open_cluster(args.data_dir)
    try:
        cluster.run_until_idle()
        if args.list:
            for group in group_ids(cluster):
                print(group, file=out)
            return 0
        if not args.group:
            print("Option [describe] takes one of these options: [group]", file=err)
            return 1
        described = describe_group(cluster, args.group)
        if described["state"] in ("Dead", "Unknown") and not described["committed"]:
            print(f"Error: Consumer group '{args.group}' does not exist.", file=err)
            return 1
        _print_describe(described, out)
        return 0
    finally:
        persistence.close(cluster)


def _print_describe(group: dict, out: TextIO) -> None:
    owners = {tp: m for m in group["members"] for tp in m["assignment"]}
    if not group["members"]:
        print(f"\nConsumer group '{group['group']}' has no active members.", file=out)
    rows = []
    for tp in sorted(set(group["committed"]) | set(owners), key=_sort_key):
        topic, _, p = tp.rpartition("-")
        committed = group["committed"].get(tp)
        lag = group["lag"].get(tp)
        end = None if lag is None or committed is None else committed + lag
        member = owners.get(tp)
        rows.append([group["group"], topic, p, _dash(committed), _dash(end), _dash(lag),
                     member["member_id"] if member else "-", "/127.0.0.1" if member else "-",
                     member["member"] if member else "-"])
    header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
              "CLIENT-ID"]
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print(file=out)
    for row in [header] + rows:
        print(" ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip(), file=out)


def _sort_key(tp: str) -> tuple[str, int]:
    topic, _, p = tp.rpartition("-")
    return topic, int(p)


def _dash(value) -> str:
    return "-" if value is None else str(value)
