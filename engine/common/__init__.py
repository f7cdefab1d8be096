"""What every layer shares: Kafka's error vocabulary, Java's hashes, topic names, config values."""
