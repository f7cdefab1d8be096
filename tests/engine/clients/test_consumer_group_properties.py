"""Property: whatever members join, crash or leave while a group consumes (processing, then
committing), every record is processed at least once, and once the group has settled every
partition is owned by exactly one live member."""
from __future__ import annotations

import shutil
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Cluster
from engine.clients.consumer_app import PollLoop
from engine.inspect.groups import describe_group

PARTITIONS = 4
CONFIG = {"group.id": "g", "auto.offset.reset": "earliest", "enable.auto.commit": False,
          "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, "request.timeout.ms": 5000}

actions = st.lists(st.one_of(
    st.tuples(st.just("join"), st.sampled_from(["range", "roundrobin", "cooperative-sticky"])),
    st.tuples(st.just("crash"), st.integers(0, 7)),
    st.tuples(st.just("leave"), st.integers(0, 7)),
    st.tuples(st.just("produce"), st.integers(0, PARTITIONS - 1)),
    st.tuples(st.just("run"), st.integers(100, 8000)),
), min_size=1, max_size=12)


def _start(cluster, name, assignor, names):
    consumer = cluster.consumer(name, {**CONFIG, "partition.assignment.strategy": assignor})
    consumer.subscribe(["t"])
    PollLoop(consumer, poll_interval_ms=50, processing_ms=20, commit="after").start()
    names.append(name)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=actions, seed=st.integers(0, 1000))
def test_every_record_is_processed_and_every_partition_ends_with_one_live_owner(steps, seed):
    data_dir = tempfile.mkdtemp(prefix="group-property-")
    cluster = Cluster(1, data_dir, seed=seed,
                      config={"offsets.topic.num.partitions": 2, "group.initial.rebalance.delay.ms": 0})
    try:
        cluster.create_topic("t", PARTITIONS, 1)
        produced = []
        for i in range(8):
            produced.append(cluster.produce("t", None, f"m{i}", partition=i % PARTITIONS))
        live: list[str] = []
        # one assignor for everyone: mixing eager and cooperative members is not a supported mix
        assignor = next((s[1] for s in steps if s[0] == "join"), "range")
        for index, (action, arg) in enumerate(steps):
            if action == "join":
                _start(cluster, f"c{index}", assignor, live)
            elif action in ("crash", "leave") and live:
                name = live.pop(arg % len(live))
                cluster.consumers[name].crash() if action == "crash" else cluster.consumers[name].close()
            elif action == "produce":
                produced.append(cluster.produce("t", None, f"p{index}", partition=arg))
            elif action == "run":
                cluster.run_for(arg)
        _start(cluster, "last", assignor, live)
        cluster.run_for(45000)             # crashed members expire, rebalances finish, backlogs drain

        values = {r.value.decode() for r in produced if r.acked}
        processed = {row["value"] for c in cluster.consumers.values() if c.app for row in c.app.processed}
        assert values <= processed, f"seed {seed}, steps {steps}: never processed {sorted(values - processed)}"

        group = describe_group(cluster, "g")
        assert group["state"] == "Stable", f"seed {seed}, steps {steps}: {group}"
        owners = {m["member"]: m["assignment"] for m in group["members"]}
        assert sorted(owners) == sorted(live), f"seed {seed}, steps {steps}: members {sorted(owners)} != {live}"
        assigned = [tp for parts in owners.values() for tp in parts]
        assert sorted(assigned) == [f"t-{p}" for p in range(PARTITIONS)], f"seed {seed}, steps {steps}: {owners}"
        for name in live:
            mine = sorted(str(tp) for tp in cluster.consumers[name].assignment())
            assert mine == owners[name], f"seed {seed}, steps {steps}: {name} owns {mine}, group says {owners[name]}"
    finally:
        cluster.close()
        shutil.rmtree(data_dir, ignore_errors=True)
