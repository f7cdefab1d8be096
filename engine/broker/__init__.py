"""The broker's storage layer: record batches in Kafka's v2 format, segments, indexes and logs."""
