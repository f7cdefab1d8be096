"""What the cluster is waiting for: the timers a learner sits through, named, with when they fire.

After a broker crashes nothing visible happens for `zookeeper.session.timeout.ms`; a follower
that stopped fetching stays in the ISR for `replica.lag.time.max.ms`; a crashed consumer keeps
its partitions for `session.timeout.ms`. `pending_timers(cluster)` reads those deadlines from the
cluster's own state — the scheduler entries and the timestamps Kafka's rules compare against —
and schedules nothing, so it can be called after every step. Each timer is

    {"kind": "session_expiry", "subject": "broker-1", "due_ms": 21000 (virtual time),
     "setting": "zookeeper.session.timeout.ms", "value_ms": 18000, "text": "a sentence"}

sorted by due time. `text` never mentions the current time, so the list only changes when the
cluster does (the lab sends it in its model and counts down in the browser).

The kinds, and whose rule each follows:
- `session_expiry`: a crashed broker's ZooKeeper session (Cluster.kill_broker schedules it);
  `controller_election` and `leader_election` / `isr_shrink` (the controller's, ZooKeeper mode)
  follow it when the dead broker was the controller, led partitions or sat in their ISRs;
- `isr_shrink` (replica.lag.time.max.ms): a follower in the ISR that is behind the leader's log
  end is dropped at the first isr-expiration check (every lag/2, ReplicaManager) after it has
  been behind for longer than the lag time (Partition.getOutOfSyncReplicas);
- `produce_timeout`: the lab's produce requests still unanswered (acks=all ones parked in the
  leader's purgatory until the HW passes them): the producer's request.timeout.ms;
- `initial_rebalance_delay`, `rebalance_timeout`, `sync_timeout`, `member_session`: the group
  coordinator's timers (GroupCoordinator._timers: join, sync and heartbeat keys);
- `poll_timeout`: a consumer's own deadline (its heartbeat thread): max.poll.interval.ms without
  poll() and it leaves the group by itself.
Internal topics (`__consumer_offsets`) are left out of the partition timers: their changes show
in the groups' timers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.groups.coordinator import coordinator_for
from engine.groups.group import COMPLETING_REBALANCE, EMPTY, PREPARING_REBALANCE

if TYPE_CHECKING:
    from engine.cluster import Cluster

# A follower counts as lagging for the timer list once it has been behind this long: a healthy
# follower under load is "behind" between two fetches (replica.fetch.wait.max.ms, 500 ms).
LAGGING_AFTER_MS = 1000
# A member or consumer has "stopped heartbeating" after this many heartbeat intervals of silence.
MISSED_HEARTBEATS = 2
# Timers due at the same instant, in the order they act (the session expires, then the controller...).
KIND_ORDER = ("session_expiry", "broker_fencing", "controller_election", "leader_election", "isr_shrink",
              "produce_timeout",
              "initial_rebalance_delay", "rebalance_timeout", "sync_timeout", "member_session",
              "poll_timeout")


def pending_timers(cluster: Cluster) -> list[dict[str, Any]]:
    """Every timer the cluster is waiting on, soonest first."""
    timers = _broker_sessions(cluster) + _isr_lag(cluster) + _produce_requests(cluster)
    timers += _group_coordinators(cluster) + _consumers(cluster)
    return sorted(timers, key=lambda t: (t["due_ms"], KIND_ORDER.index(t["kind"]), t["subject"]))


def _timer(kind: str, subject: str, due_ms: int, setting: str, value_ms: int, text: str) -> dict[str, Any]:
    return {"kind": kind, "subject": subject, "due_ms": int(due_ms), "setting": setting,
            "value_ms": int(value_ms), "text": text}


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"


def _names(partitions: list[tuple[str, int]], internal: int) -> str:
    names = [f"{t}-{p}" for t, p in partitions[:4]] + ([f"{len(partitions) - 4} more"] if len(partitions) > 4 else [])
    if internal:
        names.append(f"{internal} __consumer_offsets partition{'s' if internal != 1 else ''}")
    return ", ".join(names)


# -- brokers: ZooKeeper sessions and what the controller does when one expires ---------------------------
def _session_deadlines(cluster: Cluster) -> dict[int, int]:
    """Crashed broker -> when its ZooKeeper session expires (Cluster.kill_broker's timer)."""
    out = {}
    for broker_id, entry in cluster._session_expiry.items():
        if entry is not None and not entry.cancelled:
            out[broker_id] = entry.time_ms
    return out


def _broker_fencing(cluster: Cluster) -> list[dict]:
    """KRaft: when the active controller fences each broker whose heartbeats stopped (its session
    timer runs from the last heartbeat it had), and what that moves."""
    active = cluster.controller
    if active is None:
        return []
    setting, timeout = "broker.session.timeout.ms", cluster.broker_config.broker_session_timeout_ms
    out = []
    for broker_id, entry in sorted(active._sessions.items()):
        broker = cluster.brokers.get(broker_id)
        registration = active.image.brokers.get(broker_id)
        if broker is None or entry is None or entry.cancelled or registration is None or registration.fenced:
            continue
        if broker.alive and cluster._reaches_active_controller(broker):
            continue    # it heartbeats: its session keeps being renewed
        due = entry.time_ms
        out.append(_timer("broker_fencing", f"broker-{broker_id}", due, setting, timeout,
                          f"Broker {broker_id} sends the controller no heartbeats: "
                          f"{_seconds(timeout)} after the last one the controller fences it"))
        out += _controller_moves(cluster, broker_id, due, setting, timeout)
    return out


def _broker_sessions(cluster: Cluster) -> list[dict]:
    if cluster.kraft:
        return _broker_fencing(cluster)
    setting, timeout = "zookeeper.session.timeout.ms", cluster.broker_config.zookeeper_session_timeout_ms
    controller = cluster.controller_id()
    out = []
    for broker_id, due in sorted(_session_deadlines(cluster).items()):
        out.append(_timer("session_expiry", f"broker-{broker_id}", due, setting, timeout,
                          f"Broker {broker_id} is down, but ZooKeeper keeps its session — and its registration "
                          f"— until the session times out: only then does the controller learn it is gone"))
        if controller == broker_id:
            out.append(_timer("controller_election", "controller", due, setting, timeout,
                              f"Broker {broker_id} was the controller: /controller is an ephemeral znode of its "
                              f"session, so the brokers elect a new controller only when that session expires"))
        out += _controller_moves(cluster, broker_id, due, setting, timeout)
    return out


def _controller_moves(cluster: Cluster, broker_id: int, due: int, setting: str, timeout: int) -> list[dict]:
    """What the controller will do for the dead broker's partitions when its session expires."""
    led, led_internal, followed, followed_internal = [], 0, [], 0
    for topic, p in cluster.all_partitions():
        state = cluster.metadata.partition_state(topic, p)
        if state is None or broker_id not in state["replicas"]:
            continue
        internal = topic.startswith("__")
        if state["leader"] == broker_id:
            led_internal += internal
            led += [] if internal else [(topic, p)]
        elif broker_id in state["isr"] and len(state["isr"]) > 1:
            followed_internal += internal
            followed += [] if internal else [(topic, p)]
    out = []
    # KRaft: the controller itself sees the heartbeats stop; ZooKeeper mode: ZooKeeper tells it.
    how = "fences it and" if cluster.kraft else ", told by ZooKeeper that the session expired,"
    until = "it is fenced" if cluster.kraft else "its session expires"
    if led or led_internal:
        out.append(_timer("leader_election", _names(led, led_internal), due, setting, timeout,
                          f"Broker {broker_id} led {_names(led, led_internal)}: nobody answers for "
                          f"{'it' if len(led) + led_internal == 1 else 'them'} until the controller"
                          f"{' ' if cluster.kraft else ''}{how} elects a new leader from the ISR"))
    if followed or followed_internal:
        out.append(_timer("isr_shrink", f"{_names(followed, followed_internal)}: broker {broker_id}", due, setting,
                          timeout,
                          f"Broker {broker_id} stays in the ISR of {_names(followed, followed_internal)} until "
                          f"{until}; then the controller removes it"))
    return out


# -- followers: replica.lag.time.max.ms -------------------------------------------------------------------
def _isr_lag(cluster: Cluster) -> list[dict]:
    lag = cluster.broker_config.replica_lag_time_max_ms
    interval = max(1, lag // 2)      # Broker._start_timers: the isr-expiration task
    sessions = _session_deadlines(cluster)
    now = cluster.now_ms
    out = []
    for broker in sorted((b for b in cluster.brokers.values() if b.alive), key=lambda b: b.id):
        first_check = None
        for (topic, p), part in sorted(broker.partitions.items()):
            if part.role != "leader" or topic.startswith("__"):
                continue
            leader_leo = part.log_end_offset
            for replica in part.isr:
                state = part.followers.get(replica)
                if replica == broker.id or state is None or state.log_end_offset == leader_leo:
                    continue
                behind_since = state.last_caught_up_ms
                if now - behind_since < LAGGING_AFTER_MS:
                    continue
                if first_check is None:
                    first_check = cluster.scheduler.newest_pending(f"{broker.node}: isr-expiration")
                    if first_check is None:
                        break
                due = _next_check_after(first_check.time_ms, interval, behind_since + lag)
                if replica in sessions and sessions[replica] <= due:
                    continue   # the controller removes it first (its session expires)
                out.append(_timer(
                    "isr_shrink", f"{topic}-{p}: broker {replica}", due, "replica.lag.time.max.ms", lag,
                    f"Broker {replica} has not caught up with the leader of {topic}-{p} (broker {broker.id}) "
                    f"since t = {behind_since / 1000:.3f} s: the leader's isr-expiration check (every "
                    f"{_seconds(interval)}) drops it from the ISR once it has been behind for more than "
                    f"{_seconds(lag)} — until then the HW waits for it"))
    return out


def _next_check_after(first_check_ms: int, interval_ms: int, deadline_ms: int) -> int:
    """The first isr-expiration run strictly after `deadline_ms` (runs: first_check + k·interval)."""
    if first_check_ms > deadline_ms:
        return first_check_ms
    return first_check_ms + ((deadline_ms - first_check_ms) // interval_ms + 1) * interval_ms


def _produce_requests(cluster: Cluster) -> list[dict]:
    """The lab's produce requests (Cluster.produce) still unanswered after a while: acks=all ones
    parked in the leader's purgatory until the HW passes them, or ones whose answer will never
    come (a dead leader, a cut link). The producer gives up at its request time-out."""
    timeout, now = cluster.broker_config.request_timeout_ms, cluster.now_ms
    pending = sorted(cluster.simple_producer.request_timers(), key=lambda e: e.sequence)
    if not pending or now - (pending[0].time_ms - timeout) < LAGGING_AFTER_MS:
        return []      # nothing unanswered for long (the usual case: answers take milliseconds)
    waiting = []       # newest first, as many as there are pending requests
    for record in reversed(cluster.produced):
        if record.acked is None and record.acks != 0:
            waiting.append(record)
            if len(waiting) == len(pending):
                break
    if len(waiting) != len(pending):
        return []
    waiting.reverse()  # sent in request order, answered or timed out one by one: the pairs line up
    per_partition: dict[tuple[str, int], list[int]] = {}
    for record, timer in zip(waiting, pending):
        if now - (timer.time_ms - timeout) >= LAGGING_AFTER_MS:
            per_partition.setdefault((record.topic, record.partition), []).append(timer.time_ms)
    out = []
    for (topic, p), dues in sorted(per_partition.items()):
        n, leader = len(dues), cluster.leader_of(topic, p)
        part = cluster.brokers[leader].partitions.get((topic, p)) if leader in cluster.brokers else None
        plural = "s" if n != 1 else ""
        if part is not None and part.pending:
            why = (f"wait{'' if plural else 's'} in the leader's purgatory until every ISR replica has the "
                   f"records (the HW, now {part.high_watermark}, passes them)")
        else:
            why = "get no answer (the leader is down or the request was lost)" if plural else \
                "gets no answer (the leader is down or the request was lost)"
        out.append(_timer("produce_timeout", f"{topic}-{p}", min(dues), "request.timeout.ms", timeout,
                          f"{n} produce request{plural} to {topic}-{p} {why}: the producer gives up with "
                          f"REQUEST_TIMED_OUT at its request time-out"))
    return out


# -- consumer groups: the coordinator's timers -------------------------------------------------------------
def _group_coordinators(cluster: Cluster) -> list[dict]:
    members = {c.member_id: c for c in cluster.consumers.values() if getattr(c, "member_id", "")}
    out = []
    for broker in sorted((b for b in cluster.brokers.values() if b.alive), key=lambda b: b.id):
        if not any(t.startswith("__") and part.role == "leader" for (t, _), part in broker.partitions.items()):
            continue
        coordinator = coordinator_for(broker)
        for group_id in sorted(coordinator.groups):
            group = coordinator.groups[group_id]
            out += _phase_timers(cluster, coordinator, group, members)
            out += _member_timers(cluster, coordinator, group, members)
    return out


def _pending(coordinator: Any, key: str) -> Any:
    entry = coordinator._timers.get(key)
    return entry if entry is not None and not entry.cancelled else None


def _member_name(member: Any, members: dict[str, Any]) -> str:
    consumer = members.get(member.member_id)
    return consumer.name if consumer is not None else (member.client_id or member.member_id)


def _phase_timers(cluster: Cluster, coordinator: Any, group: Any, members: dict[str, Any]) -> list[dict]:
    gid, broker = group.group_id, coordinator.broker.id
    join, sync = _pending(coordinator, f"join-{gid}"), _pending(coordinator, f"sync-{gid}")
    if join is not None and group.state == PREPARING_REBALANCE and group.previous_state == EMPTY:
        delay = cluster.broker_config.group_initial_rebalance_delay_ms
        return [_timer("initial_rebalance_delay", f"group {gid}", join.time_ms, "group.initial.rebalance.delay.ms",
                       delay, f"Group {gid} is new: its coordinator (broker {broker}) waits a little for more "
                              f"members before it forms the first generation (each newcomer extends the wait)")]
    if join is not None:
        missing = [_member_name(m, members) for m in group.not_yet_rejoined()]
        waiting = f"still waiting for {', '.join(missing)}" if missing else "every member has rejoined"
        return [_timer("rebalance_timeout", f"group {gid}", join.time_ms, "max.poll.interval.ms",
                       group.rebalance_timeout_ms(),
                       f"Group {gid} is rebalancing: the coordinator (broker {broker}) waits for every member to "
                       f"send JoinGroup again ({waiting}); whoever has not by the rebalance timeout — the "
                       f"members' max.poll.interval.ms — is removed")]
    if sync is not None and group.state == COMPLETING_REBALANCE:
        missing = sorted(_member_name(group.members[m], members) for m in group.pending_sync_members
                         if m in group.members)
        return [_timer("sync_timeout", f"group {gid}", sync.time_ms, "max.poll.interval.ms",
                       group.rebalance_timeout_ms(),
                       f"Group {gid} waits for SyncGroup from {', '.join(missing) or 'its members'}: the leader "
                       f"brings the assignment, the others collect theirs; a member that does not sync in time "
                       f"is removed and the group rebalances again")]
    return []


def _member_timers(cluster: Cluster, coordinator: Any, group: Any, members: dict[str, Any]) -> list[dict]:
    now, out = cluster.now_ms, []
    for member in group.members_in_order():
        entry = _pending(coordinator, f"heartbeat-{group.group_id}-{member.member_id}")
        if entry is None or member.is_new or member.has_satisfied_heartbeat():
            continue
        consumer = members.get(member.member_id)
        crashed = consumer is not None and (not consumer.alive or consumer.closed)
        interval = consumer.config.heartbeat_interval_ms if consumer is not None else 3000
        last_heard = entry.time_ms - member.session_timeout_ms
        if not crashed and now - last_heard < MISSED_HEARTBEATS * interval:
            continue
        name = _member_name(member, members)
        why = "its process crashed, so it sends no LeaveGroup" if crashed else "no heartbeat has reached it lately"
        out.append(_timer(
            "member_session", f"{name} in group {group.group_id}", entry.time_ms, "session.timeout.ms",
            member.session_timeout_ms,
            f"{name} stopped heartbeating ({why}): the coordinator (broker {coordinator.broker.id}) keeps it in "
            f"group {group.group_id}, with its partitions unread, until its session times out — then it is "
            f"removed and the group rebalances"))
    return out


# -- consumers: their own deadlines ------------------------------------------------------------------------
def _consumers(cluster: Cluster) -> list[dict]:
    now, out = cluster.now_ms, []
    for name, consumer in sorted(cluster.consumers.items()):
        client = getattr(consumer, "coordinator", None)
        if client is None or not consumer.alive or consumer.closed or client.coordinator is None:
            continue
        if client.state not in ("COMPLETING_REBALANCE", "STABLE"):
            continue
        config = consumer.config
        polled = client._last_poll_ms
        quiet_after = max(config.heartbeat_interval_ms, config.max_poll_interval_ms // 10)
        if not consumer.in_poll and now - polled >= quiet_after:
            how = "it polls only when you press Poll" if consumer.app is None else "it is still busy with its records"
            out.append(_timer(
                "poll_timeout", name, polled + config.max_poll_interval_ms, "max.poll.interval.ms",
                config.max_poll_interval_ms,
                f"{name} has not called poll() since t = {polled / 1000:.3f} s ({how}): if it does not before "
                f"max.poll.interval.ms passes, it leaves group {client.group_id} by itself and the group "
                f"rebalances"))
    return out

