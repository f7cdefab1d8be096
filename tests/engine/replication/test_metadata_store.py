"""The ZooKeeper-style metadata store: sessions, ephemeral nodes, versions and watches."""
from __future__ import annotations

import pytest

from engine.metadata.store import WATCH_LATENCY_MS, BadVersionError, MetadataStore, NodeExistsError, NoNodeError
from engine.sim import Scheduler


class Store:
    def __init__(self) -> None:
        self.scheduler = Scheduler()
        self.store = MetadataStore(self.scheduler)
        self.seen: list[tuple[int, str]] = []

    def watch(self, prefix: str) -> None:
        self.store.watch(prefix, lambda path: self.seen.append((self.scheduler.now_ms, path)))

    def run(self) -> None:
        while self.scheduler.step() is not None:
            pass


@pytest.fixture
def zk() -> Store:
    return Store()


# -- nodes and versions ------------------------------------------------------------------------
def test_it_stores_json_data_with_a_version_starting_at_zero(zk):
    zk.store.create("/brokers/topics/t", {"partitions": {"0": [1, 2]}})
    assert zk.store.get("/brokers/topics/t") == ({"partitions": {"0": [1, 2]}}, 0)
    assert zk.store.exists("/brokers/topics/t") and zk.store.get_or_none("/missing") is None


def test_it_refuses_to_create_a_node_that_exists(zk):
    zk.store.create("/controller", {"brokerid": 1})
    with pytest.raises(NodeExistsError, match="/controller"):
        zk.store.create("/controller", {"brokerid": 2})
    assert zk.store.get("/controller")[0] == {"brokerid": 1}


def test_it_bumps_the_version_on_every_set(zk):
    zk.store.create("/s", {"leader": 1})
    assert zk.store.set("/s", {"leader": 2}) == 1
    assert zk.store.set("/s", {"leader": 3}, expected_version=1) == 2
    assert zk.store.get("/s") == ({"leader": 3}, 2)


def test_it_refuses_a_set_against_a_stale_version(zk):
    zk.store.create("/s", {"leader": 1, "isr": [1, 2]})
    zk.store.set("/s", {"leader": 1, "isr": [1]})  # the controller got there first
    with pytest.raises(BadVersionError, match="version 1, expected 0"):
        zk.store.set("/s", {"leader": 1, "isr": [1, 2, 3]}, expected_version=0)
    assert zk.store.get("/s") == ({"leader": 1, "isr": [1]}, 1)


def test_it_raises_no_node_for_reads_and_writes_of_a_missing_node(zk):
    with pytest.raises(NoNodeError):
        zk.store.get("/missing")
    with pytest.raises(NoNodeError):
        zk.store.set("/missing", {})


def test_it_deletes_nodes_and_ignores_deleting_a_missing_one(zk):
    zk.store.create("/a", {})
    zk.store.delete("/a")
    zk.store.delete("/a")
    assert not zk.store.exists("/a")


def test_it_lists_direct_children_sorted_without_grandchildren(zk):
    for path in ["/brokers/ids/2", "/brokers/ids/10", "/brokers/ids/1", "/brokers/topics/t/partitions/0/state",
                 "/brokers/topics/t/partitions/1/state", "/brokers/topics/u", "/brokers/idsx/9"]:
        zk.store.create(path, {})
    assert zk.store.children("/brokers/ids") == ["1", "10", "2"]
    assert zk.store.children("/brokers/ids/") == ["1", "10", "2"]
    assert zk.store.children("/brokers/topics") == ["t", "u"]
    assert zk.store.children("/brokers/topics/t/partitions") == ["0", "1"]
    assert zk.store.children("/nothing") == []


def test_it_dumps_every_node_sorted_by_path(zk):
    zk.store.create("/b", {"x": 1})
    zk.store.create("/a", {"y": 2})
    assert list(zk.store.dump().items()) == [("/a", {"y": 2}), ("/b", {"x": 1})]


# -- watches -----------------------------------------------------------------------------------
def test_it_tells_watchers_through_the_scheduler_not_at_once(zk):
    zk.watch("/brokers/ids")
    zk.store.create("/brokers/ids/1", {})
    assert zk.seen == []
    zk.run()
    assert zk.seen == [(WATCH_LATENCY_MS, "/brokers/ids/1")]


def test_it_fires_watches_for_the_prefix_itself_and_below_it_only(zk):
    zk.watch("/brokers/ids")
    for path in ["/brokers/ids", "/brokers/ids/1", "/brokers/idsx", "/brokers/topics/t"]:
        zk.store.create(path, {})
    zk.run()
    assert [path for _, path in zk.seen] == ["/brokers/ids", "/brokers/ids/1"]


def test_it_fires_watches_on_create_set_and_delete_in_order(zk):
    zk.watch("/s")
    zk.store.create("/s", {"v": 0})
    zk.store.set("/s", {"v": 1})
    zk.store.delete("/s")
    zk.store.delete("/s")  # nothing there: no event
    zk.run()
    assert zk.seen == [(1, "/s")] * 3


# -- sessions and ephemeral nodes --------------------------------------------------------------
def test_it_refuses_an_ephemeral_node_for_an_expired_session(zk):
    session = zk.store.open_session(1)
    zk.store.expire_session(session)
    with pytest.raises(NoNodeError, match="expired"):
        zk.store.create("/brokers/ids/1", {}, session=session)


def test_it_removes_a_sessions_ephemeral_nodes_when_it_expires(zk):
    s1, s2 = zk.store.open_session(1), zk.store.open_session(2)
    zk.store.create("/brokers/ids/1", {"host": "b1"}, session=s1)
    zk.store.create("/controller", {"brokerid": 1}, session=s1)
    zk.store.create("/brokers/ids/2", {"host": "b2"}, session=s2)
    zk.store.create("/brokers/topics/t", {})  # persistent
    assert sorted(zk.store.expire_session(s1)) == ["/brokers/ids/1", "/controller"]
    assert not zk.store.session_alive(s1) and zk.store.session_alive(s2)
    assert sorted(zk.store.dump()) == ["/brokers/ids/2", "/brokers/topics/t"]


def test_it_tells_watchers_when_ephemeral_nodes_vanish(zk):
    session = zk.store.open_session(1)
    zk.store.create("/brokers/ids/1", {}, session=session)
    zk.watch("/brokers/ids")
    zk.watch("/controller")
    zk.scheduler.advance_to(100)
    zk.store.expire_session(session)
    assert zk.seen == []
    zk.run()
    assert zk.seen == [(100 + WATCH_LATENCY_MS, "/brokers/ids/1")]


def test_it_ignores_expiring_an_unknown_or_already_expired_session(zk):
    session = zk.store.open_session(1)
    zk.store.expire_session(session)
    assert zk.store.expire_session(session) == [] and zk.store.expire_session(999) == []


def test_it_hands_a_registration_over_to_a_restarted_brokers_new_session(zk):
    old = zk.store.open_session(1)
    zk.store.create("/brokers/ids/1", {"incarnation": 0}, session=old)
    zk.store.create("/controller", {"brokerid": 1}, session=old)
    zk.run()
    zk.watch("/brokers/ids")
    zk.watch("/controller")
    new = zk.store.open_session(1)
    zk.store.expire_session_keeping(old, "/brokers/ids/1", new, {"incarnation": 1})
    assert zk.store.get("/brokers/ids/1") == ({"incarnation": 1}, 1)
    assert not zk.store.exists("/controller")  # the old session's other ephemerals go
    assert not zk.store.session_alive(old) and zk.store.session_alive(new)
    zk.run()
    assert sorted(path for _, path in zk.seen) == ["/brokers/ids/1", "/controller"]  # one change each
    zk.store.expire_session(new)
    assert not zk.store.exists("/brokers/ids/1")  # the registration now lives and dies with the new session


def test_it_registers_afresh_when_the_old_session_no_longer_owns_the_node(zk):
    old = zk.store.open_session(1)
    zk.store.create("/brokers/ids/1", {"incarnation": 0}, session=old)
    zk.store.expire_session(old)  # the registration already vanished
    new = zk.store.open_session(1)
    zk.store.expire_session_keeping(old, "/brokers/ids/1", new, {"incarnation": 1})
    assert zk.store.get("/brokers/ids/1") == ({"incarnation": 1}, 0)
    zk.store.expire_session(new)
    assert not zk.store.exists("/brokers/ids/1")


# -- one delivery per change, at-once watches, creation order, decoded reads ----------------------
def test_one_change_is_one_scheduled_delivery_to_all_its_watchers_in_registration_order(zk):
    calls: list[str] = []
    zk.store.watch("/controller", lambda path: calls.append("first"))
    zk.store.watch("/controller", lambda path: calls.append("second"))
    zk.store.create("/controller", {"brokerid": 1})
    assert zk.scheduler.pending() == 1 and calls == []
    zk.run()
    assert calls == ["first", "second"] and zk.scheduler.steps == 1


def test_an_at_once_watch_is_told_inside_the_write_and_schedules_nothing(zk):
    seen: list[tuple[str, bool]] = []
    zk.store.watch("/brokers/topics", lambda path: seen.append((path, zk.store.exists(path))), at_once=True)
    zk.store.create("/brokers/topics/t", {"partitions": {}})
    assert seen == [("/brokers/topics/t", True)] and zk.scheduler.pending() == 0


def test_nodes_remember_the_transaction_that_created_them(zk):
    for name in ("zeta", "alpha"):
        zk.store.create(f"/brokers/topics/{name}", {})
    zk.store.set("/brokers/topics/zeta", {"changed": True})
    assert zk.store.created("/brokers/topics/zeta") < zk.store.created("/brokers/topics/alpha")
    assert zk.store.zxid == 3
    with pytest.raises(NoNodeError):
        zk.store.created("/missing")


def test_peek_decodes_once_per_version_and_get_hands_out_a_copy(zk):
    zk.store.create("/s", {"isr": [1, 2]})
    assert zk.store.peek("/s") is zk.store.peek("/s")
    copy, _ = zk.store.get("/s")
    copy["isr"].append(3)
    assert zk.store.peek("/s") == {"isr": [1, 2]}
    zk.store.set("/s", {"isr": [1]})
    assert zk.store.peek("/s") == {"isr": [1]} and zk.store.peek("/missing") is None
