"""KRaft mode's controller (KIP-500/631): the quorum controller that keeps the cluster's metadata as
records in the `__cluster_metadata` log, and the requests brokers send it."""
