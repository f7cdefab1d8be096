"""Kafka Lab's test suite."""
