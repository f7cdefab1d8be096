"""Issue 15: new sessions default to KRaft, as Kafka 4 does. The new-session form offers the metadata
mode (KRaft, ZooKeeper) and KRaft's controllers (combined, dedicated); both go into the cluster's
config, where the engine reads them. A mode the lab does not know is refused at the edge, naming
the field, and nothing is created. A scenario keeps its own mode."""
from __future__ import annotations

import pytest
from django.test import Client

from lab.host import SessionHost, Shape
from lab.limits import LimitExceeded, Limits
from lab.models import LabSession
from lab.scenario_play import shape_of_scenario
from lab.views_sessions import _start_initial
from tests.lab.test_sessions_views import create, lab_settings  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_form_offers_the_metadata_mode_with_kraft_chosen(client: Client) -> None:
    html = client.get("/lab/new").content.decode()

    assert 'name="metadata"' in html and 'name="controllers"' in html
    assert '<option value="kraft" selected>' in html and '<option value="zookeeper">' in html
    assert '<option value="combined" selected>' in html and '<option value="dedicated">' in html


def test_a_new_session_is_kraft_by_default(client: Client) -> None:
    session = create(client)

    assert session.config == {"metadata": "kraft", "controller.mode": "combined"}


@pytest.mark.parametrize(("fields", "config"), [
    ({"metadata": "zookeeper"}, {"metadata": "zookeeper"}),
    ({"metadata": "kraft", "controllers": "dedicated"}, {"metadata": "kraft", "controller.mode": "dedicated"}),
    ({"config": '{"metadata": "zookeeper"}'}, {"metadata": "zookeeper"}),
])
def test_the_chosen_mode_goes_into_the_config(client: Client, fields: dict, config: dict) -> None:
    session = create(client, **fields)

    assert session.config == config


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"metadata": "etcd"}, "metadata", "metadata must be kraft or zookeeper, not etcd"),
    ({"metadata": "kraft", "controllers": "sideways"}, "controllers",
     "controllers must be combined or dedicated, not sideways"),
    ({"config": '{"metadata": "etcd"}', "metadata": ""}, "metadata",
     "metadata must be one of zookeeper, kraft, not &#x27;etcd&#x27;"),
    ({"config": '{"metadata": "zookeeper"}', "metadata": "kraft"}, "metadata",
     "metadata is kraft but the config says metadata zookeeper"),
    ({"metadata": "zookeeper", "controllers": "dedicated"}, "controllers",
     "dedicated controllers are KRaft&#x27;s: choose metadata kraft for them"),
    ({"config": '{"controller.mode": "solo"}', "metadata": "", "controllers": ""}, "controllers",
     "controller.mode (controllers) must be one of combined, dedicated, not &#x27;solo&#x27;"),
])
def test_an_unknown_mode_is_refused_naming_the_field(client: Client, fields: dict, field: str, message: str) -> None:
    data = {"name": "my lab", "brokers": 3, "seed": 42, "truncation": "leader-epoch", "config": "", **fields}

    response = client.post("/lab/new", data)

    html = response.content.decode()
    assert response.status_code == 400
    assert message in html
    # the error sits at its field: the errorlist right after that field's label
    label = html.index(f'for="id_{field}"')
    assert html.index("errorlist", label) < html.index(f'name="{field}"', label)
    assert LabSession.objects.count() == 0


def test_limits_refuse_an_unknown_mode_by_field() -> None:
    with pytest.raises(LimitExceeded) as refused:
        Limits().check_shape(3, 1, "leader-epoch", {"metadata": "etcd"})
    assert refused.value.field == "metadata"


def test_a_reset_keeps_the_sessions_mode(client: Client) -> None:
    session = create(client, metadata="kraft", controllers="dedicated")

    response = client.post(f"/lab/{session.id}/reset", {"seed": 7})
    session.refresh_from_db()

    assert response.status_code == 302
    assert (session.generation, session.config) == (2, {"metadata": "kraft", "controller.mode": "dedicated"})


def test_a_scenario_keeps_its_own_mode() -> None:
    old = {"cluster": {"brokers": 3, "seed": 1}, "steps": []}
    kraft = {"cluster": {"brokers": 3, "seed": 1, "metadata": "kraft"}, "steps": []}

    assert shape_of_scenario(old).metadata == "zookeeper"
    assert shape_of_scenario(kraft).metadata == "kraft"
    assert _start_initial({"scenario": "controller-failover"})["metadata"] == "zookeeper"


def test_a_host_runs_the_mode_its_shape_says(tmp_path) -> None:
    host = SessionHost(str(tmp_path / "h"), Shape(3, 1, config={"metadata": "kraft", "controller.mode": "dedicated"}))
    try:
        assert host.cluster.kraft and sorted(host.cluster.controller_nodes) == [101, 102, 103]
        model = host.model()
        assert model["metadata"]["mode"] == "kraft"
        assert [n["node"] for n in model["controller_nodes"]] == ["controller-101", "controller-102", "controller-103"]
    finally:
        host.close()
