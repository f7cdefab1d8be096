"""Kafka Lab's engine: a real, in-process, deterministic multi-broker Kafka. Pure Python; it never
imports the web layer. `from engine import Cluster` is the way in."""
from __future__ import annotations

__all__ = ["Cluster"]


def __getattr__(name: str):
    # Imported lazily, so `import engine.storage.record_batch` stays light.
    if name == "Cluster":
        from engine.cluster import Cluster
        return Cluster
    raise AttributeError(name)
