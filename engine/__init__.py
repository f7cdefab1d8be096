"""Kafka Lab's engine: a deterministic, steppable reimplementation of Kafka's broker internals.

It never imports Django; it runs, is tested and is benchmarked headless.
"""
