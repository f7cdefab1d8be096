"""What `kafka-consumer-groups --describe` shows, read from the coordinators' memory, plus what the
lab's consumers received and processed — in the scenario JSON shape:

    "groups": [{"group": "g", "coordinator": 2, "coordinator_partition": 12, "generation": 3,
                "state": "Stable", "protocol": "range",
                "members": [{"member": "c1", "member_id": "c1-…", "assignment": ["t-0", "t-1"]}],
                "committed": {"t-0": 5, "t-1": 3}, "lag": {"t-0": 0, "t-1": 2}}],
    "consumed": {"c1": [{"topic": "t", "partition": 0, "offset": 4, "key": "k", "value": "m5"}]}

Lag is the partition's LOG-END-OFFSET minus the committed offset, where — as in
kafka-consumer-groups, which asks ListOffsets for "latest" with read_uncommitted — the
log end offset is the leader's high watermark: records above it cannot be consumed yet, so
they are not lag. Partitions assigned but never committed show a lag of None ("-" in Kafka's tool).
A group whose coordinator is down (or still being elected) shows state "Unknown".

While a rebalance runs (PreparingRebalance, CompletingRebalance) the group also carries
`rebalance`: what the coordinator is waiting for, and until when —

    "rebalance": {"phase": "join", "since_ms": 15025, "deadline_ms": 315025, "timeout_ms": 300000,
                  "initial": false, "joined": ["c2"], "awaited": ["c1"], "new": ["c2"],
                  "pending_member_ids": 0, "leader": "c1", "sync_awaited": []}

`joined`: members whose JoinGroup waits at the coordinator; `awaited`: members that have not
sent it yet (a consumer rejoins only inside poll()); `new`: members joining for the first time
(the others are rejoining); the join phase ends when nobody is awaited,
or at `deadline_ms` (the rebalance timeout: the members' largest max.poll.interval.ms; for a new
group, group.initial.rebalance.delay.ms), removing who is still awaited. In the sync phase,
`sync_awaited` are the members that have not sent SyncGroup yet (the leader's carries everyone's
assignment).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.groups import group as g
from engine.groups.consumer_protocol import decode_assignment
from engine.groups.coordinator import GroupCoordinator
from engine.groups.coordinator_partition import coordinator_partition
from engine.groups.offsets_topic import OFFSETS_TOPIC

if TYPE_CHECKING:
    from engine.cluster import Cluster


def coordinator_of(cluster: Cluster, group: str):
    """(broker id or -1, partition or -1, the live coordinator holding the group or None)."""
    info = cluster.topics.get(OFFSETS_TOPIC)
    if info is None:
        return -1, -1, None
    p = coordinator_partition(group, info.partitions)
    leader = cluster.partition_state(OFFSETS_TOPIC, p)["leader"]
    broker = cluster.brokers.get(leader)
    if broker is None or not broker.alive:
        return leader, p, None
    coordinator = broker.groups
    return leader, p, coordinator if p in coordinator.loaded else None


def member_names(cluster: Cluster) -> dict[str, str]:
    return {c.member_id: name for name, c in cluster.consumers.items() if getattr(c, "member_id", "")}


def _high_watermark(cluster: Cluster, topic: str, partition: int) -> int | None:
    if topic not in cluster.topics or partition >= cluster.topics[topic].partitions:
        return None
    leader = cluster.leader_of(topic, partition)
    part = cluster.brokers[leader].partitions.get((topic, partition)) if leader >= 0 else None
    return part.high_watermark if part is not None else None


def describe_group(cluster: Cluster, group: str) -> dict:
    broker, partition, coordinator = coordinator_of(cluster, group)
    out = {"group": group, "coordinator": broker, "coordinator_partition": partition, "generation": -1,
           "state": "Unknown" if coordinator is None else "Dead", "protocol": None, "members": [],
           "committed": {}, "lag": {}}
    if coordinator is None:
        return out
    state = coordinator.groups.get(group)
    names = member_names(cluster)
    assigned: list[str] = []
    if state is not None:
        out.update(generation=state.generation, state=state.state, protocol=state.protocol_name)
        for m in sorted(state.members.values(), key=lambda m: (names.get(m.member_id, m.client_id), m.member_id)):
            partitions = [str(tp) for tp in decode_assignment(m.assignment)]
            assigned.extend(partitions)
            out["members"].append({"member": names.get(m.member_id, m.client_id), "member_id": m.member_id,
                                   "assignment": partitions})
        rebalance = _rebalance(coordinator, state, names)
        if rebalance is not None:
            out["rebalance"] = rebalance
    committed = coordinator.committed(group)
    out["committed"] = {f"{t}-{p}": o.offset for (t, p), o in sorted(committed.items())}
    out["lag"] = consumer_lag(cluster, group, committed={k: o.offset for k, o in committed.items()},
                              assigned=assigned)
    return out


def _rebalance(coordinator: GroupCoordinator, state: g.ClassicGroup, names: dict[str, str]) -> dict | None:
    """What a running rebalance waits for (see the module docstring); None outside one."""
    if state.state not in (g.PREPARING_REBALANCE, g.COMPLETING_REBALANCE):
        return None
    members = state.members_in_order()
    name = lambda m: names.get(m.member_id, m.client_id)   # noqa: E731
    joining = state.state == g.PREPARING_REBALANCE
    return {
        "phase": "join" if joining else "sync",
        "since_ms": state.state_timestamp,
        "deadline_ms": coordinator.rebalance_deadline_ms(state.group_id),
        "timeout_ms": state.rebalance_timeout_ms(),
        "initial": joining and state.previous_state == g.EMPTY,
        "joined": [name(m) for m in members if joining and m.awaiting_join is not None],
        "awaited": [name(m) for m in members if joining and m.awaiting_join is None],
        "new": [name(m) for m in members if joining and m.is_new],
        "pending_member_ids": len(state.pending_join_members) if joining else 0,
        "leader": name(state.members[state.leader_id]) if state.leader_id in state.members else None,
        "sync_awaited": [] if joining else [name(m) for m in members if m.member_id in state.pending_sync_members],
    }


def consumer_lag(cluster: Cluster, group: str, *, committed: dict[tuple[str, int], int] | None = None,
                 assigned: list[str] | None = None) -> dict[str, int | None]:
    """Per partition: high watermark − committed offset (None where nothing was committed)."""
    if committed is None:
        _, _, coordinator = coordinator_of(cluster, group)
        committed = {k: o.offset for k, o in coordinator.committed(group).items()} if coordinator else {}
    keys = set(committed)
    for name in assigned or []:
        topic, _, number = name.rpartition("-")
        keys.add((topic, int(number)))
    lag: dict[str, int | None] = {}
    for topic, p in sorted(keys):
        hw = _high_watermark(cluster, topic, p)
        offset = committed.get((topic, p))
        lag[f"{topic}-{p}"] = None if hw is None or offset is None else max(0, hw - offset)
    return lag


def group_ids(cluster: Cluster) -> list[str]:
    """Groups the cluster's consumers use or a live coordinator holds."""
    ids = {c.group_id for c in cluster.consumers.values() if c.group_id}
    for broker in cluster.brokers.values():
        if broker.alive:
            ids.update(broker.groups.groups)
    return sorted(ids)


def describe_groups(cluster: Cluster) -> list[dict]:
    return [describe_group(cluster, group) for group in group_ids(cluster)]


def consumed(cluster: Cluster) -> dict[str, list[dict]]:
    """What poll() returned to each consumer, in order."""
    return {name: c.records_consumed() for name, c in sorted(cluster.consumers.items())}


def processed(cluster: Cluster) -> dict[str, list[dict]]:
    """What each consumer application finished processing (consumer_app.PollLoop), in order."""
    return {name: list(app.processed) for name, app in sorted(cluster.apps.items())}


def sinks(cluster: Cluster) -> dict[str, dict]:
    return {name: sink.to_dict() for name, sink in sorted(cluster.sinks.items())}
