"""The controller: one broker, elected through the metadata store's `/controller` node.

Kafka's ZooKeeper-mode `KafkaController`, with its `PartitionStateMachine` folded in. Every broker
runs for controller when it starts and whenever `/controller` goes away (KafkaController.elect);
the winner builds a `Controller` over its own broker (`ctx`: it sends through that broker's
node, and stops acting when that broker resigns or dies) and the metadata store — it never sees
the other brokers' objects, only their registrations. It watches broker registrations and, as
Kafka's controller does:
- on a broker failure (its session expired), moves leadership of the partitions it led to the
  first replica *in assignment order* that is alive and in the ISR (with
  `unclean.leader.election.enable`, to the first live replica even if out of sync; with no
  eligible replica the partition goes offline), and removes it from the ISRs it was in — never
  emptying an ISR: the last member stays, so it can lead again cleanly when it returns;
- on a broker start-up, sends it LeaderAndIsr for its replicas and brings back partitions that
  were offline waiting for it;
- on a new topic or new partitions (its assignment node changed: the TopicChange and
  PartitionModifications handlers), writes each new partition's first leader (first live
  replica) and ISR — NewPartition -> OnlinePartition in the PartitionStateMachine.
Every leader change (and, in ZooKeeper mode, every ISR change it makes) bumps the leader epoch.
It tells brokers with LeaderAndIsr requests over the network.

It also does the work the `/admin` nodes ask for (engine/metadata/zk.py):
- topic deletion: its TopicDeletionManager (engine/replication/topic_deletion.py);
- partition reassignment, KIP-455's steps (onPartitionReassignment): phase U writes RS = TRS + ORS
  with the adding and removing sets to the topic node; phase A bumps the leader epoch with RS and
  sends LeaderAndIsr, so the new replicas start following and catch up; when an ISR change shows
  TRS inside the ISR (it watches the state nodes of the partitions it moves), phase B moves the
  leader into TRS if it is not there, shrinks RS and the ISR to TRS in one write (Kafka's B3 and B4
  are two), sends the removed replicas StopReplica (delete) and writes RS = TRS to the topic node;
- preferred leader election, asked for or every leader.imbalance.check.interval.seconds with
  auto.leader.rebalance.enable (5 s after its election first, as Kafka's controller): the first
  assigned replica leads again if it is alive and in the ISR; the ISR is kept.
What to decide (the replica sets, which leader, the imbalance ratio) is engine/replication/reassignment.py's.

It hears of topic changes at once (an at-once store watch, engine/metadata/store.py), so a topic's
partitions exist when the command that created it returns. As the lab always did, a controller
whose broker crashed still creates them until its session expires and `/controller` goes; it
no longer reacts to broker changes once its broker is down (`is_active`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine import events as ev
from engine.common.config_values import parse_config_value
from engine.common.topics import collision_warning
from engine.metadata import zk
from engine.metadata.store import WATCH_LATENCY_MS, MetadataStore
from engine.metadata.zk import partition_path  # lab/ and engine.timers import it from here too
from engine.protocol import LeaderAndIsrRequest, PartitionState, StopReplicaPartitionState, StopReplicaRequest
from engine.replication import reassignment as ra
from engine.replication.topic_deletion import TopicDeletionManager
from engine.storage.errors import InvalidConfigError

CONTROLLER_SOCKET_TIMEOUT_MS = 30000  # Kafka's controller.socket.timeout.ms
FIRST_REBALANCE_CHECK_MS = 5000       # onControllerFailover: scheduleAutoLeaderRebalanceTask(delay = 5 s)

if TYPE_CHECKING:
    from engine.node import BrokerContext


def elect_leader(replicas: list[int], isr: list[int], live: set[int],
                 unclean: bool) -> tuple[int, list[int], bool]:
    """Kafka's offline-partition election (PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection):
    (leader or -1, new ISR, whether it was unclean)."""
    for replica in replicas:
        if replica in live and replica in isr:
            return replica, [r for r in isr if r in live], False
    if unclean:
        for replica in replicas:
            if replica in live:
                return replica, [replica], True
    return -1, list(isr), False


class Controller:
    def __init__(self, ctx: BrokerContext, store: MetadataStore, controller_epoch: int) -> None:
        self.ctx = ctx
        self.store = store
        self.broker_id = ctx.id
        self.epoch = controller_epoch
        self.known: dict[int, int] = {}   # live broker -> registration incarnation
        self.resigned = False             # `/controller` went away (KafkaController.onControllerResignation)
        self.deletion = TopicDeletionManager(self)
        self.reassigning: set[tuple[str, int]] = set()      # partitions being moved (partitionsBeingReassigned)
        self._checks_due: set[tuple[str, int]] = set()      # their ISR changed: a look is scheduled

    def is_active(self) -> bool:
        return not self.resigned and self.ctx.alive

    def resign(self) -> None:
        self.resigned = True

    def _registrations(self) -> dict[int, int]:
        return zk.registrations(self.store)

    def _all_partitions(self) -> list[tuple[str, int]]:
        """Every partition, but those of topics being deleted (their TopicDeletionManager owns them)."""
        marked = set(zk.topics_to_delete(self.store))
        return [(t, p) for t, p in zk.all_partitions(self.store) if t not in marked] if marked \
            else zk.all_partitions(self.store)

    def unclean_allowed(self, topic: str) -> bool:
        """The topic's unclean.leader.election.enable, else the broker's."""
        value = zk.topic_config(self.store, topic).get("unclean.leader.election.enable")
        if value is None:
            return self.ctx.config.unclean_leader_election_enable
        return parse_config_value("unclean.leader.election.enable", value, "bool", InvalidConfigError)

    # -- election and broker changes --------------------------------------------------------
    def on_elected(self) -> None:
        self.known = self._registrations()
        live = set(self.known)
        for topic, partition in self._all_partitions():
            state, version = self._read(topic, partition)
            dead_in_isr = [r for r in state["isr"] if r not in live]
            if state["leader"] not in live:
                self._elect(topic, partition, state, version, live, "leader failed")
            elif dead_in_isr:
                self._shrink_isr(topic, partition, state, version, dead_in_isr)
        # A new controller cannot know what its predecessor managed to tell whom: like Kafka's
        # (replica state machine start-up), it sends every live broker the state of all its replicas.
        self._send_leader_and_isr(self._all_partitions())
        self._resume_admin_work()

    def _resume_admin_work(self) -> None:
        """What a predecessor left under way or asked for (onControllerFailover: initializePartitionReassignments,
        tryTopicDeletion, pending preferred elections, the auto-rebalance task)."""
        for topic, partition in zk.ongoing_reassignments(self.store):
            self.reassigning.add((topic, partition))
            self._on_partition_reassignment(topic, partition)
        self.on_reassignment_requested()
        self.deletion.on_topics_marked()
        self.on_preferred_election_requested()
        if self.ctx.config.auto_leader_rebalance_enable:
            self.ctx.schedule(FIRST_REBALANCE_CHECK_MS, self._check_leader_imbalance, "auto leader rebalance",
                              foreground=False)

    def on_brokers_changed(self) -> None:
        if not self.is_active():
            return
        now = self._registrations()
        dead = sorted(set(self.known) - set(now))
        started = sorted(b for b, inc in now.items() if self.known.get(b) != inc)
        self.known = now
        if dead:
            self.deletion.on_broker_failure(set(dead))
            self._on_broker_failure(set(dead))
        if started:
            self._on_broker_startup(started)
            self.deletion.on_broker_startup(started)

    def _on_broker_failure(self, dead: set[int]) -> None:
        live = set(self.known)
        changed = []
        for topic, partition in self._all_partitions():
            state, version = self._read(topic, partition)
            if not dead & set(state["replicas"]):
                continue
            if state["leader"] in dead:
                changed += self._elect(topic, partition, state, version, live, "leader failed")
            else:
                gone = [r for r in state["isr"] if r in dead]
                if gone:
                    changed += self._shrink_isr(topic, partition, state, version, gone)
        self._send_leader_and_isr(changed)

    def _on_broker_startup(self, started: list[int]) -> None:
        live = set(self.known)
        back_online: list[tuple[str, int]] = []
        to_started: list[tuple[str, int]] = []
        for topic, partition in self._all_partitions():
            state, version = self._read(topic, partition)
            if not set(started) & set(state["replicas"]):
                continue
            if state["leader"] < 0 and self._elect(topic, partition, state, version, live, "partition back online"):
                back_online.append((topic, partition))  # every replica hears of the new leader
            else:
                to_started.append((topic, partition))   # only the returning broker needs telling
        self._send_leader_and_isr(back_online)
        self._send_leader_and_isr(to_started, only_to=set(started))

    # -- topics -----------------------------------------------------------------------------
    def on_topic_change(self, topic: str) -> None:
        """The topic's assignment node was written: its partitions without a state node are new
        (TopicChange for a new topic, PartitionModifications for added partitions)."""
        replicas = zk.assignment(self.store, topic)
        first = next((p for p in range(len(replicas)) if not self.store.exists(partition_path(topic, p))), None)
        if first is None:
            return
        added = replicas[first:]
        if first == 0:
            warning = collision_warning(topic)
            self.ctx.publish(ev.TopicCreated(topic=topic, partitions=len(replicas), replication_factor=len(replicas[0]),
                                             assignment=replicas, config=zk.topic_config(self.store, topic),
                                             warnings=[warning] if warning else []))
        else:
            self.ctx.publish(ev.PartitionsAdded(topic=topic, partitions=len(replicas), added=added))
        self.create_partitions(topic, added, first_partition=first)

    def create_partitions(self, topic: str, assignment: list[list[int]], first_partition: int = 0) -> None:
        live = set(self._registrations())
        created = []
        for partition, replicas in enumerate(assignment, start=first_partition):
            alive = [r for r in replicas if r in live]
            leader = alive[0] if alive else -1
            state: dict[str, Any] = {"leader": leader, "leader_epoch": 0, "isr": alive or list(replicas[:1]),
                                     "replicas": list(replicas), "controller_epoch": self.epoch}
            self.store.create(partition_path(topic, partition), state)
            if leader >= 0:
                self._publish_leader(topic, partition, state, "new topic", -1, False)
            else:
                self.ctx.publish(ev.PartitionOffline(topic=topic, partition=partition, leader_epoch=0,
                                                             isr=state["isr"], reason="no replica is alive"))
            created.append((topic, partition))
        self._send_leader_and_isr(created)

    # -- /admin: deletion, reassignment, preferred election ------------------------------------------
    def on_admin_change(self, path: str) -> None:
        if not self.is_active():
            return
        if path == zk.DELETE_TOPICS_PATH or path.startswith(zk.DELETE_TOPICS_PATH + "/"):
            self.deletion.on_topics_marked()
        elif path == zk.REASSIGN_PARTITIONS_PATH:
            self.on_reassignment_requested()
        elif path == zk.PREFERRED_REPLICA_ELECTION_PATH:
            self.on_preferred_election_requested()

    def on_reassignment_requested(self) -> None:
        """`/admin/reassign_partitions` (PartitionReassignment handler): start each move not under way."""
        for topic, partition, target in zk.requested_reassignments(self.store):
            if (topic, partition) in self.reassigning:
                continue
            if partition >= zk.partition_count(self.store, topic) or self.deletion.is_queued(topic):
                zk.remove_requested_reassignment(self.store, topic, partition)   # UNKNOWN_TOPIC_OR_PARTITION
                continue
            state, _ = self._read(topic, partition)
            replica_sets = ra.reassignment_state(state["replicas"], target)
            # U1: the sets go to the topic node first, so a new controller can carry on.
            zk.set_partition_assignment(self.store, topic, partition, replica_sets.replicas, replica_sets.adding,
                                        replica_sets.removing)
            self.reassigning.add((topic, partition))
            self.ctx.publish(ev.ReassignmentStarted(
                topic=topic, partition=partition, original=list(state["replicas"]), target=list(target),
                replicas=replica_sets.replicas, adding=replica_sets.adding, removing=replica_sets.removing))
            self._on_partition_reassignment(topic, partition)

    def on_partition_state_change(self, path: str) -> None:
        """A state node was written (a leader's ISR change): a partition being moved is looked at
        a watch's latency later (PartitionReassignmentIsrChangeHandler)."""
        if not self.reassigning:
            return
        parts = path.split("/")
        key = (parts[3], int(parts[5])) if len(parts) == 7 and parts[6] == "state" else None
        if key in self.reassigning and key not in self._checks_due:
            self._checks_due.add(key)
            self.ctx.schedule(WATCH_LATENCY_MS, lambda: self._reassignment_isr_changed(key),
                              f"reassignment of {key[0]}-{key[1]}: ISR changed")

    def _reassignment_isr_changed(self, key: tuple[str, int]) -> None:
        self._checks_due.discard(key)
        if self.is_active() and key in self.reassigning:
            self._on_partition_reassignment(*key)

    def _replica_sets(self, topic: str, partition: int) -> ra.ReassignmentState:
        replicas, adding, removing = zk.ongoing_reassignments(self.store).get(
            (topic, partition), (zk.assignment(self.store, topic)[partition], [], []))
        return ra.ReassignmentState(replicas, adding, removing)

    def _on_partition_reassignment(self, topic: str, partition: int) -> None:
        """Phase A until TRS is inside the ISR, then phase B (KafkaController.onPartitionReassignment)."""
        sets = self._replica_sets(topic, partition)
        state, version = self._read(topic, partition)
        if ra.is_reassignment_complete(sets.target, state["isr"]):
            self._complete_reassignment(topic, partition, sets)
            return
        if state["replicas"] == sets.replicas:
            return   # phase A done already: waiting for the new replicas to join the ISR
        # A1: the leader epoch bumped, with RS, to every replica of ORS + TRS; A2: those in AR start.
        state.update(replicas=sets.replicas, leader_epoch=state["leader_epoch"] + 1, controller_epoch=self.epoch)
        self.store.set(partition_path(topic, partition), state, expected_version=version)
        self._publish_step(topic, partition, "A1-A2", f"replicas {sets.adding} start following the leader and "
                           f"catch up; the move completes when {sets.target} are all in the ISR", state)
        self._send_leader_and_isr([(topic, partition)])

    def _complete_reassignment(self, topic: str, partition: int, sets: ra.ReassignmentState) -> None:
        """Phase B: leader into TRS (B3), RS and ISR shrunk to TRS (B4), removed replicas stopped and
        deleted (B5), RS = TRS in the topic node (B6), the request's entry gone (B7)."""
        live = set(self.known)
        target = sets.target
        state, version = self._read(topic, partition)
        previous = state["leader"]
        leader = previous
        if previous not in target or previous not in live:
            elected = ra.reassignment_leader(target, state["isr"], live)
            if elected is None:
                return   # no target replica can lead yet: looked at again on the next ISR change
            leader = elected
        self.reassigning.discard((topic, partition))
        removed_from_isr = [r for r in state["isr"] if r not in target]
        state.update(leader=leader, replicas=list(target), isr=[r for r in state["isr"] if r in target],
                     leader_epoch=state["leader_epoch"] + 1, controller_epoch=self.epoch)
        self.store.set(partition_path(topic, partition), state, expected_version=version)
        if leader != previous:
            self._publish_leader(topic, partition, state, "reassignment", previous, False)
        self._publish_step(topic, partition, "B3", f"replica set {target}, leader {leader}" +
                           (" (moved into the target replicas)" if leader != previous else " (kept)"), state)
        if removed_from_isr:
            self.ctx.publish(ev.IsrShrunk(topic=topic, partition=partition, leader=leader, removed=removed_from_isr,
                                          isr=list(state["isr"]), reason="replicas removed by reassignment"))
        self._send_leader_and_isr([(topic, partition)])
        if sets.removing:
            for broker in sorted(set(sets.removing) & live):
                self._send_stop_replica(broker, topic, partition, state["leader_epoch"])
            self._publish_step(topic, partition, "B4-B5", f"replicas {sets.removing} leave the ISR and are "
                               f"stopped and deleted (StopReplica, delete)", state)
        zk.set_partition_assignment(self.store, topic, partition, target, [], [])
        zk.remove_requested_reassignment(self.store, topic, partition)
        self.ctx.publish(ev.ReassignmentCompleted(topic=topic, partition=partition, replicas=list(target),
                                                  leader=leader, isr=list(state["isr"])))
        self.deletion.resume(topic)

    def _send_stop_replica(self, broker: int, topic: str, partition: int, leader_epoch: int) -> None:
        request = StopReplicaRequest(self.broker_id, self.epoch,
                                     [StopReplicaPartitionState(topic, partition, leader_epoch, True)])
        self.ctx.send_to_broker(broker, request, {"partitions": [f"{topic}-{partition}"], "delete_partition": True},
                                foreground=True, on_response=lambda _answer: None)

    def _publish_step(self, topic: str, partition: int, phase: str, description: str, state: dict) -> None:
        self.ctx.publish(ev.ReassignmentStep(topic=topic, partition=partition, phase=phase, description=description,
                                             replicas=list(state["replicas"]), leader=state["leader"],
                                             isr=list(state["isr"])))

    def on_preferred_election_requested(self) -> None:
        """`/admin/preferred_replica_election`: elect, then remove the node (onReplicaElection, ZkTriggered)."""
        partitions = zk.requested_preferred_elections(self.store)
        if not self.store.exists(zk.PREFERRED_REPLICA_ELECTION_PATH):
            return
        self.elect_preferred_leaders(partitions, "preferred replica election")
        self.store.delete(zk.PREFERRED_REPLICA_ELECTION_PATH)

    def elect_preferred_leaders(self, partitions: list[tuple[str, int]], reason: str) -> list[tuple[str, int]]:
        """PreferredReplicaPartitionLeaderElectionStrategy for each partition that exists, is not being
        deleted or moved, and whose first replica is alive, in the ISR and not leading yet."""
        live = set(self.known)
        changed = []
        for topic, partition in partitions:
            if partition >= zk.partition_count(self.store, topic) or self.deletion.is_queued(topic) \
                    or zk.is_marked_for_deletion(self.store, topic) or (topic, partition) in self.reassigning:
                continue
            state, version = self._read(topic, partition)
            leader = ra.preferred_replica_leader(state["replicas"], state["isr"], live)
            if leader is None or leader == state["leader"]:
                continue
            previous = state["leader"]
            state.update(leader=leader, leader_epoch=state["leader_epoch"] + 1, controller_epoch=self.epoch)
            self.store.set(partition_path(topic, partition), state, expected_version=version)
            self._publish_leader(topic, partition, state, reason, previous, False)
            changed.append((topic, partition))
        self._send_leader_and_isr(changed)
        return changed

    def _check_leader_imbalance(self) -> None:
        """auto.leader.rebalance.enable's task (checkAndTriggerAutoLeaderRebalance), then the next one."""
        if not self.is_active():
            return   # resigned or down: the task ends with this controller
        try:
            partitions = []
            for topic, partition in self._all_partitions():
                if (topic, partition) in self.reassigning:
                    continue
                state = zk.partition_state(self.store, topic, partition) or {}
                partitions.append(ra.PartitionLeadership(topic, partition, list(state.get("replicas", [])),
                                                         state.get("leader", -1), list(state.get("isr", []))))
            config = self.ctx.config
            candidates = ra.auto_rebalance_candidates(partitions, set(self.known),
                                                      config.leader_imbalance_per_broker_percentage)
            if candidates:
                self.elect_preferred_leaders(candidates, "auto leader rebalance")
        finally:
            self.ctx.schedule(self.ctx.config.leader_imbalance_check_interval_seconds * 1000,
                              self._check_leader_imbalance, "auto leader rebalance", foreground=False)

    # -- state changes ----------------------------------------------------------------------
    def _elect(self, topic: str, partition: int, state: dict, version: int, live: set[int],
               reason: str) -> list[tuple[str, int]]:
        unclean_allowed = self.unclean_allowed(topic)
        previous = state["leader"]
        leader, isr, unclean = elect_leader(state["replicas"], state["isr"], live, unclean_allowed)
        if leader < 0 and previous < 0:
            return []  # still offline: nothing new to say
        state.update(leader=leader, isr=isr, leader_epoch=state["leader_epoch"] + 1, controller_epoch=self.epoch)
        self.store.set(partition_path(topic, partition), state, expected_version=version)
        if leader < 0:
            self.ctx.publish(ev.PartitionOffline(
                topic=topic, partition=partition, leader_epoch=state["leader_epoch"], isr=isr,
                reason="no live replica in the ISR" + ("" if unclean_allowed else
                                                       " (unclean.leader.election.enable=false)")))
        else:
            self._publish_leader(topic, partition, state, "unclean" if unclean else reason, previous, unclean)
        return [(topic, partition)]

    def _shrink_isr(self, topic: str, partition: int, state: dict, version: int,
                    gone: list[int]) -> list[tuple[str, int]]:
        isr = [r for r in state["isr"] if r not in gone] or state["isr"][-1:]
        if isr == state["isr"]:
            return []
        state.update(isr=isr, leader_epoch=state["leader_epoch"] + 1, controller_epoch=self.epoch)
        self.store.set(partition_path(topic, partition), state, expected_version=version)
        self.ctx.publish(ev.IsrShrunk(topic=topic, partition=partition, leader=state["leader"],
                                              removed=[r for r in gone if r not in isr], isr=list(isr),
                                              reason="broker failed (controller)"))
        return [(topic, partition)]

    def _publish_leader(self, topic: str, partition: int, state: dict, reason: str, previous: int,
                        unclean: bool) -> None:
        self.ctx.publish(ev.LeaderElected(
            topic=topic, partition=partition, leader=state["leader"], leader_epoch=state["leader_epoch"],
            isr=list(state["isr"]), reason=reason, previous_leader=previous, unclean=unclean))

    def _read(self, topic: str, partition: int) -> tuple[dict, int]:
        return self.store.get(partition_path(topic, partition))

    def _send_leader_and_isr(self, partitions: list[tuple[str, int]], only_to: set[int] | None = None) -> None:
        """One LeaderAndIsr request per live replica broker, with the current state of each partition."""
        live = set(self.known) or set(self._registrations())
        per_broker: dict[int, list[PartitionState]] = {}
        for topic, partition in dict.fromkeys(partitions):
            state, version = self._read(topic, partition)
            ps = PartitionState(topic, partition, state["leader"], state["leader_epoch"], list(state["isr"]),
                                list(state["replicas"]), version)
            for replica in state["replicas"]:
                if replica in live and (only_to is None or replica in only_to):
                    per_broker.setdefault(replica, []).append(ps)
        for broker_id in sorted(per_broker):
            self._send_to(broker_id, per_broker[broker_id])

    def _send_to(self, broker_id: int, states: list[PartitionState]) -> None:
        """Send, and send again if no answer comes within controller.socket.timeout.ms — as
        Kafka's controller channel keeps retrying until the broker answers or goes away."""
        sender = self.ctx
        request = LeaderAndIsrRequest(self.broker_id, self.epoch, states)
        summary = {"partitions": [{"topic": s.topic, "partition": s.partition, "leader": s.leader,
                                   "leader_epoch": s.leader_epoch, "isr": s.isr} for s in states]}
        answered: list[object] = []
        sender.send_to_broker(broker_id, request, summary, foreground=True, on_response=answered.append)
        incarnation = self.known.get(broker_id)

        def retry() -> None:
            if answered or not self.is_active() or self._registrations().get(broker_id) != incarnation:
                return
            fresh = []
            for s in states:
                state, version = self._read(s.topic, s.partition)
                fresh.append(PartitionState(s.topic, s.partition, state["leader"], state["leader_epoch"],
                                            list(state["isr"]), list(state["replicas"]), version))
            self._send_to(broker_id, fresh)
        sender.schedule(CONTROLLER_SOCKET_TIMEOUT_MS, retry, f"LeaderAndIsr to broker {broker_id} retry",
                        foreground=False)
