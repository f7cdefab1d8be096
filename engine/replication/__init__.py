"""Replication: how followers copy a leader's log, and how the cluster agrees on who leads.

- `partition.py`: one replica's state on one broker (leader side: follower LEOs, ISR, HW, acks
  purgatory; follower side: HW from the leader, appends of the leader's batches);
- `fetcher.py`: a follower's fetch loop towards one leader, and truncation on becoming follower
  (by high watermark, or by leader epoch: KIP-101/279);
- `leader_epoch_cache.py`, `checkpoints.py`: the files that survive a restart;
- `metadata_store.py`, `controller.py`: a ZooKeeper-style store and the controller elected
  through its `/controller` node; leader election and ISR state;
- `assignment.py`: where replicas go when a topic is created.
"""
