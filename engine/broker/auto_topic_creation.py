"""A broker creates `__consumer_offsets` itself, on the first FindCoordinator (Kafka's AutoTopicCreationManager).

KafkaApis.handleFindCoordinatorRequest asks for the internal topic; when it does not exist yet the
broker creates it — in ZooKeeper mode by writing its znodes (AdminZkClient.createTopic), which the
controller then turns into partitions — and answers COORDINATOR_NOT_AVAILABLE: the client retries.
The topic gets `offsets.topic.num.partitions` partitions, replication factor
min(`offsets.topic.replication.factor`, live brokers), compaction and 100 MiB segments, over the
broker's defaults for topic configs. Replicas are placed as for any new topic (AdminUtils), from
the cluster's one seeded "assignment" stream.

It never runs the scheduler, so a request handler may call it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.common.topics import check_collision
from engine.groups.offsets_topic import OFFSETS_TOPIC
from engine.metadata import zk
from engine.metadata.view import MetadataReader
from engine.node import World
from engine.replication.assignment import RackInformationError, assign_replicas, place_replicas_striped

OFFSETS_TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": 104857600}


def ensure_offsets_topic(world: World, metadata: MetadataReader, config: Any, topic_defaults: dict,
                         create: Callable[[str, list[list[int]], dict, str], None], *, striped: bool = False) -> bool:
    """True when `__consumer_offsets` exists already; otherwise create it if there is a controller
    to create its partitions and a live broker to hold them, and return False.

    `config` is the broker's BrokerConfig (offsets.topic.*), `topic_defaults` its defaults for topic
    configs; `create(name, assignment, config, topic_id)` writes the topic: its znodes in ZooKeeper
    mode, a CreateTopics request to the active controller in KRaft (Broker.create_topic)."""
    if metadata.topic_exists(OFFSETS_TOPIC):
        return True
    live = sorted(metadata.registrations())
    if metadata.controller_id() < 0 or not live:
        return False
    try:
        check_collision(OFFSETS_TOPIC, metadata.topic_names())
    except ValueError:
        return False    # a topic that collides with it exists: Kafka's validation refuses the creation
    replication_factor = min(config.offsets_topic_replication_factor, len(live))
    try:
        if striped:     # KRaft: the controller's StripedReplicaPlacer
            assignment = place_replicas_striped(live, config.offsets_topic_num_partitions, replication_factor,
                                                world.stream("assignment"), racks=metadata.broker_racks())
        else:
            assignment = assign_replicas(live, config.offsets_topic_num_partitions, replication_factor,
                                         world.stream("assignment"), racks=metadata.broker_racks())
    except RackInformationError:
        return False    # some brokers have a rack, some not: creation fails as Kafka's (RackAwareMode.Enforced)
    merged = {**topic_defaults, **OFFSETS_TOPIC_CONFIG}
    create(OFFSETS_TOPIC, assignment, merged, zk.new_topic_id(world.random.fork(f"topic-id/{OFFSETS_TOPIC}")))
    return False
