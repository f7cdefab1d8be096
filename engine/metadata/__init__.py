"""The metadata layer: the ZooKeeper-like store and what ZooKeeper-mode Kafka keeps in it."""
