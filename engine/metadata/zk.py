"""ZooKeeper-mode Kafka's znodes: where the cluster's metadata lives, and how it is read and written.

The store (engine/metadata/store.py) is the source of truth for which brokers are alive, which
topics exist and how they are configured, where each partition's replicas are and who leads them,
and who the controller is. Brokers, the controller and the facade all read it here; nobody keeps a
second registry. The paths are Kafka's (ZkData.scala):

    /brokers/ids/<id>                          ephemeral: a live broker's registration (BrokerIdZNode)
    /brokers/topics/<t>                        the replica assignment and the topic id (TopicZNode)
    /brokers/topics/<t>/partitions/<p>/state   leader, leader epoch, ISR (TopicPartitionStateZNode)
    /config/topics/<t>                         the topic's config (ConfigEntityZNode)
    /controller                                ephemeral: the controller's broker id (ControllerZNode)
    /controller_epoch                          how many controllers were elected (ControllerEpochZNode)
    /admin/delete_topics/<t>                   a topic marked for deletion (DeleteTopicsTopicZNode)
    /admin/reassign_partitions                 a reassignment asked for (ReassignPartitionsZNode)
    /admin/preferred_replica_election          a preferred leader election asked for (PreferredReplicaElectionZNode)

A topic is created as AdminZkClient.createTopicWithAssignment does: its config node first, then
its assignment node, whose watch tells the controller (KafkaController's TopicChange handler) to
create the partitions. Topics are listed in the order they were created (the nodes' czxid).

The `/admin` nodes are how ZooKeeper-era tools asked the controller for work: `kafka-topics
--delete` writes `/admin/delete_topics/<t>`, `kafka-reassign-partitions` `/admin/reassign_partitions`
(KIP-455's AlterPartitionReassignments request later replaced the node; the controller's steps are
the same), `kafka-preferred-replica-election` `/admin/preferred_replica_election`. The controller
watches them, does the work and removes them. While a partition moves, its topic node holds the
replica sets being added and removed (`adding_replicas`, `removing_replicas`: TopicZNode since
Kafka 2.4), so a new controller can carry the move on.
"""
from __future__ import annotations

import base64
import random
from dataclasses import dataclass, field

from engine.metadata.store import MetadataStore, NodeExistsError

BROKER_IDS_PATH = "/brokers/ids"
TOPICS_PATH = "/brokers/topics"
TOPIC_CONFIGS_PATH = "/config/topics"
CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
ADMIN_PATH = "/admin"
DELETE_TOPICS_PATH = "/admin/delete_topics"
REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH = "/admin/preferred_replica_election"
# Topic configs that are not the log's (Partition and the controller read them, LogConfig does not).
NOT_LOG_CONFIGS = ("min.insync.replicas", "unclean.leader.election.enable")


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS_PATH}/{topic}"


def topic_config_path(topic: str) -> str:
    return f"{TOPIC_CONFIGS_PATH}/{topic}"


def partition_path(topic: str, partition: int) -> str:
    return f"{TOPICS_PATH}/{topic}/partitions/{partition}/state"


def topic_of(path: str) -> str | None:
    """The topic whose assignment node `path` is (None for any other node)."""
    parts = path.split("/")
    return parts[3] if len(parts) == 4 and path.startswith(TOPICS_PATH + "/") else None


# -- topics -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TopicInfo:
    """A topic as its znodes describe it (a copy: change a topic by writing its nodes)."""
    name: str
    partitions: int
    replication_factor: int
    config: dict = field(default_factory=dict)
    topic_id: str = ""             # Kafka's topic id: 16 random bytes, URL-safe base64 without padding


def new_topic_id(rng: random.Random) -> str:
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")


def create_topic(store: MetadataStore, topic: str, assignment: list[list[int]], config: dict,
                 topic_id: str) -> None:
    """Write a new topic's znodes: its config, then its assignment (which the controller watches).
    Raises NodeExistsError if the topic exists."""
    if store.exists(topic_path(topic)):
        raise NodeExistsError(topic_path(topic))
    store.create(topic_config_path(topic), dict(config))
    store.create(topic_path(topic), {"partitions": {str(p): list(r) for p, r in enumerate(assignment)},
                                     "topic_id": topic_id})


def add_partitions(store: MetadataStore, topic: str, added: list[list[int]]) -> None:
    """Append partitions to a topic's assignment (AdminZkClient.addPartitions); the controller creates them."""
    data, version = store.get(topic_path(topic))
    first = len(data["partitions"])
    data["partitions"].update({str(first + i): list(r) for i, r in enumerate(added)})
    store.set(topic_path(topic), data, expected_version=version)


def topic_exists(store: MetadataStore, topic: str) -> bool:
    return store.exists(topic_path(topic))


def topic_names(store: MetadataStore) -> list[str]:
    """Every topic, in the order they were created."""
    names = [t for t in store.children(TOPICS_PATH) if store.exists(topic_path(t))]
    return sorted(names, key=lambda t: store.created(topic_path(t)))


def assignment(store: MetadataStore, topic: str) -> list[list[int]]:
    """The topic's replica lists, by partition ([] if there is no such topic)."""
    data = store.peek(topic_path(topic))
    if data is None:
        return []
    return [list(data["partitions"][str(p)]) for p in range(len(data["partitions"]))]


def partition_count(store: MetadataStore, topic: str) -> int:
    """How many partitions the topic has (0: no such topic)."""
    data = store.peek(topic_path(topic))
    return 0 if data is None else len(data["partitions"])


def topic_config(store: MetadataStore, topic: str) -> dict:
    """The topic's config (a copy)."""
    return dict(store.peek(topic_config_path(topic)) or {})


def log_config(config: dict) -> dict:
    """The part of a topic's config its logs read (LogConfig's keys)."""
    return {k: v for k, v in config.items() if k not in NOT_LOG_CONFIGS}


def read_topic(store: MetadataStore, topic: str) -> TopicInfo | None:
    data = store.peek(topic_path(topic))
    if data is None:
        return None
    partitions = data["partitions"]
    removing = len(data.get("removing_replicas", {}).get("0", []))   # RF once partition 0's move completes
    return TopicInfo(topic, len(partitions), len(partitions["0"]) - removing if partitions else 0,
                     topic_config(store, topic), data.get("topic_id", ""))


def all_partitions(store: MetadataStore) -> list[tuple[str, int]]:
    """Every partition of every topic, topics in creation order."""
    return [(t, p) for t in topic_names(store) for p in range(partition_count(store, t))]


def partition_state(store: MetadataStore, topic: str, partition: int) -> dict | None:
    """The partition's state node (leader, leader_epoch, isr, replicas, controller_epoch), shared: read only."""
    return store.peek(partition_path(topic, partition))


# -- /admin: deletion, reassignment, preferred leader election ----------------------------------------
def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS_PATH}/{topic}"


def mark_topic_for_deletion(store: MetadataStore, topic: str) -> None:
    """`kafka-topics --delete` in ZooKeeper mode (AdminZkClient.deleteTopic): the controller watches
    `/admin/delete_topics` and deletes the topic. Marking it twice is harmless (NodeExists ignored)."""
    if not store.exists(delete_topic_path(topic)):
        store.create(delete_topic_path(topic), {})


def topics_to_delete(store: MetadataStore) -> list[str]:
    """Topics marked for deletion (whose topic node still exists), in the order they were marked."""
    names = [t for t in store.children(DELETE_TOPICS_PATH) if store.exists(delete_topic_path(t))]
    return sorted(names, key=lambda t: store.created(delete_topic_path(t)))


def is_marked_for_deletion(store: MetadataStore, topic: str) -> bool:
    return store.exists(delete_topic_path(topic))


def remove_topic(store: MetadataStore, topic: str) -> None:
    """The last step of a deletion (TopicDeletionManager.completeDeleteTopic): the topic's
    partition states and assignment, its config, then its `/admin/delete_topics` entry."""
    for partition in range(partition_count(store, topic)):
        store.delete(partition_path(topic, partition))
    store.delete(topic_path(topic))
    store.delete(topic_config_path(topic))
    store.delete(delete_topic_path(topic))


def request_reassignment(store: MetadataStore, partitions: list[tuple[str, int, list[int]]]) -> None:
    """`/admin/reassign_partitions` as the ZooKeeper-era tool wrote it. NodeExistsError while one runs."""
    store.create(REASSIGN_PARTITIONS_PATH, {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r)} for t, p, r in partitions]})


def requested_reassignments(store: MetadataStore) -> list[tuple[str, int, list[int]]]:
    data = store.peek(REASSIGN_PARTITIONS_PATH)
    return [] if data is None else [(e["topic"], e["partition"], list(e["replicas"])) for e in data["partitions"]]


def remove_requested_reassignment(store: MetadataStore, topic: str, partition: int) -> None:
    """A partition's move completed: off `/admin/reassign_partitions`, which goes once empty
    (KafkaController.removePartitionFromReassigningPartitions)."""
    data = store.get_or_none(REASSIGN_PARTITIONS_PATH)
    if data is None:
        return
    left = [e for e in data["partitions"] if (e["topic"], e["partition"]) != (topic, partition)]
    if left:
        store.set(REASSIGN_PARTITIONS_PATH, {**data, "partitions": left})
    else:
        store.delete(REASSIGN_PARTITIONS_PATH)


def set_partition_assignment(store: MetadataStore, topic: str, partition: int, replicas: list[int],
                             adding: list[int], removing: list[int]) -> None:
    """One partition's replicas in the topic node, with the sets being added and removed while it
    moves (KafkaZkClient.setTopicAssignment with a ReplicaAssignment)."""
    data, version = store.get(topic_path(topic))
    key = str(partition)
    data["partitions"][key] = list(replicas)
    for field_name, values in (("adding_replicas", adding), ("removing_replicas", removing)):
        sets = data.get(field_name, {})
        if values:
            sets[key] = list(values)
        else:
            sets.pop(key, None)
        if sets:
            data[field_name] = sets
        else:
            data.pop(field_name, None)
    store.set(topic_path(topic), data, expected_version=version)


def ongoing_reassignments(store: MetadataStore) -> dict[tuple[str, int], tuple[list[int], list[int], list[int]]]:
    """Partitions being moved: (topic, partition) -> (replicas, adding, removing), from the topic nodes."""
    out = {}
    for topic in topic_names(store):
        data = store.peek(topic_path(topic)) or {}
        adding, removing = data.get("adding_replicas", {}), data.get("removing_replicas", {})
        for key in sorted(set(adding) | set(removing), key=int):
            out[(topic, int(key))] = (list(data["partitions"][key]), list(adding.get(key, [])),
                                      list(removing.get(key, [])))
    return out


def request_preferred_election(store: MetadataStore, partitions: list[tuple[str, int]]) -> None:
    """`/admin/preferred_replica_election` (the ZooKeeper-era kafka-preferred-replica-election tool).
    NodeExistsError while one is under way."""
    store.create(PREFERRED_REPLICA_ELECTION_PATH, {"version": 1, "partitions": [
        {"topic": t, "partition": p} for t, p in partitions]})


def requested_preferred_elections(store: MetadataStore) -> list[tuple[str, int]]:
    data = store.peek(PREFERRED_REPLICA_ELECTION_PATH)
    return [] if data is None else [(e["topic"], e["partition"]) for e in data["partitions"]]


# -- brokers and the controller ------------------------------------------------------------------
def register_broker(store: MetadataStore, broker_id: int, data: dict, session: int,
                    previous_session: int | None) -> None:
    """The broker's ephemeral `/brokers/ids/<id>` under `session` (KafkaZkClient.registerBroker).

    Restarted within its old session's time-out, the old session is closed and the registration
    carries on under the new one: the controller sees a re-registration, not a failure."""
    path = broker_path(broker_id)
    if previous_session is not None and store.session_alive(previous_session):
        store.expire_session_keeping(previous_session, path, session, data)
    else:
        store.create(path, data, session=session)


def registrations(store: MetadataStore) -> dict[int, int]:
    """Live broker id -> the incarnation it registered with."""
    out = {}
    for child in store.children(BROKER_IDS_PATH):
        data = store.peek(broker_path(int(child)))
        if data is not None:
            out[int(child)] = data["incarnation"]
    return out


def broker_racks(store: MetadataStore) -> dict[int, str]:
    """Live broker id -> its `broker.rack`, for the brokers registered with one (the "rack" field of
    `/brokers/ids/<id>`, as KafkaZkClient.registerBroker writes it)."""
    out = {}
    for child in store.children(BROKER_IDS_PATH):
        data = store.peek(broker_path(int(child)))
        if data is not None and data.get("rack"):
            out[int(child)] = data["rack"]
    return out


def controller_id(store: MetadataStore) -> int:
    data = store.peek(CONTROLLER_PATH)
    return data["brokerid"] if data else -1


def controller_epoch(store: MetadataStore) -> int:
    data = store.peek(CONTROLLER_EPOCH_PATH)
    return data["epoch"] if data else 0


def elect_controller(store: MetadataStore, broker_id: int, session: int) -> int | None:
    """Try to become the controller (KafkaZkClient.registerControllerAndIncrementControllerEpoch):
    create the ephemeral `/controller`, then bump `/controller_epoch`. The new epoch, or None if
    another broker is the controller."""
    if store.exists(CONTROLLER_PATH):
        return None
    try:
        store.create(CONTROLLER_PATH, {"brokerid": broker_id}, session=session)
    except NodeExistsError:
        return None
    epoch = controller_epoch(store) + 1
    if store.exists(CONTROLLER_EPOCH_PATH):
        store.set(CONTROLLER_EPOCH_PATH, {"epoch": epoch})
    else:
        store.create(CONTROLLER_EPOCH_PATH, {"epoch": epoch})
    return epoch
