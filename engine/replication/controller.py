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
from engine.metadata.store import MetadataStore
from engine.metadata.zk import partition_path  # lab/ and engine.timers import it from here too
from engine.protocol import LeaderAndIsrRequest, PartitionState
from engine.storage.errors import InvalidConfigError

CONTROLLER_SOCKET_TIMEOUT_MS = 30000  # Kafka's controller.socket.timeout.ms

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

    def is_active(self) -> bool:
        return not self.resigned and self.ctx.alive

    def resign(self) -> None:
        self.resigned = True

    def _registrations(self) -> dict[int, int]:
        return zk.registrations(self.store)

    def _all_partitions(self) -> list[tuple[str, int]]:
        return zk.all_partitions(self.store)

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

    def on_brokers_changed(self) -> None:
        if not self.is_active():
            return
        now = self._registrations()
        dead = sorted(set(self.known) - set(now))
        started = sorted(b for b, inc in now.items() if self.known.get(b) != inc)
        self.known = now
        if dead:
            self._on_broker_failure(set(dead))
        if started:
            self._on_broker_startup(started)

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
