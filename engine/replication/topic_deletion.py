"""Topic deletion in ZooKeeper mode: the controller's TopicDeletionManager.

`kafka-topics --delete` writes `/admin/delete_topics/<t>` (engine/metadata/zk.py); the controller
watches it and, for each topic marked (TopicDeletionManager.onTopicDeletion / onPartitionDeletion):
- takes its partitions offline (leader -1 in their state nodes: brokers' metadata no longer lists
  the topic, as Kafka's UpdateMetadata with LeaderDuringDelete makes them drop it);
- sends every replica on a live broker StopReplica with delete_partition=true
  (ReplicaDeletionStarted); a replica on a broker that is down is ReplicaDeletionIneligible, and the
  whole deletion waits for that broker to come back (then it is sent StopReplica too);
- once every replica answered (ReplicaDeletionSuccessful), removes the topic's znodes
  (completeDeleteTopic): partition states, assignment, config, `/admin/delete_topics/<t>`.
A topic that is being reassigned waits until the move completes (markTopicIneligibleForDeletion).
A controller elected while a deletion is under way starts it again from the marks in the store;
a broker that already deleted a replica answers StopReplica for it all the same.

Where the lab is simpler than Kafka: the replicas go straight to ReplicaDeletionStarted (one
StopReplica with delete=true, no OfflineReplica step with delete=false before it), and the group
coordinator keeps committed offsets of a deleted topic's partitions (Kafka removes them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine import events as ev
from engine.metadata import zk
from engine.metadata.zk import partition_path
from engine.protocol import StopReplicaPartitionState, StopReplicaRequest, StopReplicaResponse

if TYPE_CHECKING:
    from engine.replication.controller import Controller

CONTROLLER_SOCKET_TIMEOUT_MS = 30000   # Kafka's controller.socket.timeout.ms: StopReplica is sent again after it
STARTED, SUCCESSFUL, INELIGIBLE = "ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "ReplicaDeletionIneligible"


class TopicDeletionManager:
    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        self.queued: list[str] = []                                   # topics being deleted, in order
        self.replica_states: dict[tuple[str, int, int], str] = {}     # (topic, partition, broker) -> state

    def is_queued(self, topic: str) -> bool:
        return topic in self.queued

    # -- what starts and resumes a deletion ---------------------------------------------------
    def on_topics_marked(self) -> None:
        """`/admin/delete_topics` changed (KafkaController's TopicDeletion handler)."""
        store = self.controller.store
        for topic in zk.topics_to_delete(store):
            if topic in self.queued:
                continue
            if not zk.topic_exists(store, topic):
                store.delete(zk.delete_topic_path(topic))   # nothing to delete
            elif not self.controller.ctx.config.delete_topic_enable:
                store.delete(zk.delete_topic_path(topic))   # "Removing ... since delete topic is disabled"
            else:
                self.queued.append(topic)
                self._start(topic)

    def on_broker_startup(self, started: list[int]) -> None:
        """Replicas ineligible because their broker was down are tried again (resumeDeletionForTopics)."""
        for topic in list(self.queued):
            again = [(t, p, b) for (t, p, b), state in self.replica_states.items()
                     if t == topic and b in started and state == INELIGIBLE]
            self._send_stop_replicas(again)

    def on_broker_failure(self, dead: set[int]) -> None:
        """A broker died before answering: its replicas are ineligible until it returns (failReplicaDeletion)."""
        for key, state in self.replica_states.items():
            if key[2] in dead and state == STARTED:
                self.replica_states[key] = INELIGIBLE

    def resume(self, topic: str) -> None:
        """The reassignment that held `topic` back completed."""
        if topic in self.queued and not any(k[0] == topic for k in self.replica_states):
            self._start(topic)

    # -- the deletion ------------------------------------------------------------------------
    def _start(self, topic: str) -> None:
        controller = self.controller
        if any(t == topic for t, _ in controller.reassigning):
            return   # markTopicIneligibleForDeletion("topic reassignment in progress"): resumed on completion
        live = set(controller.known)
        store = controller.store
        keys: list[tuple[str, int, int]] = []
        for partition, replicas in enumerate(zk.assignment(store, topic)):
            self._take_offline(topic, partition)
            keys += [(topic, partition, broker) for broker in replicas]
        ineligible = sorted({b for _, _, b in keys if b not in live})
        for key in keys:
            self.replica_states[key] = INELIGIBLE if key[2] not in live else STARTED
        controller.ctx.publish(ev.TopicDeletionStarted(
            topic=topic, partitions=zk.partition_count(store, topic),
            replicas=sorted({b for _, _, b in keys}), ineligible=ineligible))
        self._send_stop_replicas([k for k in keys if k[2] in live])
        self._maybe_complete(topic)

    def _take_offline(self, topic: str, partition: int) -> None:
        controller = self.controller
        state, version = controller.store.get(partition_path(topic, partition))
        if state["leader"] < 0:
            return
        state.update(leader=-1, leader_epoch=state["leader_epoch"] + 1, controller_epoch=controller.epoch)
        controller.store.set(partition_path(topic, partition), state, expected_version=version)

    def _send_stop_replicas(self, keys: list[tuple[str, int, int]]) -> None:
        per_broker: dict[int, list[tuple[str, int]]] = {}
        for topic, partition, broker in keys:
            self.replica_states[(topic, partition, broker)] = STARTED
            per_broker.setdefault(broker, []).append((topic, partition))
        for broker in sorted(per_broker):
            self._send_to(broker, per_broker[broker])

    def _send_to(self, broker: int, partitions: list[tuple[str, int]]) -> None:
        controller = self.controller
        states = []
        for topic, partition in partitions:
            state = controller.store.peek(partition_path(topic, partition)) or {"leader_epoch": -1}
            states.append(StopReplicaPartitionState(topic, partition, state["leader_epoch"], True))
        request = StopReplicaRequest(controller.broker_id, controller.epoch, states)
        summary = {"partitions": [f"{t}-{p}" for t, p in partitions], "delete_partition": True}
        answered: list[object] = []
        incarnation = controller.known.get(broker)

        def on_response(response: object) -> None:
            answered.append(response)
            if controller.is_active() and isinstance(response, StopReplicaResponse) and not response.errors:
                self._on_deleted(broker, partitions)

        def retry() -> None:
            waiting = [(t, p) for t, p in partitions if self.replica_states.get((t, p, broker)) == STARTED]
            if not answered and waiting and controller.is_active() and \
                    zk.registrations(controller.store).get(broker) == incarnation:
                self._send_to(broker, waiting)
        controller.ctx.send_to_broker(broker, request, summary, foreground=True, on_response=on_response)
        controller.ctx.schedule(CONTROLLER_SOCKET_TIMEOUT_MS, retry, f"StopReplica to broker {broker} retry",
                                foreground=False)

    def _on_deleted(self, broker: int, partitions: list[tuple[str, int]]) -> None:
        topics = []
        for topic, partition in partitions:
            if self.replica_states.get((topic, partition, broker)) == STARTED:
                self.replica_states[(topic, partition, broker)] = SUCCESSFUL
                topics.append(topic)
        for topic in dict.fromkeys(topics):
            self._maybe_complete(topic)

    def _maybe_complete(self, topic: str) -> None:
        states = [s for (t, _, _), s in self.replica_states.items() if t == topic]
        if topic not in self.queued or not states or any(s != SUCCESSFUL for s in states):
            return
        partitions = zk.partition_count(self.controller.store, topic)
        self.queued.remove(topic)
        for key in [k for k in self.replica_states if k[0] == topic]:
            del self.replica_states[key]
        zk.remove_topic(self.controller.store, topic)
        self.controller.ctx.publish(ev.TopicDeleted(topic=topic, partitions=partitions))
