"""A visitor explores their lab session's cluster: segment files, a segment dumped, an offset
looked up step by step, and committed messages browsed (lab/views_explore.py).

Each test runs a real engine session: the visitor creates it through /lab/new, its SessionHost
is built from the database as the server builds it, and the views read that host's cluster.
"""
from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.test import Client

import lab.registry
from engine.cluster import EPOCH_MS
from lab.host import SessionHost
from lab.registry import build_host

pytestmark = pytest.mark.django_db


@dataclass
class LabRun:
    session_id: uuid.UUID
    host: SessionHost

    def url(self, name: str) -> str:
        return f"/lab/{self.session_id}/explore/{name}"

    def apply(self, command: str, **args: object) -> None:
        self.host.apply(command, args)

    def run(self, ms: int) -> None:
        self.host.play()
        self.host.tick(ms)
        self.host.pause()


@pytest.fixture
def lab_run(client: Client, settings, tmp_path, monkeypatch) -> Iterator[LabRun]:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    response = client.post("/lab/new", {"name": "explore", "brokers": 3, "seed": 1, "truncation": "leader-epoch",
                                        "config": ""})
    assert response.status_code == 302, response.content
    session_id = uuid.UUID(re.search(r"/lab/([0-9a-f-]{36})/", response["Location"]).group(1))
    host, _ = build_host(session_id)
    # The server's registry hands out the host of a session its tabs loaded; here, this one.
    monkeypatch.setattr(lab.registry, "get_host", lambda sid: host if sid == session_id else None, raising=False)
    yield LabRun(session_id, host)
    host.close()


def _ten_records(run: LabRun) -> None:
    run.apply("create_topic", topic="t", partitions=1, replication_factor=3)
    run.apply("produce", topic="t", key="k", values=[f"m{i}" for i in range(10)], acks="all")
    run.run(2000)


def _replica(run: LabRun, broker: int, topic: str = "t", partition: int = 0) -> str:
    return f"{broker}:{topic}:{partition}"


# -- segments ---------------------------------------------------------------------------------------
def test_it_lists_a_replicas_segment_files_by_their_20_digit_names(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    response = client.get(lab_run.url("segments/"), {"replica": _replica(lab_run, 2)})

    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-segment="00000000000000000000" data-active="true"' in html
    assert "broker-2/t-0/" in html
    assert "HW 10" in html and "LEO 10" in html
    assert "leader-epoch-checkpoint" in html


def test_it_offers_every_replica_to_choose_from(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    html = client.get(lab_run.url("segments/")).content.decode()

    for broker in (1, 2, 3):
        assert f'value="{broker}:t:0"' in html
    assert "(leader)" in html


def test_it_dumps_a_segment_as_dump_log_segments_prints_it(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    response = client.get(lab_run.url("segments/dump/"), {"replica": _replica(lab_run, 3), "base": 0, "file": "log"})

    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-records="10"' in html and 'data-batches="10"' in html
    assert html.count('data-kind="record"') == 10
    assert "baseOffset: 0 lastOffset: 0 count: 1" in html
    assert "| offset: 9 CreateTime:" in html and "key: k payload: m9" in html
    assert "Dumping broker-3/t-0/00000000000000000000.log" in html


def test_it_dumps_the_index_entries_the_broker_holds(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="small", partitions=1, replication_factor=1,
                  config={"index.interval.bytes": 100})
    lab_run.apply("produce", topic="small", values=[f"value-{i}" for i in range(12)])
    lab_run.run(1000)
    leader = lab_run.host.cluster.leader_of("small", 0)

    index = client.get(lab_run.url("segments/dump/"),
                       {"replica": _replica(lab_run, leader, "small"), "base": 0, "file": "index"}).content.decode()
    timeindex = client.get(lab_run.url("segments/dump/"),
                           {"replica": _replica(lab_run, leader, "small"), "base": 0, "file": "timeindex"}).content.decode()

    entries = lab_run.host.cluster.brokers[leader].partitions[("small", 0)].log.segments[0].offset_index.all_entries()
    assert entries, "the test needs an index with entries"
    for offset, position in entries:
        assert f"offset: {offset} position: {position}" in index
    assert f'data-entries="{len(entries)}"' in index
    assert re.search(r"timestamp: \d+ offset: \d+", timeindex)


def test_it_shows_how_an_offset_is_found_segment_then_index_then_scan(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="small", partitions=1, replication_factor=1,
                  config={"segment.bytes": 1024, "index.interval.bytes": 100})
    lab_run.apply("produce", topic="small", key="k", values=[f"value-{i}" for i in range(40)])
    lab_run.run(1000)
    leader = lab_run.host.cluster.leader_of("small", 0)
    log = lab_run.host.cluster.brokers[leader].partitions[("small", 0)].log
    assert len(log.segments) >= 3, "the test needs several segments"
    lookup = log.locate(30)

    response = client.get(lab_run.url("segments/lookup/"), {"replica": _replica(lab_run, leader, "small"), "offset": 30})

    html = response.content.decode()
    assert response.status_code == 200
    assert f"{lookup.segment_base_offset:020d}.log" in html
    assert f"30 − {lookup.segment_base_offset} = <strong>{30 - lookup.segment_base_offset}</strong>" in html
    if lookup.index.slot >= 0:
        assert f"slot {lookup.index.slot}: offset {lookup.index.offset} starts at byte <strong>{lookup.index.position}</strong>" in html
    assert f'data-found-position="{lookup.position}"' in html
    assert "<code>value-30</code>" in html
    assert len(re.findall(r'class="lk-segment( found)?"', html)) == len(log.segments)
    assert len(re.findall(r'class="lk-scan( found)?"', html)) == len(lookup.scan)


def test_it_says_which_offsets_a_replica_holds_when_asked_for_another(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    response = client.get(lab_run.url("segments/lookup/"), {"replica": _replica(lab_run, 1), "offset": 99})

    html = response.content.decode()
    assert response.status_code == 400
    assert "data-panel-error" in html
    assert "Offset 99 is not in this replica&#x27;s log: it holds offsets 0 to 9" in html
    assert "OFFSET_OUT_OF_RANGE" in html


@pytest.mark.parametrize("params, says", [
    ({"replica": "nonsense"}, "replica must look like 1:topic:0"),
    ({"replica": "7:t:0"}, "There is no broker 7"),
    ({"replica": "1:nope:0"}, "Topic-partition nope-0 does not exist"),
    ({"replica": "1:t:0", "offset": "ten"}, "offset must be a whole number"),
])
def test_it_explains_bad_input_instead_of_failing(client: Client, lab_run: LabRun, params: dict, says: str) -> None:
    _ten_records(lab_run)

    response = client.get(lab_run.url("segments/lookup/"), params)

    assert response.status_code == 400
    assert says in response.content.decode()


def test_it_reads_a_down_brokers_files_as_they_lie(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)
    lab_run.apply("kill_broker", broker=2)

    files = client.get(lab_run.url("segments/"), {"replica": _replica(lab_run, 2)}).content.decode()
    dump = client.get(lab_run.url("segments/dump/"), {"replica": _replica(lab_run, 2), "base": 0, "file": "log"})
    lookup = client.get(lab_run.url("segments/lookup/"), {"replica": _replica(lab_run, 2), "offset": 3})

    assert "broker 2 is down" in files
    assert 'data-records="10"' in dump.content.decode()
    assert lookup.status_code == 400 and "Broker 2 is down" in lookup.content.decode()


# -- messages ---------------------------------------------------------------------------------------
def test_it_shows_committed_records_only_and_says_so(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    lab_run.apply("produce", topic="t", values=["a", "b", "c"], acks="all")
    lab_run.run(2000)
    lab_run.apply("pause_fetcher", broker=2)
    lab_run.apply("pause_fetcher", broker=3)
    lab_run.apply("produce", topic="t", values=["not-yet-1", "not-yet-2"], acks=1)
    lab_run.run(500)

    html = client.get(lab_run.url("messages/"), {"topic": "t"}).content.decode()

    assert "Committed records only" in html
    assert 'data-messages-partition="0" data-count="3"' in html
    assert "<code>c</code>" in html and "not-yet" not in html
    assert "HW 3 · LEO 5" in html


def test_it_finds_records_by_key_value_or_header_text(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=2, replication_factor=1)
    lab_run.apply("produce", topic="t", key="apple", values=["red", "green"], partition=0)
    lab_run.apply("produce", topic="t", key="pear", values=["yellow"], partition=1)
    lab_run.run(1000)

    by_key = client.get(lab_run.url("messages/"), {"topic": "t", "q": "APPLE"}).content.decode()
    by_value = client.get(lab_run.url("messages/"), {"topic": "t", "q": "yell"}).content.decode()

    assert by_key.count('<tr data-offset=') == 2 and "<code>green</code>" in by_key
    assert by_value.count('<tr data-offset=') == 1 and "<code>pear</code>" in by_value


def test_it_starts_from_an_offset_or_a_timestamp(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=1, replication_factor=1)
    lab_run.apply("produce", topic="t", values=["early-0", "early-1", "early-2"])
    lab_run.run(5000)
    later = EPOCH_MS + lab_run.host.cluster.now_ms
    lab_run.apply("produce", topic="t", values=["late-3", "late-4"])
    lab_run.run(1000)

    from_offset = client.get(lab_run.url("messages/"), {"topic": "t", "partition": 0, "offset": 2}).content.decode()
    from_time = client.get(lab_run.url("messages/"), {"topic": "t", "timestamp": str(later)}).content.decode()

    assert re.findall(r'<tr data-offset="(\d+)"', from_offset) == ["2", "3", "4"]
    assert re.findall(r'<tr data-offset="(\d+)"', from_time) == ["3", "4"]
    assert "time → offset 3" in from_time


def test_it_explains_a_bad_timestamp(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    response = client.get(lab_run.url("messages/"), {"topic": "t", "timestamp": "yesterday"})

    assert response.status_code == 400
    assert "timestamp must be epoch milliseconds or a date-time" in response.content.decode()


# -- whose session ---------------------------------------------------------------------------------
def test_it_shows_nothing_of_another_visitors_session(lab_run: LabRun) -> None:
    _ten_records(lab_run)
    stranger = Client()
    stranger.get("/lab/new")

    for name in ("segments/", "segments/dump/?replica=1:t:0&base=0", "segments/lookup/?replica=1:t:0&offset=1",
                 "messages/"):
        assert stranger.get(lab_run.url(name)).status_code == 404, name


def test_it_says_not_running_when_the_session_is_not_loaded(client: Client, lab_run: LabRun, monkeypatch) -> None:
    monkeypatch.setattr(lab.registry, "get_host", lambda sid: None, raising=False)

    assert client.get(lab_run.url("segments/")).status_code == 404


# -- what the page loads ---------------------------------------------------------------------------
def test_it_lists_the_built_in_scenarios_and_serves_each(client: Client) -> None:
    options = client.get("/lab/explore/scenarios/").content.decode()
    scenario = client.get("/lab/explore/scenarios/hw-truncation-story.json")

    assert 'value="hw-truncation-story"' in options and 'value="isr-shrink-expand"' in options
    assert scenario.status_code == 200 and scenario.json()["name"] == "hw-truncation-story"
    assert client.get("/lab/explore/scenarios/no-such-thing.json").status_code == 404


def test_it_lists_every_event_kind(client: Client) -> None:
    from engine.events import EVENT_TYPES

    html = client.get("/lab/explore/event-kinds/").content.decode()

    assert all(f'value="{kind}"' in html for kind in EVENT_TYPES)


def test_it_serves_plotly_from_the_installed_package_cached_for_a_year(client: Client) -> None:
    import plotly

    response = client.get(f"/lab/explore/plotly-{plotly.__version__}.min.js")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "max-age=31536000" in response["Cache-Control"] and "immutable" in response["Cache-Control"]
    head = next(iter(response.streaming_content))
    assert b"plotly" in head.lower()
    response.close()
