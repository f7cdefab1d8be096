"""The lab a notebook is graded against: the exercise's scenario played into a fresh cluster.

The engine is deterministic, so the same scenario always gives the same records, offsets and
acknowledgements: the checks read their truth from this cluster (`Lab`), whether the notebook
read it (served here by ReadApiServer on a free loopback port) or read a lab session in which
the learner loaded the same scenario (`--lab-url`).
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from engine import events as ev
from engine.cluster import Cluster
from engine.read_api_server import ReadApiServer
from engine.scenarios.runner import run_scenario

READ_CHUNK = 1000


@dataclass
class Lab:
    """The played scenario: the cluster after its last step and run_scenario's result dict."""
    cluster: Cluster
    result: dict

    @property
    def produced(self) -> list[dict]:
        """What the producer knows of each record it sent (acked, offset, error): the producer's log."""
        return self.result["produced"]

    def partitions(self, topic: str) -> int:
        return self.cluster.topics[topic].partitions

    def records(self, topic: str) -> list[dict]:
        """Every committed record of `topic` (below each partition's high watermark), as a
        consumer reading from the beginning sees them: partition, offset, key, value (str or
        None), timestamp_ms."""
        out = []
        for partition in range(self.partitions(topic)):
            offset = 0
            while True:
                batch = self.cluster.read(topic, partition, offset, READ_CHUNK)
                if not batch:
                    break
                out += [{"partition": partition, "offset": r.offset, "key": ev.text(r.key),
                         "value": ev.text(r.value), "timestamp_ms": r.timestamp} for r in batch]
                offset = batch[-1].offset + 1
        return out

    def high_watermarks(self, topic: str) -> dict[int, int]:
        states = {p["partition"]: p for p in self.result["partitions"] if p["topic"] == topic}
        return {p: states[p]["high_watermark"] for p in sorted(states)}

    def groups(self) -> list[dict]:
        """kafka-consumer-groups --describe for every group: committed offsets and lag."""
        from engine.inspect.groups import describe_groups
        return describe_groups(self.cluster)


@contextmanager
def played(scenario: dict, data_dir: str) -> Iterator[Lab]:
    """Play `scenario` into a new cluster kept in `data_dir`; closes the cluster afterwards."""
    cluster, result = run_scenario(scenario, data_dir)
    try:
        yield Lab(cluster, result)
    finally:
        cluster.close()


@contextmanager
def served(lab: Lab, session_id: str) -> Iterator[ReadApiServer]:
    """The lab's read API for `lab`'s cluster as session `session_id`, on 127.0.0.1:<free port>."""
    with ReadApiServer(lab.cluster, session_id) as server:
        yield server


def write_producer_log(lab: Lab, path: str) -> str:
    """The producer's log (the scenario result's "produced" list) as a JSON file for the notebook."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(lab.produced, f, ensure_ascii=False, indent=1)
    return os.path.abspath(path)
