"""Someone serves the lab with Daphne, as `make run` does, and a browser talks to it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from tests.servers import REPO_ROOT, running_daphne

STYLESHEET = REPO_ROOT / "static" / "css" / "lab.css"


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def test_it_answers_healthz(daphne_server: str) -> None:
    status, content_type, body = _get(daphne_server + "/healthz")

    assert status == 200
    assert content_type == "application/json"
    assert json.loads(body)["status"] == "ok"
    assert json.loads(body)["database"] == "ok"


def test_it_serves_the_landing_page(daphne_server: str) -> None:
    status, _, body = _get(daphne_server + "/")

    assert status == 200
    assert b"Kafka Lab" in body


def test_it_serves_static_files(daphne_server: str) -> None:
    status, content_type, body = _get(daphne_server + "/static/css/lab.css")

    assert status == 200
    assert content_type.startswith("text/css")
    assert body == STYLESHEET.read_bytes()


def test_it_serves_static_files_with_debug_off(tmp_path: Path) -> None:
    with running_daphne(tmp_path, KAFKA_LAB_DEBUG="false") as base_url:
        status, _, body = _get(base_url + "/static/css/lab.css")

    assert status == 200
    assert body == STYLESHEET.read_bytes()


def test_it_leaves_static_files_to_a_front_server_when_told(tmp_path: Path) -> None:
    with running_daphne(tmp_path, KAFKA_LAB_DEBUG="false", KAFKA_LAB_SERVE_STATIC="false") as base_url:
        static_status, _, _ = _get(base_url + "/static/css/lab.css")
        health_status, _, _ = _get(base_url + "/healthz")

    assert static_status == 404
    assert health_status == 200
