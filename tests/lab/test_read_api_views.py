"""The read API the Spark data source uses, served from a lab session."""
from __future__ import annotations

import json
import re
import types
import uuid

import pytest
from django.test import Client

import lab.registry
from engine.storage import record_batch as rb
from lab.registry import build_host

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(client: Client, settings, tmp_path, monkeypatch):
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    response = client.post("/lab/new", {"name": "api", "brokers": 3, "seed": 1, "truncation": "leader-epoch",
                                        "config": ""})
    session_id = uuid.UUID(re.search(r"/lab/([0-9a-f-]{36})/", response["Location"]).group(1))
    host, _ = build_host(session_id)

    async def ensure(sid):
        assert sid == session_id
        return types.SimpleNamespace(host=host)
    monkeypatch.setattr(lab.registry.registry, "ensure", ensure)
    host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "key": "k", "values": ["a", "b", "c"], "acks": "all", "partition": 1})
    host.play()
    host.tick(2000)
    host.pause()
    yield session_id, host
    host.close()


def test_it_lists_partitions_with_their_high_watermarks(session):
    session_id, _ = session
    response = Client().get(f"/api/v1/sessions/{session_id}/partitions", {"topics": "t"})
    assert response.status_code == 200
    parts = json.loads(response.content)["partitions"]
    assert [(p["partition"], p["log_start_offset"], p["high_watermark"]) for p in parts] == [(0, 0, 0), (1, 0, 3)]


def test_it_serves_raw_committed_batches_with_offsets_in_headers(session):
    session_id, _ = session
    response = Client().get(f"/api/v1/sessions/{session_id}/topics/t/partitions/1/records", {"offset": 1})
    assert response.status_code == 200 and response["Content-Type"] == "application/octet-stream"
    assert response["X-Kafka-Lab-High-Watermark"] == "3" and response["X-Kafka-Lab-Next-Offset"] == "3"
    values, position = [], 0
    while position < len(response.content):
        header, records = rb.decode_batch(response.content, position)
        values += [(r.offset, r.value) for r in records]
        position += header.size_in_bytes
    assert values == [(1, b"b"), (2, b"c")]


def test_errors_name_kafka_s_error(session):
    session_id, _ = session
    response = Client().get(f"/api/v1/sessions/{session_id}/topics/t/partitions/1/records", {"offset": 9})
    assert response.status_code == 416 and json.loads(response.content)["error"] == "OFFSET_OUT_OF_RANGE"
    response = Client().get(f"/api/v1/sessions/{uuid.uuid4()}/partitions")
    assert response.status_code == 404 and json.loads(response.content)["error"] == "UNKNOWN_SESSION"
    response = Client().get(f"/api/v1/sessions/{session_id}/partitions", {"topics": "nope"})
    assert response.status_code == 404


def test_a_full_server_answers_503_with_retry_after_not_500(client: Client, settings, tmp_path) -> None:
    # The registry refuses to load a session when every slot is in use (issue 11, finding 7); the
    # read API says so in Kafka-ish words instead of failing with a 500.
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    settings.KAFKA_LAB_MAX_HOSTS = 0
    response = client.post("/lab/new", {"name": "api", "brokers": 1, "seed": 1, "truncation": "leader-epoch",
                                        "config": ""})
    session_id = re.search(r"/lab/([0-9a-f-]{36})/", response["Location"]).group(1)
    answer = client.get(f"/api/v1/sessions/{session_id}/partitions")
    assert answer.status_code == 503 and answer["Retry-After"] == "30"
    assert json.loads(answer.content)["error"] == "SERVER_FULL"
