"""The group coordinator, spoken to with raw requests (as a Kafka client library would)."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.groups import coordinator as gc
from engine.groups import offsets_topic as ot
from engine.groups.assignors import TopicPartition
from engine.groups.consumer_protocol import encode_assignment, encode_subscription
from engine.groups.coordinator_partition import coordinator_partition
from engine.groups.protocol import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from engine.node import Node

SUB = encode_subscription(["t"])


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=3, config={"offsets.topic.num.partitions": 5})
    c.create_topic("t", 2, 3)
    yield c
    c.close()


@pytest.fixture
def client(cluster):
    return Node(cluster.world, "consumer-raw")


def send(client, broker, request, timeout_ms=400_000):
    answers = []
    client.send(f"broker-{broker}", request, answers.append, timeout_ms=timeout_ms)
    return answers


def wait(cluster, answers, max_ms=400_000):
    end = cluster.now_ms + max_ms
    while not answers:
        assert cluster.scheduler.next_time() is not None and cluster.scheduler.next_time() <= end, "no answer"
        cluster.scheduler.step()
    return answers[0]


def ask(cluster, client, broker, request, max_ms=400_000):
    return wait(cluster, send(client, broker, request), max_ms)


def find(cluster, client, group="g"):
    answer = ask(cluster, client, 1, FindCoordinatorRequest(group))
    while answer.error != "NONE":
        cluster.run_for(100)
        answer = ask(cluster, client, 1, FindCoordinatorRequest(group))
    cluster.run_until_idle()
    return answer.node_id


def join_request(member_id="", session=45000, rebalance=300000, protocols=(("range", SUB),), client_id="c"):
    return JoinGroupRequest("g", session, rebalance, member_id, "consumer",
                            [JoinGroupProtocol(n, m) for n, m in protocols], client_id=client_id)


def join_new(cluster, client, coordinator, **kw):
    """The KIP-394 dance: MEMBER_ID_REQUIRED, then the real join (still pending: may park)."""
    first = ask(cluster, client, coordinator, join_request(**kw))
    assert first.error == "MEMBER_ID_REQUIRED"
    return first.member_id, send(client, coordinator, join_request(member_id=first.member_id, **kw))


def events_of(cluster, kind):
    seen = []
    cluster.subscribe(lambda e: seen.append(e) if e.kind == kind else None)
    return seen


def test_the_first_find_coordinator_creates_the_offsets_topic(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=1)
    client = Node(c.world, "consumer-raw")
    first = ask(c, client, 2, FindCoordinatorRequest("test-group"))
    assert first.error == "COORDINATOR_NOT_AVAILABLE"
    info = c.describe_topic(ot.OFFSETS_TOPIC)
    assert len(info["partitions"]) == 50 and info["replication_factor"] == 3
    assert info["config"]["cleanup.policy"] == "compact" and info["config"]["segment.bytes"] == 104857600
    c.run_until_idle()
    answer = ask(c, client, 2, FindCoordinatorRequest("test-group"))
    assert answer.error == "NONE" and coordinator_partition("test-group", 50) == 12
    assert answer.node_id == c.leader_of(ot.OFFSETS_TOPIC, 12)
    c.close()


def test_the_offsets_topic_replication_factor_is_capped_by_the_live_brokers(tmp_path):
    c = Cluster(2, str(tmp_path / "lab"), seed=1, config={"offsets.topic.num.partitions": 3})
    assert c.ensure_offsets_topic() is False and c.ensure_offsets_topic() is True
    assert c.describe_topic(ot.OFFSETS_TOPIC)["replication_factor"] == 2
    c.close()


def test_a_new_member_gets_an_id_then_waits_the_initial_rebalance_delay(cluster, client):
    coordinator = find(cluster, client)
    start = cluster.now_ms
    member_id, pending = join_new(cluster, client, coordinator, client_id="c1")
    assert member_id.startswith("c1-") and len(member_id) == len("c1-") + 36
    answer = wait(cluster, pending)
    assert answer.error == "NONE" and answer.generation_id == 1 and answer.leader == member_id
    assert answer.protocol_name == "range" and [m.member_id for m in answer.members] == [member_id]
    assert answer.members[0].metadata == SUB
    assert cluster.now_ms - start >= 3000     # group.initial.rebalance.delay.ms


def test_member_ids_come_from_the_seeded_rng(tmp_path):
    ids = []
    for attempt in "ab":
        c = Cluster(3, str(tmp_path / attempt), seed=9, config={"offsets.topic.num.partitions": 2})
        client = Node(c.world, "consumer-raw")
        ids.append(ask(c, client, find(c, client), join_request()).member_id)
        c.close()
    assert ids[0] == ids[1]


def test_only_the_leader_gets_the_member_list(cluster, client):
    coordinator = find(cluster, client)
    a, pa = join_new(cluster, client, coordinator, client_id="a")
    b, pb = join_new(cluster, client, coordinator, client_id="b")
    leader, follower = wait(cluster, pa), wait(cluster, pb)
    assert leader.generation_id == follower.generation_id == 1 and leader.leader == follower.leader == a
    assert sorted(m.member_id for m in leader.members) == sorted([a, b]) and follower.members == []


@pytest.mark.parametrize("request_kw, error", [
    ({"session": 5999}, "INVALID_SESSION_TIMEOUT"),
    ({"session": 1800001}, "INVALID_SESSION_TIMEOUT"),
    ({"member_id": "nobody"}, "UNKNOWN_MEMBER_ID"),
])
def test_join_group_refusals(cluster, client, request_kw, error):
    coordinator = find(cluster, client)
    assert ask(cluster, client, coordinator, join_request(**request_kw)).error == error


def test_a_member_supporting_none_of_the_group_s_protocols_is_refused(cluster, client):
    coordinator = find(cluster, client)
    _, pending = join_new(cluster, client, coordinator)
    wait(cluster, pending)
    answer = ask(cluster, client, coordinator, join_request(protocols=(("roundrobin", SUB),)))
    assert answer.error == "INCONSISTENT_GROUP_PROTOCOL"


def test_the_wrong_broker_is_not_the_coordinator(cluster, client):
    coordinator = find(cluster, client)
    other = next(b for b in (1, 2, 3) if b != coordinator)
    assert ask(cluster, client, other, join_request()).error == "NOT_COORDINATOR"
    assert ask(cluster, client, other, HeartbeatRequest("g", 1, "x")).error == "NOT_COORDINATOR"


def stable_group(cluster, client, names=("a", "b")):
    """Members joined and synced (leader gives everyone t-0 / t-1 round the table)."""
    coordinator = find(cluster, client)
    pendings = [join_new(cluster, client, coordinator, client_id=n) for n in names]
    answers = {member_id: wait(cluster, p) for member_id, p in pendings}
    leader = next(a for a in answers.values() if a.members)
    ids = [m.member_id for m in leader.members]
    plan = {mid: encode_assignment([TopicPartition("t", i % 2)]) for i, mid in enumerate(ids)}
    syncs = {}
    for member_id, answer in answers.items():
        assignments = [SyncGroupAssignment(m, a) for m, a in plan.items()] if answer.members else []
        syncs[member_id] = send(client, coordinator, SyncGroupRequest("g", answer.generation_id, member_id,
                                                                      "consumer", "range", assignments))
    results = {m: wait(cluster, s) for m, s in syncs.items()}
    return coordinator, ids, leader.generation_id, results


def test_sync_group_hands_out_the_leader_s_assignment_after_writing_it(cluster, client):
    coordinator, ids, generation, results = stable_group(cluster, client)
    assert all(r.error == "NONE" for r in results.values())
    assert {m: r.assignment for m, r in results.items()} == {
        ids[0]: encode_assignment([TopicPartition("t", 0)]), ids[1]: encode_assignment([TopicPartition("t", 1)])}
    log = cluster.brokers[coordinator].partitions[(ot.OFFSETS_TOPIC, coordinator_partition("g", 5))].log
    stored = [ot.decode_value(ot.decode_key(r.key), r.value) for r in log.records_from(0)]
    assert stored[-1].generation == generation and {m.member_id for m in stored[-1].members} == set(ids)


def test_sync_group_errors(cluster, client):
    coordinator, ids, generation, _ = stable_group(cluster, client)
    assert ask(cluster, client, coordinator, SyncGroupRequest("g", generation, "x")).error == "UNKNOWN_MEMBER_ID"
    assert ask(cluster, client, coordinator, SyncGroupRequest("g", generation + 1, ids[0])).error == \
        "ILLEGAL_GENERATION"
    assert ask(cluster, client, coordinator, SyncGroupRequest("g", generation, ids[0], "consumer", "sticky")).error \
        == "INCONSISTENT_GROUP_PROTOCOL"
    _, pending = join_new(cluster, client, coordinator, client_id="c")     # a rebalance starts
    assert ask(cluster, client, coordinator, SyncGroupRequest("g", generation, ids[0])).error == \
        "REBALANCE_IN_PROGRESS"


def test_heartbeats_tell_members_to_rejoin_during_a_rebalance(cluster, client):
    coordinator, ids, generation, _ = stable_group(cluster, client)
    assert ask(cluster, client, coordinator, HeartbeatRequest("g", generation, ids[0])).error == "NONE"
    assert ask(cluster, client, coordinator, HeartbeatRequest("g", generation - 1, ids[0])).error == \
        "ILLEGAL_GENERATION"
    join_new(cluster, client, coordinator, client_id="c")
    assert ask(cluster, client, coordinator, HeartbeatRequest("g", generation, ids[0])).error == \
        "REBALANCE_IN_PROGRESS"


def test_members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed(cluster, client):
    removed = events_of(cluster, "member_removed")
    coordinator = find(cluster, client)
    a, pa = join_new(cluster, client, coordinator, client_id="a", rebalance=20000)
    wait(cluster, pa)
    ask(cluster, client, coordinator, SyncGroupRequest("g", 1, a, assignments=[]))
    b, pb = join_new(cluster, client, coordinator, client_id="b", rebalance=20000)
    started = cluster.now_ms
    answer = wait(cluster, pb)          # a keeps heartbeating but never rejoins
    assert answer.generation_id == 2 and answer.leader == b and [m.member_id for m in answer.members] == [b]
    assert 19000 <= cluster.now_ms - started <= 21000
    assert [e.member_id for e in removed] == [a] and "did not rejoin" in removed[0].reason


def test_a_member_that_stops_heartbeating_is_removed_after_its_session_timeout(cluster, client):
    removed = events_of(cluster, "member_removed")
    states = events_of(cluster, "group_state_changed")
    coordinator, ids, generation, _ = stable_group(cluster, client, names=("a",))
    synced = cluster.now_ms
    cluster.run_for(44000)
    assert not removed
    cluster.run_for(2000)
    assert [e.member_id for e in removed] == ids and "session timeout (45000 ms)" in removed[0].reason
    assert 44000 <= removed[0].time_ms - synced <= 45100
    assert states[-1].state == "Empty" and states[-1].generation == generation + 1


def test_a_member_id_never_used_expires(cluster, client):
    removed = events_of(cluster, "member_removed")
    coordinator = find(cluster, client)
    first = ask(cluster, client, coordinator, join_request(session=6000))
    cluster.run_for(6100)
    assert removed[0].member_id == first.member_id and "never came back" in removed[0].reason


def test_a_member_that_never_syncs_is_removed_and_the_group_rebalances(cluster, client):
    removed = events_of(cluster, "member_removed")
    coordinator = find(cluster, client)
    a, pa = join_new(cluster, client, coordinator, client_id="a", rebalance=10000)
    b, pb = join_new(cluster, client, coordinator, client_id="b", rebalance=10000)
    wait(cluster, pa), wait(cluster, pb)
    sync_b = send(client, coordinator, SyncGroupRequest("g", 1, b))   # the leader, a, never syncs
    cluster.run_for(10100)
    assert [e.member_id for e in removed] == [a] and "SyncGroup" in removed[0].reason
    assert wait(cluster, sync_b).error == "REBALANCE_IN_PROGRESS"


def test_leave_group_removes_the_member_at_once(cluster, client):
    removed = events_of(cluster, "member_removed")
    coordinator, ids, generation, _ = stable_group(cluster, client)
    answer = ask(cluster, client, coordinator, LeaveGroupRequest("g", [MemberIdentity(ids[1], reason="bye"),
                                                                       MemberIdentity("nobody")]))
    assert [(m.member_id, m.error) for m in answer.members] == [(ids[1], "NONE"), ("nobody", "UNKNOWN_MEMBER_ID")]
    assert removed[0].reason == "left the group: bye"
    assert ask(cluster, client, coordinator, HeartbeatRequest("g", generation, ids[0])).error == \
        "REBALANCE_IN_PROGRESS"


def commit(cluster, client, coordinator, generation, member_id, offset, partition=0):
    return ask(cluster, client, coordinator, OffsetCommitRequest(
        "g", generation, member_id, [OffsetCommitPartition("t", partition, offset, 0)]))


def test_offsets_are_committed_through_the_log_and_fetched_back(cluster, client):
    committed = events_of(cluster, "offsets_committed")
    coordinator, ids, generation, _ = stable_group(cluster, client)
    assert commit(cluster, client, coordinator, generation, ids[0], 7).error == "NONE"
    log = cluster.brokers[coordinator].partitions[(ot.OFFSETS_TOPIC, coordinator_partition("g", 5))].log
    key, value = log.records_from(0)[-1].key, log.records_from(0)[-1].value
    assert ot.decode_key(key) == ot.OffsetCommitKey("g", "t", 0)
    assert ot.decode_value(ot.decode_key(key), value).offset == 7
    part = cluster.brokers[coordinator].partitions[(ot.OFFSETS_TOPIC, coordinator_partition("g", 5))]
    assert part.high_watermark == part.log_end_offset       # acknowledged only once replicated (acks=all)
    assert committed[-1].offsets == {"t-0": 7} and committed[-1].generation == generation
    fetched = ask(cluster, client, coordinator, OffsetFetchRequest("g", [("t", 0), ("t", 1)]))
    assert [(p.partition, p.committed_offset, p.committed_leader_epoch) for p in fetched.partitions] == \
        [(0, 7, 0), (1, -1, -1)]


def test_a_commit_from_an_old_generation_is_refused_once_stable(cluster, client):
    coordinator, ids, generation, _ = stable_group(cluster, client)
    assert commit(cluster, client, coordinator, generation - 1, ids[0], 3).error == "ILLEGAL_GENERATION"
    assert commit(cluster, client, coordinator, generation, "stranger", 3).error == "UNKNOWN_MEMBER_ID"
    assert commit(cluster, client, coordinator, -1, "", 3).error == "UNKNOWN_MEMBER_ID"   # the group is not empty


def test_a_consumer_without_group_management_commits_into_a_new_simple_group(cluster, client):
    coordinator = find(cluster, client)
    assert commit(cluster, client, coordinator, -1, "", 11).error == "NONE"
    assert commit(cluster, client, coordinator, 1, "someone", 11).error == "UNKNOWN_MEMBER_ID"
    assert ask(cluster, client, coordinator, OffsetFetchRequest("g")).partitions[0].committed_offset == 11


def test_a_new_coordinator_loads_the_group_and_its_offsets_from_the_log(cluster, client):
    coordinator, ids, generation, _ = stable_group(cluster, client)
    assert commit(cluster, client, coordinator, generation, ids[0], 5).error == "NONE"
    cluster.run_until_idle()
    cluster.kill_broker(coordinator)
    cluster.run_for(25000)
    new = cluster.leader_of(ot.OFFSETS_TOPIC, coordinator_partition("g", 5))
    assert new not in (coordinator, -1)
    state = gc.coordinator_for(cluster.brokers[new]).groups["g"]
    assert state.state == "Stable" and state.generation == generation and set(state.members) == set(ids)
    assert ask(cluster, client, new, HeartbeatRequest("g", generation, ids[0])).error == "NONE"
    fetched = ask(cluster, client, new, OffsetFetchRequest("g", [("t", 0)]))
    assert fetched.partitions[0].committed_offset == 5


def test_tombstones_delete_on_load(cluster, client):
    coordinator, ids, generation, _ = stable_group(cluster, client)
    commit(cluster, client, coordinator, generation, ids[0], 5)
    p = coordinator_partition("g", 5)
    partition = cluster.brokers[coordinator].partitions[(ot.OFFSETS_TOPIC, p)]
    from engine.storage import record_batch as rb
    partition.append_as_leader(rb.encode_batch([ot.offset_tombstone("g", "t", 0), ot.group_record("g", None)],
                                               base_timestamp=cluster.record_clock()), 1)
    fresh = gc.GroupCoordinator(cluster.brokers[coordinator])
    fresh.load(partition)
    assert "g" not in fresh.groups and fresh.committed("g") == {}


def test_a_commit_waits_for_the_replicas_and_times_out_after_offsets_commit_timeout(cluster, client):
    coordinator, ids, generation, _ = stable_group(cluster, client)
    p = coordinator_partition("g", 5)
    for broker in cluster.partition_state(ot.OFFSETS_TOPIC, p)["replicas"]:
        if broker != coordinator:
            cluster.pause_fetcher(broker)
    start = cluster.now_ms
    answer = commit(cluster, client, coordinator, generation, ids[0], 9)
    assert answer.error == "COORDINATOR_NOT_AVAILABLE" and 5000 <= cluster.now_ms - start <= 5100
    fetched = ask(cluster, client, coordinator, OffsetFetchRequest("g", [("t", 0)]))
    assert fetched.partitions[0].committed_offset == -1      # never acknowledged: not committed
