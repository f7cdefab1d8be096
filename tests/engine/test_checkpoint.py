"""Engine checkpoints: a restored cluster continues exactly as the original did.

A workload is a script of commands by step (topics, produce with acks 0/1/all, producers with
idempotence, consumer groups polling and committing, broker kills and restarts in both modes,
network cuts and heals, paused fetchers). It runs to step N with a checkpoint taken at step K;
restoring K into a new dir and running the same script on to N must give the same events (their
JSON: kind, fields, seq, time), the same `state()` and the same bytes in every file. A failure
names the seed, K and N (and the falsifying script).
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import threading
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine import checkpoint
from engine import events as ev
from engine.clients.consumer_app import PollLoop
from engine.cluster import Cluster
from engine.common.errors import KafkaError
from engine.graph_pickle import GraphPickleError
from engine.inspect.cluster import cluster_state
from engine.storage.segment import LogSegment

BROKERS = 3
CONFIG = {"offsets.topic.num.partitions": 3, "group.initial.rebalance.delay.ms": 0,
          "replica.lag.time.max.ms": 3000, "zookeeper.session.timeout.ms": 6000,
          "log.retention.check.interval.ms": 2000}
TOPIC_CONFIG = {"segment.bytes": 600, "index.interval.bytes": 120}
TOPIC_CONFIGS = {"t": TOPIC_CONFIG, "u": {**TOPIC_CONFIG, "retention.bytes": 1500}}  # u: segments deleted
CONSUMER_CONFIG = {"auto.offset.reset": "earliest", "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000,
                   "request.timeout.ms": 5000}


# -- the workload -----------------------------------------------------------------------------------
def _apply(cluster: Cluster, command: tuple) -> None:
    """Run one command; one that cannot run in the cluster's state fails the same way in every run."""
    kind, *args = command
    try:
        COMMANDS[kind](cluster, *args)
    except (KafkaError, ValueError, RuntimeError) as error:  # a refused command is part of the run
        cluster.bus.publish(_note(f"{kind} refused: {type(error).__name__}"))


def _note(text: str) -> ev.Event:
    return ev.FaultInjected(fault="test_note", brokers=[], detail=text)


def _produce(cluster: Cluster, topic: str, acks: object, keyed: bool, step: int) -> None:
    if topic in cluster.topics:
        cluster.produce(topic, f"k{step % 5}" if keyed else None, f"v{step}", acks=acks)


def _send(cluster: Cluster, name: str, topic: str, idempotent: bool, step: int) -> None:
    if topic in cluster.topics:
        producer = cluster.producer(name, {"enable.idempotence": idempotent, "acks": "all" if idempotent else "1",
                                           "linger.ms": 2})
        producer.send(topic, None, f"{name}-{step}")


def _join(cluster: Cluster, name: str, group: str, commit: str) -> None:
    if name in cluster.consumers or "t" not in cluster.topics:
        return
    consumer = cluster.consumer(name, {**CONSUMER_CONFIG, "group.id": group,
                                       "enable.auto.commit": commit == "auto"})
    consumer.subscribe(["t"])
    PollLoop(consumer, poll_interval_ms=40, processing_ms=5, commit=commit).start()


def _consumer_crash(cluster: Cluster, name: str) -> None:
    if name in cluster.consumers:
        cluster.consumers[name].crash()


def _kill(cluster: Cluster, broker: int, mode: str) -> None:
    if cluster.brokers[broker].alive and sum(b.alive for b in cluster.brokers.values()) > 1:
        cluster.kill_broker(broker, mode)


def _restart(cluster: Cluster, broker: int) -> None:
    if not cluster.brokers[broker].alive:
        cluster.restart_broker(broker)


def _pause(cluster: Cluster, broker: int, paused: bool) -> None:
    if cluster.brokers[broker].alive:
        cluster.pause_fetcher(broker) if paused else cluster.resume_fetcher(broker)


COMMANDS = {
    "topic": lambda c, name, partitions: c.create_topic(name, partitions, BROKERS, config=TOPIC_CONFIGS[name])
    if name not in c.topics else None,
    "produce": _produce,
    "send": _send,
    "join": _join,
    "consumer_crash": _consumer_crash,
    "kill": _kill,
    "restart": _restart,
    "cut": lambda c, a, b: c.partition_network(a, b),
    "heal": lambda c, a, b: c.heal_network(a, b),
    "pause": _pause,
}

brokers = st.integers(1, BROKERS)
nodes = st.one_of(brokers, st.sampled_from(["producer-p1", "consumer-c1"]))
command = st.one_of(
    st.tuples(st.just("topic"), st.sampled_from(["t", "u"]), st.integers(1, 3)),
    st.tuples(st.just("produce"), st.sampled_from(["t", "u"]), st.sampled_from([0, 1, "all"]), st.booleans()),
    st.tuples(st.just("send"), st.sampled_from(["p1", "p2"]), st.sampled_from(["t", "u"]), st.booleans()),
    st.tuples(st.just("join"), st.sampled_from(["c1", "c2", "c3"]), st.sampled_from(["g", "h"]),
              st.sampled_from(["auto", "after", "before"])),
    st.tuples(st.just("consumer_crash"), st.sampled_from(["c1", "c2", "c3"])),
    st.tuples(st.just("kill"), brokers, st.sampled_from(["process", "power"])),
    st.tuples(st.just("restart"), brokers),
    st.tuples(st.just("cut"), nodes, nodes).filter(lambda c: c[1] != c[2]),
    st.tuples(st.just("heal"), nodes, nodes).filter(lambda c: c[1] != c[2]),
    st.tuples(st.just("pause"), brokers, st.booleans()),
)


@st.composite
def workloads(draw) -> tuple[int, str, dict[int, list[tuple]], int, int]:
    """(seed, truncation, script: step -> commands, K, N): produce-heavy, faults and groups mixed in."""
    seed = draw(st.integers(0, 10_000))
    truncation = draw(st.sampled_from(["leader-epoch", "high-watermark"]))
    n = draw(st.integers(100, 1500))
    script: dict[int, list[tuple]] = {0: [("topic", "t", draw(st.integers(1, 3)))]}
    for _ in range(draw(st.integers(0, 60))):
        step = draw(st.integers(0, n - 1))
        cmd = draw(command)
        if cmd[0] in ("produce", "send"):
            cmd = (*cmd, step)
        script.setdefault(step, []).append(cmd)
    for step in range(3, n, draw(st.integers(4, 20))):  # a steady trickle of records
        script.setdefault(step, []).append(("produce", "t", "all", False, step))
    k = draw(st.integers(0, n - 1))
    return seed, truncation, script, k, n


# -- running it -------------------------------------------------------------------------------------
class Run:
    """A cluster driven by a script, its events as JSON, and where a checkpoint was taken."""

    def __init__(self, cluster: Cluster, events: list[str]) -> None:
        self.cluster = cluster
        self.events = events
        self.checkpoint: checkpoint.Checkpoint | None = None
        self.events_at_checkpoint = 0

    def drive(self, script: dict[int, list[tuple]], start: int, stop: int, *,
              checkpoint_at: int | None = None, checkpoint_dir: str = "") -> Run:
        for step in range(start, stop):
            if step == checkpoint_at:
                self.checkpoint = checkpoint.take(self.cluster, checkpoint_dir)
                self.events_at_checkpoint = len(self.events)
            for cmd in script.get(step, []):
                _apply(self.cluster, cmd)
            self.cluster.step()
        return self

    def outcome(self) -> tuple[str, dict[str, bytes]]:
        checkpoint.sync_index_files(self.cluster)
        return json.dumps(cluster_state(self.cluster), sort_keys=True), tree(self.cluster.data_dir)


def new_run(data_dir: str, seed: int, truncation: str = "leader-epoch") -> Run:
    events: list[str] = []
    cluster = Cluster(BROKERS, data_dir, seed=seed, config=CONFIG, truncation=truncation,
                      on_event=lambda e: events.append(_json(e)))
    return Run(cluster, events)


def restored_run(cp: checkpoint.Checkpoint | str, data_dir: str) -> Run:
    events: list[str] = []
    return Run(checkpoint.restore(cp, data_dir, on_event=lambda e: events.append(_json(e))), events)


def _json(event) -> str:
    return json.dumps(event.to_dict(), sort_keys=True)


def tree(root: str) -> dict[str, bytes]:
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def held(cp: checkpoint.Checkpoint) -> dict[str, bytes]:
    """What a checkpoint holds: its files, the active segments' up to the length it recorded (the
    original appends on through the shared inode; a restore copies only that prefix)."""
    out = {}
    for name, mode in cp.layout.items():
        if mode == "dir":
            continue
        with open(cp.stored(name), "rb") as f:
            data = f.read()
        out[name] = data[:mode] if isinstance(mode, int) else data
    return out


def assert_same_events(expected: list[str], got: list[str], where: str) -> None:
    for i, (a, b) in enumerate(zip(expected, got)):
        assert a == b, f"{where}: event {i} after the checkpoint differs:\n  original {a}\n  restored {b}"
    assert len(expected) == len(got), f"{where}: {len(expected)} events in the original, {len(got)} restored"


def assert_same_files(expected: dict[str, bytes], got: dict[str, bytes], where: str) -> None:
    assert sorted(expected) == sorted(got), \
        f"{where}: files differ: only original {sorted(set(expected) - set(got))[:5]}, " \
        f"only restored {sorted(set(got) - set(expected))[:5]}"
    differing = [name for name in expected if expected[name] != got[name]]
    assert not differing, f"{where}: different bytes in {differing[:5]}"


# -- the property ---------------------------------------------------------------------------------
EXAMPLES = int(os.environ.get("CHECKPOINT_EXAMPLES", "20"))  # more for a long hunt


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(workload=workloads())
def test_a_restored_checkpoint_continues_exactly_as_the_original(workload, tmp_path_factory):
    seed, truncation, script, k, n = workload
    where = f"seed {seed} ({truncation}), checkpoint at step {k}, run to step {n}"
    root = tmp_path_factory.mktemp("checkpoint-property")

    runs: list[Run] = []
    try:
        original = _started(runs, new_run(str(root / "original"), seed, truncation))
        original.drive(script, 0, n, checkpoint_at=k, checkpoint_dir=str(root / "checkpoint"))
        state, files = original.outcome()
        future = original.events[original.events_at_checkpoint:]

        untouched = _started(runs, new_run(str(root / "no-checkpoint"), seed, truncation)).drive(script, 0, n)
        assert_same_events(original.events, untouched.events, f"{where} (a run that took no checkpoint)")
        assert (state, files) == untouched.outcome(), f"{where}: taking a checkpoint changed the run"

        for attempt in ("first", "second"):
            label = f"{where} ({attempt} restore)"
            restored = _started(runs, restored_run(original.checkpoint, str(root / f"restored-{attempt}")))
            assert restored.cluster.now_ms == original.checkpoint.time_ms, label
            restored.drive(script, k, n)
            assert_same_events(future, restored.events, label)
            restored_state, restored_files = restored.outcome()
            assert restored_state == state, f"{label}: final state() differs"
            assert_same_files(files, restored_files, label)
    finally:
        for run in runs:
            run.cluster.close()  # its open segment files
        shutil.rmtree(root, ignore_errors=True)


def _started(runs: list[Run], run: Run) -> Run:
    runs.append(run)
    return run


# -- directed cases -------------------------------------------------------------------------------
def _busy_cluster(data_dir: str, *, seed: int = 5) -> Cluster:
    """3 brokers; topic t (RF 3, tiny segments and index interval) with a dozen sealed segments
    on every replica, in batches of 3 records; __consumer_offsets and a group that committed;
    an idempotent producer."""
    cluster = Cluster(BROKERS, data_dir, seed=seed, config=CONFIG)
    cluster.create_topic("t", 1, 3, config=TOPIC_CONFIG)
    for i in range(40):
        cluster.produce_batch("t", 0, [(f"k{i}", f"value-{i:04d}-{j}") for j in range(3)], acks="all")
        if i % 10 == 0:
            cluster.run_for(5)
    cluster.producer("idem", {"enable.idempotence": True}).send("t", "k", "idempotent")
    consumer = cluster.consumer("c1", {**CONSUMER_CONFIG, "group.id": "g"})
    consumer.subscribe(["t"])
    PollLoop(consumer, poll_interval_ms=50, commit="after").start()
    cluster.run_for(8000)
    return cluster


def test_a_checkpoint_reopened_from_disk_restores_the_same_run(tmp_path):
    cluster = _busy_cluster(str(tmp_path / "original"))
    cp = checkpoint.take(cluster, str(tmp_path / "cp"))
    ahead = [_json(e) for e in cluster.run_for(3000)]
    restored = checkpoint.restore(str(tmp_path / "cp"), str(tmp_path / "restored"))
    assert [_json(e) for e in restored.run_for(3000)] == ahead
    assert cp.step > 0 and cp.files.linked_files > 0 and cp.prefixes   # active segments: linked, length kept


def test_files_shared_with_a_checkpoint_are_never_modified_through_the_link(tmp_path):
    cluster = _busy_cluster(str(tmp_path / "original"))
    cluster.run_until_idle()
    cp = checkpoint.take(cluster, str(tmp_path / "cp"))
    saved = held(cp)
    leader = cluster.leader_of("t", 0)
    follower_1, follower_2 = [b for b in cluster.brokers if b != leader]
    logs = {b: cluster.brokers[b].partitions[("t", 0)].log for b in cluster.brokers}
    assert all(len(log.segments) > 4 for log in logs.values())
    shared = [name for name, mode in cp.layout.items() if mode != "dir" and os.stat(cp.stored(name)).st_nlink > 1]
    assert any(name.endswith(".log") for name in shared) and any(name.endswith(".index") for name in shared)

    # A follower truncates back into a sealed segment (index too), then appends to it again. A
    # follower indexes each fetched chunk once at most (Kafka's LogSegment.append), so not every
    # segment of its has an entry: take the first that has, and cut at the start of the batch the
    # entry names (a batch boundary, as a follower's truncation always is).
    sealed = next(s for s in logs[follower_1].segments[:-1] if s.offset_index.entries)
    logs[follower_1].truncate_to(sealed.locate(sealed.offset_index.entry(0)[0]).batch_base_offset)
    # Another loses its unflushed tail in a power failure reaching into a sealed segment, then
    # recovers every segment from scratch (no recovery-point checkpoint: all indexes rebuilt).
    key = ("t", 0)
    cut_at = logs[follower_2].segments[1].base_offset + 2
    logs[follower_2].recovery_point = cluster.brokers[follower_2].durable_offsets[key] = cut_at
    cluster.kill_broker(follower_2, "power")
    recovery_points = os.path.join(cluster.brokers[follower_2].data_dir, "recovery-point-offset-checkpoint")
    if os.path.exists(recovery_points):
        os.remove(recovery_points)
    cluster.restart_broker(follower_2)
    cluster.run_for(5000)
    # The leader is cut inside a batch of a sealed segment (the kept records are written back).
    leader_log = cluster.brokers[leader].partitions[key].log
    leader_log.truncate_to(leader_log.segments[1].base_offset + 1)
    checkpoint.sync_index_files(cluster)

    def rewritten(broker: int, base_offset: int, suffix: str) -> bool:  # copied, then changed
        name = f"broker-{broker}/t-0/{base_offset:020d}{suffix}"
        return name in shared and _inode(cluster.data_dir, name) not in (-1, os.stat(cp.stored(name)).st_ino)
    assert rewritten(follower_1, sealed.base_offset, ".log") and rewritten(follower_1, sealed.base_offset, ".index")
    assert rewritten(follower_2, logs[follower_2].segments[0].base_offset, ".index")  # rebuilt
    assert rewritten(leader, leader_log.segments[1].base_offset, ".log")
    assert held(cp) == saved, "the original wrote through a link it shares with the checkpoint"

    restored = checkpoint.restore(cp, str(tmp_path / "restored"))
    assert_same_files(saved, tree(restored.data_dir), "restored from a checkpoint whose original went on")
    restored.kill_broker(follower_2, "power")
    restored.restart_broker(follower_2)
    restored.run_for(3000)
    assert held(cp) == saved, "a restored cluster wrote through a link it shares with the checkpoint"
    cluster.close()
    restored.close()


def _inode(root: str, name: str) -> int:
    path = os.path.join(root, name)
    return os.stat(path).st_ino if os.path.exists(path) else -1  # -1: deleted since


def test_a_checkpoint_restores_in_a_fresh_process(tmp_path):
    cluster = _busy_cluster(str(tmp_path / "original"))
    cp = checkpoint.take(cluster, str(tmp_path / "cp"))
    ahead = [_json(e) for e in cluster.run_for(3000)]
    program = ("import json, sys\n"
               "from engine import checkpoint\n"
               "cluster = checkpoint.restore(sys.argv[1], sys.argv[2])\n"
               "print(json.dumps([json.dumps(e.to_dict(), sort_keys=True) for e in cluster.run_for(3000)]))\n")
    done = subprocess.run([sys.executable, "-c", program, cp.path, str(tmp_path / "restored")],
                          capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(engine.__file__)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == ahead


def test_a_restored_graph_holds_no_descriptor_and_no_path_of_the_old_data_dir(tmp_path):
    cluster = _busy_cluster(str(tmp_path / "original"))
    cluster.kill_broker(2, "process")  # a dead broker's closed logs are in the graph too
    cp = checkpoint.take(cluster, str(tmp_path / "cp"))
    restored = checkpoint.restore(cp, str(tmp_path / "restored"))
    objects = _reachable(restored)
    segments = [o for o in objects if isinstance(o, LogSegment)]
    assert segments and all(s._fd is None for s in segments)
    assert all(s.offset_index._file is None and s.time_index._file is None for s in segments)
    stale = [o for o in objects if isinstance(o, str) and cluster.data_dir in o]
    assert not stale, f"strings still naming the original data dir: {stale[:5]}"
    assert restored.data_dir == str(tmp_path / "restored")
    assert all(b.data_dir.startswith(restored.data_dir + os.sep) for b in restored.brokers.values())


def test_host_hooks_are_not_part_of_a_checkpoint_and_restore_attaches_the_new_on_event(tmp_path):
    seen: list[object] = []
    cluster = Cluster(BROKERS, str(tmp_path / "original"), seed=1, on_event=seen.append)
    cluster.subscribe(lambda e: seen.append(e))
    lock = threading.Lock()  # a host's hook may hold what no checkpoint can carry
    cluster.scheduler.yield_step = lambda: lock.locked()
    cp = checkpoint.take(cluster, str(tmp_path / "cp"))
    restored = checkpoint.restore(cp, str(tmp_path / "restored"))
    before = len(seen)
    restored.create_topic("t", 1, 3)
    assert len(seen) == before and restored.bus._subscribers == [] and restored.scheduler.yield_step is None
    mine: list[object] = []
    again = checkpoint.restore(cp, str(tmp_path / "restored-2"), on_event=mine.append)
    again.create_topic("t", 1, 3)
    assert mine and mine[0].seq == cp.events and len(seen) == before


def test_the_engine_keeps_no_state_in_module_level_tables_a_checkpoint_would_leave_behind(tmp_path):
    """What a broker, a client or the cluster owns is its attribute (broker.groups, broker.producer_ids,
    Cluster.apps, ...): a checkpoint carries the graph and nothing beside it."""
    from engine.clients.sinks import sink_for
    from engine.graph_pickle import side_tables
    for module in pkgutil.walk_packages(engine.__path__, "engine."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    cluster = _busy_cluster(str(tmp_path / "original"))
    sink_for(cluster.sinks, "db")
    assert side_tables() == []


def test_a_checkpoint_is_refused_inside_an_action_and_into_a_used_dir(tmp_path):
    cluster = Cluster(BROKERS, str(tmp_path / "original"), seed=1)
    errors: list[Exception] = []

    def take_now() -> None:
        try:
            checkpoint.take(cluster, str(tmp_path / "inside"))
        except checkpoint.CheckpointError as error:
            errors.append(error)
    cluster.scheduler.schedule(0, take_now)
    cluster.step()
    assert errors and not os.path.exists(tmp_path / "inside")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "file").write_text("x")
    with pytest.raises(checkpoint.CheckpointError):
        checkpoint.take(cluster, str(tmp_path / "used"))
    cp = checkpoint.take(cluster, str(tmp_path / "cp"))
    with pytest.raises(checkpoint.CheckpointError):
        checkpoint.restore(cp, str(tmp_path / "used"))


def test_a_checkpoint_of_another_engine_source_is_refused(tmp_path):
    cluster = Cluster(1, str(tmp_path / "original"), seed=1)
    cp = checkpoint.take(cluster, str(tmp_path / "cp"))
    meta_path = tmp_path / "cp" / checkpoint.META_FILE
    meta = json.loads(meta_path.read_text())
    meta["fingerprint"] = "0" * 32
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(checkpoint.CheckpointError):
        checkpoint.restore(str(tmp_path / "cp"), str(tmp_path / "restored"))
    assert checkpoint.restore(cp, str(tmp_path / "restored-2")).now_ms == cluster.now_ms  # in memory: intact


def test_a_path_outside_the_data_dir_cannot_be_checkpointed(tmp_path):
    cluster = Cluster(1, str(tmp_path / "original"), seed=1)
    cluster.brokers[1].data_dir = str(tmp_path / "elsewhere")
    with pytest.raises(GraphPickleError):
        checkpoint.take(cluster, str(tmp_path / "cp"))
    assert not os.path.exists(tmp_path / "cp")


def _reachable(root: object) -> list[object]:
    """Objects reachable from `root` through the engine's graph (not through modules or classes)."""
    import gc
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (types.ModuleType, type, types.CodeType)):
            continue
        seen[id(obj)] = obj
        if isinstance(obj, types.FunctionType):
            stack.extend(c.cell_contents for c in obj.__closure__ or () if _filled(c))
            stack.extend(obj.__defaults__ or ())
        else:
            stack.extend(gc.get_referents(obj))
    return list(seen.values())


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - reading an empty cell raises ValueError, which is the test
    except ValueError:
        return False
    return True


def test_a_kraft_checkpoint_restored_elsewhere_writes_only_its_own_files(tmp_path):
    """Every KRaft path (a Raft client's log dir, its quorum-state file, a controller node's data dir)
    is rebased onto the restore's data dir: elections after the restore touch nothing of the original."""
    import os

    from engine.cluster import Cluster
    original = Cluster(3, str(tmp_path / "run-1"), seed=3,
                       config={"metadata": "kraft", "controller.mode": "dedicated"})
    original.create_topic("t", 1, 3)
    cp = checkpoint.take(original, str(tmp_path / "cp"))
    states = {n: os.path.join(str(tmp_path / "run-1"), f"controller-{n}", "__cluster_metadata-0", "quorum-state")
              for n in original.controller_nodes}
    before = {n: open(p, encoding="utf-8").read() for n, p in states.items()}
    restored = checkpoint.restore(cp, str(tmp_path / "run-2"))
    old = restored.controller_id()
    restored.kill_controller()
    restored.run_for(15_000)
    restored.restart_controller_node(old)
    restored.run_until_idle()
    assert restored.controller_id() != old and restored.controller_epoch > original.controller_epoch
    for server in restored.controller_nodes.values():
        assert server.raft.log_dir.startswith(str(tmp_path / "run-2"))
        assert server.raft._store.path.startswith(str(tmp_path / "run-2"))
    assert {n: open(p, encoding="utf-8").read() for n, p in states.items()} == before
