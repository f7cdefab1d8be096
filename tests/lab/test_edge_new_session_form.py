"""Issue 11: the new-session and reset forms check the shape whole at the edge — the seed within
the database's BIGINT, no NaN or Infinity in the config (Python's JSON reader takes them), the
settings' bounds (a 0 ms checkpoint or retention-check interval hung the worker thread that tried
the shape) and the internal topics' partitions under the session's cap (3,000 made 3,064
partitions against 64). A refused form creates nothing and says which field."""
from __future__ import annotations

import pytest
from django.test import Client

from lab.models import LabSession
from tests.lab.test_sessions_views import create, lab_settings  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("fields", "message"), [
    ({"config": '{"replica.lag.time.max.ms": NaN}'}, "Not valid JSON: NaN is not a number JSON allows"),
    ({"config": '{"replica.lag.time.max.ms": Infinity}'}, "Not valid JSON: Infinity is not a number JSON allows"),
    ({"config": '{"offsets.topic.num.partitions": 3000}'}, "offsets.topic.num.partitions: must be from 1 to 1000"),
    ({"config": '{"offsets.topic.num.partitions": 65}'}, "__consumer_offsets may have at most 64 partitions"),
    ({"config": '{"log.retention.check.interval.ms": 0}'}, "log.retention.check.interval.ms: must be at least 1"),
    ({"config": '{"replica.high.watermark.checkpoint.interval.ms": 0}'}, "at least 1 (the lab&#x27;s minimum"),
    ({"config": '{"segment.ms": 1.5}'}, "segment.ms: expected a number (an integer)"),
    ({"seed": str(2**63)}, "less than or equal to 9223372036854775807"),
])
def test_the_new_session_form_refuses_a_shape_outside_the_bounds(client: Client, fields: dict, message: str) -> None:
    data = {"name": "my lab", "brokers": 3, "seed": 42, "truncation": "leader-epoch", "config": "", **fields}

    response = client.post("/lab/new", data)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert LabSession.objects.count() == 0


def test_the_reset_form_refuses_a_zero_interval_and_keeps_the_session(client: Client) -> None:
    session = create(client, brokers=3, seed=1)

    response = client.post(f"/lab/{session.id}/reset", {"config": '{"log.flush.offset.checkpoint.interval.ms": 0}'})
    session.refresh_from_db()

    assert response.status_code == 400
    assert "log.flush.offset.checkpoint.interval.ms: must be at least 1" in response.content.decode()
    assert (session.generation, session.config) == (1, {"metadata": "kraft", "controller.mode": "combined"})


def test_a_shape_within_the_bounds_is_created_as_given(client: Client) -> None:
    session = create(client, seed=2**63 - 1, config='{"offsets.topic.num.partitions": 64, "segment.ms": 5000.0}')

    assert session.seed == 2**63 - 1
    assert session.config == {"offsets.topic.num.partitions": 64, "segment.ms": 5000.0,
                              "metadata": "kraft", "controller.mode": "combined"}
