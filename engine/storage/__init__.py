"""Storage: bytes on disk, as Kafka's `storage` module keeps them.

Record batches in the v2 format, log segments with their offset and time indexes, the partition
log with its recovery and retention, the producer-state snapshot and the checkpoint files (the
high watermark's and the leader-epoch cache's). Nothing here knows about brokers, the network or
the cluster: a broker node (engine.broker) owns its logs, the replication layer drives them.
"""
