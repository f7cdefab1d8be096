"""A producer's records and the cyclic garbage collector: a record holding only atomic values (no
headers, no tag or a str one) is left out of it when the C extension is built — a producer holding
hundreds of thousands of pending records spent more time in the collector than sending them — and
one that refers to a container stays in it. Nothing else about the records changes."""
from __future__ import annotations

import gc
from dataclasses import dataclass

import pytest

from engine.cluster import Cluster
from engine.storage import batch_records

needs_extension = pytest.mark.skipif(
    not batch_records.HAS_EXTENSION, reason="engine.storage._columnar is not built (run `pip install -e .`)")


@needs_extension
def test_a_producers_records_of_atomic_values_are_left_out_of_the_cyclic_gc(tmp_path) -> None:
    cluster = Cluster(brokers=1, data_dir=str(tmp_path / "lab"), seed=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer("p", {"acks": "1"})
    atomic = [producer.send("t", b"k", b"v"), producer.send("t", None, "text", tag="step 3"),
              *producer.send_batch("t", [(None, b"a"), ("k", "b")])]
    with_a_list = producer.send("t", b"k", b"v", tag=["step", 3])
    assert not any(gc.is_tracked(r) for r in atomic)
    assert gc.is_tracked(with_a_list)
    producer.flush()
    assert [(r.acked, r.offset) for r in [*atomic, with_a_list]] == [(True, i) for i in range(5)]
    assert not any(gc.is_tracked(r) for r in atomic)   # answered: still atomic values only
    cluster.close()


@dataclass(slots=True)
class _Slotted:
    a: object
    b: object = None


@dataclass
class _WithDict:
    a: object


@needs_extension
def test_only_an_object_whose_slots_hold_atomic_values_is_untracked() -> None:
    from engine.storage._columnar import untrack_atomic
    atomic, with_a_list, with_a_dict = _Slotted(b"x", 7), _Slotted(b"x", [1]), _WithDict(b"x")
    assert untrack_atomic(atomic) and not gc.is_tracked(atomic)
    assert not untrack_atomic(with_a_list) and gc.is_tracked(with_a_list)
    assert not untrack_atomic(with_a_dict) and gc.is_tracked(with_a_dict)   # attributes in a __dict__: not looked at
    assert untrack_atomic(atomic)   # already untracked
