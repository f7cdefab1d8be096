"""GET /lab/<id>/model.json: the running session's model, for its owner only."""
from __future__ import annotations

from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from pytest_django.fixtures import Settings

from lab.models import LabSession
from lab.registry import registry

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def lab_settings(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"


def test_it_answers_the_owners_running_session_and_nobody_else() -> None:
    owner = Client()
    owner.get("/lab/new")
    owner.post("/lab/new", {"name": "m", "brokers": 2, "seed": 1, "truncation": "leader-epoch", "config": ""})
    session = LabSession.objects.get()
    assert owner.get(f"/lab/{session.id}/model.json").status_code == 404   # not running yet
    async_to_sync(registry.ensure)(session.id)
    try:
        model = owner.get(f"/lab/{session.id}/model.json").json()
        assert [b["id"] for b in model["brokers"]] == [1, 2] and model["step"] > 0
        assert Client().get(f"/lab/{session.id}/model.json").status_code == 404
    finally:
        async_to_sync(registry.close_all)()
