"""A supervisor (or a curious learner) checks /healthz."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from django.db import OperationalError, connection
from django.test import Client


@pytest.mark.django_db
def test_it_reports_ok_with_the_package_version(client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "status": "ok",
        "engine": "kafka-lab",
        "version": version("kafka-lab"),
        "database": "ok",
        "channel_layer": "in-memory",
        "worker": {"placement": False},
    }


@pytest.mark.django_db
def test_it_answers_503_when_the_database_fails(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_cursor(*args: object, **kwargs: object) -> None:
        raise OperationalError("unable to open database file")

    monkeypatch.setattr(connection, "cursor", broken_cursor)

    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["database"] == "error: unable to open database file"
