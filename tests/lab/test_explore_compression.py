"""A visitor sees each batch's codec: the message browser's codec column and a segment dump's
`compresscodec`, for a producer's compression.type and a topic's (lab/views_explore.py)."""
from __future__ import annotations

import re
import uuid

import pytest
from django.test import Client

import lab.registry
from lab.registry import build_host
from tests.lab.test_explore_views import LabRun, lab_run  # noqa: F401  (the fixture, requested by name)

pytestmark = pytest.mark.django_db


def _gzip_producer_writes(run: LabRun, topic_config: dict) -> None:
    run.apply("create_topic", topic="t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]],
              config=topic_config)
    run.apply("produce", topic="t", key="k", values=[f"m{i}" for i in range(6)], producer="p",
              config={"compression.type": "gzip", "linger.ms": 20}, flush=True)
    run.run(2000)


def test_the_message_browser_shows_the_producer_s_codec(client: Client, lab_run: LabRun) -> None:
    _gzip_producer_writes(lab_run, {})

    html = client.get(lab_run.url("messages/"), {"topic": "t"}).content.decode()

    assert 'data-messages-partition="0" data-count="6"' in html
    assert html.count('data-codec="gzip"') == 6 and "<code>m5</code>" in html


def test_the_message_browser_and_every_replica_s_dump_show_the_topic_s_codec(client: Client, lab_run: LabRun) -> None:
    _gzip_producer_writes(lab_run, {"compression.type": "zstd"})

    html = client.get(lab_run.url("messages/"), {"topic": "t"}).content.decode()
    assert html.count('data-codec="zstd"') == 6 and "gzip" not in html

    for broker in (1, 2, 3):
        dump = client.get(lab_run.url("segments/dump/"), {"replica": f"{broker}:t:0", "base": 0, "file": "log"})
        text = dump.content.decode()
        assert dump.status_code == 200 and 'data-codecs="zstd"' in text
        assert "compresscodec: zstd crc:" in text and "key: k payload: m5" in text


def test_an_uncompressed_topic_s_records_say_none(client: Client, lab_run: LabRun) -> None:
    lab_run.apply("create_topic", topic="t", partitions=1, replication_factor=1)
    lab_run.apply("produce", topic="t", values=["a", "b"], acks="all")
    lab_run.run(1000)

    html = client.get(lab_run.url("messages/"), {"topic": "t"}).content.decode()
    assert html.count('data-codec="none"') == 2


def test_a_new_session_takes_compression_type_as_every_topic_s_default(client: Client, settings, tmp_path,
                                                                        monkeypatch) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    response = client.post("/lab/new", {"name": "lz4 lab", "brokers": 1, "seed": 1, "truncation": "leader-epoch",
                                        "config": '{"compression.type": "lz4"}'})
    assert response.status_code == 302, response.content
    session_id = uuid.UUID(re.search(r"/lab/([0-9a-f-]{36})/", response["Location"]).group(1))
    host, _ = build_host(session_id)
    monkeypatch.setattr(lab.registry, "get_host", lambda sid: host if sid == session_id else None, raising=False)
    try:
        run = LabRun(session_id, host)
        run.apply("create_topic", topic="t", partitions=1, replication_factor=1)
        run.apply("produce", topic="t", values=["a", "b"], acks="all")
        run.run(1000)
        html = client.get(run.url("messages/"), {"topic": "t"}).content.decode()
        assert html.count('data-codec="lz4"') == 2
    finally:
        host.close()


def test_a_bad_codec_in_a_new_session_is_refused_naming_the_field(client: Client, settings, tmp_path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    response = client.post("/lab/new", {"name": "bad", "brokers": 1, "seed": 1, "truncation": "leader-epoch",
                                        "config": '{"compression.type": "brotli"}'})
    assert response.status_code != 302
    assert "for configuration compression.type: must be one of uncompressed" in response.content.decode()
