"""The KRaft metadata image (engine/metadata/image.py): records replayed as MetadataImage/MetadataDelta do."""
from __future__ import annotations

from engine.metadata import records as mr
from engine.metadata.image import FENCE, NO_LEADER_CHANGE, UNFENCE, MetadataImage

TID = "AAAAAAAAAAAAAAAAAAAAAQ"


def replay(image: MetadataImage, *records) -> None:
    for record in records:
        # through the bytes Kafka would write, so the image reads what a log holds
        image.replay(mr.decode(mr.encode(record)), image.offset + 1)


def test_topic_and_partitions_read_as_the_zookeeper_state_reads():
    image = MetadataImage()
    replay(image, mr.TopicRecord(name="t", topic_id=TID),
           mr.ConfigRecord(resource_type=2, resource_name="t", name="retention.ms", value="1000"),
           mr.PartitionRecord(partition_id=0, topic_id=TID, replicas=[1, 2], isr=[1, 2], leader=1,
                              leader_epoch=0, partition_epoch=0))
    assert image.topic_names() == ["t"]
    assert image.topic_config("t") == {"retention.ms": "1000"}
    assert image.partition_state("t", 0)["leader"] == 1
    info = image.read_topic("t")
    assert (info.partitions, info.replication_factor, info.topic_id) == (1, 2, TID)
    assert image.take_delta().changed_partitions == {("t", 0)}
    assert not image.take_delta()


def test_partition_change_bumps_leader_epoch_only_with_a_leader_change():
    image = MetadataImage()
    replay(image, mr.TopicRecord(name="t", topic_id=TID),
           mr.PartitionRecord(partition_id=0, topic_id=TID, replicas=[1, 2, 3], isr=[1, 2, 3], leader=1,
                              leader_epoch=0, partition_epoch=0))
    replay(image, mr.PartitionChangeRecord(partition_id=0, topic_id=TID, isr=[1, 2], leader=NO_LEADER_CHANGE))
    state = image.partition_state("t", 0)
    assert (state["leader_epoch"], state["partition_epoch"], state["isr"]) == (0, 1, [1, 2])
    replay(image, mr.PartitionChangeRecord(partition_id=0, topic_id=TID, leader=2))
    state = image.partition_state("t", 0)
    assert (state["leader"], state["leader_epoch"], state["partition_epoch"]) == (2, 1, 2)


def test_fencing_and_removal():
    image = MetadataImage()
    replay(image, mr.RegisterBrokerRecord(broker_id=1, incarnation_id=TID, broker_epoch=0, fenced=True))
    assert image.registrations() == {}
    replay(image, mr.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, fenced=UNFENCE))
    assert image.registrations() == {1: 0}
    replay(image, mr.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, fenced=FENCE))
    assert image.registrations() == {}
    replay(image, mr.TopicRecord(name="t", topic_id=TID),
           mr.PartitionRecord(partition_id=0, topic_id=TID, replicas=[1], isr=[1], leader=1, leader_epoch=0,
                              partition_epoch=0))
    image.take_delta()
    replay(image, mr.RemoveTopicRecord(topic_id=TID))
    assert image.topic_names() == [] and image.take_delta().deleted_topics == {"t": [[1]]}
