"""A ZooKeeper-style metadata store: the lab's model of where cluster metadata lives.

The lab models ZooKeeper mode (what the study notes describe): brokers register ephemeral
nodes `/brokers/ids/<id>` under a session; the first broker to create the ephemeral
`/controller` node is the controller; partition state (leader, leader epoch, ISR) lives in
`/brokers/topics/<t>/partitions/<p>/state`, written by the controller on elections and by the
partition leader when it shrinks or expands the ISR (conditional on the node's version, as with
ZooKeeper's zkVersion). KRaft (Kafka 4.0's only mode) keeps the same facts in the
`__cluster_metadata` Raft log instead; a lesson compares the two.

A crashed broker's session expires `zookeeper.session.timeout.ms` later: then its ephemeral
nodes vanish and watchers are told. Watch callbacks run as scheduled actions, so the
notification takes virtual time and shows up in order among everything else: one action per
changed node, which tells every watcher of that node in the order they registered (each broker
watches `/controller`; one change is one delivery, whoever listens).

One watch kind has no latency (`watch(..., at_once=True)`): its callback runs inside the write.
The controller hears of topic changes that way (engine/metadata/zk.py), so a topic's partitions
exist as soon as the command that created the topic returns.

Like ZooKeeper, every change gets the next transaction id (`zxid`); a node keeps the one that
created it (`czxid`), so its creation order can be read back (topics are listed in the order they
were created), and a reader can cache what it decoded until the store's `zxid` moves.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from engine.sim import Scheduler

WATCH_LATENCY_MS = 1


class NodeExistsError(Exception):
    pass


class BadVersionError(Exception):
    pass


class NoNodeError(LookupError):
    pass


@dataclass(slots=True)
class Node:
    data: str
    version: int = 0
    ephemeral_owner: int | None = None  # session id
    czxid: int = 0                      # the transaction that created it
    decoded: object = None              # `data` decoded, for peek(); None until first asked


class MetadataStore:
    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._nodes: dict[str, Node] = {}
        self._sessions: dict[int, int] = {}  # session id -> broker id
        self._next_session = 0
        self._watches: list[tuple[str, Callable[[str], None]]] = []
        self._at_once: list[tuple[str, Callable[[str], None]]] = []
        self.zxid = 0                       # transactions so far: moves on every change

    # -- sessions ---------------------------------------------------------------------------
    def open_session(self, broker: int) -> int:
        self._next_session += 1
        self._sessions[self._next_session] = broker
        return self._next_session

    def session_alive(self, session: int) -> bool:
        return session in self._sessions

    def expire_session(self, session: int) -> list[str]:
        """End a session: its ephemeral nodes go, and their watchers are told."""
        if self._sessions.pop(session, None) is None:
            return []
        gone = [path for path, node in self._nodes.items() if node.ephemeral_owner == session]
        for path in gone:
            del self._nodes[path]
            self.zxid += 1
            self._fire(path)
        return gone

    def expire_session_keeping(self, old: int, path: str, new: int, data: dict) -> None:
        """A restarted broker takes its registration over from its old, still-open session.

        The old session ends (its other ephemeral nodes, such as /controller, go); `path` stays,
        owned by the new session with new data — one change that watchers see.
        """
        node = self._nodes.get(path)
        if node is not None and node.ephemeral_owner == old:
            node.ephemeral_owner = new
            node.data, node.decoded = json.dumps(data, sort_keys=True), None
            node.version += 1
            self.zxid += 1
            self._fire(path)
        else:
            self.create(path, data, session=new)
        self.expire_session(old)

    # -- nodes ------------------------------------------------------------------------------
    def create(self, path: str, data: dict, *, session: int | None = None) -> None:
        if path in self._nodes:
            raise NodeExistsError(path)
        if session is not None and session not in self._sessions:
            raise NoNodeError(f"session {session} has expired")
        self.zxid += 1
        self._nodes[path] = Node(json.dumps(data, sort_keys=True), 0, session, self.zxid)
        self._fire(path)

    def get(self, path: str) -> tuple[dict, int]:
        node = self._nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        return json.loads(node.data), node.version

    def get_or_none(self, path: str) -> dict | None:
        node = self._nodes.get(path)
        return None if node is None else json.loads(node.data)

    def peek(self, path: str) -> dict | None:
        """The node's data, decoded once per version and shared: read it, never change it
        (`get` hands out a copy to change and write back)."""
        node = self._nodes.get(path)
        if node is None:
            return None
        if node.decoded is None:
            node.decoded = json.loads(node.data)
        return node.decoded  # type: ignore[return-value]

    def created(self, path: str) -> int:
        """The zxid that created the node (ZooKeeper's Stat.czxid): nodes sort by it into creation order."""
        node = self._nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        return node.czxid

    def exists(self, path: str) -> bool:
        return path in self._nodes

    def set(self, path: str, data: dict, *, expected_version: int | None = None) -> int:
        node = self._nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if expected_version is not None and expected_version != node.version:
            raise BadVersionError(f"{path}: version {node.version}, expected {expected_version}")
        node.data, node.decoded = json.dumps(data, sort_keys=True), None
        node.version += 1
        self.zxid += 1
        self._fire(path)
        return node.version

    def delete(self, path: str) -> None:
        if self._nodes.pop(path, None) is not None:
            self.zxid += 1
            self._fire(path)

    def children(self, prefix: str) -> list[str]:
        """Direct children names of `prefix` (sorted)."""
        base = prefix.rstrip("/") + "/"
        out = {p[len(base):].split("/")[0] for p in self._nodes if p.startswith(base)}
        return sorted(out)

    # -- watches ----------------------------------------------------------------------------
    def watch(self, prefix: str, callback: Callable[[str], None], *, at_once: bool = False) -> None:
        """Call `callback(path)` whenever a node at or under `prefix` changes: a little later (one
        scheduled action per change, for all its watchers), or with `at_once` inside the write."""
        (self._at_once if at_once else self._watches).append((prefix, callback))

    def _fire(self, path: str) -> None:
        for prefix, callback in list(self._at_once):
            if _under(path, prefix):
                callback(path)
        callbacks = [callback for prefix, callback in self._watches if _under(path, prefix)]
        if callbacks:
            self._scheduler.schedule(WATCH_LATENCY_MS, lambda: _tell(callbacks, path), label=f"watch {path}")

    def dump(self, *, persistent_only: bool = False) -> dict[str, dict]:
        return {path: json.loads(node.data) for path, node in sorted(self._nodes.items())
                if not (persistent_only and node.ephemeral_owner is not None)}


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _tell(callbacks: list[Callable[[str], None]], path: str) -> None:
    for callback in callbacks:
        callback(path)
